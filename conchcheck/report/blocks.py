"""The blocks a report is made of (headings, paragraphs, lists, tables, a provider's words
verbatim), which ``markdown`` and ``html`` write."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

from conchcheck.results import Cell, Outcome

VERBATIM_LIMIT = 2000
"""Characters of one provider message shown; results.json keeps all of it."""


@dataclass(frozen=True, slots=True)
class Bold:
    """Strong text."""

    text: str


@dataclass(frozen=True, slots=True)
class Code:
    """An identifier or a value, shown as code."""

    text: str


Span: TypeAlias = str | Bold | Code
Inline: TypeAlias = tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Heading:
    """A section (level 2) or subsection (level 3) title."""

    level: int
    text: str


@dataclass(frozen=True, slots=True)
class Para:
    """A paragraph; ``tone`` ``warn`` marks a warning."""

    spans: Inline
    tone: str = ""


@dataclass(frozen=True, slots=True)
class Bullets:
    """A list, one item per inline run."""

    items: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A table of plain text."""

    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A provider's words exactly as they came."""

    text: str


Block: TypeAlias = Heading | Para | Bullets | Table | Verbatim


def joined(parts: Iterable[Inline], sep: str) -> Inline:
    """The inline runs ``parts`` as one, ``sep`` between each two."""
    out: list[Span] = []
    for index, part in enumerate(parts):
        out += [sep, *part] if index else list(part)
    return tuple(out)


def mark(cell: Cell | None) -> str:
    """A dialect cell in a table: ✅, ❌ and the refusal's kind, ⚠️ and the failure, or —."""
    if cell is None:
        return "—"
    if cell.outcome is Outcome.ACCEPTED:
        return "✅"
    if cell.outcome is Outcome.REFUSED:
        return f"❌ {cell.refusal_kind or 'other'}"
    if cell.outcome is Outcome.ERROR:
        return f"⚠️ {cell.label}"
    return cell.label


def trimmed(text: str) -> str:
    """A provider's message cut to ``VERBATIM_LIMIT`` characters, saying how much is left."""
    if len(text) <= VERBATIM_LIMIT:
        return text
    more = len(text) - VERBATIM_LIMIT
    return f"{text[:VERBATIM_LIMIT]}… [{more} more characters in results.json]"
