"""The two streams and what every view is drawn with: stdout for the product, stderr
for errors and commentary; tables and panels plain and whole when stdout is no terminal;
every text masked and escaped before rich sees it."""

from __future__ import annotations

import json
import sys
from typing import IO, Any, cast

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from conchcheck.core.escaping import json_text, visible
from conchcheck.errors import ConchcheckError
from conchcheck.redaction import MaskedStream, held
from conchcheck.results.plain import to_plain

# rich needs only write, flush, isatty, fileno and encoding of a file.
# rich needs only write, flush, isatty, fileno and encoding of a file.
out = Console(file=cast(IO[str], MaskedStream("stdout")), highlight=False)


err = Console(file=cast(IO[str], MaskedStream("stderr")), stderr=True, highlight=False)


def show_table(table: Table) -> None:
    """``table`` on stdout: drawn on a terminal; elsewhere plain, one line a row, whole.

    Columns are padded to their widest cell and parted by two spaces, so ``grep`` finds
    whole values and ``column``/``cut`` can still split them.
    """
    if out.is_terminal:
        out.print(table)
        return
    columns = [
        [plain(column.header), *(plain(cell) for cell in column._cells)] for column in table.columns
    ]
    widths = [max(len(cell) for cell in column) for column in columns]
    lines = [f"{plain(table.title)}:"] if table.title else []
    for row in zip(*columns, strict=True):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    sys.stdout.write(held().text("\n".join(lines)) + "\n")


def panel(text: str, title: str) -> None:
    """A boxed text on a terminal; elsewhere its title, a colon and the text as it is."""
    if out.is_terminal:
        out.print(Panel(text, title=title, title_align="left"))
    else:
        sys.stdout.write(held().text(f"{title}:\n{plain(text)}") + "\n")


def plain(renderable: Any) -> str:
    """The text of a cell or title written in rich markup, without the markup."""
    if isinstance(renderable, Text):
        return renderable.plain
    return Text.from_markup(str(renderable or "")).plain


def safe(text: str) -> str:
    """Text from a provider or a file, ready for rich: keys masked, controls shown, no markup."""
    return escape(visible(held().text(text)))


def json_of(value: Any) -> str:
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
    out.print(safe(text), soft_wrap=True)


def complain(text: str) -> None:
    """One line on stderr, as it is."""
    err.print(safe(text), soft_wrap=True)


def emit_json(value: Any) -> None:
    """Write ``value`` as indented JSON to stdout, with nothing else."""
    sys.stdout.write(json_of(to_plain(value)) + "\n")


def emit_text(text: str) -> None:
    """Write a document to stdout exactly as it is (an export to pipe or redirect)."""
    sys.stdout.write(text)


def emit(text: str) -> None:
    """Write a rendered product (Markdown, XML, workflow commands) to stdout as it is."""
    sys.stdout.write(held().text(text))


def show_json(value: Any, title: str | None = None) -> None:
    """A JSON value, highlighted."""
    if title:
        out.print(f"[bold]{safe(title)}[/]")
    text = json_of(value)
    if not out.is_terminal:
        sys.stdout.write(text + "\n")
        return
    out.print(Syntax(text, "json", theme="ansi_dark", background_color="default", word_wrap=True))


def show_schema(schema: Any) -> None:
    """A converted schema as plain JSON on stdout (pipe-friendly)."""
    sys.stdout.write(json_of(schema) + "\n")
