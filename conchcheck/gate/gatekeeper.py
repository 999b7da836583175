"""The gate's one entry point: results files in, every check and change out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conchcheck.errors import InputError
from conchcheck.gate.baseline import compare
from conchcheck.gate.evaluation import evaluate
from conchcheck.gate.expectations import load_expectations
from conchcheck.gate.outcome import GateResult
from conchcheck.gate.runs import load_runs


def check(
    results: Sequence[Path | str],
    *,
    expect: Path | str | None = None,
    baseline: Sequence[Path | str] = (),
    tolerance: float = 0.05,
) -> GateResult:
    """Load ``results`` (files or folders) and check them against ``expect`` and ``baseline``.

    Every file is read before anything is checked, so a bad one is an ``InputError`` (exit 2)
    and never half a gate.
    """
    if not 0 <= tolerance <= 1:
        raise InputError(
            f"--tolerance: {tolerance:g} is not a rate difference from 0 to 1.",
            hint="Rates run from 0 to 1: 0.05 lets a rate fall by five points.",
        )
    expectations = load_expectations(expect) if expect is not None else None
    runs = load_runs(results)
    old = load_runs(baseline) if baseline else ()
    return GateResult(
        runs=runs,
        checks=evaluate(expectations, runs) if expectations is not None else (),
        changes=compare(runs, old, tolerance) if baseline else (),
        expectations=expectations.source if expectations is not None else None,
        baseline=tuple(str(path) for path in baseline),
        tolerance=tolerance,
    )


def append_summary(path: Path, text: str) -> None:
    """Append ``text`` to a step summary file, as the runner's ``$GITHUB_STEP_SUMMARY`` wants:
    earlier steps' summaries stay."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise InputError(
            f"{path}: the summary cannot be written ({exc.strerror}).",
            hint="Check the path given to --summary or in $GITHUB_STEP_SUMMARY.",
        ) from None
