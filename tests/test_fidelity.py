"""Argument fidelity: exact arguments compare equal with their types; each altered value is
named by where it is and what happened to it."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from conchcheck.core.fidelity import (
    CALL_ENDS,
    FidelityChange,
    FieldChange,
    changes,
    compare_arguments,
)

F = FidelityChange
CODE = 'def greet(name):\n    print("Hi, " + name)\n    return "C:\\\\temp"\n'
DESSERT = "Crème brûlée 🍮"
BIG = 9007199254740993  # 2^53 + 1: no double holds it
NEAREST = 9007199254740992


def one(path: str, change: FidelityChange, expected: Any, got: Any) -> list[FieldChange]:
    return [FieldChange(path, change, expected, got)]


CASES = [
    # -- exact, with types
    pytest.param({"code": CODE, "n": BIG, "s": ""}, {"s": "", "n": BIG, "code": CODE}, [],
                 id="exact-in-another-key-order"),
    pytest.param({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, [], id="exact-nested"),
    pytest.param({"n": 1}, {"n": 1.0}, one("n", F.OTHER, 1, 1.0), id="int-is-not-float"),
    pytest.param({"b": True}, {"b": 1}, one("b", F.OTHER, True, 1), id="true-is-not-one"),
    pytest.param({"n": 0}, {"n": False}, one("n", F.OTHER, 0, False), id="zero-is-not-false"),
    # -- a value cut at a call marker
    pytest.param({"text": "keep</tool_call>this"}, {"text": "keep"},
                 one("text", F.CUT_AT_MARKER, "keep</tool_call>this", "keep"),
                 id="cut-at-tool-call-close"),
    pytest.param({"text": "end <|im_end|> more"}, {"text": "end"},
                 one("text", F.CUT_AT_MARKER, "end <|im_end|> more", "end"),
                 id="cut-at-im-end-space-trimmed"),
    pytest.param({"text": "a<|eot_id|>b"}, {"text": "a<|eot"},
                 one("text", F.CUT_AT_MARKER, "a<|eot_id|>b", "a<|eot"),
                 id="cut-inside-the-marker"),
    pytest.param({"text": "a<｜tool▁call▁end｜>b"}, {"text": "a"},
                 one("text", F.CUT_AT_MARKER, "a<｜tool▁call▁end｜>b", "a"),
                 id="cut-at-deepseek-call-end"),
    pytest.param({"text": "x<|im_end|>y"}, {"text": "xy"},
                 one("text", F.CUT_AT_MARKER, "x<|im_end|>y", "xy"),
                 id="marker-dropped-as-special-token"),
    pytest.param({"text": "a</tool_call>b", "after": 7, "empty": ""}, {"text": "a"},
                 [FieldChange("text", F.CUT_AT_MARKER, "a</tool_call>b", "a"),
                  FieldChange("after", F.CUT_AT_MARKER, 7, None),
                  FieldChange("empty", F.CUT_AT_MARKER, "", None)],
                 id="fields-lost-with-the-cut"),
    pytest.param({"text": "keep this"}, {"text": "keep"},
                 one("text", F.OTHER, "keep this", "keep"), id="cut-with-no-marker-is-other"),
    # -- big integers
    pytest.param({"n": BIG}, {"n": NEAREST}, one("n", F.NUMBER_ROUNDED, BIG, NEAREST),
                 id="big-int-rounded-as-int"),
    pytest.param({"n": BIG}, {"n": 9.007199254740992e15},
                 one("n", F.NUMBER_ROUNDED, BIG, 9.007199254740992e15),
                 id="big-int-rounded-as-float"),
    pytest.param({"n": -BIG}, {"n": -NEAREST}, one("n", F.NUMBER_ROUNDED, -BIG, -NEAREST),
                 id="negative-big-int-rounded"),
    pytest.param({"n": BIG}, {"n": NEAREST - 2}, one("n", F.OTHER, BIG, NEAREST - 2),
                 id="big-int-wrong-is-other"),
    pytest.param({"n": 7}, {"n": 7.0}, one("n", F.OTHER, 7, 7.0), id="small-int-as-float-is-other"),
    pytest.param({"n": BIG}, {"n": str(BIG)}, one("n", F.OTHER, BIG, str(BIG)),
                 id="big-int-as-text-is-other"),
    # -- newlines
    pytest.param({"code": CODE}, {"code": CODE.replace("\n", "")},
                 one("code", F.NEWLINES_STRIPPED, CODE, CODE.replace("\n", "")),
                 id="newlines-stripped-from-code"),
    pytest.param({"code": "a\r\nb\nc"}, {"code": "a b c"},
                 one("code", F.NEWLINES_STRIPPED, "a\r\nb\nc", "a b c"),
                 id="newlines-became-spaces"),
    # -- escapes
    pytest.param({"path": "C:\\temp"}, {"path": "C:\\\\temp"},
                 one("path", F.ESCAPES_CHANGED, "C:\\temp", "C:\\\\temp"),
                 id="backslash-doubled"),
    pytest.param({"path": "C:\\\\temp"}, {"path": "C:\\temp"},
                 one("path", F.ESCAPES_CHANGED, "C:\\\\temp", "C:\\temp"),
                 id="backslash-halved"),
    pytest.param({"code": "a\nb"}, {"code": "a\\nb"},
                 one("code", F.ESCAPES_CHANGED, "a\nb", "a\\nb"),
                 id="newline-as-backslash-n"),
    pytest.param({"q": 'say "hi"'}, {"q": 'say \\"hi\\"'},
                 one("q", F.ESCAPES_CHANGED, 'say "hi"', 'say \\"hi\\"'),
                 id="quotes-escaped-twice"),
    pytest.param({"code": CODE}, {"code": json.dumps(CODE)[1:-1]},
                 one("code", F.ESCAPES_CHANGED, CODE, json.dumps(CODE)[1:-1]),
                 id="code-encoded-twice"),
    pytest.param({"re": "\\d+\\n"}, {"re": "\\d+\n"},
                 one("re", F.ESCAPES_CHANGED, "\\d+\\n", "\\d+\n"),
                 id="escapes-read-twice"),
    # -- non-ASCII
    pytest.param({"s": DESSERT}, {"s": "Cr\\u00e8me br\\u00fbl\\u00e9e \\ud83c\\udf6e"},
                 one("s", F.NON_ASCII_CHANGED, DESSERT,
                     "Cr\\u00e8me br\\u00fbl\\u00e9e \\ud83c\\udf6e"),
                 id="non-ascii-as-u-escape-text"),
    pytest.param({"s": DESSERT}, {"s": "Cr\\u00E8me br\\u00FBl\\u00E9e \\uD83C\\uDF6E"},
                 one("s", F.NON_ASCII_CHANGED, DESSERT,
                     "Cr\\u00E8me br\\u00FBl\\u00E9e \\uD83C\\uDF6E"),
                 id="non-ascii-as-upper-hex-escape-text"),
    pytest.param({"s": DESSERT}, {"s": "Cr?me br?l?e ?"},
                 one("s", F.NON_ASCII_CHANGED, DESSERT, "Cr?me br?l?e ?"),
                 id="non-ascii-as-question-marks"),
    pytest.param({"s": DESSERT}, {"s": "Crme brle "},
                 one("s", F.NON_ASCII_CHANGED, DESSERT, "Crme brle "),
                 id="non-ascii-dropped"),
    pytest.param({"s": DESSERT}, {"s": "Crème brûlée \ud83c"},
                 one("s", F.NON_ASCII_CHANGED, DESSERT, "Crème brûlée \ud83c"),
                 id="emoji-split-into-a-lone-surrogate"),
    pytest.param({"s": DESSERT}, {"s": "CrÃ¨me brÃ»lÃ©e ð\x9f\x8d®"},
                 one("s", F.NON_ASCII_CHANGED, DESSERT, "CrÃ¨me brÃ»lÃ©e ð\x9f\x8d®"),
                 id="utf8-read-as-latin1"),
    pytest.param({"s": DESSERT}, {"s": "Creme brulee"},
                 one("s", F.OTHER, DESSERT, "Creme brulee"), id="accents-folded-is-other"),
    # -- fields missing, extra, wrong shape
    pytest.param({"note": "", "n": 1}, {"n": 1}, one("note", F.OTHER, "", None),
                 id="empty-string-became-missing"),
    pytest.param({"note": ""}, {"note": None}, one("note", F.OTHER, "", None),
                 id="empty-string-became-null"),
    pytest.param({"n": 1}, {"n": 1, "extra": None}, one("extra", F.OTHER, None, None),
                 id="extra-null-field-named"),
    pytest.param({"n": 1}, {"n": 1, "extra": "x"}, one("extra", F.OTHER, None, "x"),
                 id="extra-field-named"),
    pytest.param({"items": [{"name": "a"}, {"name": "b"}, {"name": "c\nd"}]},
                 {"items": [{"name": "a"}, {"name": "b"}, {"name": "cd"}]},
                 one("items[2].name", F.NEWLINES_STRIPPED, "c\nd", "cd"), id="nested-path"),
    pytest.param({"items": [1, 2]}, {"items": [1]}, one("items[1]", F.OTHER, 2, None),
                 id="list-item-missing"),
    pytest.param({"items": [1]}, {"items": [1, 2]}, one("items[1]", F.OTHER, None, 2),
                 id="list-item-extra"),
    pytest.param({"a.b": {"c d": 1}}, {"a.b": {"c d": 2}}, one('["a.b"]["c d"]', F.OTHER, 1, 2),
                 id="keys-that-are-not-names-quoted"),
    pytest.param({"o": {"x": 1}}, {"o": [1]}, one("o", F.OTHER, {"x": 1}, [1]),
                 id="object-became-list"),
    pytest.param({"x": 1}, ["x"], one("$", F.OTHER, {"x": 1}, ["x"]), id="not-an-object"),
    pytest.param({"x": 1}, None, one("$", F.OTHER, {"x": 1}, None), id="nothing-came-back"),
    pytest.param({"a": "x\ny", "b": BIG, "c": "é", "d": 1},
                 {"d": 2, "c": "?", "b": NEAREST, "a": "xy"},
                 [FieldChange("a", F.NEWLINES_STRIPPED, "x\ny", "xy"),
                  FieldChange("b", F.NUMBER_ROUNDED, BIG, NEAREST),
                  FieldChange("c", F.NON_ASCII_CHANGED, "é", "?"),
                  FieldChange("d", F.OTHER, 1, 2)],
                 id="each-field-in-expected-order"),
]  # fmt: skip


@pytest.mark.parametrize(("expected", "got", "found"), CASES)
def test_compare_arguments(expected: Any, got: Any, found: list[FieldChange]) -> None:
    assert list(compare_arguments(expected, got)) == found


@pytest.mark.parametrize(
    ("fields", "classes"),
    [
        pytest.param([], (), id="exact-has-none"),
        pytest.param(
            [
                FieldChange("a", F.OTHER, 1, 2),
                FieldChange("b", F.NUMBER_ROUNDED, BIG, NEAREST),
                FieldChange("c", F.OTHER, 1, 2),
                FieldChange("d", F.NEWLINES_STRIPPED, "a\nb", "ab"),
            ],
            (F.NEWLINES_STRIPPED, F.NUMBER_ROUNDED, F.OTHER),
            id="distinct-in-enum-order",
        ),
    ],
)
def test_changes(fields: list[FieldChange], classes: tuple[FidelityChange, ...]) -> None:
    assert changes(fields) == classes


def test_the_classes_are_the_capability_file_words() -> None:
    assert [str(change) for change in FidelityChange] == [
        "newlines_stripped",
        "cut_at_marker",
        "number_rounded",
        "escapes_changed",
        "non_ascii_changed",
        "other",
    ]


@pytest.mark.parametrize("marker", CALL_ENDS)
def test_a_cut_at_every_marker(marker: str) -> None:
    value = f"before{marker}after"
    assert compare_arguments({"v": value}, {"v": "before"}) == (
        FieldChange("v", F.CUT_AT_MARKER, value, "before"),
    )


def test_deep_values_need_no_recursion() -> None:
    deep: Any = "x"
    other: Any = "y"
    for _ in range(5000):
        deep, other = [deep], [other]
    found = compare_arguments({"d": deep}, {"d": other})
    assert found == (FieldChange("d" + "[0]" * 5000, F.OTHER, "x", "y"),)


def test_linear_in_the_size_of_the_values() -> None:
    # Four times the size should take about four times as long; quadratic work would take
    # sixteen times.
    def timed(size: int) -> float:
        text = 'é\n\\"' * size
        expected: Any = {"s": text, "l": list(range(size)), "o": {str(i): i for i in range(size)}}
        got: Any = {"s": text + "?", "l": list(range(size)), "o": {str(i): i for i in range(size)}}
        start = time.perf_counter()
        compare_arguments(expected, got)
        return time.perf_counter() - start

    timed(1000)
    small = min(timed(5_000) for _ in range(3))
    large = min(timed(20_000) for _ in range(3))
    assert large < small * 8
