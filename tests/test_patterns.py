"""Schema patterns run on RE2: linear in the argument, never a stall, never a false refusal."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.arguments import read_arguments
from conchcheck.core.patterns import matcher


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        pytest.param("^[a-z]+$", "abc", True, id="plain-match"),
        pytest.param("^[a-z]+$", "ab1", False, id="plain-miss"),
        pytest.param(r"^\d{4}-\d{2}-\d{2}$", "2026-12-03", True, id="date"),
        pytest.param(r"^\p{L}+$", "héllo", True, id="unicode-class"),
        pytest.param("^(a+)+$", "a" * 100_000 + "b", False, id="catastrophic-for-re-linear-here"),
        pytest.param("(a|aa)+$", "a" * 100_000 + "!", False, id="overlapping-alternation"),
        pytest.param("abc", "xxabcxx", True, id="search-not-fullmatch-as-json-schema-says"),
    ],
)
def test_matcher(pattern: str, text: str, found: bool) -> None:
    search = matcher(pattern)
    assert search is not None
    assert search(text) is found


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("(?=a)b", id="lookahead"),
        pytest.param(r"(a)\1", id="backreference"),
        pytest.param("(", id="not-a-pattern"),
    ],
)
def test_a_pattern_re2_cant_run_is_not_checked(pattern: str) -> None:
    assert matcher(pattern) is None
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    assert read_arguments('{"s": "zzz"}', schema).ok


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
    "patternProperties": {"^x-(a+)+$": {"type": "integer"}},
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "ok", "message"),
    [
        pytest.param('{"code": "aaa"}', True, None, id="pattern-holds"),
        pytest.param(
            '{"code": "' + "a" * 50_000 + 'b"}',
            False,
            "code: expected text matching the pattern ^(a+)+$",
            id="hostile-argument-against-a-catastrophic-pattern",
        ),
        pytest.param('{"x-aaa": 3}', True, None, id="pattern-property-matches"),
        pytest.param(
            '{"x-aaa": "three"}',
            False,
            'x-aaa: expected a number, got the text "three"',
            id="pattern-property-type",
        ),
        pytest.param(
            '{"x-' + "a" * 50_000 + 'b": 1}',
            True,
            None,
            id="hostile-key-is-an-unknown-field-dropped",
        ),
    ],
)
def test_hostile_arguments_against_catastrophic_patterns(
    arguments: str, ok: bool, message: str | None
) -> None:
    result = read_arguments(arguments, SCHEMA, tool="t")
    assert result.ok is ok
    if message is not None:
        assert result.message is not None and message in result.message
