"""The dialect stage: which schema cases the provider accepts, in which dialect, for few requests.

Cases go many to a request; only a refused group is split, at the tool a refusal names when
it names one, else in halves, because providers that validate every declaration fail the
whole request over one bad tool (provider-facts: one bad tool fails the request).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from conchcheck.core.dialects import Dialect, to_dialect
from conchcheck.core.tools import Tool
from conchcheck.results import Cell, Outcome, Stage
from conchcheck.verdict import chain_for
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.transport import Exchange

if TYPE_CHECKING:
    from conchcheck.probe.context import StageContext as Probe

SPLITTABLE = frozenset({"schema", "context_length", "other"})
"""Refusal kinds that may concern some of a group's tools, so the group is split."""

JSON_SCHEMA = "json_schema"
"""Gemini only: the pseudo-dialect of full JSON Schema sent as ``parametersJsonSchema``."""


def case_tools(case: Any, dialect: str) -> tuple[Tool, ...]:
    """The tools a schema case sends, converted to ``dialect`` (repeated for ``copies``)."""
    tool: Tool = case.tool
    schema = dict(tool.parameters)
    if dialect != JSON_SCHEMA and schema:
        schema = to_dialect(schema, dialect)
    copies = case.copies or 0
    if copies:
        return tuple(
            Tool(f"{tool.name}_{i:03d}", tool.description, schema) for i in range(1, copies + 1)
        )
    return (Tool(tool.name, tool.description, schema),)


async def run_dialects(probe: Probe) -> None:
    """Every valid case in each dialect of the chain until one carries all; the rest elsewhere."""
    cases = list(probe.matrix.schema_cases)
    valid = [c for c in cases if c.valid]
    family = probe.target.dialect.value
    chain = chain_for(family)
    if probe.observer:
        probe.observer.stage(Stage.DIALECT, len(valid) * len(chain))
    results: dict[tuple[str, str], Cell] = {}
    for dialect in chain:
        await _dialect(probe, valid, dialect, results)
        if all(
            results.get((c.id, dialect)) is not None
            and not _schema_refused(results[(c.id, dialect)])
            for c in valid
        ):
            break
    # Deliberately invalid schemas: once, as sent, each alone.
    await _dialect(
        probe, [c for c in cases if not c.valid], Dialect.PERMISSIVE.value, results, grouped=False
    )
    tried = [d for d in chain if any(k[1] == d for k in results)]
    unplaced = [
        c
        for c in valid
        if all(_schema_refused(results[(c.id, d)]) for d in tried if (c.id, d) in results)
    ]
    for dialect in (d.value for d in Dialect if d.value not in chain):
        if unplaced:
            await _dialect(probe, unplaced, dialect, results)
    if probe.target.provider.api == "gemini":
        await _dialect(probe, valid, JSON_SCHEMA, results)


def _schema_refused(cell: Cell) -> bool:
    return cell.outcome is Outcome.REFUSED and cell.refusal_kind == "schema"


async def _dialect(
    probe: Probe,
    cases: Sequence[Any],
    dialect: str,
    results: dict[tuple[str, str], Cell],
    *,
    grouped: bool = True,
) -> None:
    todo = []
    for case in cases:
        prior = probe.reuse(f"dialect/{dialect}/{case.id}")
        if prior is not None:
            results[(case.id, dialect)] = prior
        else:
            todo.append(case)
    # Many-tools cases stand alone: their size is the feature, and would drown a group.
    singles = [c for c in todo if c.copies or not grouped]
    group = [c for c in todo if c not in singles]
    jobs: list[Callable[[], Awaitable[None]]] = [
        partial(_settle, probe, [c], dialect, results) for c in singles
    ]
    if group:
        jobs.append(partial(_settle, probe, group, dialect, results))
    await probe.gather(jobs)


async def _settle(
    probe: Probe, cases: list[Any], dialect: str, results: dict[tuple[str, str], Cell]
) -> None:
    """Send ``cases`` together; on a refusal, split and settle each part."""
    tools = tuple(t for case in cases for t in case_tools(case, dialect))
    request = ChatRequest(
        probe.target.model,
        (Message(Role.USER, "Reply with the single word: ok"),),
        tools=tools,
        max_tokens=probe.options.dialect_max_tokens,
        temperature=probe.options.temperature,
        gemini_schema_field="parametersJsonSchema" if dialect == JSON_SCHEMA else "parameters",
    )
    exchange = await probe.send(request)
    refusal = exchange.refusal
    # Only a refusal that may be about some of the tools is worth splitting: "takes no tools",
    # a bad key or a quota would only be repeated for every part.
    if refusal is not None and len(cases) > 1 and refusal.kind.value in SPLITTABLE:
        for part in _split(cases, exchange):
            await _settle(probe, part, dialect, results)
        return
    ids = tuple(c.id for c in cases)
    for case in cases:
        cell = _cell(probe, case, dialect, exchange, ids)
        results[(case.id, dialect)] = probe.record(cell)


def _split(cases: list[Any], exchange: Exchange) -> list[list[Any]]:
    refusal = exchange.refusal
    index = refusal.tool_index if refusal is not None else None
    # The refusal names a tool: take that case out first. Tool indexes count tools, and a
    # group holds no many-tools case, so an index is a case's position.
    if index is not None and 0 <= index < len(cases):
        named = cases[index]
        return [[named], [c for c in cases if c is not named]]
    half = len(cases) // 2
    return [cases[:half], cases[half:]]


def _cell(probe: Probe, case: Any, dialect: str, exchange: Exchange, ids: tuple[str, ...]) -> Cell:
    together = f" (sent with {len(ids) - 1} other cases)" if len(ids) > 1 else ""
    if exchange.refusal is not None:
        outcome, detail = Outcome.REFUSED, exchange.refusal.message
    elif exchange.error is not None:
        outcome, detail = Outcome.ERROR, exchange.error.detail
    else:
        outcome, detail = Outcome.ACCEPTED, f"Accepted{together}."
    return probe.exchange_cell(
        f"dialect/{dialect}/{case.id}",
        Stage.DIALECT,
        case.id,
        exchange,
        outcome=outcome,
        detail=detail,
        dialect=dialect,
        cases=ids,
        extra={"feature": case.feature, "valid": case.valid},
    )
