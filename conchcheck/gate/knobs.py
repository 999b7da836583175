"""The knobs-and-losses section as a gate reads it: each field by the path an expectations
file names it (``knobs.strict``, ``ids.round_trip``, ``reasoning.swallowed``), what an
expectation of it asks, and which way a change from the baseline went.

A field that was not measured (``untested``, null, no streamed pair) is None here: it never
meets an expectation that asks for a value, and a measured good value that became it is a
regression.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from conchcheck.core.knobs import Fidelity, KnobsAndLosses, KnobState
from conchcheck.gate.bounds import Bound
from conchcheck.gate.outcome import BaselineChange, Check, Direction

NOT_MEASURED = "not measured"

Value: TypeAlias = str | bool | int | None
"""A field's value: a state's or an agreement's name, a flag, a count; None when not measured."""
Wanted: TypeAlias = tuple[str, ...] | bool | Bound
"""What an expectation asks of a field: any of some names, a flag, or a bound on a count."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of the section: how to read it, and which values are good."""

    read: Callable[[KnobsAndLosses], Value]
    good: Callable[[Value], bool] | None = None
    """Names and flags: the good value (a change away from it is a regression)."""
    fewer: bool | None = None
    """Counts: True when fewer is better (losses), False when more is (agreements)."""


def _knob(read: Callable[[KnobsAndLosses], KnobState]) -> Field:
    def value(section: KnobsAndLosses) -> Value:
        state = read(section)
        return None if state is KnobState.UNTESTED else state.value

    return Field(value, good=lambda v: v == KnobState.HONOURED.value)


def _flag(read: Callable[[KnobsAndLosses], bool | None]) -> Field:
    return Field(read, good=lambda v: v is True)


def _pairs(read: Callable[[KnobsAndLosses], int], *, fewer: bool) -> Field:
    def value(section: KnobsAndLosses) -> Value:
        streaming = section.streaming
        return read(section) if streaming.agree + streaming.disagree else None

    return Field(value, fewer=fewer)


FIELDS: Mapping[str, Field] = {
    "knobs.tool_choice_none": _knob(lambda s: s.knobs.tool_choice_none),
    "knobs.tool_choice_required": _knob(lambda s: s.knobs.tool_choice_required),
    "knobs.tool_choice_named": _knob(lambda s: s.knobs.tool_choice_named),
    "knobs.parallel_false": _knob(lambda s: s.knobs.parallel_false),
    "knobs.strict": _knob(lambda s: s.knobs.strict),
    "ids.present": _flag(lambda s: s.ids.present),
    "ids.unique_in_reply": _flag(lambda s: s.ids.unique_in_reply),
    "ids.unique_across_rounds": _flag(lambda s: s.ids.unique_across_rounds),
    "ids.round_trip": _flag(lambda s: s.ids.round_trip),
    "finish_reason": Field(
        lambda s: s.finish_reason.value if s.finish_reason else None,
        good=lambda v: v == "agrees",
    ),
    "fidelity": Field(
        lambda s: None if s.fidelity is Fidelity.UNTESTED else s.fidelity.value,
        good=lambda v: v == Fidelity.EXACT.value,
    ),
    "reasoning.seen": Field(lambda s: s.reasoning.seen),
    "reasoning.swallowed": Field(lambda s: s.reasoning.swallowed, fewer=True),
    "streaming.agree": _pairs(lambda s: s.streaming.agree, fewer=False),
    "streaming.disagree": _pairs(lambda s: s.streaming.disagree, fewer=True),
}
"""Every field an expectation can name, in the section's order."""


def wanted(path: str, written: Any) -> Wanted:
    """What an expectation asks, as the schema let it be written: a name or a list of names,
    true or false, or a count (a bare count is the good side's bound: at most that many
    losses, at least that many agreements)."""
    if isinstance(written, bool):
        return written
    if path in _COUNTS:
        if isinstance(written, str):
            return Bound.parse(written)
        return Bound("<=" if FIELDS[path].fewer else ">=", float(written))
    return (written,) if isinstance(written, str) else tuple(written)


def check(target: str, path: str, want: Wanted, section: KnobsAndLosses | None, why: str) -> Check:
    """The check of one field; ``why`` is what is shown when there is no section to read."""
    shown = _wanted(want)
    if section is None:
        return Check(target, path, shown, why, False)
    value = FIELDS[path].read(section)
    got = _shown(value)
    if value is None:
        return Check(target, path, shown, got, False)
    if isinstance(want, Bound):
        return Check(target, path, shown, got, isinstance(value, int) and want.holds(value))
    if isinstance(want, bool):
        return Check(target, path, shown, got, value is want)
    return Check(target, path, shown, got, value in want)


def changes(target: str, old: KnobsAndLosses, new: KnobsAndLosses) -> Iterator[BaselineChange]:
    """Each field that got worse or better: a good value (honoured, true, agrees, exact) lost
    or gained, or a count of losses that grew or shrank (counts are compared only when both
    runs measured them)."""
    for path, field in FIELDS.items():
        was, now = field.read(old), field.read(new)
        if was == now:
            continue
        direction: Direction | None = None
        if field.good is not None:
            if field.good(was) != field.good(now):
                direction = Direction.REGRESSION if field.good(was) else Direction.IMPROVEMENT
        elif field.fewer and isinstance(was, int) and isinstance(now, int):
            direction = Direction.REGRESSION if now > was else Direction.IMPROVEMENT
        if direction is not None:
            yield BaselineChange(target, path, _shown(was), _shown(now), direction)


_COUNTS = frozenset(path for path, field in FIELDS.items() if field.fewer is not None)


def _wanted(want: Wanted) -> str:
    if isinstance(want, Bound):
        return str(want)
    if isinstance(want, bool):
        return _shown(want)
    return want[0] if len(want) == 1 else "one of " + ", ".join(want)


def _shown(value: Value) -> str:
    if value is None:
        return NOT_MEASURED
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
