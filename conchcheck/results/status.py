"""What a cell is to a CI test view: passed, failed, error or skipped.

The probe's ``junit.xml`` and the gate's agree on it, so both read it here.

A knob cell is what its knob's state says: honoured passes; ignored and failing open fail;
refused fails too, as a refused cell does everywhere else (an app that sets the knob gets an
error: it can't use it); not offered and untested are skipped with their reason (a refusal
that says nothing of the knob, a rate limit or a model without tools, leaves it untested). A
request that failed is an error, as everywhere. The stage's other cells (the parallel
baseline, the open strict schema, the id rounds, the fidelity prompt) fail only when they say
``not_honoured`` (or a follow-up carrying the server's ids was refused); any other miss is
evidence for a knob, or nothing measured, and is skipped.
"""

from __future__ import annotations

from typing import NoReturn

from conchcheck.core.knobs import KnobState
from conchcheck.core.names import Name
from conchcheck.core.refusals import RefusalKind
from conchcheck.results.cells import PASSING, Cell, Outcome, Stage
from conchcheck.results.knobs import IdFacts, KnobFacts


class CiStatus(Name):
    """What a cell is to a CI test view."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


def judge(cell: Cell, carried: frozenset[str] = frozenset()) -> CiStatus:
    """Passed, failed, error or skipped; ``carried`` are the cases the chosen dialect carried."""
    if cell.stage is Stage.KNOBS and cell.outcome is not Outcome.ERROR:
        return _knob(cell)
    if cell.outcome in PASSING or expected_refusal(cell) or _moved_past(cell, carried):
        return CiStatus.PASSED
    if cell.outcome is Outcome.SKIPPED:
        return CiStatus.SKIPPED
    if cell.outcome is Outcome.ERROR:
        return CiStatus.ERROR
    return CiStatus.FAILED


def _knob(cell: Cell) -> CiStatus:
    facts = cell.facts
    if isinstance(facts, KnobFacts):
        match facts.state:
            case KnobState.HONOURED:
                return CiStatus.PASSED
            case KnobState.IGNORED | KnobState.FAILS_OPEN | KnobState.REFUSED:
                return CiStatus.FAILED
            case KnobState.NOT_OFFERED | KnobState.UNTESTED:
                return CiStatus.SKIPPED
            case _:
                _never(facts.state)
    if cell.outcome is Outcome.NOT_HONOURED:
        return CiStatus.FAILED
    if isinstance(facts, IdFacts) and facts.round_trip is False:
        return CiStatus.FAILED
    return CiStatus.PASSED if cell.outcome in PASSING else CiStatus.SKIPPED


def expected_refusal(cell: Cell) -> bool:
    """A deliberately invalid schema case, refused as it should be."""
    return cell.stage is Stage.DIALECT and cell.outcome is Outcome.REFUSED and cell.invalid_case


def _moved_past(cell: Cell, carried: frozenset[str]) -> bool:
    # A schema refusal in a dialect the verdict moved past is how the chain works (Gemini
    # refuses $ref in permissive; the gemini dialect carries it): not a failure for CI.
    return (
        cell.stage is Stage.DIALECT
        and cell.outcome is Outcome.REFUSED
        and cell.refusal_kind is RefusalKind.SCHEMA
        and cell.case in carried
    )


def _never(value: NoReturn) -> NoReturn:
    # typing.assert_never is 3.11+; conchcheck supports 3.10.
    raise AssertionError(f"unhandled value: {value!r}")
