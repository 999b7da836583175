"""Everything conchcheck shows a person: rich on the terminal, the product on stdout.

Errors and commentary go to stderr; results to stdout. ``NO_COLOR`` is honoured by rich.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from conchcheck.arguments import ArgumentsResult
from conchcheck.errors import ConchcheckError
from conchcheck.plain import to_plain
from conchcheck.repair import Reading, Unreadable
from conchcheck.wire.providers import Provider
from conchcheck.words import WordsReading

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def error(exc: ConchcheckError) -> None:
    """The error on one line, and its hint dimmed on the next."""
    err.print(f"[bold red]conchcheck:[/] {escape(str(exc))}", soft_wrap=True)
    if exc.hint:
        err.print(f"[dim]{escape(exc.hint)}[/]", soft_wrap=True)


def emit_json(value: Any) -> None:
    """Write ``value`` as indented JSON to stdout, with nothing else."""
    sys.stdout.write(json.dumps(to_plain(value), indent=2, ensure_ascii=False) + "\n")


def show_json(value: Any, title: str | None = None) -> None:
    """A JSON value, highlighted."""
    if title:
        out.print(f"[bold]{escape(title)}[/]")
    text = json.dumps(value, indent=2, ensure_ascii=False)
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
    out.print(f"[red]✗[/] {escape(str(exc))}", soft_wrap=True)


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
                escape(change.field),
                change.normalisation.value,
                escape(json.dumps(change.before, ensure_ascii=False)),
                "(dropped)" if change.normalisation.value == "dropped_field"
                else escape(json.dumps(change.after, ensure_ascii=False)),
            )  # fmt: skip
        out.print(table)
    for waived in result.waived:
        out.print(f"[yellow]not judged:[/] {escape(waived)}", soft_wrap=True)
    if result.message:
        out.print(Panel(escape(result.message), title="What the model is told", title_align="left"))


def show_calls(reading: WordsReading) -> None:
    """The calls read from a reply, and the words its user sees."""
    shown = escape(reading.text.strip()) or "[dim](nothing)[/]"
    out.print(Panel(shown, title="Words shown", title_align="left"))
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
            escape(call.name or "?"),
            escape(json.dumps(call.arguments, ensure_ascii=False)),
            _codes(call.repairs),
            "[green]✓[/]" if call.ok else "[red]✗[/]",
        )
    out.print(table)
    for number, call in enumerate(reading.calls, 1):
        if call.reading and call.reading.dropped:
            dropped = ", ".join(call.reading.dropped)
            out.print(f"Call {number}: dropped fields the tool does not take: {escape(dropped)}")
        if call.error:
            out.print(
                Panel(
                    escape(call.error),
                    title=f"Call {number}: what the model is told",
                    title_align="left",
                )
            )


def show_providers(providers: list[Provider]) -> None:
    """The provider registry as a table."""
    table = Table("provider", "API", "base URL", "key from", "dialect", "catalogue", "note")
    table.columns[2].overflow = "fold"  # a URL cut with an ellipsis can't be copied
    for p in providers:
        table.add_row(
            p.name, p.api, p.base_url, p.key_env or "(none)", p.dialect.value, p.catalogue.value,
            escape(p.note),
        )  # fmt: skip
    out.print(table)
    out.print("Targets are written provider:model; --base-url points any of them elsewhere.")


def show_schema(schema: Any) -> None:
    """A converted schema as plain JSON on stdout (pipe-friendly)."""
    sys.stdout.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
