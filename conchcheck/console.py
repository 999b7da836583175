"""Everything conchcheck shows a person: rich on the terminal, the product on stdout.

Errors and commentary go to stderr; results to stdout. ``NO_COLOR`` is honoured by rich.
When stdout is not a terminal (a pipe, a file), tables and panels are printed as plain text
at full width, never cut or wrapped to 80 columns, and progress is not shown.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from conchcheck.capabilities import Entry
from conchcheck.core.arguments import ArgumentsResult
from conchcheck.core.escaping import json_text, visible
from conchcheck.core.repair import Reading, Unreadable
from conchcheck.core.words import WordsReading
from conchcheck.errors import ConchcheckError, ExitCode
from conchcheck.gate.outcome import Direction, GateResult
from conchcheck.matrix import Matrix
from conchcheck.redaction import MaskedStream, held
from conchcheck.report.knobs import summary_line
from conchcheck.report.labels import labelled, labels_line
from conchcheck.results import Cell, Stage
from conchcheck.results.plain import to_plain
from conchcheck.run import FleetOutcome, ProbeOutcome
from conchcheck.wire.providers import Provider

# rich needs only write, flush, isatty, fileno and encoding of a file.
out = Console(file=cast(IO[str], MaskedStream("stdout")), highlight=False)
err = Console(file=cast(IO[str], MaskedStream("stderr")), stderr=True, highlight=False)


def _show(table: Table) -> None:
    """``table`` on stdout: drawn on a terminal; elsewhere plain, one line a row, whole.

    Columns are padded to their widest cell and parted by two spaces, so ``grep`` finds
    whole values and ``column``/``cut`` can still split them.
    """
    if out.is_terminal:
        out.print(table)
        return
    columns = [
        [_plain(column.header), *(_plain(cell) for cell in column._cells)]
        for column in table.columns
    ]
    widths = [max(len(cell) for cell in column) for column in columns]
    lines = [f"{_plain(table.title)}:"] if table.title else []
    for row in zip(*columns, strict=True):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    sys.stdout.write(held().text("\n".join(lines)) + "\n")


def _panel(text: str, title: str) -> None:
    """A boxed text on a terminal; elsewhere its title, a colon and the text as it is."""
    if out.is_terminal:
        out.print(Panel(text, title=title, title_align="left"))
    else:
        sys.stdout.write(held().text(f"{title}:\n{_plain(text)}") + "\n")


def _plain(renderable: Any) -> str:
    """The text of a cell or title written in rich markup, without the markup."""
    if isinstance(renderable, Text):
        return renderable.plain
    return Text.from_markup(str(renderable or "")).plain


def _text(text: str) -> str:
    """Text from a provider or a file, ready for rich: keys masked, controls shown, no markup."""
    return escape(visible(held().text(text)))


def _json(value: Any) -> str:
    """JSON text of ``value`` safe for a terminal, keys masked (stdout's product)."""
    mask = held()
    return json_text(mask.text(json.dumps(mask.value(value), indent=2, ensure_ascii=False)))


def error(exc: ConchcheckError) -> None:
    """The error and its hint on one line of stderr; a control character shows as its escape.

    One line, whatever the message holds: a value given with a newline or a terminal escape
    can neither split the line nor reach the terminal raw.
    """
    text = f"{exc} {exc.hint}" if exc.hint else str(exc)
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    err.print(f"[bold red]conchcheck:[/] {escape(line)}", soft_wrap=True)


def say(text: str) -> None:
    """One line of plain text on stdout, as it is."""
    out.print(_text(text), soft_wrap=True)


def complain(text: str) -> None:
    """One line on stderr, as it is."""
    err.print(_text(text), soft_wrap=True)


def show_matrix_problems(path: object, problems: list[str]) -> None:
    """Each problem on stderr, or that the matrix is valid on stdout."""
    for line in problems:
        err.print(_text(line), soft_wrap=True)
    if not problems:
        out.print(_text(f"{path}: a valid matrix."), soft_wrap=True)


def emit_json(value: Any) -> None:
    """Write ``value`` as indented JSON to stdout, with nothing else."""
    sys.stdout.write(_json(to_plain(value)) + "\n")


def show_json(value: Any, title: str | None = None) -> None:
    """A JSON value, highlighted."""
    if title:
        out.print(f"[bold]{_text(title)}[/]")
    text = _json(value)
    if not out.is_terminal:
        sys.stdout.write(text + "\n")
        return
    out.print(Syntax(text, "json", theme="ansi_dark", background_color="default", word_wrap=True))


def _codes(codes: tuple[Any, ...]) -> str:
    return ", ".join(c.value for c in codes) if codes else "none"


def show_reading(reading: Reading) -> None:
    """What the forgiving reader made of a text."""
    count = len(reading.repairs)
    status = "valid JSON" if not count else f"mended, {count} repair{'s' * (count != 1)}"
    out.print(f"[green]✓[/] Read as JSON ({status}): {_codes(reading.repairs)}")
    show_json(reading.value)


def show_unreadable(exc: Unreadable) -> None:
    """A text the reader could not read."""
    out.print(f"[red]✗[/] {_text(str(exc))}", soft_wrap=True)


def show_arguments(result: ArgumentsResult) -> None:
    """How arguments were read, normalised and checked."""
    if result.ok:
        note = "" if result.checked else " (the schema could not be used to check them)"
        out.print(f"[green]✓[/] The arguments fit{note}. Repairs: {_codes(result.repairs)}")
    else:
        out.print(f"[red]✗[/] The arguments don't fit. Repairs: {_codes(result.repairs)}")
    if result.arguments is not None:
        show_json(result.arguments, "Arguments the tool receives:" if result.ok else "Arguments:")
    if result.changes:
        table = Table(
            "field", "change", "before", "after", title="Normalised", title_justify="left"
        )
        for change in result.changes:
            table.add_row(
                _text(change.field),
                change.normalisation.value,
                _text(json.dumps(change.before, ensure_ascii=False)),
                "(dropped)"
                if change.normalisation.value == "dropped_field"
                else _text(json.dumps(change.after, ensure_ascii=False)),
            )
        out.print(table)
    for waived in result.waived:
        out.print(f"[yellow]not judged:[/] {_text(waived)}", soft_wrap=True)
    if result.schema_problem is not None:
        out.print(f"[yellow]not checked:[/] {_text(result.schema_problem.line)}", soft_wrap=True)
    if result.message:
        _panel(_text(result.message), "What the model is told")


def show_calls(reading: WordsReading) -> None:
    """The calls read from a reply, and the words its user sees."""
    shown = _text(reading.text.strip()) or "[dim](nothing)[/]"
    _panel(shown, "Words shown")
    if reading.fake_responses:
        out.print(
            f"[yellow]Dropped {reading.fake_responses} <tool_response> block(s) "
            "the model wrote itself.[/]"
        )
    if not reading.calls:
        out.print("No tool calls.")
        return
    table = Table(
        "#", "form", "tool", "arguments", "repairs", "", title="Calls", title_justify="left"
    )
    for number, call in enumerate(reading.calls, 1):
        table.add_row(
            str(number),
            call.form.value,
            _text(call.name or "?"),
            _text(json.dumps(call.arguments, ensure_ascii=False)),
            _codes(call.repairs),
            "[green]✓[/]" if call.ok else "[red]✗[/]",
        )
    _show(table)
    for number, call in enumerate(reading.calls, 1):
        if call.reading and call.reading.dropped:
            dropped = ", ".join(call.reading.dropped)
            out.print(f"Call {number}: dropped fields the tool does not take: {_text(dropped)}")
        if call.error:
            _panel(_text(call.error), f"Call {number}: what the model is told")


def show_providers(providers: list[Provider]) -> None:
    """The provider registry as a table."""
    table = Table("provider", "API", "base URL", "key from", "dialect", "catalogue", "note")
    table.columns[2].overflow = "fold"  # a URL cut with an ellipsis can't be copied
    for p in providers:
        table.add_row(
            p.name,
            p.api,
            p.base_url,
            p.key_env or "(none)",
            p.dialect.value,
            p.catalogue.value,
            _text(p.note),
        )
    _show(table)
    out.print("Targets are written provider:model; --base-url points any of them elsewhere.")


class _Progress:
    """A probe observer: a rich progress bar per stage on stderr when it is a terminal.

    Elsewhere (a pipe, a CI log) nothing: progress is for a person watching.

    Stages run at once (the probe is a graph), so each cell advances its own stage's bar.
    """

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Progress | None = None
        self.tasks: dict[Stage, TaskID] = {}
        if not quiet and err.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description:<10}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
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
            _text(result.target),
            verdict.dialect.short,
            verdict.mode.value,
            f"{verdict.native.passed}/{verdict.native.total} ({verdict.native.clean} clean)",
            f"{verdict.words.passed}/{verdict.words.total} ({verdict.words.clean} clean)",
            str(result.requests),
            str(result.prompt_tokens + result.completion_tokens),
        )
        out.print(table)
        out.print(_text(verdict.reason), soft_wrap=True)
        for finding in verdict.findings:
            out.print(f"[yellow]finding:[/] {_text(finding)}", soft_wrap=True)
        if verdict.knobs_and_losses is not None:
            out.print(_text(summary_line(verdict.knobs_and_losses)), soft_wrap=True)
        if verdict.labels is not None and labelled(verdict.labels):
            out.print(_text(labels_line(verdict.labels)), soft_wrap=True)
    code = outcome.exit_code
    colour = "green" if code == ExitCode.DONE else "yellow" if code == ExitCode.STOPPED else "red"
    out.print(f"[{colour}]{_text(outcome.message)}[/]", soft_wrap=True)
    for path in outcome.written:
        out.print(f"wrote {_text(str(path))}", soft_wrap=True)
    if outcome.entry is not None:
        out.print("capability entry written", soft_wrap=True)


