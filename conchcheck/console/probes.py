"""A probe as it runs and as it ends: the progress bars, the verdict of one target,
the rows of many, and the capability entries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from conchcheck.capabilities import Entry
from conchcheck.console import screen
from conchcheck.console.screen import safe, show_table
from conchcheck.errors import ExitCode
from conchcheck.report.knobs import summary_line
from conchcheck.report.labels import labelled, labels_line
from conchcheck.results import Cell, Stage
from conchcheck.run import FleetOutcome, ProbeOutcome
from conchcheck.run.index import pin


class _Progress:
    """A probe observer: a rich progress bar per stage on stderr when it is a terminal.

    Elsewhere (a pipe, a CI log) nothing: progress is for a person watching.

    Stages run at once (the probe is a graph), so each cell advances its own stage's bar.
    """

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Progress | None = None
        self.tasks: dict[Stage, TaskID] = {}
        if not quiet and screen.err.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=screen.err,
                transient=False,
            )

    def stage(self, stage: Stage, total: int) -> None:
        if self.bar is not None:
            self._task(stage, total or None)

    def cell(self, cell: Cell) -> None:
        if self.bar is not None:
            self.bar.advance(self._task(cell.stage, None))

    def _task(self, stage: Stage, total: int | None) -> TaskID:
        assert self.bar is not None
        if stage not in self.tasks:
            # Follow-ups are known only as their prompts pass: their bar has no total.
            self.tasks[stage] = self.bar.add_task(stage.value, total=total)
        elif total is not None:
            self.bar.update(self.tasks[stage], total=total)
        return self.tasks[stage]


@contextmanager
def progress(*, quiet: bool) -> Iterator[_Progress]:
    """The observer for one probe; the bar closes however the probe ends."""
    observer = _Progress(quiet)
    if observer.bar is None:
        yield observer
        return
    with observer.bar:
        yield observer


def show_outcome(outcome: ProbeOutcome) -> None:
    """The closing summary: the verdict, the table of prompts, where the reports are."""
    result = outcome.result
    if result is not None and result.verdict is not None:
        verdict = result.verdict
        table = Table("target", "dialect", "mode", "native", "words", "requests", "tokens")
        table.add_row(
            safe(result.target),
            verdict.dialect.short,
            verdict.mode.value,
            f"{verdict.native.passed}/{verdict.native.total} ({verdict.native.clean} clean)",
            f"{verdict.words.passed}/{verdict.words.total} ({verdict.words.clean} clean)",
            str(result.requests),
            str(result.prompt_tokens + result.completion_tokens),
        )
        screen.out.print(table)
        screen.out.print(safe(verdict.reason), soft_wrap=True)
        for finding in verdict.findings:
            screen.out.print(f"[yellow]finding:[/] {safe(finding)}", soft_wrap=True)
        if verdict.knobs_and_losses is not None:
            screen.out.print(safe(summary_line(verdict.knobs_and_losses)), soft_wrap=True)
        if verdict.labels is not None and labelled(verdict.labels):
            screen.out.print(safe(labels_line(verdict.labels)), soft_wrap=True)
    code = outcome.exit_code
    colour = "green" if code == ExitCode.DONE else "yellow" if code == ExitCode.STOPPED else "red"
    screen.out.print(f"[{colour}]{safe(outcome.message)}[/]", soft_wrap=True)
    for path in outcome.written:
        screen.out.print(f"wrote {safe(str(path))}", soft_wrap=True)
    if outcome.entry is not None:
        screen.out.print("capability entry written", soft_wrap=True)


def show_fleet(outcome: FleetOutcome) -> None:
    """A many-target run: a row a target (its exit code, verdict, folder), then the index."""
    table = Table("target", "api", "exit", "dialect", "mode", "folder")
    for done in outcome.targets:
        result = done.outcome.result
        verdict = result.verdict if result is not None else None
        table.add_row(
            safe(done.entry.target.label),
            done.entry.target.provider.api.value,
            str(done.outcome.exit_code),
            safe(verdict.dialect.short) if verdict else "-",
            verdict.mode.value if verdict else "-",
            safe(str(done.folder)),
        )
    screen.out.print(table)
    for done in outcome.targets:
        if done.outcome.exit_code != ExitCode.DONE:
            named = f"{done.entry.target.label} ({done.entry.target.provider.api})"
            screen.out.print(f"{safe(named)}: {safe(done.outcome.message)}")
    if any(done.entry.target.route for done in outcome.targets):
        best = pin(outcome)
        said = (
            f"Pin {best.entry.target.route}: provider: {{only: [{best.entry.target.route}],"
            " allow_fallbacks: false}."
            if best is not None
            else "No upstream gave a verdict: none to pin."
        )
        screen.out.print(safe(said), soft_wrap=True)
    shard = f" (shard {outcome.shard})" if outcome.shard is not None else ""
    screen.out.print(f"wrote {safe(str(outcome.index))}{shard}", soft_wrap=True)


def show_cached(entry: Entry) -> None:
    """A fresh capability entry used instead of a probe."""
    name = f"{entry.provider}:{entry.model} ({entry.api.value})"
    screen.out.print(
        safe(
            f"Cached: {name} — dialect {entry.dialect or 'none'}, mode {entry.mode}; "
            f"probed {entry.probed_at}, fresh until {entry.expires_at}."
        ),
        soft_wrap=True,
    )


def show_entries(entries: list[Entry]) -> None:
    """The capability file's entries as a table."""
    table = Table(
        "provider", "model", "endpoint", "api", "dialect", "mode", "native", "words", "expires"
    )
    for e in entries:
        table.add_row(
            safe(e.provider),
            safe(e.model),
            safe(e.endpoint),
            e.api.value,
            safe(e.dialect or "none"),
            safe(e.mode),
            f"{e.rates.get('native', 0):.0%}",
            f"{e.rates.get('words', 0):.0%}",
            safe(e.expires_at),
        )
    show_table(table)
