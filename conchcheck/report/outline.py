"""The outline every report shares: the verdict and its evidence as blocks (headings,
paragraphs, tables, the provider's words verbatim) that ``markdown`` and ``html`` write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from conchcheck.core.refusals import RefusalKind
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Marks,
    Para,
    Refusals,
    RefusedCase,
    Span,
    Table,
    Verbatim,
    clipped,
    joined,
    mark,
    trimmed,
    words,
)
from conchcheck.report.knobs import knobs_section
from conchcheck.report.labels import label_cell, labelled, labels_note
from conchcheck.report.toolcosts import tool_costs_section
from conchcheck.report.yourtools import your_tools
from conchcheck.results import PASSING, CaseRefusal, Cell, Option, Outcome, Rates, Stage

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult, RunInfo

MISSED_LIMIT = 40
"""Prompt cells listed with why they did not pass, so the report still fits a PR comment."""
REASON_LIMIT = 160
"""Characters of a refusal's one-line reason in a table; the message itself is kept whole."""


def outline(result: ProbeResult, info: RunInfo, *, findings_first: bool = False) -> list[Block]:
    """The report's content, section by section, in a form any renderer can write.

    ``findings_first``: the findings straight after the verdict (a page read from the top),
    rather than after the evidence (a PR comment read as a log).
    """
    blocks: list[Block] = [Para(verdict_line(result))]
    if result.stopped:
        blocks.append(
            Para(
                (
                    "Stopped early: ",
                    result.stopped,
                    ". The results are partial; ",
                    Code("--resume"),
                    " continues the probe.",
                ),
                "warn",
            )
        )
    if result.unusable:
        blocks.append(Para(("The target can't be probed: ", result.unusable, "."), "stop"))
    if result.verdict is not None:
        blocks.append(Para((result.verdict.reason,)))
        blocks.extend(_options(result.verdict.options))
    blocks.append(
        Para(
            (
                "provider ",
                Code(result.provider),
                " · model ",
                Code(result.model),
                " · endpoint ",
                Code(result.endpoint),
                " · API ",
                Code(result.api.value),
                " · family ",
                Code(result.family_dialect.value),
                " · matrix ",
                Code(result.matrix),
                " (",
                Code(result.matrix_digest[:19]),
                ") · conchcheck ",
                info.conchcheck_version,
                " · ",
                info.started_at,
                " → ",
                info.finished_at,
            )
        )
    )
    blocks.append(Para(("Command: ", Code(info.command))))
    sections = [
        knobs_section,
        _dialect,
        your_tools,
        _prompts,
        _refusals,
        _repairs,
        _findings,
        _follow_ups,
        tool_costs_section,
        _cost,
    ]
    if findings_first:
        sections.remove(_findings)
        sections.insert(0, _findings)
    for section in sections:
        blocks.extend(section(result))
    return blocks


def verdict_line(result: ProbeResult) -> Inline:
    """``**target** — dialect **gemini**, mode **native** (native 8/10, 6 clean; …)``."""
    verdict = result.verdict
    if verdict is None:
        why = f"unusable: {result.unusable}" if result.unusable else "no verdict: nothing ran"
        return (Bold(result.target), " — ", why)
    dialect = verdict.dialect.dialect or "none fits"
    native, words = verdict.native, verdict.words
    excepted = verdict.dialect.exceptions
    return (
        Bold(result.target),
        " — dialect ",
        Bold(dialect),
        *((", except: ", excepted) if excepted else ()),
        ", mode ",
        Bold(verdict.mode.value),
        f" (native {native.passed}/{native.total}, {native.clean} clean; "
        f"words {words.passed}/{words.total}, {words.clean} clean)",
    )


def _options(options: Sequence[Option]) -> list[Block]:
    """The routes an app can take, best first, each with its measured rate and what to do."""
    if len(options) < 2:
        return []
    items = tuple((Bold(o.route.phrase), f": {o.share}. {o.how}") for o in options)
    return [Para(("Options, best first:",)), Bullets(items)]


# -- sections ------------------------------------------------------------------------------


