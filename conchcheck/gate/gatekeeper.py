"""The gate's one entry point: results files in, every check and change out."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from conchcheck.errors import InputError
from conchcheck.gate import github
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
    if expect is None and not baseline:
        raise InputError(
            "Nothing to check against: give --expect, --baseline or both.",
            hint="See `conchcheck check --help`.",
        )
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


def write_summary(result: GateResult, path: Path | None) -> str:
    """Append the gate's step summary to ``path`` or ``$GITHUB_STEP_SUMMARY``, as the runner
    wants (earlier steps' summaries stay); with neither, the summary to print instead."""
    text = github.summary(result) + "\n"
    named = path or os.environ.get("GITHUB_STEP_SUMMARY")
    if not named:
        return text
    try:
        with open(named, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise InputError(
            f"{named}: the summary cannot be written ({exc.strerror}).",
            hint="Check the path given to --summary or in $GITHUB_STEP_SUMMARY.",
        ) from None
    return ""
