"""One probe's results as a gate reads them: the verdict, the rates, and each case and prompt.

Every fact a gate compares is derived here once, so an expectation and a baseline comparison
can't read the same results two ways.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from conchcheck.core.dialects import Dialect
from conchcheck.core.knobs import KnobsAndLosses
from conchcheck.core.trials import PERMISSIVENESS
from conchcheck.errors import InputError
from conchcheck.results import PASSING, Cell, CellMode, Mode, Outcome, Stage
from conchcheck.results.reader import read_results

RATES = ("native.rate", "native.clean_rate", "words.rate", "words.clean_rate")
"""The rates a gate reads, named as an expectations file names them."""
MODES = ("native", "words", "none")
"""Modes from best to worst."""
DIALECTS = tuple(d.value for d in PERMISSIVENESS)
"""Dialects from most to least permissive (DESIGN.md, rule 4)."""
_PROMPT_STAGES = {CellMode.NATIVE: Stage.NATIVE, CellMode.WORDS: Stage.WORDS}


@dataclass(frozen=True, slots=True)
class PromptStatus:
    """How a prompt's cells in one mode went; ``passed`` is None when none was answered."""

    passed: bool | None
    got: str


@dataclass(frozen=True, slots=True)
class Run:
    """What one ``results.json`` says, in the terms a gate compares."""

    target: str
    """``provider:model``: what an expectations file's section names."""
    api: str
    """The API family spoken: one target's several APIs are several runs."""
    source: str
    matrix_digest: str
    mode: Mode | None
    """None when the probe reached no verdict (unusable target, or stopped before one)."""
    dialect: Dialect | None
    """The verdict's dialect, or the one that carries most when none carries every case."""
    rates: Mapping[str, float]
    cells: tuple[Cell, ...]
    unusable: str | None = None
    stopped: str | None = None
    name: str = ""
    """How the gate names the run: the target, with `` (api)`` when results of another API
    of the same target were given too."""
    knobs: KnobsAndLosses | None = None
    """The verdict's knobs-and-losses section; None without a verdict, or in results written
    before it."""

    @property
    def key(self) -> tuple[str, str]:
        """(target, api): what a run is, and what meets its baseline. The endpoint is left
        out, so a baseline probed on another port (a local server's) still meets it."""
        return (self.target, self.api)

    @property
    def no_knobs(self) -> str:
        """Why there is no knobs-and-losses section, as ``got`` text."""
        if self.mode is None:
            return self.no_verdict
        return "not measured (results written before knobs and losses)"

    @property
    def no_verdict(self) -> str:
        """Why there is no verdict, as ``got`` text."""
        why = self.unusable or self.stopped
        return f"no verdict ({why})" if why else "no verdict"

    def case_status(self, case: str) -> str:
        """``accepted``, the label of the refusal (``refused:schema``), or ``not tried``.

        In the dialect an app would send: a case accepted only in another dialect is no use.
        """
        cells = [
            c
            for c in self.cells
            if c.stage is Stage.DIALECT and c.dialect == self.dialect and c.case == case
        ]
        if any(c.outcome is Outcome.ACCEPTED for c in cells):
            return "accepted"
        return cells[-1].label if cells else "not tried"

    def cases(self) -> tuple[str, ...]:
        """Every schema case the dialect stage tried, in the order first tried."""
        return tuple(dict.fromkeys(c.case for c in self.cells if c.stage is Stage.DIALECT))

    def prompt_status(self, mode: CellMode, prompt: str) -> PromptStatus:
        """Whether every answered cell of ``prompt`` in ``mode`` passed; failed requests and
        skipped cells prove nothing and are left out."""
        stage = _PROMPT_STAGES[mode]
        cells = [c for c in self.cells if c.stage is stage and c.case == prompt]
        answered = [c for c in cells if c.outcome not in {Outcome.ERROR, Outcome.SKIPPED}]
        if not answered:
            return PromptStatus(None, "no answer" if cells else "not run")
        good = sum(c.outcome in PASSING for c in answered)
        labels = ", ".join(dict.fromkeys(c.label for c in answered if c.outcome not in PASSING))
        tail = f" ({labels})" if labels else ""
        return PromptStatus(good == len(answered), f"{good}/{len(answered)} passed{tail}")

    def prompts(self, mode: CellMode) -> tuple[str, ...]:
        """The prompts run in ``mode``, in order."""
        stage = _PROMPT_STAGES[mode]
        return tuple(dict.fromkeys(c.case for c in self.cells if c.stage is stage))

    def findings(self) -> dict[str, tuple[str, ...]]:
        """Each finding code seen, with the cells it was seen in."""
        seen: dict[str, list[str]] = {}
        for cell in self.cells:
            codes = [f.code for f in cell.findings]
            codes += [f.code for f in cell.reply.findings] if cell.reply else []
            for code in dict.fromkeys(codes):
                seen.setdefault(code, []).append(cell.id)
        return {code: tuple(ids) for code, ids in seen.items()}


def read_run(path: Path) -> Run:
    """A ``Run`` from one ``results.json``; ``InputError`` where the file is wrong."""
    result = read_results(path)
    verdict = result.verdict
    rates: dict[str, float] = {}
    mode = dialect = None
    if verdict is not None:
        mode = verdict.mode
        dialect = verdict.dialect.dialect or verdict.dialect.best
        for mode_rates, name in ((verdict.native, "native"), (verdict.words, "words")):
            rates[f"{name}.rate"] = mode_rates.rate
            rates[f"{name}.clean_rate"] = mode_rates.clean_rate
    return Run(
        target=result.target,
        api=result.api.value,
        source=str(path),
        matrix_digest=result.matrix_digest,
        mode=mode,
        dialect=dialect,
        rates=rates,
        cells=result.cells,
        unusable=result.unusable,
        stopped=result.stopped,
        name=result.target,
        knobs=verdict.knobs_and_losses if verdict is not None else None,
    )


def load_runs(sources: Iterable[Path | str]) -> tuple[Run, ...]:
    """Every run in ``sources``: ``results.json`` files, or folders searched for them.

    Two results for one target in one API are refused: which of them a gate should believe
    is unclear. One target's several APIs are several runs, each named with its API.
    """
    runs: list[Run] = []
    seen: dict[tuple[str, str], str] = {}
    for source in sources:
        for path in _files(Path(source)):
            run = read_run(path)
            if run.key in seen:
                raise InputError(
                    f"{path}: results for {run.target} ({run.api}) again (also in "
                    f"{seen[run.key]}).",
                    hint="Give each target's results once in each API.",
                )
            seen[run.key] = str(path)
            runs.append(run)
    apis: dict[str, set[str]] = {}
    for run in runs:
        apis.setdefault(run.target, set()).add(run.api)
    return tuple(
        run if len(apis[run.target]) == 1 else replace(run, name=f"{run.target} ({run.api})")
        for run in runs
    )


def _files(source: Path) -> list[Path]:
    if not source.is_dir():
        return [source]
    found = sorted(source.rglob("results.json"))
    if not found:
        raise InputError(
            f"{source}: a folder with no results.json in it.",
            hint="Give the results.json files, or the folder `conchcheck probe --out` wrote.",
        )
    return found
