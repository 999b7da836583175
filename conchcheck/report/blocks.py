"""The blocks a report is made of (headings, paragraphs, lists, tables, a provider's words
verbatim, refused schema cases), which ``markdown`` and ``html`` write."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

from conchcheck.core.trials import Trial
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
    """A paragraph; ``tone`` ``warn`` marks a warning, ``stop`` what ended the probe."""

    spans: Inline
    tone: str = ""


@dataclass(frozen=True, slots=True)
class Bullets:
    """A list, one item per inline run."""

    items: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Marks:
    """A table cell telling how some cells went: ``text`` as plain text, and the cells
    themselves for a renderer that shows each one's status as a shape and a word."""

    text: str
    cells: tuple[Cell, ...] = ()
    expected_refusal: bool = False
    """The cells are a deliberately invalid schema case: a refusal is the right answer."""


@dataclass(frozen=True, slots=True)
class Table:
    """A table of plain text (or marks)."""

    head: tuple[str, ...]
    rows: tuple[tuple[str | Marks, ...], ...]


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A provider's words exactly as they came."""

    text: str


@dataclass(frozen=True, slots=True)
class RefusedCase:
    """One schema case one dialect refused, with the provider's words."""

    cell: Cell
    case: str
    dialect: Trial
    kind: str
    message: str
    reason: str
    """The one line of ``message`` about this case (a refusal of many cases has a line each)."""
    keyword: str | None = None
    path: str | None = None
    expected: bool = False
    """A deliberately invalid case: the refusal is the right answer."""


@dataclass(frozen=True, slots=True)
class Refusals:
    """Refused schema cases: a table of case × dialect, or (``grouped``) a paragraph for
    each message naming every case it answered, above the message."""

    items: tuple[RefusedCase, ...]

    def grouped(self) -> list[Block]:
        """One paragraph and one verbatim message for each different message."""
        groups: dict[tuple[str, str], list[Inline]] = {}
        for item in self.items:
            where: list[Span] = [Code(item.case), " in ", item.dialect]
            if item.expected:
                where.append(" (invalid: refusal expected)")
            if item.keyword:
                where += [", keyword ", Code(item.keyword)]
            if item.path:
                where += [", at ", Code(item.path)]
            groups.setdefault((item.kind, item.message), []).append(tuple(where))
        blocks: list[Block] = []
        for (kind, message), places in groups.items():
            blocks += [Para((Bold(kind), " — ", *joined(places, "; "))), Verbatim(trimmed(message))]
        return blocks


Block: TypeAlias = Heading | Para | Bullets | Table | Verbatim | Refusals


def joined(parts: Iterable[Inline], sep: str) -> Inline:
    """The inline runs ``parts`` as one, ``sep`` between each two."""
    out: list[Span] = []
    for index, part in enumerate(parts):
        out += [sep, *part] if index else list(part)
    return tuple(out)


def mark(cell: Cell | None) -> Marks:
    """A dialect cell in a table: ✅, ❌ and the refusal's kind, ⚠️ and the failure, or —."""
    if cell is None:
        return Marks("—")
    if cell.outcome is Outcome.ACCEPTED:
        return Marks("✅", (cell,))
    if cell.outcome is Outcome.REFUSED:
        return Marks(f"❌ {cell.refusal_kind or 'other'}", (cell,))
    if cell.outcome is Outcome.ERROR:
        return Marks(f"⚠️ {cell.label}", (cell,))
    return Marks(cell.label, (cell,))


def clipped(text: str, limit: int) -> str:
    """``text`` on one line (runs of white space as one space), cut to ``limit`` characters
    with an ellipsis: for a summary whose whole text is a click away."""
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 1].rstrip()}…"


def words(label: str) -> str:
    """A label or kind as words: ``refused:context_length`` as ``refused: context length``."""
    return label.replace("_", " ").replace(":", ": ")


def trimmed(text: str, limit: int = VERBATIM_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how much is left (results.json has all)."""
    if len(text) <= limit:
        return text
    more = len(text) - limit
    return f"{text[:limit]}… [{more} more characters in results.json]"