def _dialect(result: ProbeResult) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Dialect")]
    cells = {(c.case, c.dialect or ""): c for c in _stage(result, Stage.DIALECT)}
    if not cells:
        return [*blocks, Para(("No dialect cells ran.",))]
    verdict = result.verdict.dialect if result.verdict else None
    chain = verdict.chain if verdict else ()
    # Only the dialects that were tried: an untried one has nothing to show.
    tried = {d for _, d in cells}
    dialects = [d for d in dict.fromkeys([*chain, *(d for _, d in cells)]) if d in tried]
    cases = list(dict.fromkeys(case for case, _ in cells))
    if verdict is not None:
        chosen: Inline = (
            ("Chosen: ", Bold(verdict.dialect), ".")
            if verdict.dialect
            else ("No dialect in the chain carried every case.",)
        )
        if verdict.dialect and verdict.excepted:
            chosen = (
                "Chosen: ",
                Bold(verdict.dialect),
                ", except what every dialect tried refused for one reason: ",
                verdict.exceptions,
                ".",
            )
        blocks.append(Para(("Chain: ", " → ".join(verdict.chain), ". ", *chosen)))
    rows: list[tuple[str | Marks, ...]] = []
    for case in cases:
        invalid = any(c.invalid_case for (k, _), c in cells.items() if k == case)
        name = f"{case} (invalid: refusal expected)" if invalid else case
        marks = (mark(cells.get((case, d))) for d in dialects)
        rows.append((name, *(Marks(m.text, m.cells, invalid) for m in marks)))
    blocks.append(Table(("case", *dialects), tuple(rows)))
    if verdict is not None:
        for title, items in (("Refused", verdict.refused), ("Limits", verdict.limits)):
            if items:
                blocks += [Heading(3, title), *_refused(items, cells)]
        if verdict.carriers:
            carried = tuple(
                (Code(case), ": accepted in ", ", ".join(found))
                if found
                else (Code(case), ": no dialect tried accepted it")
                for case, found in verdict.carriers.items()
            )
            blocks += [Heading(3, "Carriers"), Bullets(carried)]
    return blocks


def _refused(items: Sequence[CaseRefusal], cells: dict[tuple[str, str], Cell]) -> list[Block]:
    found = []
    for item in items:
        cell = cells[(item.case, item.dialect)]
        refusal = cell.refusal
        found.append(
            RefusedCase(
                cell,
                item.case,
                item.dialect,
                item.kind,
                item.message,
                reason=reason(cell, item.message),
                keyword=item.keyword,
                path=refusal.path if refusal is not None else None,
                expected=cell.invalid_case,
            )
        )
    return [Refusals(tuple(found))]


def reason(cell: Cell, message: str) -> str:
    """The line of a refusal about ``cell``'s case: a refusal of many tools (Gemini's) has a
    line for each, and its first line may be about another case. One line, cut short."""
    refusal = cell.refusal
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = lines[0] if lines else cell.detail
    if refusal is not None:
        own = [v.message for v in refusal.violations if v.tool_index == refusal.tool_index]
        text = own[0] if own and own[0] else text
    return clipped(text, REASON_LIMIT)


def _prompts(result: ProbeResult) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Prompts")]
    cells = [*_stage(result, Stage.NATIVE), *_stage(result, Stage.WORDS)]
    if not cells:
        return [*blocks, Para(("No prompt cells ran.",))]
    prompts = list(dict.fromkeys(c.case for c in cells))

    def labels(prompt: str, stage: Stage) -> Marks:
        mine = sorted(
            (c for c in cells if c.case == prompt and c.stage is stage), key=lambda c: c.attempt
        )
        return Marks(" · ".join(c.label for c in mine) or "—", tuple(mine))

    rows = tuple((p, labels(p, Stage.NATIVE), labels(p, Stage.WORDS)) for p in prompts)
    sure = result.verdict.labels if result.verdict is not None else None
    if sure is not None and labelled(sure):
        head = ("prompt", "native", "native label", "words", "words label")
        wide = tuple(
            (p, n, label_cell(sure, p, "native"), w, label_cell(sure, p, "words"))
            for p, n, w in rows
        )
        blocks += [Table(head, wide), labels_note(sure)]
    else:
        blocks.append(Table(("prompt", "native", "words"), rows))
    if result.verdict is not None:
        native, words = result.verdict.native, result.verdict.words
        rates = (
            (Bold("native"), ": ", _rates(native, _stage(result, Stage.NATIVE))),
            (Bold("words"), ": ", _rates(words, _stage(result, Stage.WORDS))),
        )
        blocks.append(Bullets(rates))
    # Refusals have their own section, with the provider's words.
    missed = [c for c in cells if c.outcome not in PASSING and c.outcome is not Outcome.REFUSED]
    if missed:
        why = tuple((c.id, Marks(c.label, (c,)), c.detail) for c in missed[:MISSED_LIMIT])
        blocks += [Heading(3, "Why the rest did not pass"), Table(("cell", "outcome", "why"), why)]
        if len(missed) > MISSED_LIMIT:
            more = len(missed) - MISSED_LIMIT
            blocks.append(Para((f"… and {more} more: report.html and results.json have all.",)))
    return blocks


