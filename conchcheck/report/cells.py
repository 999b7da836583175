"""The cells on ``report.html``: each one's status as a shape and a word (a mark, linking to
its evidence), and the Cells section, where each cell's request, reply, reading and refusal
fold under its mark, cut to ``EVIDENCE_LIMIT`` and each text shown once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from conchcheck.core.refusals import RefusalKind
from conchcheck.report.blocks import clipped, trimmed, words
from conchcheck.report.knobs import knob_word, state_status
from conchcheck.report.markup import Status, escape
from conchcheck.report.outline import reason
from conchcheck.results import PASSING, Cell, KnobFacts, Outcome, Stage
from conchcheck.results.plain import to_plain
from conchcheck.results.writer import facts_data

EVIDENCE_LIMIT = 1200
"""Characters of one request, reply, reading or refusal shown; results.json has all of it."""
SUMMARY_LIMIT = 160
"""Characters of a cell's detail on its folded line."""

EVIDENCE = ("request", "reply", "reading", "refusal")
_NO_EVIDENCE = frozenset({Outcome.ERROR, Outcome.SKIPPED})


def status_of(cell: Cell, expected_refusal: bool = False) -> Status:
    """How a cell went: passed, failed, or no evidence (its request failed, or it was
    skipped). A deliberately invalid case passes when its schema is refused (a refusal for
    another reason says nothing of the schema), and is partial when accepted."""
    if expected_refusal and cell.outcome is Outcome.REFUSED:
        return Status.PASS if cell.refusal_kind is RefusalKind.SCHEMA else Status.FAIL
    if expected_refusal and cell.outcome is Outcome.ACCEPTED:
        return Status.PARTIAL
    if isinstance(cell.facts, KnobFacts):
        # A knob's cell reads as its state: refused is loud, untested says nothing.
        return state_status(cell.facts.state)
    if cell.outcome in PASSING:
        return Status.PASS
    return Status.NONE if cell.outcome in _NO_EVIDENCE else Status.FAIL


def shape(status: Status) -> str:
    """The status's shape, in an element of its own (a browser test measures it)."""
    return f'<span class="shape">{status.shape}</span>'


def mark(cell: Cell, links: Mapping[str, str], expected_refusal: bool = False) -> str:
    """A cell's status as its shape and word, linking to the cell's evidence."""
    status, href = status_of(cell, expected_refusal), links[cell.id]
    return f'<a class="mark" href="#{href}">{shape(status)} {escape(word(cell))}</a>'


def word(cell: Cell) -> str:
    """A cell's outcome in words (``refused: schema``); a knob cell's is its state
    (``ignored``, ``fails open``, ``not measured``)."""
    return knob_word(cell) or words(cell.label)


def anchors(cells: Sequence[Cell]) -> dict[str, str]:
    """Each cell's id on the page, by its id in the run (which may hold any character)."""
    return {cell.id: f"c{index}" for index, cell in enumerate(cells)}


class Shown:
    """Each long text once: a later cell with the same request or reply links to the first
    (a dialect request carries many cases, and each case is a cell)."""

    def __init__(self) -> None:
        self._first: dict[str, tuple[str, str]] = {}

    def once(self, text: str, where: str, anchor: str) -> str:
        """``text`` in a ``<pre>``, or a link to ``anchor`` where it was first shown, ``where``
        naming that place."""
        link = self.before(text, where, anchor)
        if link:
            return f"<p>The same as for {link}.</p>"
        return f"<pre>{escape(trimmed(text, EVIDENCE_LIMIT))}</pre>"

    def before(self, text: str, where: str, anchor: str) -> str:
        """A link to where ``text`` was first shown, or "" (and ``anchor`` is now that place)."""
        first = self._first.setdefault(text, (anchor, where))
        if first == (anchor, where):
            return ""
        target, name = first
        return f'<a href="#{target}">{escape(name)}</a>'


def cells_section(cells: Sequence[Cell], links: Mapping[str, str], shown: Shown) -> list[str]:
    """Every cell, stage by stage, folded under its mark, id and detail."""
    out = [
        "<h2>Cells</h2>",
        f"<p>Each cell's evidence, every text cut to {EVIDENCE_LIMIT:,} characters and shown "
        "once; results.json has all of it.</p>",
    ]
    for stage in Stage:
        mine = [c for c in cells if c.stage is stage]
        if mine:
            out.append(f"<h3>{escape(stage.value)}</h3>")
            out += [_cell(cell, links, shown) for cell in mine]
    return out


def _cell(cell: Cell, links: Mapping[str, str], shown: Shown) -> str:
    anchor = links[cell.id]
    status = status_of(cell)
    said = cell.refusal.message if cell.refusal is not None else None
    if cell.detail == said:
        # A refusal of many cases: the line about this one, not the message's first.
        short = reason(cell, cell.detail)
    else:
        short = clipped(cell.detail, SUMMARY_LIMIT)
    summary = (
        f'<span class="mark s-{status.value}">{shape(status)} {escape(word(cell))}</span> '
        f"<code>{escape(cell.id)}</code>" + (f" — {escape(short)}" if short else "")
    )
    parts = [f'<details id="{anchor}">\n<summary>{summary}</summary>']
    parts.append(f'<p class="facts">{escape(_facts(cell))}</p>')
    # The whole detail too, whatever its length: the page's elements never depend on what a
    # provider wrote, only on whether it wrote anything (tests/report/test_escaping.py).
    if cell.detail and cell.detail != said:
        parts.append(f"<p>{escape(trimmed(cell.detail, EVIDENCE_LIMIT))}</p>")
    if len(cell.cases) > 1:
        cases = ", ".join(cell.cases)
        link = shown.before(f"cases: {cases}", cell.id, anchor)
        sent = f", the same ones as {link}" if link else f": {escape(cases)}"
        parts.append(f"<p>Sent in one request of {len(cell.cases)} cases{sent}.</p>")
    for name in EVIDENCE:
        value = getattr(cell, name)
        if value is not None:
            parts.append(f"<h4>{name.capitalize()}</h4>")
            parts.append(shown.once(_pretty(value), cell.id, anchor))
    facts = {
        "repairs": list(cell.repairs),
        "findings": to_plain(cell.findings),
        "extra": facts_data(cell.facts),
    }
    kept = {key: value for key, value in facts.items() if value}
    if kept:
        parts.append(f"<h4>More</h4>\n<pre>{escape(trimmed(_pretty(kept), EVIDENCE_LIMIT))}</pre>")
    return "\n".join([*parts, "</details>"])


def _facts(cell: Cell) -> str:
    facts = [f"case {cell.case}"]
    if cell.dialect:
        facts.append(f"dialect {cell.dialect}")
    if cell.mode:
        facts.append(f"mode {cell.mode.value}")
    facts.append(f"attempt {cell.attempt}")
    facts.append(f"{cell.requests} request" + ("" if cell.requests == 1 else "s"))
    facts.append(f"{cell.latency_ms:g} ms")
    if cell.prompt_tokens is not None or cell.completion_tokens is not None:
        facts.append(f"tokens {cell.prompt_tokens or 0} + {cell.completion_tokens or 0}")
    return " · ".join(facts)


def _pretty(value: Any) -> str:
    return json.dumps(to_plain(value), indent=2, sort_keys=True, ensure_ascii=False, default=str)
