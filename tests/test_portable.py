"""The pure part of ``tools export`` (conchcheck/core/portable.py): the dialect every target
takes, and which targets forced each change the conversion makes."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.core.portable import FleetTarget, fleet_dialect, portable_tools
from conchcheck.core.usertools import OwnTool

P, A, G, S = Dialect.PERMISSIVE, Dialect.ANTHROPIC, Dialect.GEMINI, Dialect.STRICT


def fleet(*dialects: Dialect) -> list[FleetTarget]:
    return [FleetTarget(f"t{i}-{d}", d) for i, d in enumerate(dialects)]


@pytest.mark.parametrize(
    ("dialects", "chosen"),
    [
        pytest.param((P,), P, id="one-permissive-target"),
        pytest.param((P, A), A, id="anthropic-over-permissive"),
        pytest.param((G, P, A), G, id="gemini-whatever-the-order"),
        pytest.param((S, G), S, id="strict-is-the-least-permissive"),
    ],
)
def test_the_least_permissive_dialect_is_chosen(dialects: Any, chosen: Dialect) -> None:
    assert fleet_dialect(fleet(*dialects)) is chosen


def test_no_target_no_dialect() -> None:
    with pytest.raises(ValueError):
        fleet_dialect([])


BOUNDED = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
FORMATTED = {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}
OPEN = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
ROOT_UNION = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                        {"type": "object", "properties": {"b": {"type": "string"}}}]}  # fmt: skip


@pytest.mark.parametrize(
    ("schema", "dialects", "changes"),
    [
        pytest.param(FORMATTED, (P, P), [], id="permissive-targets-change-nothing"),
        pytest.param(BOUNDED, (P, G), [], id="gemini-keeps-a-minimum"),
        pytest.param(BOUNDED, (G, S), [("$.properties.n.minimum", "removed 1", ["t1-strict"])],
                     id="strict-alone-drops-a-minimum"),
        pytest.param(FORMATTED, (P, G, S), [
            ("$.properties.u.format", 'removed "uri"', ["t1-gemini", "t2-strict"]),
            ("$.properties.u.description", 'added "Format: uri."', ["t1-gemini", "t2-strict"]),
        ], id="gemini-and-strict-both-drop-a-format"),
        pytest.param(OPEN, (A, G), [("$.additionalProperties", "removed true", ["t1-gemini"])],
                     id="anthropic-keeps-additional-properties"),
        pytest.param(ROOT_UNION, (A, S), [
            ("$.anyOf", 'removed [{"type":"object","properties":{"a":{"type":"string"}}},{"type":'
             '"object","prope… (111 characters)', ["t0-anthropic", "t1-strict"]),
            ("$.type", 'added "object"', ["t0-anthropic", "t1-strict"]),
            ("$.description", 'added "Fill in one of these alternatives: (1) a; (2) b."',
             ["t0-anthropic", "t1-strict"]),
            ("$.properties", 'added {"a":{"type":"string"},"b":{"type":"string"}}',
             ["t0-anthropic", "t1-strict"]),
        ], id="a-root-union-merged-by-both"),
        pytest.param({}, (S,), [], id="no-parameters-written-as-they-are"),
    ],
)  # fmt: skip
def test_each_change_names_the_targets_that_forced_it(
    schema: Any, dialects: Any, changes: list[Any]
) -> None:
    tool = OwnTool("t", "tools.yaml", "A tool.", schema)
    portable = portable_tools([tool], fleet(*dialects))
    assert [(c.path, c.what, list(c.forced_by)) for c in portable.changes] == changes
    [written] = portable.tools
    assert (written.name, written.source, written.unlisted) == ("t", "tools.yaml", 0)
    assert schema == tool.parameters, "the tool read was changed"