def show_fleet(outcome: FleetOutcome) -> None:
    """A many-target run: a row a target (its exit code, verdict, folder), then the index."""
    table = Table("target", "api", "exit", "dialect", "mode", "folder")
    for done in outcome.targets:
        result = done.outcome.result
        verdict = result.verdict if result is not None else None
        table.add_row(
            _text(done.entry.target.label),
            done.entry.target.provider.api.value,
            str(done.outcome.exit_code),
            _text(verdict.dialect.short) if verdict else "-",
            verdict.mode.value if verdict else "-",
            _text(str(done.folder)),
        )
    out.print(table)
    for done in outcome.targets:
        if done.outcome.exit_code != ExitCode.DONE:
            named = f"{done.entry.target.label} ({done.entry.target.provider.api})"
            out.print(f"{_text(named)}: {_text(done.outcome.message)}")
    shard = f" (shard {outcome.shard})" if outcome.shard is not None else ""
    out.print(f"wrote {_text(str(outcome.index))}{shard}", soft_wrap=True)


def show_cached(entry: Entry) -> None:
    """A fresh capability entry used instead of a probe."""
    name = f"{entry.provider}:{entry.model} ({entry.api.value})"
    out.print(
        _text(
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
            _text(e.provider),
            _text(e.model),
            _text(e.endpoint),
            e.api.value,
            _text(e.dialect or "none"),
            _text(e.mode),
            f"{e.rates.get('native', 0):.0%}",
            f"{e.rates.get('words', 0):.0%}",
            _text(e.expires_at),
        )
    _show(table)


def show_matrix(matrix: Matrix) -> None:
    """A matrix's schema cases and prompts."""
    out.print(f"[bold]{_text(matrix.name)}[/] — {_text(matrix.description or '')}", soft_wrap=True)
    cases = Table("schema case", "feature", "tool", title="Schema cases")
    for case in matrix.schema_cases:
        note = "" if case.valid else " (invalid on purpose)"
        copies = f" ×{case.copies}" if case.copies else ""
        cases.add_row(_text(case.id), _text(case.feature) + note, _text(case.tool.name) + copies)
    _show(cases)
    prompts = Table("prompt", "user", "tools", "expects", title="Prompts")
    for prompt in matrix.prompts:
        wanted = (
            "no call" if prompt.expect.no_call else ", ".join(c.tool for c in prompt.expect.calls)
        )
        prompts.add_row(_text(prompt.id), _text(prompt.user), str(len(prompt.tools)), _text(wanted))
    _show(prompts)


def show_schema(schema: Any) -> None:
    """A converted schema as plain JSON on stdout (pipe-friendly)."""
    sys.stdout.write(_json(schema) + "\n")


def emit(text: str) -> None:
    """Write a rendered product (Markdown, XML, workflow commands) to stdout as it is."""
    sys.stdout.write(held().text(text))


def show_gate(result: GateResult) -> None:
    """What ``conchcheck check`` found, a line each, so a pipe or a log keeps every word."""
    from conchcheck.gate.markdown import summary

    for check in result.unmet:
        line = f"{check.target}  {check.name}: wanted {check.wanted}, got {check.got}"
        out.print(f"[red]UNMET[/] {_text(line)}", soft_wrap=True)
    for change in result.changes:
        regressed = change.direction is Direction.REGRESSION
        word = "[red]REGRESSION[/]" if regressed else "[green]IMPROVEMENT[/]"
        line = f"{change.target}  {change.what}: {change.before} -> {change.after}"
        out.print(f"{word} {_text(line)}", soft_wrap=True)
    colour, word = ("green", "passed") if result.passed else ("red", "failed")
    out.print(f"[{colour}]conchcheck check: {word}.[/] {_text(summary(result))}", soft_wrap=True)
