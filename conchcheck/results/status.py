"""What a cell is to a CI test view: passed, failed, error or skipped.

The probe's ``junit.xml`` and the gate's agree on it, so both read it here.
"""

from __future__ import annotations

from conchcheck.core.names import Name
from conchcheck.core.refusals import RefusalKind
from conchcheck.results.cells import PASSING, Cell, Outcome, Stage


class CiStatus(Name):
    """What a cell is to a CI test view."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


def judge(cell: Cell, carried: frozenset[str] = frozenset()) -> CiStatus:
    """Passed, failed, error or skipped; ``carried`` are the cases the chosen dialect carried."""
    if cell.outcome in PASSING or expected_refusal(cell) or _moved_past(cell, carried):
        return CiStatus.PASSED
    if cell.outcome is Outcome.SKIPPED:
        return CiStatus.SKIPPED
    if cell.outcome is Outcome.ERROR:
        return CiStatus.ERROR
    return CiStatus.FAILED


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
