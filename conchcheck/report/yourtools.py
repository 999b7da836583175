"""The report's section on the user's own tools (``probe --tools``): which dialects took each
tool, the provider's words for every refusal, what each dialect's conversion changed in the
schema, and how each smoke prompt went and where its arguments came from.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from conchcheck.core.dialects import to_dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.schemadiff import schema_changes
from conchcheck.core.trials import PERMISSIVENESS, rank
from conchcheck.core.usertools import SMOKE_PREFIX, Origin, OwnTool
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Marks,
    Para,
    Span,
    Table,
    Verbatim,
    joined,
    mark,
    trimmed,
)
from conchcheck.results import Cell, Outcome, Stage

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult

CHANGES_SHOWN = 30
"""Changes listed for one tool in one dialect; the rest are counted."""


def your_tools(result: ProbeResult) -> list[Block]:
    """The section, or nothing when the probe used a matrix."""
    own = result.own_tools
    if not own:
        return []
    dialect_cells = {(c.case, c.dialect or ""): c for c in result.cells if c.stage is Stage.DIALECT}
    tried = sorted(dict.fromkeys(d for _, d in dialect_cells), key=rank)
    sources = {t.source: t.protocol for t in own}
    blocks: list[Block] = [
        Heading(2, "Your tools"),
        Para(
            (
                f"{len(own)} tool{'s' * (len(own) != 1)} from ",
                *joined([_source(s, p) for s, p in sources.items()], ", "),
                ".",
            )
        ),
    ]
    smoke = _smoke_cells(result)
    modes = [m for m in ("native", "words") if any(k[1] == m for k in smoke)]
    rows: tuple[tuple[str | Marks, ...], ...] = tuple(
        (
            t.name,
            *(mark(dialect_cells.get((t.name, d))) for d in tried),
            *(_labels(smoke.get((t.name, m), [])) for m in modes),
        )
        for t in own
    )
    head = ("tool", *tried, *(f"smoke ({m})" for m in modes))
    blocks.append(Table(head, rows))
    blocks += _refused(own, dialect_cells)
    blocks += _changes(own)
    blocks += _smoke_arguments(own)
    return blocks


def _refused(own: tuple[OwnTool, ...], cells: dict[tuple[str, str], Cell]) -> list[Block]:
    """Each refused tool and the dialects that refused it, under the provider's words (one
    block for each message, naming every tool and dialect it was the answer to)."""
    order = {tool.name: index for index, tool in enumerate(own)}
    refused = sorted(
        (
            (case, dialect, cell)
            for (case, dialect), cell in cells.items()
            if case in order and cell.outcome is Outcome.REFUSED
        ),
        key=lambda item: (order[item[0]], rank(item[1])),
    )
    said: dict[tuple[str, str], dict[str, list[str]]] = {}
    for case, dialect, cell in refused:
        message = cell.refusal.message if cell.refusal is not None else cell.detail
        key = (cell.refusal_kind or RefusalKind.OTHER, message)
        said.setdefault(key, {}).setdefault(case, []).append(dialect)
    if not said:
        return []
    blocks: list[Block] = [Heading(3, "Refused")]
    for tool in own:
        if tool.problem:
            blocks.append(Para((Code(tool.name), " is not valid JSON Schema: ", tool.problem, ".")))
    for (kind, message), tools in said.items():
        where = [(Code(name), " in ", ", ".join(dialects)) for name, dialects in tools.items()]
        blocks += [Para((Bold(kind), " — ", *joined(where, "; "))), Verbatim(trimmed(message))]
    return blocks


def _changes(own: tuple[OwnTool, ...]) -> list[Block]:
    """What each dialect's conversion changes in each tool's schema."""
    blocks: list[Block] = [Heading(3, "What each dialect changes")]
    same = []
    for tool in own:
        if tool.problem or not tool.parameters:
            same.append(tool.name)
            continue
        before = dict(tool.parameters)
        found = False
        for dialect in PERMISSIVENESS[1:]:  # permissive sends the schema as it is
            shown, count = schema_changes(before, to_dialect(before, dialect), limit=CHANGES_SHOWN)
            if not count:
                continue
            found = True
            more = count - len(shown)
            rest = f" (the first {len(shown)}; {more} more)" if more else ""
            blocks.append(
                Para((Code(tool.name), f" as {dialect}: {count} change{'s' * (count != 1)}{rest}"))
            )
            blocks.append(Bullets(tuple((Code(change.line()),) for change in shown)))
        if not found:
            same.append(tool.name)
    if same:
        blocks.append(
            Para(
                (
                    "Sent unchanged in every dialect: ",
                    *_codes(same),
                    ".",
                )
            )
        )
    return blocks


def _smoke_arguments(own: tuple[OwnTool, ...]) -> list[Block]:
    """Where each smoke prompt's arguments came from."""
    items: list[Inline] = []
    for tool in own:
        if tool.smoke is None:
            continue
        if not tool.smoke:
            items.append((Code(tool.name), ": no arguments"))
            continue
        parts: list[Span] = [Code(tool.name), ": "]
        for index, argument in enumerate(tool.smoke):
            parts.append("; " if index else "")
            if argument.origin is Origin.MODEL:
                parts += [Code(argument.name), " chosen by the model (the schema gives no value)"]
            else:
                value = _compact(argument.value)
                parts += [Code(f"{argument.name} = {value}"), f" ({argument.origin.value})"]
        items.append(tuple(parts))
    if not items:
        return []
    return [Heading(3, "Smoke prompts: where the arguments came from"), Bullets(tuple(items))]


def _smoke_cells(result: ProbeResult) -> dict[tuple[str, str], list[Cell]]:
    found: dict[tuple[str, str], list[Cell]] = {}
    for cell in result.cells:
        if cell.stage in (Stage.NATIVE, Stage.WORDS) and cell.case.startswith(SMOKE_PREFIX):
            found.setdefault((cell.case.removeprefix(SMOKE_PREFIX), cell.stage.value), []).append(
                cell
            )
    return found


def _labels(cells: list[Cell]) -> Marks:
    return Marks(", ".join(c.label for c in cells) or "—", tuple(cells))


def _compact(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= 80 else f"{text[:79]}…"


def _source(source: str, protocol: str | None) -> Inline:
    """A source as code, with the MCP revision its server was spoken to in."""
    return (Code(source),) if protocol is None else (Code(source), f" (MCP {protocol})")


def _codes(names: list[str]) -> Inline:
    return joined([(Code(name),) for name in names], ", ")
