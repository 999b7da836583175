"""A mark of the compatibility table: one target's value for one feature, as a status (a
word and a shape), the short value, why, and the cells it stands on as trimmed text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conchcheck.report.blocks import trimmed
from conchcheck.report.knobs import knob_word
from conchcheck.report.markup import Status
from conchcheck.results import Cell
from conchcheck.results.plain import to_plain

EVIDENCE_LIMIT = 800
"""Characters of one request, reply or reading shown in a cell's details; results.json has all."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """One cell a mark stands on, as text ready to show."""

    cell: str
    label: str
    detail: str
    request: str
    reply: str
    reading: str


@dataclass(frozen=True, slots=True)
class Mark:
    """One target's value for one feature."""

    status: Status
    text: str
    """The short value: ``permissive``, ``8/11 73%``, ``2/2``."""
    note: str = ""
    """One sentence: why this status."""
    sort: float = 0.0
    """Higher is better: the table sorts on it and the diff compares it."""
    evidence: tuple[Evidence, ...] = ()


def evidence_of(cells: Sequence[Cell], limit: int = 1) -> tuple[Evidence, ...]:
    """The evidence of the first ``limit`` of ``cells``."""
    return tuple(evidence(cell) for cell in cells[:limit])


def evidence(cell: Cell) -> Evidence:
    """A cell's request, reply and reading as trimmed text."""
    request = ""
    if cell.request is not None:
        body = cell.request.body
        shown = body if isinstance(body, str) else _json(body)
        request = trimmed(f"{cell.request.method} {cell.request.url}\n{shown}", EVIDENCE_LIMIT)
    reply = ""
    if cell.reply is not None:
        status = "no status" if cell.reply.status is None else f"HTTP {cell.reply.status}"
        said = cell.reply.text if cell.reply.text else cell.reply.body
        if cell.refusal is not None:
            said = cell.refusal.message
        reply = trimmed(f"{status}\n{said}", EVIDENCE_LIMIT)
    reading = trimmed(_json(cell.reading), EVIDENCE_LIMIT) if cell.reading is not None else ""
    # A knob cell's label is its state: "honoured" says more than "pass".
    return Evidence(cell.id, knob_word(cell) or cell.label, cell.detail, request, reply, reading)


def _json(value: Any) -> str:
    return json.dumps(to_plain(value), ensure_ascii=False, sort_keys=True, default=str)
