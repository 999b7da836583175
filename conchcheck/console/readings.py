"""How conchcheck read a text: the repairs of almost-JSON, a call's arguments checked
against its schema, a reply's calls in words."""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from conchcheck.console import screen
from conchcheck.console.screen import panel, safe, show_json, show_table
from conchcheck.core.arguments import ArgumentsResult
from conchcheck.core.repair import Reading, Unreadable
from conchcheck.core.words import WordsReading


def _codes(codes: tuple[Any, ...]) -> str:
    return ", ".join(c.value for c in codes) if codes else "none"


def show_reading(reading: Reading) -> None:
    """What the forgiving reader made of a text."""
    count = len(reading.repairs)
    status = "valid JSON" if not count else f"mended, {count} repair{'s' * (count != 1)}"
    screen.out.print(f"[green]✓[/] Read as JSON ({status}): {_codes(reading.repairs)}")
    show_json(reading.value)


def show_unreadable(exc: Unreadable) -> None:
    """A text the reader could not read."""
    screen.out.print(f"[red]✗[/] {safe(str(exc))}", soft_wrap=True)


def show_arguments(result: ArgumentsResult) -> None:
    """How arguments were read, normalised and checked."""
    if result.ok:
        note = "" if result.checked else " (the schema could not be used to check them)"
        screen.out.print(f"[green]✓[/] The arguments fit{note}. Repairs: {_codes(result.repairs)}")
    else:
        screen.out.print(f"[red]✗[/] The arguments don't fit. Repairs: {_codes(result.repairs)}")
    if result.arguments is not None:
        show_json(result.arguments, "Arguments the tool receives:" if result.ok else "Arguments:")
    if result.changes:
        table = Table(
            "field", "change", "before", "after", title="Normalised", title_justify="left"
        )
        for change in result.changes:
            table.add_row(
                safe(change.field),
                change.normalisation.value,
                safe(json.dumps(change.before, ensure_ascii=False)),
                "(dropped)"
                if change.normalisation.value == "dropped_field"
                else safe(json.dumps(change.after, ensure_ascii=False)),
            )
        screen.out.print(table)
    for waived in result.waived:
        screen.out.print(f"[yellow]not judged:[/] {safe(waived)}", soft_wrap=True)
    if result.schema_problem is not None:
        screen.out.print(
            f"[yellow]not checked:[/] {safe(result.schema_problem.line)}", soft_wrap=True
        )
    if result.message:
        panel(safe(result.message), "What the model is told")


def show_calls(reading: WordsReading) -> None:
    """The calls read from a reply, and the words its user sees."""
    shown = safe(reading.text.strip()) or "[dim](nothing)[/]"
    panel(shown, "Words shown")
    if reading.fake_responses:
        screen.out.print(
            f"[yellow]Dropped {reading.fake_responses} <tool_response> block(s) "
            "the model wrote itself.[/]"
        )
    if not reading.calls:
        screen.out.print("No tool calls.")
        return
    table = Table(
        "#", "form", "tool", "arguments", "repairs", "", title="Calls", title_justify="left"
    )
    for number, call in enumerate(reading.calls, 1):
        table.add_row(
            str(number),
            call.form.value,
            safe(call.name or "?"),
            safe(json.dumps(call.arguments, ensure_ascii=False)),
            _codes(call.repairs),
            "[green]✓[/]" if call.ok else "[red]✗[/]",
        )
    show_table(table)
    for number, call in enumerate(reading.calls, 1):
        if call.reading and call.reading.dropped:
            dropped = ", ".join(call.reading.dropped)
            screen.out.print(
                f"Call {number}: dropped fields the tool does not take: {safe(dropped)}"
            )
        if call.error:
            panel(safe(call.error), f"Call {number}: what the model is told")
