"""Expectations against runs: one ``Check`` for each thing a target must keep."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conchcheck.gate import knobs
from conchcheck.gate.expectations import Expectations, Section
from conchcheck.gate.outcome import Check
from conchcheck.gate.runs import Run
from conchcheck.results import CellMode


def evaluate(expectations: Expectations, runs: Sequence[Run]) -> tuple[Check, ...]:
    """Every check, target by target in the order of ``runs``; then a failed check for each
    target the file names that no results cover (a shard that didn't run must not pass)."""
    checks: list[Check] = []
    for run in runs:
        section = expectations.for_target(run.target)
        if section is not None:
            checks.extend(_checks(run, section))
    present = {run.target for run in runs}
    checks.extend(
        Check(target, "results", "a results.json for the target", "none given", False)
        for target in expectations.targets
        if target not in present
    )
    return tuple(checks)


def _checks(run: Run, section: Section) -> Iterator[Check]:
    # A target's section holds for each API it was probed in; the check names the run.
    target = run.name
    if section.mode is not None:
        yield Check(
            target, "mode", _any(section.mode), run.mode or run.no_verdict, run.mode in section.mode
        )
    if section.dialect is not None:
        got = run.dialect or ("none carries every case" if run.mode else run.no_verdict)
        yield Check(target, "dialect", _any(section.dialect), got, run.dialect in section.dialect)
    for name, bound in section.rates.items():
        rate = run.rates.get(name)
        shown = f"{rate:.3g}" if rate is not None else run.no_verdict
        yield Check(target, name, str(bound), shown, rate is not None and bound.holds(rate))
    for path, wanted in section.knobs.items():
        yield knobs.check(target, path, wanted, run.knobs, run.no_knobs)
    for case in section.accepted or ():
        status = run.case_status(case)
        where = f" in {run.dialect}" if run.dialect else ""
        yield Check(target, "accepted", f"accepted{where}", status, status == "accepted", case)
    for prompt in section.passes or ():
        yield _passes(run, prompt)
    found = run.findings()
    for code in section.no_findings or ():
        cells = found.get(code, ())
        got = (
            f"in {len(cells)} cell{'s' * (len(cells) != 1)}: {', '.join(cells)}"
            if cells
            else "absent"
        )
        yield Check(target, "no_findings", "absent", got, not cells, code)


def _passes(run: Run, prompt: str) -> Check:
    written, (named, _, bare) = prompt, prompt.rpartition("/")
    if named:
        mode = CellMode(named)
    elif run.mode in {"native", "words"}:
        mode = CellMode(run.mode)
    else:
        got = f"mode {run.mode}" if run.mode else run.no_verdict
        return Check(run.name, "passes", "passes in the verdict's mode", got, False, written)
    status = run.prompt_status(mode, bare)
    return Check(
        run.name, "passes", f"passes in {mode.value}", status.got, status.passed is True, written
    )


def _any(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else "one of " + ", ".join(names)
