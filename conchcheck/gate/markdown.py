"""The gate as Markdown: fits a PR comment or ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from collections.abc import Sequence

from conchcheck.core.escaping import one_line
from conchcheck.gate.outcome import BaselineChange, GateResult


def render(result: GateResult) -> str:
    """The verdict line, what failed, what changed, and a row per target."""
    word = "passed" if result.passed else "failed"
    lines = [f"## conchcheck check: {word}", "", summary(result), ""]
    if result.unmet:
        lines += ["### Unmet expectations", ""]
        lines += _table(
            ("target", "expectation", "wanted", "got"),
            [(c.target, c.name, c.wanted, c.got) for c in result.unmet],
        )
    for title, changes in (
        ("Regressions", result.regressions),
        ("Improvements", result.improvements),
    ):
        if changes:
            lines += [f"### {title}", "", *_changes(changes)]
    lines += ["### Targets", ""]
    lines += _table(
        ("target", "mode", "dialect", "native rate", "words rate", "expectations"),
        [
            (
                run.name,
                run.mode or run.no_verdict,
                run.dialect or "-",
                _rate(run.rates.get("native.rate")),
                _rate(run.rates.get("words.rate")),
                _met(result, run.name),
            )
            for run in result.runs
        ],
    )
    return "\n".join(lines)


def summary(result: GateResult) -> str:
    """One sentence: how many expectations held, how many changes each way."""
    parts = []
    if result.expectations is not None:
        held = len(result.checks) - len(result.unmet)
        parts.append(f"{held} of {len(result.checks)} expectations met")
    if result.baseline:
        parts.append(
            f"{_count(len(result.regressions), 'regression')} and "
            f"{_count(len(result.improvements), 'improvement')} from the baseline "
            f"(tolerance {result.tolerance:g})"
        )
    if not parts:
        parts.append("nothing was asked: give --expect, --baseline or both")
    return f"{_count(len(result.runs), 'target')}: {'; '.join(parts)}."


def _changes(changes: Sequence[BaselineChange]) -> list[str]:
    return _table(
        ("target", "what", "before", "after"),
        [(c.target, c.what, c.before, c.after) for c in changes],
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return [*out, ""]


def _cell(text: str) -> str:
    # A provider's text can hold a pipe or a newline; either would break the table.
    return one_line(text).replace("\\", "\\\\").replace("|", "\\|")


def _met(result: GateResult, target: str) -> str:
    mine = [c for c in result.checks if c.target == target]
    return f"{sum(c.met for c in mine)}/{len(mine)} met" if mine else "-"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.3g}"


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
