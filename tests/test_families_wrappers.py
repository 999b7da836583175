"""Calls in wrappers no family owns, read as forgivingly as llama.cpp's Hermes 2 Pro parser and
each wrapper named as a repair (docs/research/call-formats-step3-xlam-phi4-cohere-
functiongemma-claude-react-mistral.md, section 9): a wrapper is a call only when it holds one
naming an offered tool, and words exactly as written otherwise.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.words import WordsReader, read_calls
from tests.test_families import TOOLS, as_deltas, fails, in_chunks, in_cuts, never_mended

Call = tuple[str, "str | None", Any, list[str], "str | None"]


def calls_of(reading: Any) -> list[Call]:
    return [
        (c.form.value, c.name, c.arguments, [r.value for r in c.repairs], c.error)
        for c in reading.calls
    ]


OSLO = {"city": "Oslo", "days": 1}
CALL = '{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}}'
WRITE = '{"name": "write_file", "arguments": {"path": "a.md", "content": "%s"}}'


def weather(form: str, *repairs: str) -> Call:
    return (form, "get_weather", OSLO, list(repairs), None)


def written(content: str, form: str, *repairs: str) -> Call:
    return (form, "write_file", {"path": "a.md", "content": content}, list(repairs), None)


# (reply, text the user sees, [(form, name, arguments, repairs, error)])
CASES = [
    # A code fence that holds no call shows exactly as written, closed or not.
    pytest.param('```json\n{"a": 1}', '```json\n{"a": 1}', [], id="unclosed-json-fence-no-call"),
    pytest.param("See:\n```\nx = 1\n", "See:\n```\nx = 1\n", [], id="unclosed-bare-fence-words"),
]

# -- llama.cpp's lenient wrappers: the tags its Hermes 2 Pro parser takes around a call's JSON
# (common/chat-parser.cpp @05e5139a; the note's section 9(c) cases), read as tool_call with the
# wrapper named.
CASES += [
    pytest.param(f"<tool>{CALL}</tool>", "", [weather("tool_call", "wrapper_tool")],
                 id="generic-tool-wrapper"),
    pytest.param(f"<tools>\n{CALL}\n</tools>", "", [weather("tool_call", "wrapper_tools")],
                 id="generic-tools-wrapper"),
    pytest.param(f"<response>{CALL}</response>", "", [weather("tool_call", "wrapper_response")],
                 id="generic-response-wrapper-holding-a-call"),
    pytest.param(f"<json>{CALL}</json>", "", [weather("tool_call", "wrapper_json")],
                 id="generic-json-wrapper"),
    pytest.param(f"Sure.\n<JSON>\n  {CALL}\n</JSON>\nDone.", "Sure.\n\nDone.",
                 [weather("tool_call", "wrapper_json")], id="upper-case-json-wrapper-words-around"),
    pytest.param(f"<xml>{CALL}</xml>", "", [weather("tool_call", "wrapper_xml")],
                 id="xml-wrapper"),
    pytest.param(f"<function_call>{CALL}</function_call>", "",
                 [weather("tool_call", "wrapper_function_call")], id="function-call-wrapper"),
    pytest.param(f"<tools>{CALL}</tool_call>", "",
                 [weather("tool_call", "wrapper_tools", "mismatched_closer")],
                 id="generic-mismatched-closer"),
    pytest.param(f"<tool>{CALL}</json> ok", " ok",
                 [weather("tool_call", "wrapper_tool", "mismatched_closer")],
                 id="another-wrappers-closer-words-after"),
    pytest.param(f"<tool>{CALL}\n", "", [weather("tool_call", "wrapper_tool", "mismatched_closer")],
                 id="wrapper-never-closed-holding-a-call"),
    pytest.param(f"<tool>{CALL}<tool>{CALL}</tool>", "",
                 [weather("tool_call", "wrapper_tool", "mismatched_closer"),
                  weather("tool_call", "wrapper_tool")],
                 id="wrapper-never-closed-before-the-next"),
    # A list of calls in a wrapper (llama.cpp takes one call only): each is a call.
    pytest.param(f"<tools>\n[\n  {CALL},\n  {CALL}\n]\n</tools>", "",
                 [weather("tool_call", "wrapper_tools"), weather("tool_call", "wrapper_tools")],
                 id="tools-wrapper-holding-a-list-of-calls"),
    pytest.param('<tools>[1, "</tools>"]</tools>', '<tools>[1, "</tools>"]</tools>', [],
                 id="tools-wrapper-holding-a-list-of-no-calls-is-words"),
    pytest.param('<tool>{"name": "get_weather", "parameters": {"city": "Oslo", "days": 1}}</tool>',
                 "", [weather("tool_call", "wrapper_tool", "parameters_key")],
                 id="wrapper-parameters-for-arguments"),
    pytest.param('<json>{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1},}</json>',
                 "", [weather("tool_call", "wrapper_json", "trailing_comma")],
                 id="wrapper-json-mended"),
    # A marker inside a JSON string is text, at the object's top level too (an arguments string).
    pytest.param("<tool>" + WRITE % "</tool> <tool_call> {\\\"name\\\"" + "</tool>", "",
                 [written('</tool> <tool_call> {"name"', "tool_call", "wrapper_tool")],
                 id="wrapper-markers-inside-a-string"),
    pytest.param('<json>{"name": "write_file", "arguments": "{\\"path\\": \\"a.md\\", '
                 '\\"content\\": \\"</json>\\"}"}</json>', "",
                 [written("</json>", "tool_call", "wrapper_json", "json_string")],
                 id="wrapper-closer-inside-a-top-level-string"),
]  # fmt: skip

# The tags are words a person writes (prose about HTML, XML or JSON): a wrapper that holds no
# call to an offered tool is words, exactly as written, and nothing waits for its closer.
CASES += [
    pytest.param("Wrap it in <json> tags, or <response> ones.",
                 "Wrap it in <json> tags, or <response> ones.", [], id="tags-in-prose-are-words"),
    pytest.param('<json>{"a": 1}</json>', '<json>{"a": 1}</json>', [], id="json-wrapper-no-call"),
    pytest.param('<response>{"name": "Bob", "arguments": {}}</response>',
                 '<response>{"name": "Bob", "arguments": {}}</response>', [],
                 id="wrapper-naming-no-offered-tool-is-words"),
    pytest.param(f"<tool>{CALL} as you asked</tool>", f"<tool>{CALL} as you asked</tool>", [],
                 id="wrapper-with-words-after-the-call-is-words"),
    pytest.param('<json>{"a": 1} and more', '<json>{"a": 1} and more', [],
                 id="wrapper-never-closed-no-call-is-words"),
    pytest.param('<xml>{"a": 1} then <tool_call>' + CALL + "</tool_call>",
                 '<xml>{"a": 1} then ', [weather("tool_call")],
                 id="wrapper-never-closed-before-a-hermes-call"),
    pytest.param(f"<think>Maybe <tool>{CALL}</tool>.</think>Fine.",
                 f"<think>Maybe <tool>{CALL}</tool>.</think>Fine.", [],
                 id="wrapper-in-reasoning-is-no-call"),
]  # fmt: skip

# <function name="f">{…}</function>: the attribute form of Llama's <function=f> (the same
# regex's last branch), read as function_tag and named.
CASES += [
    pytest.param('<function name="get_weather">{"city": "Oslo", "days": 1}</function>', "",
                 [weather("function_tag", "function_attribute")],
                 id="generic-function-name-attribute"),
    pytest.param('Sure. <function name="get_weather">\n{"city": "Oslo", "days": 1}\n</function>',
                 "Sure. ", [weather("function_tag", "function_attribute")],
                 id="function-name-attribute-on-lines"),
    pytest.param('<function name="write_file">{"path": "a.md", "content": "</function>"}'
                 "</function>", "", [written("</function>", "function_tag", "function_attribute")],
                 id="function-name-attribute-closer-inside-a-string"),
    pytest.param('<function name="get_weather">{"city": "Oslo", "days": 1}', "",
                 [weather("function_tag", "function_attribute", "mismatched_closer")],
                 id="function-name-attribute-never-closed"),
    pytest.param('<function name="nope">{"a": 1}</function>',
                 '<function name="nope">{"a": 1}</function>', [],
                 id="function-name-attribute-no-offered-tool-is-words"),
    pytest.param('<function name="get_weather">Oslo</function>',
                 '<function name="get_weather">Oslo</function>', [],
                 id="function-name-attribute-in-prose-is-words"),
]  # fmt: skip

# Code fences around a call or a wrapped one: ```, ```json and ```xml, as llama.cpp's opener
# regex takes them; the fence is named (fence, fence_xml), and so is the wrapper.
CASES += [
    pytest.param(f"```xml\n<tool_call>\n{CALL}\n</tool_call>\n```", "",
                 [weather("tool_call", "fence_xml")], id="generic-xml-fence-around-tool-call"),
    pytest.param(f"Here:\n```json\n<tool_call>{CALL}</tool_call>\n```\nDone.", "Here:\n\nDone.",
                 [weather("tool_call", "fence")], id="json-fence-around-tool-call"),
    pytest.param(f"```\n<tools>\n{CALL}\n</tool_call>\n```", "",
                 [weather("tool_call", "fence", "wrapper_tools", "mismatched_closer")],
                 id="bare-fence-around-a-wrapper-with-another-closer"),
    pytest.param(f"```xml\n{CALL}\n```", "", [weather("fence", "fence_xml")],
                 id="xml-fence-around-bare-json"),
    pytest.param(f"```json\n<tools>[{CALL}]</tools>\n```", "",
                 [weather("tool_call", "fence", "wrapper_tools")],
                 id="json-fence-around-a-wrapped-list"),
    pytest.param("```xml\n<config><name>x</name></config>\n```",
                 "```xml\n<config><name>x</name></config>\n```", [], id="xml-fence-no-call-words"),
    pytest.param(f"```xml\n<tool>{CALL}</tool>\nmore\n```",
                 f"```xml\n<tool>{CALL}</tool>\nmore\n```", [],
                 id="xml-fence-with-more-than-the-call-is-words"),
    pytest.param(f"```python\n<tool_call>{CALL}</tool_call>\n```",
                 f"```python\n<tool_call>{CALL}</tool_call>\n```", [],
                 id="code-fence-around-a-call-stays-code"),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_read_in_one_piece(reply: str, text: str, calls: list[Call]) -> None:
    reading = read_calls(reply, TOOLS)
    assert (reading.text, calls_of(reading)) == (text, calls)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_streamed(reply: str, text: str, calls: list[Call], size: int) -> None:
    assert in_chunks(reply, size, calls_of) == (text, calls)


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_streamed_as_deltas_arrive(reply: str, text: str, calls: list[Call]) -> None:
    assert as_deltas(reply, calls_of) == [(text, calls)] * 5


# A cut reply (cut_off=True) shows what a whole one does when nothing in it is a call.
@pytest.mark.parametrize(("reply", "text", "calls"), [c for c in CASES if not c.values[2]])
def test_a_cut_reply_with_no_call_shows_the_same_words(
    reply: str, text: str, calls: list[Call]
) -> None:
    reading = read_calls(reply, TOOLS, cut_off=True)
    assert (reading.text, calls_of(reading)) == (text, calls)


# A call's JSON after words: llama.cpp's Hermes 2 Pro parser finds '{"name"' anywhere in the
# reply. Read by the rule for a reply that is only JSON (call-shaped, naming an offered tool);
# its "{" (or a list's "[") waits for what follows it, so code and prose with braces pass.
GENERIC_TWO = (
    '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}, "id": '
    '"c001"}, {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}, "id": "c002"}]}'
)
ROME: Call = ("generic", "get_weather", {"city": "Rome", "days": 2}, [], None)
PRETTY = '{\n  "name": "get_weather",\n  "arguments": {"city": "Oslo", "days": 1}\n}'
CASES += [
    pytest.param(f"I will call it now. {CALL}", "I will call it now. ", [weather("bare_json")],
                 id="generic-prose-then-json-call"),
    pytest.param(f"Calling:{CALL} Done.", "Calling: Done.", [weather("bare_json")],
                 id="prose-then-json-call-then-words"),
    pytest.param(f"Here:\n{PRETTY}", "Here:\n", [weather("bare_json")],
                 id="prose-then-indented-json-call"),
    pytest.param(f"Both: [{CALL}, {CALL}]", "Both: ", [weather("bare_json"), weather("bare_json")],
                 id="prose-then-a-list-of-calls"),
    pytest.param(f"Both:\n[\n  {PRETTY}\n]", "Both:\n", [weather("bare_json")],
                 id="prose-then-an-indented-list"),
    pytest.param(f"One {CALL} and two {CALL}.", "One  and two .",
                 [weather("bare_json"), weather("bare_json")], id="prose-with-two-json-calls"),
    pytest.param("Sure. " + WRITE % '</tool_call>{\\"name\\": \\"x\\"} [TOOL_CALLS]', "Sure. ",
                 [written('</tool_call>{"name": "x"} [TOOL_CALLS]', "bare_json")],
                 id="prose-then-json-markers-inside-a-string"),
    pytest.param('Try {"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}', "Try ",
                 [weather("bare_json", "unclosed")], id="prose-then-json-never-closed-mended"),
    # Run `{…}` in a sentence is a call too, as llama.cpp reads it: nothing marks it as code.
    pytest.param(f"Run `{CALL}`.", "Run ``.", [weather("bare_json")],
                 id="json-call-in-inline-code-is-a-call"),
    pytest.param('Send {"name": "Bob", "age": 3} as input.',
                 'Send {"name": "Bob", "age": 3} as input.', [], id="prose-json-no-call-is-words"),
    pytest.param('Use {"name": "get_weather"} here.', 'Use {"name": "get_weather"} here.', [],
                 id="prose-json-naming-a-tool-with-no-arguments-is-words"),
    pytest.param('So {"name": "nope", "arguments": {}}.', 'So {"name": "nope", "arguments": {}}.',
                 [], id="prose-json-naming-no-offered-tool-is-words"),
    pytest.param('Say {"response": "hi"}.', 'Say {"response": "hi"}.', [],
                 id="prose-then-response-object-is-words"),
    pytest.param("if (x) {\n  y({\"a\": [1]});\n} [ ] {  }", "if (x) {\n  y({\"a\": [1]});\n} [ ] {  }",
                 [], id="code-with-braces-is-words"),
    pytest.param(f"```python\nx = {CALL}\n```", f"```python\nx = {CALL}\n```", [],
                 id="json-call-in-a-code-fence-stays-code"),
    pytest.param(f"<think>{CALL}</think>ok", f"<think>{CALL}</think>ok", [],
                 id="json-call-in-reasoning-is-no-call"),
    # llama.cpp's Generic format answers in words as {"response": "…"} (its L1 parser).
    pytest.param('{"response": "It is sunny in Oslo."}', "It is sunny in Oslo.", [],
                 id="generic-response-object-is-text"),
    pytest.param(GENERIC_TWO, "", [weather("generic"), ROME], id="generic-tool-calls-object"),
]  # fmt: skip


CUT_OFF = fails("Your tool call was cut off before it ended, so it was not run.")


def cut(form: str) -> Call:
    return (form, None, None, [], CUT_OFF)


# Replies cut by their token limit (cut_off=True): a wrapper holding a call to an offered tool
# is a cut call, never mended; one holding none is words as written.
CUT_READS = [
    pytest.param('<tool>{"name": "get_weather", "arguments": {"city": "Os', "",
                 [cut("tool_call")], id="cut-inside-a-wrapped-call"),
    pytest.param(f"Sure. <tools>\n{CALL}\n", "Sure. ", [cut("tool_call")],
                 id="cut-before-the-wrappers-closer"),
    pytest.param('<json>{"a": 1, "b": "x', '<json>{"a": 1, "b": "x', [],
                 id="cut-inside-a-wrapper-with-no-call-is-words"),
    pytest.param("Use <response>", "Use <response>", [], id="cut-after-a-tag-is-words"),
    pytest.param("<tool> \n", "<tool> \n", [], id="cut-in-a-wrappers-head-is-words"),
    pytest.param('<function name="get_weather">{"city": "Os', "", [cut("function_tag")],
                 id="cut-inside-a-function-name-attribute"),
    pytest.param('<function name="get_wea', '<function name="get_wea', [],
                 id="cut-inside-a-function-name-is-words"),
    pytest.param(f"```xml\n<tool_call>\n{CALL[:-5]}", "", [cut("tool_call")],
                 id="cut-inside-a-fenced-call"),
    pytest.param(f"```xml\n<tool_call>{CALL}</tool_call>\n", "", [weather("tool_call", "fence_xml")],
                 id="cut-after-a-fenced-call-closed"),
    pytest.param('Now {"name": "get_weather", "arguments": {"city": "Os', "Now ",
                 [cut("bare_json")], id="cut-inside-json-after-words"),
    pytest.param('See {"name": "Bob", "ag', 'See {"name": "Bob", "ag', [],
                 id="cut-inside-json-after-words-no-call-is-words"),
    pytest.param("Look {", "Look {", [], id="cut-after-a-brace-is-words"),
    # llama.cpp's Generic list cut in its second call keeps the first, closed before the cut.
    pytest.param(GENERIC_TWO[: GENERIC_TWO.index("Rome") + 2], "",
                 [weather("generic"), cut("generic")],
                 id="generic-tool-calls-object-with-cut-second-call"),
    pytest.param(GENERIC_TWO[: GENERIC_TWO.index("Oslo") + 2], "", [cut("generic")],
                 id="generic-tool-calls-object-cut-in-its-first-call"),
    pytest.param(GENERIC_TWO[: GENERIC_TWO.index('"c001"}') + 9], "", [weather("generic")],
                 id="generic-tool-calls-object-cut-after-a-call"),
]  # fmt: skip


@pytest.mark.parametrize(("reply", "text", "calls"), CUT_READS)
def test_a_cut_wrapper_is_cut_or_words(reply: str, text: str, calls: list[Call]) -> None:
    reading = read_calls(reply, TOOLS, cut_off=True)
    assert (reading.text, calls_of(reading)) == (text, calls)
    reader = WordsReader(TOOLS)
    shown = "".join(reader.feed(reply[i : i + 3]) for i in range(0, len(reply), 3))
    end = reader.close(cut_off=True)
    assert (shown + end.text, calls_of(end)) == (text, calls)


def _reply(case: str) -> str:
    return next(str(c.values[0]) for c in CASES if c.id == case)


# (case id, where its last call's arguments are complete): cut anywhere in the 12 characters
# before, the call being written never becomes one.
CUT = [
    pytest.param(_reply(case), _reply(case).rindex(done), id=case)
    for case, done in [
        ("generic-tool-wrapper", "1}}"),
        ("generic-tools-wrapper", "1}}"),
        ("tools-wrapper-holding-a-list-of-calls", "1}}"),
        ("generic-mismatched-closer", "1}}"),
        ("wrapper-never-closed-before-the-next", "1}}"),
        ("wrapper-markers-inside-a-string", '"}}'),
        ("generic-function-name-attribute", "1}"),
        ("function-name-attribute-closer-inside-a-string", '"}'),
        ("generic-xml-fence-around-tool-call", "1}}"),
        ("bare-fence-around-a-wrapper-with-another-closer", "1}}"),
        ("generic-prose-then-json-call", "1}}"),
        ("prose-then-a-list-of-calls", "1}}"),
        ("prose-then-json-markers-inside-a-string", '"}}'),
        ("generic-tool-calls-object", "2}"),
    ]
]


@pytest.mark.parametrize(("reply", "done"), CUT)
def test_a_reply_cut_inside_a_call_never_becomes_one(reply: str, done: int) -> None:
    never_mended(reply, done)


REPLIES = [str(p.values[0]) for p in CASES + CUT_READS]
PROSE = ["Sure. ", "a < b ", "<b>x</b> ", "if (x) {\n  y();\n} ", '{"name": "Bob"} ', "[1] ", "\n"]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    parts=st.lists(st.sampled_from(REPLIES + PROSE), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=400),
    cut_off=st.booleans(),
)
def test_any_chunking_reads_as_one_piece(parts: list[str], cuts: list[int], cut_off: bool) -> None:
    """Wrapped calls mixed with prose, cut anywhere: the stream reads the same words and calls
    as the whole reply."""
    reply = "".join(parts)
    whole = read_calls(reply, TOOLS, cut_off=cut_off)
    assert in_cuts(reply, cuts, cut_off=cut_off, calls_of=calls_of) == (whole.text, calls_of(whole))
