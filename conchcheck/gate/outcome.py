"""What a gate found: each expectation checked, each change from the baseline, and the exit code."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from conchcheck.errors import ExitCode
from conchcheck.results.plain import to_plain

if TYPE_CHECKING:
    from conchcheck.gate.runs import Run


@dataclass(frozen=True, slots=True)
class Check:
    """One expectation of one target: what was wanted, what the results show, and if it holds."""

    target: str
    """The run's name: ``provider:model``, with `` (api)`` when several APIs were given."""
    expectation: str
    """The key as written in the expectations file: ``mode``, ``native.rate``, ``accepted``."""
    wanted: str
    got: str
    met: bool
    subject: str = ""
    """What of the expectation this check is about: a schema case, a prompt, a finding."""

    @property
    def name(self) -> str:
        """``native.rate``, or ``accepted ref-defs`` when the check is about one item."""
        return f"{self.expectation} {self.subject}" if self.subject else self.expectation


class Direction(str, Enum):
    """Whether a change from the baseline is worse or better."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"


@dataclass(frozen=True, slots=True)
class BaselineChange:
    """One thing that differs from the baseline, by more than the tolerance for a rate."""

    target: str
    """The run's name, as in ``Check.target``."""
    what: str
    """``mode``, ``dialect``, ``native.rate``, ``case ref-defs``, ``prompt native/remember``."""
    before: str
    after: str
    direction: Direction


@dataclass(frozen=True, slots=True)
class GateResult:
    """Everything ``conchcheck check`` found, in the order of the results given."""

    runs: tuple[Run, ...]
    checks: tuple[Check, ...] = ()
    changes: tuple[BaselineChange, ...] = ()
    expectations: str | None = None
    """The expectations file, when one was given."""
    baseline: tuple[str, ...] = ()
    """The baseline's results files, when given."""
    tolerance: float = 0.05

    @property
    def unmet(self) -> tuple[Check, ...]:
        """The expectations that do not hold."""
        return tuple(check for check in self.checks if not check.met)

    @property
    def regressions(self) -> tuple[BaselineChange, ...]:
        """The changes for the worse."""
        return tuple(c for c in self.changes if c.direction is Direction.REGRESSION)

    @property
    def improvements(self) -> tuple[BaselineChange, ...]:
        """The changes for the better."""
        return tuple(c for c in self.changes if c.direction is Direction.IMPROVEMENT)

    @property
    def passed(self) -> bool:
        """Every expectation holds and nothing regressed."""
        return not self.unmet and not self.regressions

    @property
    def exit_code(self) -> ExitCode:
        """``DONE`` when the gate passes, ``FAILED`` when it doesn't."""
        return ExitCode.DONE if self.passed else ExitCode.FAILED


def to_data(result: GateResult) -> dict[str, Any]:
    """The gate as plain data, for ``--format json``."""
    return {
        "passed": result.passed,
        "exit_code": int(result.exit_code),
        "expectations": result.expectations,
        "baseline": list(result.baseline),
        "tolerance": result.tolerance,
        "targets": [
            {
                "target": run.target,
                "api": run.api,
                "name": run.name,
                "source": run.source,
                "mode": run.mode,
                "dialect": run.dialect,
                "rates": dict(run.rates),
                "knobs_and_losses": to_plain(run.knobs),
            }
            for run in result.runs
        ],
        "checks": [{**to_plain(check), "name": check.name} for check in result.checks],
        "regressions": to_plain(result.regressions),
        "improvements": to_plain(result.improvements),
    }
