"""Runs against a baseline: what got worse and what got better, target by target (a target
in each API it was probed in).

Worse is a mode lower in native > words > none, a dialect less permissive, a rate that fell
by more than the tolerance, a schema case accepted before and not now, a prompt that passed
and now fails, a knobs-and-losses field that lost its good value (honoured, true, agrees,
exact) or a count of losses that grew, or a target whose results are gone. Cases and prompts
only one run tried are not compared, nor the knobs when one run has no section: a different
matrix or an older conchcheck is no regression.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conchcheck.gate import knobs
from conchcheck.gate.outcome import BaselineChange, Direction
from conchcheck.gate.runs import DIALECTS, MODES, RATES, Run
from conchcheck.results import CellMode

WORSE, BETTER = Direction.REGRESSION, Direction.IMPROVEMENT


def compare(
    runs: Sequence[Run], baseline: Sequence[Run], tolerance: float
) -> tuple[BaselineChange, ...]:
    """Every change from ``baseline`` to ``runs``, in the order of ``runs``, then the targets
    the baseline had and the runs don't."""
    before = {run.key: run for run in baseline}
    changes: list[BaselineChange] = []
    for run in runs:
        old = before.get(run.key)
        if old is None:
            changes.append(BaselineChange(run.name, "target", "absent", "probed", BETTER))
        else:
            changes.extend(_changes(old, run, tolerance))
    now = {run.key for run in runs}
    changes.extend(
        BaselineChange(old.name, "target", "probed", "absent", WORSE)
        for old in baseline
        if old.key not in now
    )
    return tuple(changes)


def _changes(old: Run, new: Run, tolerance: float) -> Iterator[BaselineChange]:
    target = new.name
    ranked = _ranked(old.mode, new.mode, MODES)
    if ranked is not None:
        yield BaselineChange(target, "mode", str(old.mode), str(new.mode), ranked)
    ranked = _ranked(old.dialect, new.dialect, DIALECTS)
    if ranked is not None:
        yield BaselineChange(target, "dialect", str(old.dialect), str(new.dialect), ranked)
    for name in RATES:
        was, now = old.rates.get(name), new.rates.get(name)
        if was is None or now is None or abs(now - was) <= tolerance:
            continue
        yield BaselineChange(
            target, name, f"{was:.3g}", f"{now:.3g}", BETTER if now > was else WORSE
        )
    tried = set(new.cases())
    for case in old.cases():
        if case not in tried:
            continue
        was_ok, now_ok = old.case_status(case), new.case_status(case)
        if (was_ok == "accepted") != (now_ok == "accepted"):
            direction = WORSE if was_ok == "accepted" else BETTER
            yield BaselineChange(target, f"case {case}", was_ok, now_ok, direction)
    if old.knobs is not None and new.knobs is not None:
        yield from knobs.changes(target, old.knobs, new.knobs)
    for mode in (CellMode.NATIVE, CellMode.WORDS):
        ran = set(new.prompts(mode))
        for prompt in old.prompts(mode):
            if prompt not in ran:
                continue
            then, latest = old.prompt_status(mode, prompt), new.prompt_status(mode, prompt)
            # Unanswered (every request failed) proves nothing either way.
            if then.passed is None or latest.passed is None or then.passed == latest.passed:
                continue
            direction = WORSE if then.passed else BETTER
            what = f"prompt {mode.value}/{prompt}"
            yield BaselineChange(target, what, then.got, latest.got, direction)


def _ranked(old: str | None, new: str | None, order: tuple[str, ...]) -> Direction | None:
    """Which way ``old`` → ``new`` went in ``order`` (best first); None for no verdict
    is last of all, so losing the verdict is a regression."""
    if old == new:
        return None
    rank = {name: index for index, name in enumerate(order)}
    was, now = rank.get(old or "", len(order)), rank.get(new or "", len(order))
    if was == now:
        return None
    return WORSE if now > was else BETTER