def _rates(rates: Rates, cells: Sequence[Cell]) -> str:
    """The mode's line: what passed, then every other outcome its cells came to, so the
    counts add up to the cells (a failed request is named apart: it is not in the rate)."""
    after = rates.passed - rates.clean
    line = (
        f"{rates.passed}/{rates.total} passed ({rates.rate:.0%}): "
        f"{rates.clean} clean ({rates.clean_rate:.0%}), {after} after repair"
    )
    rest: dict[tuple[int, str], int] = {}
    order = list(Outcome)
    for cell in cells:
        if cell.outcome not in PASSING and cell.outcome is not Outcome.SKIPPED:
            # In the outcomes' own order, so the line reads alike whichever cell came first.
            key = (order.index(cell.outcome), words(cell.label))
            rest[key] = rest.get(key, 0) + 1
    if rest:
        line += "; " + ", ".join(f"{count} {shown}" for (_, shown), count in sorted(rest.items()))
    return line


def _refusals(result: ProbeResult) -> list[Block]:
    groups: dict[tuple[str, str], list[Inline]] = {}
    for cell in result.cells:
        if cell.outcome is Outcome.REFUSED and cell.stage is not Stage.DIALECT:
            message = cell.refusal.message if cell.refusal is not None else cell.detail
            groups.setdefault((cell.refusal_kind or RefusalKind.OTHER, message), []).append(
                (Code(cell.id),)
            )
    blocks: list[Block] = [Heading(2, "Refusals")]
    if not groups:
        return [*blocks, Para(("No refusals outside the dialect stage.",))]
    for (kind, message), places in groups.items():
        blocks += [Para((Bold(kind), " — ", *joined(places, ", "))), Verbatim(trimmed(message))]
    return blocks


def _repairs(result: ProbeResult) -> list[Block]:
    seen: dict[str, list[Inline]] = {}
    for cell in result.cells:
        for repair in cell.repairs:
            seen.setdefault(repair, []).append((Code(cell.id),))
    blocks: list[Block] = [Heading(2, "Repairs seen")]
    if not seen:
        return [*blocks, Para(("No reply needed a repair.",))]
    items = tuple((Code(name), " — ", *joined(seen[name], ", ")) for name in sorted(seen))
    return [*blocks, Bullets(items)]


def _findings(result: ProbeResult) -> list[Block]:
    items: list[Inline] = []
    info = result.catalogue
    if info is not None:
        if info.error:
            items.append(("The catalogue (", Code(info.source), ") failed: ", info.error))
        else:
            observed = result.verdict.tools_observed if result.verdict else None
            items.append(
                (
                    "The catalogue (",
                    Code(info.source),
                    ") lists the model: ",
                    _yes(info.listed),
                    "; declares tools: ",
                    _yes(info.tools),
                    "; observed calling natively: ",
                    _yes(observed),
                    "; context window: ",
                    f"{info.context_window:,}" if info.context_window else "unknown",
                    ".",
                )
            )
    items += [(finding,) for finding in (result.verdict.findings if result.verdict else ())]
    # One line a finding, naming every cell it was seen in (a leak repeats in every cell).
    seen: dict[tuple[str, str], list[str]] = {}
    for cell in result.cells:
        for finding in cell.findings:
            seen.setdefault((finding.code, finding.detail), []).append(cell.id)
    for (code, detail), ids in seen.items():
        where: list[Span] = []
        for i, cell_id in enumerate(ids):
            where += [", " if i else "", Code(cell_id)]
        items.append((Code(code), " in ", *where, ": ", detail))
    blocks: list[Block] = [Heading(2, "Findings")]
    return [*blocks, Bullets(tuple(items)) if items else Para(("None.",))]


def _follow_ups(result: ProbeResult) -> list[Block]:
    cells = _stage(result, Stage.FOLLOW_UP)
    blocks: list[Block] = [Heading(2, "Follow-ups")]
    if not cells:
        return [*blocks, Para(("No follow-ups ran.",))]
    rows = tuple(
        (c.mode.value if c.mode else c.case, c.case, Marks(c.label, (c,)), c.detail) for c in cells
    )
    return [*blocks, Table(("check", "prompt", "outcome", "detail"), rows)]


def _cost(result: ProbeResult) -> list[Block]:
    total = sum(result.stage_ms.values())
    summary = (
        f"{result.requests:,} requests · {result.prompt_tokens:,} prompt + "
        f"{result.completion_tokens:,} completion tokens · {_duration(total)} in all."
    )
    rows = []
    spent = result.stage_requests
    for stage in Stage:
        cells = _stage(result, stage)
        ms = result.stage_ms.get(stage.value)
        if cells or ms is not None:
            row = [stage.value, str(len(cells)), _duration(ms) if ms is not None else "—"]
            if spent:
                row.insert(2, str(spent.get(stage.value, 0)))
            rows.append(tuple(row))
    head = ("stage", "cells", "requests", "time") if spent else ("stage", "cells", "time")
    blocks: list[Block] = [Heading(2, "Cost"), Para((summary,))]
    return [*blocks, Table(head, tuple(rows))] if rows else blocks


# -- helpers -------------------------------------------------------------------------------


def _stage(result: ProbeResult, stage: Stage) -> list[Cell]:
    return [c for c in result.cells if c.stage is stage]


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def _duration(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
