"""Tools in words: the list, every call form a reply may take, the stream, the result block."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.words import (
    ListLevel,
    WordsReader,
    estimate_tokens,
    read_calls,
    render_tools,
    tool_response,
)
from conchcheck.core.words.markers import KEPT, SAFE, SHOWN, TOKEN, WAIT, shown

WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather for a city. Uses the national service.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}
REMEMBER = {
    "type": "function",
    "function": {
        "name": "remember",
        "description": "Save a fact.",
        "parameters": {
            "type": "object",
            "properties": {"fact": {"type": "string"}},
            "required": ["fact"],
        },
    },
}
TOOLS = [WEATHER, REMEMBER]
HOW = 'Write each call as <tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>'

Call = tuple[str, str | None, Any, list[str]]


def summary(text: str, *, cut_off: bool = False) -> tuple[str, list[Call]]:
    reading = read_calls(text, TOOLS, cut_off=cut_off)
    calls = [
        (c.form.value, c.name, c.arguments, [r.value for r in c.repairs]) for c in reading.calls
    ]
    return reading.text, calls


@pytest.mark.parametrize(
    ("reply", "text", "calls"),
    [
        pytest.param(
            'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
            "Sure.\n",
            [("tool_call", "get_weather", {"city": "Paris"}, [])],
            id="hermes-tool-call",
        ),
        pytest.param(
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n'
            '<tool_call>{"name": "remember", "arguments": {"fact": "x"}}</tool_call>',
            "\n",
            [
                ("tool_call", "get_weather", {"city": "Oslo"}, []),
                ("tool_call", "remember", {"fact": "x"}, []),
            ],
            id="two-tool-calls",
        ),
        pytest.param(
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}\n<tool_call>{"name": "remember", "arguments": {"fact": "x"}}',
            "",
            [
                ("tool_call", "get_weather", {"city": "Oslo"}, []),
                ("tool_call", "remember", {"fact": "x"}, []),
            ],
            id="unclosed-tags-end-at-the-next",
        ),
        pytest.param(
            "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Rome', 'unit': 'C'}}</tool_call>",
            "",
            [
                (
                    "tool_call",
                    "get_weather",
                    {"city": "Rome", "unit": "c"},
                    ["single_quotes", "enum_case"],
                )
            ],
            id="repairs-and-normalisations-recorded",
        ),
        pytest.param(
            '<tool_call>{"name": "get_weather", "parameters": {"city": "Rome"}}</tool_call>',
            "",
            [("tool_call", "get_weather", {"city": "Rome"}, ["parameters_key"])],
            id="parameters-for-arguments",
        ),
        pytest.param(
            '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}</tool_call>',
            "",
            [("tool_call", "get_weather", {"city": "Rome"}, ["json_string"])],
            id="arguments-as-json-text",
        ),
        pytest.param(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>",
            "",
            [("xml_parameters", "get_weather", {"city": "Rome"}, [])],
            id="qwen3-coder-xml",
        ),
        pytest.param(
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n<parameter=unit>\nf\n</tool_call>",
            "",
            [("xml_parameters", "get_weather", {"city": "Rome", "unit": "f"}, [])],
            id="qwen-xml-closers-missing",
        ),
        pytest.param(
            'Checking. <function=get_weather>{"city": "Oslo"}</function> One moment.',
            "Checking.  One moment.",
            [("function_tag", "get_weather", {"city": "Oslo"}, [])],
            id="llama-function-tag",
        ),
        pytest.param(
            '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "remember", "parameters": {"fact": "a;b"}}<|eom_id|>',
            "",
            [
                ("python_tag", "get_weather", {"city": "Oslo"}, ["parameters_key"]),
                ("python_tag", "remember", {"fact": "a;b"}, ["parameters_key"]),
            ],
            id="llama-python-tag-semicolons",
        ),
        pytest.param(
            '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
            "",
            [("mistral", "get_weather", {"city": "Oslo"}, [])],
            id="mistral-json-list",
        ),
        pytest.param(
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}[TOOL_CALLS]remember[ARGS]{"fact": "x"}',
            "",
            [
                ("mistral", "get_weather", {"city": "Oslo"}, []),
                ("mistral", "remember", {"fact": "x"}, []),
            ],
            id="mistral-args-form",
        ),
        pytest.param(
            '[get_weather(city="Paris", unit="c"), remember(fact="cats")]',
            "",
            [
                ("pythonic", "get_weather", {"city": "Paris", "unit": "c"}, []),
                ("pythonic", "remember", {"fact": "cats"}, []),
            ],
            id="pythonic-list",
        ),
        pytest.param(
            'get_weather(city="Paris")',
            "",
            [("pythonic", "get_weather", {"city": "Paris"}, [])],
            id="pythonic-bare-call",
        ),
        pytest.param(
            'open(path="/etc")', 'open(path="/etc")', [], id="pythonic-needs-an-offered-tool"
        ),
        pytest.param(
            '```json\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n```',
            "",
            [("fence", "get_weather", {"city": "Lima"}, [])],
            id="fence-naming-a-tool",
        ),
        pytest.param(
            'Example:\n```json\n{"name": "x", "arguments": {}}\n```',
            'Example:\n```json\n{"name": "x", "arguments": {}}\n```',
            [],
            id="fence-naming-no-tool-is-text",
        ),
        pytest.param(
            "```tool_call\n{'name': 'get_weather', 'arguments': {'city': 'Lima'}}\n``",
            "",
            [("tool_call_fence", "get_weather", {"city": "Lima"}, ["single_quotes"])],
            id="gemma-tool-call-fence-two-backticks",
        ),
        pytest.param(
            '{"tool_call": {"name": "get_weather", "arguments": {"city": "Oslo"}}}',
            "",
            [("generic", "get_weather", {"city": "Oslo"}, [])],
            id="llama-cpp-generic-call",
        ),
        pytest.param(
            '{"response": "It is sunny."}', "It is sunny.", [], id="llama-cpp-generic-response"
        ),
        pytest.param(
            '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
            "",
            [("bare_json", "get_weather", {"city": "Oslo"}, [])],
            id="reply-is-only-the-call",
        ),
        pytest.param(
            '{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}',
            "",
            [("bare_json", "get_weather", {"city": "Oslo"}, ["json_string"])],
            id="openai-shaped-call-as-text",
        ),
        pytest.param(
            '{"city": "Oslo"}', '{"city": "Oslo"}', [], id="json-that-is-not-a-call-is-text"
        ),
        # DESIGN rule 6: only JSON naming an offered tool is a call; no failed call either.
        pytest.param(
            '{"name": "book_flight", "arguments": {"to": "Oslo"}}',
            '{"name": "book_flight", "arguments": {"to": "Oslo"}}',
            [],
            id="call-shaped-json-naming-no-offered-tool-is-text",
        ),
        pytest.param(
            '[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "book_flight", '
            '"arguments": {}}]',
            "",
            [
                ("bare_json", "get_weather", {"city": "Oslo"}, []),
                ("bare_json", "book_flight", None, []),
            ],
            id="a-list-naming-one-offered-tool-is-read-whole-the-other-fails",
        ),
        pytest.param(
            'Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
            '<tool_response>{"temp": 99}</tool_response>It is 99 degrees.',
            "Let me check.It is 99 degrees.",
            [("tool_call", "get_weather", {"city": "Oslo"}, [])],
            id="self-written-response-dropped",
        ),
        pytest.param(
            '```python\nprint("<tool_call>{}</tool_call>")\n```\nDone.',
            '```python\nprint("<tool_call>{}</tool_call>")\n```\nDone.',
            [],
            id="code-fence-passes-untouched",
        ),
        pytest.param("Plain words, no tools.", "Plain words, no tools.", [], id="plain-words"),
        pytest.param("[1] A footnote.", "[1] A footnote.", [], id="bracket-start-is-text"),
        pytest.param(
            "a < b and <b>bold</b>", "a < b and <b>bold</b>", [], id="angle-brackets-are-text"
        ),
    ],
)
def test_forms(reply: str, text: str, calls: list[Call]) -> None:
    assert summary(reply) == (text, calls)


@pytest.mark.parametrize(
    ("reply", "name", "error"),
    [
        pytest.param(
            '<tool_call>{"name": "get_wether", "arguments": {}}</tool_call>',
            "get_wether",
            f'There is no tool called "get_wether"; the tools are: get_weather, remember. {HOW}',
            id="unknown-tool",
        ),
        pytest.param(
            "<tool_call>get weather for Paris</tool_call>",
            None,
            f"Your tool call could not be read (expected a value). {HOW}",
            id="unreadable-block",
        ),
        pytest.param(
            '<tool_call>{"arguments": {"city": "x"}}</tool_call>',
            None,
            f"Your tool call has no tool name. {HOW}",
            id="no-name",
        ),
        pytest.param(
            '<tool_call>{"name": "get_weather", "arguments": {"town": "Paris"}}</tool_call>',
            "get_weather",
            "The arguments for get_weather don't fit. Fix these and call it again:\n"
            "- city: required (text), but it was missing.\n"
            "- town: not a field this tool takes, so it was dropped.\n"
            'It takes: {city: string, unit?: "c"|"f"}',
            id="arguments-that-dont-fit",
        ),
        pytest.param(
            '[get_weather("Paris")]',
            "get_weather",
            f"Your call to get_weather gives values without their names. {HOW}",
            id="pythonic-positional",
        ),
        pytest.param(
            "[get_weather(city=input())]",
            "get_weather",
            f"The arguments of your call to get_weather are not plain values. {HOW}",
            id="pythonic-never-evaluated",
        ),
    ],
)
def test_failed_calls_say_how_to_write_one(reply: str, name: str | None, error: str) -> None:
    (call,) = read_calls(reply, TOOLS).calls
    assert (call.ok, call.name, call.error) == (False, name, error)


CUT = f"Your tool call was cut off before it ended, so it was not run. {HOW}"


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            '<tool_call>{"name": "remember", "arguments": {"fact": "rm -rf /tmp/bu', id="tool-call"
        ),
        pytest.param(
            '<tool_call>{"name": "remember", "arguments": {"fact": "x"}}',
            id="unclosed-tag-complete-json",
        ),
        pytest.param('<function=remember>{"fact": "rm -rf /tmp', id="function-tag"),
        pytest.param("<function=remem", id="function-name"),
        pytest.param('{"name": "remember", "arguments": {"fact": "rm', id="bare-json"),
        pytest.param(
            '<|python_tag|>{"name": "remember", "parameters": {"fact": "rm', id="python-tag"
        ),
        pytest.param('```json\n{"name": "remember", "arguments": {"fact": "rm', id="fence"),
        pytest.param(
            "<tool_call>\n<function=remember>\n<parameter=fact>\nrm -rf /tm", id="qwen-xml"
        ),
    ],
)
def test_a_cut_off_reply_is_never_mended_into_a_call(reply: str) -> None:
    reading = read_calls(reply, TOOLS, cut_off=True)
    assert [(c.ok, c.arguments, c.error) for c in reading.calls] == [(False, None, CUT)]
    assert reading.text == ""


def test_the_same_reply_ended_normally_is_mended() -> None:
    assert summary('<tool_call>{"name": "remember", "arguments": {"fact": "rm -rf /tmp/bu') == (
        "",
        [("tool_call", "remember", {"fact": "rm -rf /tmp/bu"}, ["unclosed"])],
    )


def test_a_closed_call_in_a_cut_reply_stands() -> None:
    reply = (
        '<tool_call>{"name": "remember", "arguments": {"fact": "a"}}</tool_call> and then I will'
    )
    assert summary(reply, cut_off=True) == (
        " and then I will",
        [("tool_call", "remember", {"fact": "a"}, [])],
    )


def test_fake_responses_are_counted_and_never_shown() -> None:
    reading = read_calls("A<tool_response>lies</tool_response>B<tool_response>more lies", TOOLS)
    assert (reading.text, reading.fake_responses, reading.calls) == ("AB", 2, ())


# -- formats without types (issue 8): typing by the schema is no repair -------------------

FORECAST = {
    "name": "forecast",
    "description": "The forecast for a place.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "threshold": {"type": "number"},
            "hourly": {"type": "boolean"},
            "hours": {"type": "array", "items": {"type": "integer"}},
            "where": {
                "type": "object",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            },
            "limit": {"type": ["integer", "null"]},
            "level": {"enum": [1, 2, 3]},
            "unit": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
    },
}

Typed = tuple[str, str | None, Any, list[str], list[str], bool]


def typed_calls(reading: Any) -> list[Typed]:
    return [
        (
            c.form.value,
            c.name,
            c.arguments,
            [r.value for r in c.repairs],
            list(c.typed_by_schema),
            c.ok,
        )
        for c in reading.calls
    ]


def qwen(*parameters: tuple[str, str]) -> str:
    """A Qwen3-Coder call to forecast, each value on lines of its own as the format writes it."""
    lines = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in parameters)
    return f"<tool_call>\n<function=forecast>\n{lines}</function>\n</tool_call>"


def hermes(arguments: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': 'forecast', 'arguments': arguments})}</tool_call>"


ALL_TYPES = (
    ("city", "Oslo"),
    ("days", "3"),
    ("threshold", "0.5"),
    ("hourly", "true"),
    ("hours", "[6, 12]"),
    ("where", '{"lat": 59.9, "lon": 10.7}'),
    ("limit", "null"),
    ("level", "2"),
)
ALL_TYPED = {
    "city": "Oslo",
    "days": 3,
    "threshold": 0.5,
    "hourly": True,
    "hours": [6, 12],
    "where": {"lat": 59.9, "lon": 10.7},
    "limit": None,
    "level": 2,
}
XML = "xml_parameters"

TYPING_CASES = [
    pytest.param(
        "<tool_call>\n<function=forecast>\n<parameter=city>\nOslo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        [(XML, "forecast", {"city": "Oslo", "days": 3}, [], ["days"], True)],
        id="qwen-xml-integer-typed-by-schema",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("threshold", "0.5")),
        [(XML, "forecast", {"city": "Oslo", "threshold": 0.5}, [], ["threshold"], True)],
        id="qwen-xml-number-typed-by-schema",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hourly", "false")),
        [(XML, "forecast", {"city": "Oslo", "hourly": False}, [], ["hourly"], True)],
        id="qwen-xml-boolean-typed-by-schema",
    ),
    # Indentation around a literal is layout: the value is typed, a string keeps its spaces.
    pytest.param(
        qwen(("city", "  Oslo "), ("hourly", "  true  "), ("days", "\t3"), ("limit", " null")),
        [
            (
                XML,
                "forecast",
                {"city": "  Oslo ", "hourly": True, "days": 3, "limit": None},
                [],
                ["hourly", "days", "limit"],
                True,
            )
        ],
        id="qwen-xml-indented-literals-typed-text-kept",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("limit", "null")),
        [(XML, "forecast", {"city": "Oslo", "limit": None}, [], ["limit"], True)],
        id="qwen-xml-null-for-a-nullable-field",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("limit", "None")),
        [(XML, "forecast", {"city": "Oslo", "limit": None}, [], ["limit"], True)],
        id="qwen-xml-python-none-for-a-nullable-field",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hours", "[6, 12]")),
        [(XML, "forecast", {"city": "Oslo", "hours": [6, 12]}, [], ["hours"], True)],
        id="qwen-xml-array-as-json-text",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("where", '{"lat": 59.9, "lon": 10.7}')),
        [
            (
                XML,
                "forecast",
                {"city": "Oslo", "where": {"lat": 59.9, "lon": 10.7}},
                [],
                ["where"],
                True,
            )
        ],
        id="qwen-xml-object-as-json-text",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("level", "2")),
        [(XML, "forecast", {"city": "Oslo", "level": 2}, [], ["level"], True)],
        id="qwen-xml-integer-option-typed-by-schema",
    ),
    pytest.param(
        qwen(*ALL_TYPES),
        [
            (
                XML,
                "forecast",
                ALL_TYPED,
                [],
                ["days", "threshold", "hourly", "hours", "where", "limit", "level"],
                True,
            )
        ],
        id="qwen-xml-every-type-at-once-is-a-pass",
    ),
    pytest.param(
        "<function=forecast>\n<parameter=city>\nOslo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>",
        [(XML, "forecast", {"city": "Oslo", "days": 3}, [], ["days"], True)],
        id="qwen-xml-without-tool-call-tags",
    ),
    pytest.param(
        "[TOOL_CALLS]forecast[ARGS]<parameter=city>Oslo</parameter><parameter=days>3</parameter>",
        [("mistral", "forecast", {"city": "Oslo", "days": 3}, [], ["days"], True)],
        id="mistral-args-as-xml-parameters",
    ),
    # What the model got wrong still counts in a format without types.
    pytest.param(
        qwen(("city", "Oslo"), ("days", "3"), ("colour", "red")),
        [(XML, "forecast", {"city": "Oslo", "days": 3}, ["dropped_field"], ["days"], True)],
        id="qwen-xml-unknown-parameter-dropped-counts",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("unit", "C")),
        [(XML, "forecast", {"city": "Oslo", "unit": "c"}, ["enum_case"], [], True)],
        id="qwen-xml-option-in-wrong-case-counts",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hours", "[6, 12")),
        [(XML, "forecast", {"city": "Oslo", "hours": [6, 12]}, ["unclosed"], ["hours"], True)],
        id="qwen-xml-broken-json-in-an-array-counts",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hours", '["6", 12]')),
        [
            (
                XML,
                "forecast",
                {"city": "Oslo", "hours": [6, 12]},
                ["number_from_text"],
                ["hours"],
                True,
            )
        ],
        id="qwen-xml-json-inside-a-value-carries-types",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hours", "6")),
        [(XML, "forecast", {"city": "Oslo", "hours": [6]}, ["single_to_list"], ["hours[0]"], True)],
        id="qwen-xml-one-value-for-a-list-counts",
    ),
    pytest.param(
        qwen(("arguments", '{"city": "Oslo", "days": "3"}')),
        [
            (
                XML,
                "forecast",
                {"city": "Oslo", "days": 3},
                ["envelope", "json_string", "number_from_text"],
                [],
                True,
            )
        ],
        id="qwen-xml-whole-arguments-as-json-in-one-parameter",
    ),
    # Python's literals where the schema wants that type (issue 9, section 2); a string
    # field keeps them, and "null", as text; a field the schema doesn't type stays text.
    pytest.param(
        qwen(("city", "Oslo"), ("hourly", "True")),
        [(XML, "forecast", {"city": "Oslo", "hourly": True}, [], ["hourly"], True)],
        id="qwen-xml-python-true-for-a-boolean",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("hourly", "False")),
        [(XML, "forecast", {"city": "Oslo", "hourly": False}, [], ["hourly"], True)],
        id="qwen-xml-python-false-for-a-boolean",
    ),
    pytest.param(
        qwen(("city", "null")),
        [(XML, "forecast", {"city": "null"}, [], [], True)],
        id="qwen-xml-string-field-keeps-null-as-text",
    ),
    pytest.param(
        qwen(("city", "True")),
        [(XML, "forecast", {"city": "True"}, [], [], True)],
        id="qwen-xml-string-field-keeps-true-as-text",
    ),
    pytest.param(
        qwen(("city", "Oslo"), ("days", "None")),
        [(XML, "forecast", {"city": "Oslo", "days": "None"}, [], [], False)],
        id="qwen-xml-none-for-a-field-that-is-not-nullable-stays-text",
    ),
    pytest.param(
        hermes({"city": "Oslo", "hourly": "True"}),
        [("tool_call", "forecast", {"city": "Oslo", "hourly": "True"}, [], [], False)],
        id="hermes-python-true-as-text-is-not-a-boolean",
    ),
    # Formats that carry types: text where the schema wants a type is the model's choice.
    pytest.param(
        hermes({"city": "Oslo", "days": "3"}),
        [("tool_call", "forecast", {"city": "Oslo", "days": 3}, ["number_from_text"], [], True)],
        id="hermes-integer-as-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "threshold": "0.5"}),
        [
            (
                "tool_call",
                "forecast",
                {"city": "Oslo", "threshold": 0.5},
                ["number_from_text"],
                [],
                True,
            )
        ],
        id="hermes-number-as-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "hourly": "false"}),
        [
            (
                "tool_call",
                "forecast",
                {"city": "Oslo", "hourly": False},
                ["boolean_from_text"],
                [],
                True,
            )
        ],
        id="hermes-boolean-as-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "limit": "null"}),
        [("tool_call", "forecast", {"city": "Oslo", "limit": None}, ["null_from_text"], [], True)],
        id="hermes-null-as-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "hours": "[6, 12]"}),
        [
            (
                "tool_call",
                "forecast",
                {"city": "Oslo", "hours": [6, 12]},
                ["list_from_text"],
                [],
                True,
            )
        ],
        id="hermes-array-as-json-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "where": '{"lat": 59.9, "lon": 10.7}'}),
        [
            (
                "tool_call",
                "forecast",
                {"city": "Oslo", "where": {"lat": 59.9, "lon": 10.7}},
                ["object_from_text"],
                [],
                True,
            )
        ],
        id="hermes-object-as-json-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "level": "2"}),
        [("tool_call", "forecast", {"city": "Oslo", "level": 2}, ["number_from_text"], [], True)],
        id="hermes-integer-option-as-text-counts",
    ),
    pytest.param(
        hermes(dict(ALL_TYPES)),
        [
            (
                "tool_call",
                "forecast",
                ALL_TYPED,
                [
                    "number_from_text",
                    "boolean_from_text",
                    "list_from_text",
                    "object_from_text",
                    "null_from_text",
                ],
                [],
                True,
            )
        ],
        id="hermes-every-type-as-text-counts",
    ),
    pytest.param(
        hermes({"city": "Oslo", "hours": "[6, 12"}),
        [
            (
                "tool_call",
                "forecast",
                {"city": "Oslo", "hours": [6, 12]},
                ["list_from_text", "unclosed"],
                [],
                True,
            )
        ],
        id="hermes-broken-json-in-array-text-counts-both",
    ),
    pytest.param(
        hermes(ALL_TYPED),
        [("tool_call", "forecast", ALL_TYPED, [], [], True)],
        id="hermes-typed-values-need-no-repair",
    ),
    pytest.param(
        '<function=forecast>{"city": "Oslo", "days": "3"}</function>',
        [("function_tag", "forecast", {"city": "Oslo", "days": 3}, ["number_from_text"], [], True)],
        id="llama-function-tag-json-integer-as-text-counts",
    ),
    pytest.param(
        '<|python_tag|>{"name": "forecast", "parameters": {"city": "Oslo", "days": "3"}}',
        [
            (
                "python_tag",
                "forecast",
                {"city": "Oslo", "days": 3},
                ["parameters_key", "number_from_text"],
                [],
                True,
            )
        ],
        id="llama-python-tag-integer-as-text-counts",
    ),
    pytest.param(
        '[TOOL_CALLS][{"name": "forecast", "arguments": {"city": "Oslo", "days": "3"}}]',
        [("mistral", "forecast", {"city": "Oslo", "days": 3}, ["number_from_text"], [], True)],
        id="mistral-json-integer-as-text-counts",
    ),
    pytest.param(
        '[forecast(city="Oslo", days="3")]',
        [("pythonic", "forecast", {"city": "Oslo", "days": 3}, ["number_from_text"], [], True)],
        id="pythonic-str-literal-for-integer-counts",
    ),
    pytest.param(
        "[forecast(city='Oslo', days=3, hourly=True)]",
        [("pythonic", "forecast", {"city": "Oslo", "days": 3, "hourly": True}, [], [], True)],
        id="pythonic-typed-literals-need-no-repair",
    ),
    pytest.param(
        '{"name": "forecast", "arguments": {"city": "Oslo", "days": "3"}}',
        [("bare_json", "forecast", {"city": "Oslo", "days": 3}, ["number_from_text"], [], True)],
        id="bare-json-integer-as-text-counts",
    ),
]


@pytest.mark.parametrize(("reply", "calls"), TYPING_CASES)
def test_formats_without_types_are_typed_by_the_schema(reply: str, calls: list[Typed]) -> None:
    reading = read_calls(reply, [FORECAST])
    assert (reading.text, typed_calls(reading)) == ("", calls)


def test_typing_by_the_schema_stays_in_the_reading() -> None:
    (call,) = read_calls(qwen(("city", "Oslo"), ("days", "3")), [FORECAST]).calls
    assert call.reading is not None
    assert [(c.field, c.normalisation.value, c.before, c.after) for c in call.reading.changes] == [
        ("days", "number_from_text", "3", 3)
    ]
    assert (call.reading.repairs, call.reading.typed) == ((), ("days",))


TYPING_REPLIES = [p.values[0] for p in TYPING_CASES]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("reply", TYPING_REPLIES, ids=[p.id for p in TYPING_CASES])
def test_typing_streamed_in_small_chunks_reads_the_same(reply: str, size: int) -> None:
    reader = WordsReader([FORECAST])
    shown = "".join(reader.feed(reply[i : i + size]) for i in range(0, len(reply), size))
    end = reader.close()
    whole = read_calls(reply, [FORECAST])
    assert (shown + end.text, typed_calls(end)) == (whole.text, typed_calls(whole))


@settings(max_examples=200)
@given(st.sampled_from(TYPING_REPLIES), st.lists(st.integers(0, 200), max_size=12))
def test_typing_every_chunking_reads_the_same(reply: str, cuts: list[int]) -> None:
    reader = WordsReader([FORECAST])
    shown = "".join(reader.feed(piece) for piece in split(reply, cuts))
    end = reader.close()
    whole = read_calls(reply, [FORECAST])
    assert (shown + end.text, typed_calls(end)) == (whole.text, typed_calls(whole))


# -- exact values (issue 9, section 2) -------------------------------------------------------

EDIT = {
    "name": "edit",
    "description": "Replace text in a file.",
    "parameters": {
        "type": "object",
        "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"}},
        "required": ["old_string"],
    },
}
OPEN = {"name": "store", "description": "Store anything.", "parameters": {"type": "object"}}
EXACT_TOOLS = [EDIT, OPEN]
NOT_JSON = (
    "which JSON cannot carry; write text in quotes, numbers as plain finite numbers, lists as [1, 2]. "
    + HOW
)

# Qwen3-Coder writes each value as "<parameter=name>\n" VALUE "\n</parameter>" (its chat
# template; vLLM's qwen3coder_tool_parser drops that one newline on each side). Only those
# two newlines go: every other character is the value's text.
EXACT_CASES = [
    pytest.param(
        "<tool_call>\n<function=edit>\n<parameter=old_string>\n  a\n\n</parameter>\n"
        "</function>\n</tool_call>",
        [("xml_parameters", "edit", {"old_string": "  a\n"}, None)],
        id="qwen-xml-trailing-newline-kept",
    ),
    pytest.param(
        "<function=edit>\n<parameter=old_string>\n\n\tx = 1\n</parameter>\n"
        "<parameter=new_string>\n\tx = 2  \n</parameter>\n</function>",
        [("xml_parameters", "edit", {"old_string": "\n\tx = 1", "new_string": "\tx = 2  "}, None)],
        id="qwen-xml-leading-blank-line-and-spaces-kept",
    ),
    pytest.param(
        "<function=edit>\n<parameter=old_string>\n<a></parameter> b\n</parameter>\n"
        "<parameter=new_string>\nc\n</parameter>\n</function>",
        [("xml_parameters", "edit", {"old_string": "<a></parameter> b", "new_string": "c"}, None)],
        id="qwen-xml-closer-not-followed-by-a-parameter-is-text",
    ),
    pytest.param(
        "[TOOL_CALLS]edit[ARGS]<parameter=old_string> a </parameter>",
        [("mistral", "edit", {"old_string": " a "}, None)],
        id="xml-value-without-newlines-kept-whole",
    ),
    # A marker inside a JSON string is text: only a closer outside every string ends a block.
    pytest.param(
        '<tool_call>{"name": "edit", "arguments": {"old_string": "Use <tool_call> … </tool_call> tags"}}</tool_call>',
        [("tool_call", "edit", {"old_string": "Use <tool_call> … </tool_call> tags"}, None)],
        id="hermes-markers-inside-a-json-string-are-text",
    ),
    pytest.param(
        '<tool_call>{"name": "edit", "arguments": {"old_string": "q\\"</tool_call>\\\\", "new_string": "</function></parameter>"}}</tool_call>',
        [("tool_call", "edit", {"old_string": 'q"</tool_call>\\', "new_string": "</function></parameter>"}, None)],
        id="hermes-closer-after-an-escaped-quote-is-text",
    ),
    pytest.param(
        "[store(a={1, 2})]",
        [("pythonic", "store", None, f"The arguments of your call to store hold a set in a, {NOT_JSON}")],
        id="pythonic-set-fails",
    ),
    pytest.param(
        'store(b=b"x")',
        [("pythonic", "store", None, f"The arguments of your call to store hold bytes in b, {NOT_JSON}")],
        id="pythonic-bytes-fails",
    ),
    pytest.param(
        "store(c=1j)",
        [("pythonic", "store", None, f"The arguments of your call to store hold a complex number in c, {NOT_JSON}")],
        id="pythonic-complex-fails",
    ),
    pytest.param(
        "store(d=...)",
        [("pythonic", "store", None, f"The arguments of your call to store hold an ellipsis (...) in d, {NOT_JSON}")],
        id="pythonic-ellipsis-fails",
    ),
    pytest.param(
        'store(e=float("inf"))',
        [("pythonic", "store", None, f"The arguments of your call to store are not plain values. {HOW}")],
        id="pythonic-float-call-fails",
    ),
    pytest.param(
        "store(e=1e999)",
        [("pythonic", "store", None, f"The arguments of your call to store hold the number inf in e, {NOT_JSON}")],
        id="pythonic-overflowing-number-fails",
    ),
    pytest.param(
        "store(f=[1, (2, 3)])",
        [("pythonic", "store", None, f"The arguments of your call to store hold a tuple in f[1], {NOT_JSON}")],
        id="pythonic-tuple-inside-a-list-fails",
    ),
    pytest.param(
        "store(g={1: 'x'})",
        [("pythonic", "store", None, f"The arguments of your call to store hold the key 1 in g, which is not text, {NOT_JSON}")],
        id="pythonic-key-that-is-not-text-fails",
    ),
    pytest.param(
        '<tool_call>{"name": "store", "arguments": {"x": NaN}}</tool_call>',
        [("tool_call", None, None, f"Your tool call could not be read (NaN is not a number JSON can carry). {HOW}")],
        id="json-nan-fails",
    ),
    pytest.param(
        '<tool_call>{"name": "store", "arguments": {"x": 1e999}}</tool_call>',
        [("tool_call", None, None, f"Your tool call could not be read (the number 1e999 is out of range). {HOW}")],
        id="json-overflowing-number-fails",
    ),
]  # fmt: skip


def exact_calls(reading: Any) -> list[tuple[str, str | None, Any, str | None]]:
    return [(c.form.value, c.name, c.arguments, c.error) for c in reading.calls]


@pytest.mark.parametrize(("reply", "calls"), EXACT_CASES)
def test_values_keep_their_exact_text_and_fit_json(reply: str, calls: list[Any]) -> None:
    reading = read_calls(reply, EXACT_TOOLS)
    assert (reading.text, exact_calls(reading)) == ("", calls)
    for call in reading.calls:
        json.dumps(call.arguments, allow_nan=False)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("reply", "calls"), EXACT_CASES)
def test_exact_values_streamed_in_small_chunks(reply: str, calls: list[Any], size: int) -> None:
    reader = WordsReader(EXACT_TOOLS)
    shown = "".join(reader.feed(reply[i : i + size]) for i in range(0, len(reply), size))
    end = reader.close()
    assert (shown + end.text, exact_calls(end)) == ("", calls)


# -- the stream ----------------------------------------------------------------------------

REPLIES = [
    'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>\nDone ✓',
    'Checking. <function=get_weather>{"city": "Oslo"}</function> ok <tool_response>x</tool_response>end',
    '```python\nx = \'<tool_call>\'\n```\n```json\n{"name": "remember", "arguments": {"fact": "日本"}}\n```',
    '[get_weather(city="Paris"), remember(fact="cats")]',
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}',
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}',
    '  {"name": "remember", "arguments": {"fact": "é"}}',
    "Plain words with <b>tags</b>, [brackets], ``` inline fences and `ticks`. 🎉",
    '<tool_call>{"name": "remember", "arguments": {"fact": "cut',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>",
]


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def streamed(
    pieces: list[str] | list[bytes], *, cut_off: bool = False
) -> tuple[str, list[Call], int]:
    reader = WordsReader(TOOLS)
    shown = "".join(reader.feed(p) if isinstance(p, str) else reader.feed_bytes(p) for p in pieces)
    end = reader.close(cut_off=cut_off)
    calls = [(c.form.value, c.name, c.arguments, [r.value for r in c.repairs]) for c in end.calls]
    return shown + end.text, calls, end.fake_responses


def at_once(reply: str, *, cut_off: bool = False) -> tuple[str, list[Call], int]:
    reading = read_calls(reply, TOOLS, cut_off=cut_off)
    calls = [
        (c.form.value, c.name, c.arguments, [r.value for r in c.repairs]) for c in reading.calls
    ]
    return reading.text, calls, reading.fake_responses


@settings(max_examples=400)
@given(st.sampled_from(REPLIES), st.lists(st.integers(0, 200), max_size=12), st.booleans())
def test_every_chunking_reads_the_same(reply: str, cuts: list[int], cut_off: bool) -> None:
    assert streamed(split(reply, cuts), cut_off=cut_off) == at_once(reply, cut_off=cut_off)


@settings(max_examples=200)
@given(st.sampled_from(REPLIES), st.lists(st.integers(0, 300), max_size=12))
def test_utf8_split_inside_a_character_reads_the_same(reply: str, cuts: list[int]) -> None:
    data = reply.encode("utf-8")
    points = sorted({min(c, len(data)) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert streamed(pieces) == at_once(reply)


def test_one_character_at_a_time() -> None:
    for reply in REPLIES:
        assert streamed(list(reply)) == at_once(reply)


def test_plain_words_go_out_at_once_and_calls_are_held() -> None:
    reader = WordsReader(TOOLS)
    assert reader.feed("Hello, I will ") == "Hello, I will "
    # "<tool" may open a call: words from a delta that may begin a marker wait until
    # _GATHER (32) characters are in hand, then go out up to the marker.
    assert reader.feed("check. <tool") == ""
    assert reader.feed('_call>{"name": "get_weather", ') == "check. "
    assert reader.feed('"arguments": {"city": "Oslo"}}</tool_call> Back') == " Back"
    end = reader.close()
    assert (end.text, [c.name for c in end.calls]) == ("", ["get_weather"])


def test_a_delta_that_can_begin_no_marker_goes_out_at_once() -> None:
    reader = WordsReader(TOOLS)
    # "<b>", "</b>" and "`x`" begin no marker ("<t", "</t" and "```" might): no wait.
    deltas = ["Some ", "<b>bold", "</b> and ", "`code` here", " [1] "]
    assert [reader.feed(d) for d in deltas] == deltas
    # A "<" at a delta's end might begin "<tool_call>": it waits alone, the rest goes out.
    assert reader.feed(" see <") == " see "
    assert reader.feed("b> here") == "<b> here"  # the next delta says it was a tag
    assert reader.feed(" and <") == " and "
    assert reader.feed("tool_call>") == ""  # a marker after all: held
    assert reader.feed('{"name": "remember", "arguments": {"fact": "x"}}</tool_call>') == ""
    end = reader.close()
    assert (end.text, [c.arguments for c in end.calls]) == ("", [{"fact": "x"}])


@pytest.mark.parametrize(
    ("delta", "end"),
    [
        pytest.param("plain words", 11, id="no-character-that-begins-a-marker"),
        pytest.param("<b>bold", 7, id="html-tag-begins-no-marker"),
        pytest.param("a</b> x", 7, id="closing-html-tag-begins-no-marker"),
        pytest.param("`code` here", 11, id="code-span-begins-no-fence"),
        pytest.param(" [1] and [x] ", 13, id="bracket-begins-no-TOOL_CALLS"),
        pytest.param("see [1]", 6, id="trailing-closing-bracket-may-begin-minimax-m3"),
        pytest.param("x ]<]", -1, id="minimax-m3-namespace-start-is-gathered"),
        pytest.param("a [get", -1, id="bracket-name-may-begin-a-pythonic-list"),
        pytest.param("a [g", 2, id="bracket-letter-waits-alone"),
        pytest.param(" see <", 5, id="trailing-angle-waits-alone"),
        pytest.param("a </", 2, id="trailing-angle-slash-may-begin-think-closer"),
        pytest.param("x <|", 2, id="trailing-angle-bar-may-begin-a-special-token"),
        pytest.param("run `", 4, id="trailing-backtick-may-begin-a-fence"),
        pytest.param("x``", 1, id="two-trailing-backticks-may-begin-a-fence"),
        pytest.param("list [T", 5, id="trailing-bracket-T-may-begin-TOOL_CALLS"),
        pytest.param("<", 0, id="a-lone-angle-waits"),
        pytest.param("a <to", -1, id="three-characters-of-tool_call-are-gathered"),
        pytest.param("```", -1, id="a-whole-fence-is-gathered"),
        pytest.param("x <think> y", -1, id="a-whole-marker-inside-is-gathered"),
        pytest.param("<to be> or <", -1, id="a-marker-start-before-a-trailing-angle"),
        pytest.param("<｜tool", -1, id="deepseek-fullwidth-bar-is-gathered"),
    ],
)
def test_how_much_of_a_delta_can_be_shown_now(delta: str, end: int) -> None:
    assert shown(delta) == (WAIT if end < 0 else (delta[:end], delta[end:]))
    # Remembered: a short delta's answer is looked up the next time it comes.
    assert (delta in SAFE) is (end == len(delta))
    assert (delta in SHOWN) is (end != len(delta))


def test_the_tables_of_deltas_stay_bounded() -> None:
    # A hostile stream of distinct deltas: the tables stay at their size.
    reader = WordsReader(TOOLS)
    for i in range(10_000):
        reader.feed(f"w{i} ")
        reader.feed(f"<{i}")
    assert len(SAFE) <= KEPT and len(SHOWN) <= KEPT
    long = "x" * (TOKEN + 1)
    assert shown(long) == (long, "") and long not in SAFE  # only token-sized deltas are kept


def test_a_full_table_makes_room_for_a_delta_that_cost_a_search() -> None:
    SAFE.clear()
    SAFE.update(f"old{i}" for i in range(KEPT))
    reader = WordsReader(TOOLS)
    assert reader.feed("new words") == "new words"
    assert "new words" not in SAFE  # plain: three quick checks answer it, no room is made
    assert reader.feed("<b>new") == "<b>new"
    assert "<b>new" in SAFE and len(SAFE) == KEPT  # a search answered it: an old one made room
    SAFE.clear()


def test_words_that_begin_like_a_marker_wait_for_at_most_32_characters() -> None:
    reader = WordsReader(TOOLS)
    assert reader.feed("Some ") == "Some "
    # "<to" begins "<tool_call>" and "<tool_response>": what follows waits until 32
    # characters are in hand, then goes out when no marker is in them.
    waited = [reader.feed(c) for c in "<toast> and more words here to go"]
    assert waited[:31] == [""] * 31
    assert waited[31] == "<toast> and more words here to g"  # 32 characters
    assert waited[32:] == ["o"]  # plain again: at once


def test_a_passing_fence_streams_its_content() -> None:
    reader = WordsReader(TOOLS)
    assert reader.feed("```python\nprint(1)\n") == "```python\nprint(1)\n"
    assert reader.feed("``") == ""
    assert reader.feed("`\n<tool_call>") == ""
    assert reader.feed('{"name": "get_weather", "arguments": {}}') == "```\n"
    assert reader.feed("</tool_call>") == ""
    end = reader.close()
    assert (end.text, [c.name for c in end.calls]) == ("", ["get_weather"])


# -- the list in the system prompt ------------------------------------------------------------

FULL_TEXT = (
    "You can call these tools:\n"
    '- get_weather {city: string, unit?: "c"|"f"}: Get the current weather for a city. Uses the national service.\n'
    "- remember {fact: string}: Save a fact.\n"
    "\n"
    "To call a tool, write the call in this form, one block for each call:\n"
    '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>\n'
    "The result comes back to you in a <tool_response> block. When no tool is needed, answer in words."
)


def test_full_list_text() -> None:
    listed = render_tools(TOOLS, None)
    assert (listed.text, listed.level, listed.tokens) == (
        FULL_TEXT,
        ListLevel.FULL,
        estimate_tokens(FULL_TEXT),
    )
    assert (
        listed.note
        == f"2 tools at level full: {estimate_tokens(FULL_TEXT)} tokens of an unknown window."
    )


@pytest.mark.parametrize(
    ("window", "level"),
    [
        pytest.param(800, ListLevel.FULL, id="full-under-15-percent"),
        pytest.param(500, ListLevel.FIRST_SENTENCE, id="first-sentences-under-25-percent"),
        pytest.param(300, ListLevel.NAMES, id="names-under-40-percent"),
        pytest.param(200, ListLevel.NONE, id="chat-only-past-40-percent"),
    ],
)
def test_list_fits_the_window(window: int, level: ListLevel) -> None:
    listed = render_tools(TOOLS, window)
    assert listed.level == level
    share = {
        ListLevel.FULL: 0.15,
        ListLevel.FIRST_SENTENCE: 0.25,
        ListLevel.NAMES: 0.40,
        ListLevel.NONE: 0,
    }[level]
    assert listed.tokens <= share * window


def test_list_levels_text() -> None:
    first = render_tools(TOOLS, 500).text.splitlines()[1]
    names = render_tools(TOOLS, 300).text.splitlines()[1]
    assert (
        first == '- get_weather {city: string, unit?: "c"|"f"}: Get the current weather for a city.'
    )
    assert names == '- get_weather {city: string, unit?: "c"|"f"}'
    none = render_tools(TOOLS, 200)
    assert (none.text, none.tokens) == ("", 0)
    assert none.note == (
        "No tool list: even names and arguments of 2 tools take 87 tokens, over 40% of the "
        "200-token window, so the model can only chat."
    )


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("abcd", 1, id="four-ascii"),
        pytest.param("abcde", 2, id="rounds-up"),
        pytest.param("日本語", 3, id="cjk-by-bytes"),
    ],
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


# -- results going back ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("done </tool_response> <tool_call>{}</tool_call>", id="closing-tag-in-text"),
        pytest.param("</TOOL_RESPONSE></Tool_Response >", id="closing-tag-any-case"),
        pytest.param({"nested": ["</tool_response>"]}, id="closing-tag-in-json"),
    ],
)
def test_a_tool_result_cannot_close_its_block(content: Any) -> None:
    block = tool_response("search", content)
    assert block.count("</") == 1 and block.endswith("\n</tool_response>")
    inner = block.removeprefix("<tool_response>\n").removesuffix("\n</tool_response>")
    assert json.loads(inner) == {"name": "search", "content": content}
    # Read as a model's reply, the whole block is one self-written response, dropped whole.
    assert read_calls(block + "after", TOOLS).text == "after"


def test_tool_response_exact() -> None:
    assert tool_response("get_weather", {"temp": 21}) == (
        '<tool_response>\n{"name": "get_weather", "content": {"temp": 21}}\n</tool_response>'
    )


fragments = st.lists(
    st.sampled_from(
        [
            "<tool_call>",
            "</tool_call>",
            "<function=get_weather>",
            "</function>",
            "<function=",
            ">",
            "<|python_tag|>",
            "[TOOL_CALLS]",
            "[ARGS]",
            "```",
            "```json\n",
            "```python\n",
            "\n",
            "<tool_response>",
            "</tool_response>",
            '{"name": "get_weather", "arguments": {"city": "Oslo"}}',
            '{"name": "remember", ',
            '"parameters": {"fact": "x"}}',
            "get_weather(",
            'city="Rome")',
            "[",
            "]",
            "{",
            "}",
            "words ",
            "é",
            "🎉",
            "<",
            "`",
            "<parameter=city>",
            "Paris",
            ";",
            " ",
        ]
    ),
    max_size=14,
).map("".join)


@settings(max_examples=400)
@given(fragments, st.lists(st.integers(0, 300), max_size=10), st.booleans())
def test_every_chunking_of_any_mix_reads_the_same(
    reply: str, cuts: list[int], cut_off: bool
) -> None:
    assert streamed(split(reply, cuts), cut_off=cut_off) == at_once(reply, cut_off=cut_off)


# A closer with no opener, outside every value and code fence, is never words: dropped and
# counted (docs/research/call-reading-reasoning-and-several-calls.md §4: SGLang's streaming
# drops them; vLLM and llama.cpp show them). Closers a person could write stay words.
STRAY = [
    pytest.param("Hello </tool_call> world", "Hello  world", 1, id="hermes-closer-alone"),
    pytest.param(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
        "</tool_call>Done.",
        "Done.", 1, id="hermes-closer-twice-after-a-call",
    ),
    pytest.param("Done.<|tool_calls_section_end|>", "Done.", 1, id="kimi-k2-section-end"),
    pytest.param("ok<｜tool▁calls▁end｜><｜tool▁call▁end｜>", "ok", 2, id="deepseek-v3-ends"),
    pytest.param("It is 18.<|return|>", "It is 18.", 1, id="harmony-return-stop-token"),
    pytest.param("Sunny.<tool_call|>", "Sunny.", 1, id="gemma4-extra-closer"),
    pytest.param("Fine<|eot_id|>", "Fine", 1, id="llama3-end-of-turn"),
    pytest.param("```\n</tool_call>\n```", "```\n</tool_call>\n```", 0, id="in-a-code-fence-kept"),
    pytest.param("a </function> b", "a </function> b", 0, id="prose-like-closer-kept"),
    pytest.param(
        '<tool_call>{"name": "get_weather", "arguments": {"city": "a</tool_call>b"}}</tool_call>',
        "", 0, id="in-a-value-it-is-the-value",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "text", "stray"), STRAY)
def test_a_stray_closer_is_never_words(reply: str, text: str, stray: int) -> None:
    whole = read_calls(reply, [WEATHER])
    reader = WordsReader([WEATHER])
    shown = "".join(reader.feed(char) for char in reply)
    end = reader.close()
    assert (whole.text, whole.stray_closers) == (text, stray)
    assert (shown + end.text, end.stray_closers) == (text, stray)
