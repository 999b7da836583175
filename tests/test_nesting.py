"""Nesting measured without recursion: hostile depth is found before any parser sees it."""

from __future__ import annotations

import json

import pytest

from conchcheck.core.nesting import MAX_DEPTH, text_too_deep, value_too_deep


@pytest.mark.parametrize(
    ("text", "limit", "where"),
    [
        pytest.param("[[1]]", 2, None, id="at-the-limit"),
        pytest.param("[[[1]]]", 2, 2, id="one-past-the-limit"),
        pytest.param('{"a": {"b": [1]}}', 3, None, id="objects-and-lists"),
        pytest.param('{"a": "[[[[[[[["}', 1, None, id="brackets-in-a-string-are-text"),
        pytest.param('["\\"[[[[", [[]]]', 2, 12, id="escaped-quote-keeps-the-string-open"),
        pytest.param('"unclosed [[[[[', 1, None, id="unclosed-string-runs-to-the-end"),
        pytest.param("]]]][[", 1, 5, id="stray-closers-never-go-below-zero"),
        pytest.param("[" * 100_000, MAX_DEPTH, MAX_DEPTH, id="100k-deep-body"),
        pytest.param("[]" * 100_000, 1, None, id="wide-not-deep"),
    ],
)
def test_text_too_deep(text: str, limit: int, where: int | None) -> None:
    assert text_too_deep(text, limit) == where


@pytest.mark.parametrize(
    ("value", "limit", "deep"),
    [
        pytest.param({"a": [1, {"b": 2}]}, 3, False, id="at-the-limit"),
        pytest.param({"a": [1, {"b": {}}]}, 2, True, id="past-the-limit"),
        pytest.param("text", 0, False, id="a-scalar-has-no-depth"),
        pytest.param([], 0, True, id="a-list-is-one-level"),
    ],
)
def test_value_too_deep(value: object, limit: int, deep: bool) -> None:
    assert value_too_deep(value, limit) is deep


def test_a_value_too_deep_for_recursion_is_measured() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert value_too_deep(value)
    assert not value_too_deep(json.loads("[" * 100 + "]" * 100))
