"""The forgiving JSON reader: every repair, every refusal, the limits, and its properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.repair import MAX_DEPTH, MAX_SIZE, Repair, Unreadable, read_json


@pytest.mark.parametrize(
    ("text", "value", "repairs"),
    [
        pytest.param('{"city": "Oslo"}', {"city": "Oslo"}, [], id="valid-json-fast-path"),
        pytest.param(
            '{"city": "Oslo",}', {"city": "Oslo"}, ["trailing_comma"], id="trailing-comma-object"
        ),
        pytest.param("[1, 2, ]", [1, 2], ["trailing_comma"], id="trailing-comma-list"),
        # Half a UTF-16 pair is no character: json.loads would give a lone surrogate, which
        # no UTF-8 text can hold. The escape stays as the model wrote it, like `\d`.
        pytest.param(
            '{"s": "a\\ud83db"}', {"s": "a\\ud83db"}, ["bad_escape"], id="lone-high-surrogate-kept"
        ),
        pytest.param(
            '{"s": "\\ude00"}', {"s": "\\ude00"}, ["bad_escape"], id="lone-low-surrogate-kept"
        ),
        pytest.param('{"s": "\\ud83d\\ude00"}', {"s": "😀"}, [], id="a-surrogate-pair-is-one-char"),
        pytest.param(
            '{"s": "\\u12"}', {"s": "\\u12"}, ["bad_escape"], id="short-unicode-escape-kept"
        ),
        pytest.param(
            '{"s": "\\\\ud83d"}', {"s": "\\ud83d"}, [], id="an-escaped-backslash-is-no-escape"
        ),
        # Cut right after a comma: closing it drops the comma too, and both are said.
        pytest.param(
            '{"a": 1,', {"a": 1}, ["trailing_comma", "unclosed"], id="cut-after-a-comma-in-object"
        ),
        pytest.param(
            '{"a": [1, ', {"a": [1]}, ["trailing_comma", "unclosed"], id="cut-after-a-comma-in-list"
        ),
        pytest.param(
            "{'city': 'Oslo'}", {"city": "Oslo"}, ["single_quotes"], id="python-dict-quotes"
        ),
        pytest.param(
            "{'q': 'it\\'s'}", {"q": "it's"}, ["single_quotes"], id="escaped-single-quote"
        ),
        pytest.param(
            "{'q': 'say \"hi\"'}", {"q": 'say "hi"'}, ["single_quotes"], id="double-inside-single"
        ),
        pytest.param(
            '{city: "Oslo", max_days: 3}',
            {"city": "Oslo", "max_days": 3},
            ["bare_key"],
            id="bare-keys",
        ),
        pytest.param(
            '{"a": True, "b": False, "c": None}',
            {"a": True, "b": False, "c": None},
            ["python_literal"],
            id="python-literals",
        ),
        pytest.param('{"a": 1} // the call', {"a": 1}, ["comment"], id="line-comment-after"),
        pytest.param('{/* why */ "a": 1}', {"a": 1}, ["comment"], id="block-comment-inside"),
        pytest.param('```json\n{"a": 1}\n```', {"a": 1}, ["fence"], id="json-fence"),
        pytest.param('```\n{"a": 1}\n```\n', {"a": 1}, ["fence"], id="bare-fence"),
        pytest.param('```json\n{"a": 1}', {"a": 1}, ["fence"], id="fence-never-closed"),
        pytest.param('{"a": "hel', {"a": "hel"}, ["unclosed"], id="unclosed-string"),
        pytest.param(
            '{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}, ["unclosed"], id="unclosed-nesting"
        ),
        pytest.param('{"a": 1, "b":', {"a": 1}, ["unclosed"], id="member-without-value-left-out"),
        pytest.param('{"a": 1, "b', {"a": 1}, ["unclosed"], id="key-cut-left-out"),
        pytest.param('{"a": 1, "b": tr', {"a": 1}, ["unclosed"], id="literal-cut-left-out"),
        pytest.param('{"a": fals', {}, ["unclosed"], id="only-member-cut-left-out"),
        pytest.param(
            '{"query": "x"}{"limit": 3}',
            {"query": "x", "limit": 3},
            ["joined_objects"],
            id="pieces-of-one-call-joined",
        ),
        pytest.param(
            '{"a": 1}\n{"b": 2}', {"a": 1, "b": 2}, ["joined_objects"], id="pieces-on-lines"
        ),
        pytest.param(
            '{"name": "f"}{"name": "g"}',
            {"name": "f"},
            ["extra_objects_dropped"],
            id="second-call-dropped",
        ),
        pytest.param("[1][2]", [1], ["extra_objects_dropped"], id="second-list-dropped"),
        pytest.param(
            '{"a": 1 "b": 2}', {"a": 1, "b": 2}, ["missing_comma"], id="missing-comma-members"
        ),
        pytest.param("[1 2]", [1, 2], ["missing_comma"], id="missing-comma-items"),
        pytest.param('{"a": 1}}', {"a": 1}, ["extra_closer"], id="closed-once-too-often"),
        pytest.param(
            '{"a": "x\ny"}', {"a": "x\ny"}, ["control_character"], id="raw-newline-in-string"
        ),
        pytest.param('{"re": "\\d+"}', {"re": "\\d+"}, ["bad_escape"], id="unknown-escape-kept"),
        pytest.param(
            '{"a": +1, "b": .5, "c": 2.}',
            {"a": 1, "b": 0.5, "c": 2.0},
            ["number_format"],
            id="loose-numbers",
        ),
        pytest.param(
            "```json\n{'a': True, b: [1, 2,], // note\n",
            {"a": True, "b": [1, 2]},
            [
                "fence",
                "single_quotes",
                "python_literal",
                "bare_key",
                "trailing_comma",
                "comment",
                "unclosed",
            ],
            id="everything-at-once",
        ),
        pytest.param(
            '{"__proto__": {"admin": true}, "constructor": 1}',
            {"__proto__": {"admin": True}, "constructor": 1},
            [],
            id="proto-is-a-plain-key",
        ),
        pytest.param(
            "{'__proto__': 1}", {"__proto__": 1}, ["single_quotes"], id="proto-plain-on-slow-path"
        ),
        pytest.param(
            '{"e": "\\ud83d\\ude00", "n": "\\u00e9"}',
            {"e": "😀", "n": "é"},
            [],
            id="surrogate-pair",
        ),
        pytest.param(
            "{'e': '\\ud83d\\ude00'}", {"e": "😀"}, ["single_quotes"], id="surrogate-pair-slow-path"
        ),
        pytest.param(
            '"{\\"a\\": 1}"', '{"a": 1}', [], id="json-string-is-valid-json-left-for-arguments"
        ),
        pytest.param("  \ufeff[]  ", [], ["fence"] * 0, id="bom-and-spaces"),
    ],
)
def test_repairs(text: str, value: object, repairs: list[str]) -> None:
    reading = read_json(text)
    assert reading.value == value
    assert [r.value for r in reading.repairs] == repairs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "",
            "Could not read the text as JSON at line 1, column 1: there is no JSON value in it.",
            id="empty",
        ),
        pytest.param(
            "hello",
            "Could not read the text as JSON at line 1, column 1: expected a value.",
            id="prose",
        ),
        pytest.param(
            '{"a": 1} and more',
            "Could not read the text as JSON at line 1, column 10: there is text after the JSON value.",
            id="text-after",
        ),
        pytest.param(
            '{"a" 1}',
            "Could not read the text as JSON at line 1, column 6: expected ':' after the key \"a\".",
            id="no-colon",
        ),
        pytest.param(
            '{"a": NaN}',
            "Could not read the text as JSON at line 1, column 7: NaN is not a number JSON can carry.",
            id="nan-refused",
        ),
        pytest.param(
            '{"a": 1e999}',
            "Could not read the text as JSON at line 1, column 7: the number 1e999 is out of range.",
            id="infinite-number",
        ),
        pytest.param(
            '{\n  "a": [1, }',
            "Could not read the text as JSON at line 2, column 12: expected a value.",
            id="line-and-column",
        ),
        pytest.param(
            '{"a": x}',
            "Could not read the text as JSON at line 1, column 7: expected a value.",
            id="bare-word-value",
        ),
        pytest.param(
            "tr",
            "Could not read the text as JSON at line 1, column 1: cut off inside a literal.",
            id="only-a-cut-literal",
        ),
    ],
)
def test_unreadable(text: str, message: str) -> None:
    with pytest.raises(Unreadable) as caught:
        read_json(text)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param(
            '{"cmd": "rm -rf /tmp/bu', "cut off inside a string", id="cut-string-never-mended"
        ),
        pytest.param('{"a": [1, 2', "cut off before the JSON was closed", id="cut-list"),
        pytest.param('{"a": 1, "b": tr', "cut off inside a literal", id="cut-literal"),
    ],
)
def test_cut_off_text_is_never_mended(text: str, reason: str) -> None:
    with pytest.raises(Unreadable) as caught:
        read_json(text, mend_unclosed=False)
    assert caught.value.reason == reason


def test_cut_off_text_that_is_complete_reads() -> None:
    assert read_json('{"a": 1}', mend_unclosed=False).value == {"a": 1}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), id="valid-json-too-deep"),
        pytest.param("[" * 100_000, id="unclosed-depth-bomb"),
        pytest.param("[" * 100_000 + "]" * 100_000, id="closed-depth-bomb-past-recursion-limit"),
        pytest.param("{'a':" * 1000, id="slow-path-depth-bomb"),
    ],
)
def test_depth_bombs_are_refused(text: str) -> None:
    with pytest.raises(Unreadable, match=f"nested deeper than {MAX_DEPTH} levels"):
        read_json(text)


def test_depth_at_the_limit_reads() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert read_json(text).repairs == ()
    assert read_json(text.replace("[]", "[1,]")).repairs == (Repair.TRAILING_COMMA,)


def test_size_limit() -> None:
    text = '"' + "a" * MAX_SIZE + '"'
    with pytest.raises(Unreadable, match=f"over the limit of {MAX_SIZE}"):
        read_json(text)
    assert read_json('{"a": 1,}', max_size=9).value == {"a": 1}
    with pytest.raises(Unreadable):
        read_json('{"a": 1,}', max_size=8)


def test_nothing_is_evaluated() -> None:
    reading = read_json("{'a': 'open(\"/etc/passwd\")'}")
    assert reading.value == {"a": 'open("/etc/passwd")'}
    with pytest.raises(Unreadable):
        read_json("{'a': __import__('os')}")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values, st.sampled_from([None, 2]), st.booleans())
def test_valid_json_comes_back_unchanged(
    value: object, indent: int | None, ascii_only: bool
) -> None:
    reading = read_json(json.dumps(value, indent=indent, ensure_ascii=ascii_only))
    assert reading.value == value
    assert reading.repairs == ()


json_ish = st.lists(
    st.sampled_from(
        [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            '"',
            "'",
            "a",
            "1",
            "-",
            ".",
            "e",
            "true",
            "None",
            "//",
            "/*",
            "*/",
            "\n",
            " ",
            "```",
            "\\",
            "\\u12",
            "\\ud83d",
            "NaN",
            "__proto__",
            "é",
            "\x00",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500)
@given(st.one_of(st.text(), json_ish), st.booleans())
def test_any_text_reads_or_raises_unreadable(text: str, mend: bool) -> None:
    try:
        reading = read_json(text, mend_unclosed=mend)
    except Unreadable:
        return
    json.dumps(reading.value)  # whatever was read is plain JSON data
    assert all(isinstance(r, Repair) for r in reading.repairs)
