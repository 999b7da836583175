"""Stage 9, what the tools cost (``--checks cost``): the prompt tokens each of the matrix's
tools takes as this endpoint renders it, in each dialect the endpoint took, from the usage it
reports; then the capacity point, the number of tools at which the model stops calling the
one it is asked for (``conchcheck.core.toolcost`` plans both).

The prefixes of one dialect go at once; the capacity search goes one request after another,
each with the tool count the last answer called for. A reply with no usage leaves a cost
unknown, never zero.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from conchcheck.core.dialects import Dialect
from conchcheck.core.toolcost import (
    NEEDLE,
    NEEDLE_PROMPT,
    NEEDLE_TICKET,
    CapacitySearch,
    capacity_tools,
)
from conchcheck.core.tools import Tool
from conchcheck.costs import BASELINE, trial_of
from conchcheck.matrix import Matrix
from conchcheck.probe.context import Context
from conchcheck.probe.evidence import exchange_cell
from conchcheck.probe.prompts import in_dialect
from conchcheck.results import Cell, Outcome, Stage
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.exchange import Failed, Refused, Replied, Unparsed

__all__ = ["MAX_COST_TOOLS", "cost_tools", "run_costs"]

MAX_COST_TOOLS = 64
"""Tools whose cost is measured at most: the first of the matrix's, in its order."""


def cost_tools(matrix: Matrix) -> tuple[Tool, ...]:
    """The tools the matrix's prompts offer (an app's tools), each once, at most
    ``MAX_COST_TOOLS``."""
    names = dict.fromkeys(name for prompt in matrix.prompts for name in prompt.tools)
    return tuple(matrix.tools[name] for name in names)[:MAX_COST_TOOLS]


async def run_costs(ctx: Context, dialects: Sequence[Dialect], capacity_in: Dialect) -> None:
    """Every tool's cost in each of ``dialects``, then the capacity search in ``capacity_in``."""
    tools = cost_tools(ctx.matrix)
    ctx.announce(Stage.COST, 1 + len(dialects) * len(tools))
    sent: dict[str, str] = {}
    twins: list[tuple[str, tuple[Tool, ...], Dialect, str]] = []
    jobs = [_prefix(ctx, BASELINE, (), None)]
    for dialect in dialects:
        for count in range(1, len(tools) + 1):
            cell_id, prefix = f"cost/{dialect}/{count}", in_dialect(tools[:count], dialect)
            key = json.dumps([[t.name, t.description, t.parameters] for t in prefix])
            if key in sent:
                # A prefix this dialect leaves as another left it costs what that one did.
                twins.append((cell_id, prefix, dialect, sent[key]))
                continue
            sent[key] = cell_id
            jobs.append(_prefix(ctx, cell_id, prefix, dialect))
    done = {cell.id: cell for cell in await ctx.together(jobs) if cell is not None}
    for cell_id, prefix, dialect, twin in twins:
        if twin in done:
            ctx.record(_twin(cell_id, prefix, dialect, done[twin]))
    await _capacity(ctx, capacity_in)


def _twin(cell_id: str, tools: tuple[Tool, ...], dialect: Dialect, twin: Cell) -> Cell:
    """The cell of a prefix equal, tool for tool, to one already sent in another dialect."""
    return Cell(
        cell_id,
        Stage.COST,
        cell_id.removeprefix("cost/"),
        twin.outcome,
        f"The same tools, byte for byte, as {twin.id}: not sent again. {twin.detail}",
        dialect=dialect,
        cases=tuple(t.name for t in tools),
        requests=0,
        prompt_tokens=twin.prompt_tokens,
    )


async def _prefix(
    ctx: Context, cell_id: str, tools: tuple[Tool, ...], dialect: Dialect | None
) -> Cell:
    prior = ctx.reuse(cell_id)
    if prior is not None:
        return prior
    request = ChatRequest(
        ctx.target.model,
        (Message(Role.USER, "Reply with the single word: ok"),),
        tools=tools,
        # One token: only the prompt is measured, and the reply costs next to nothing.
        max_tokens=1,
        temperature=ctx.options.temperature,
    )
    exchange = await ctx.send(request, cell_id)
    outcome, detail = Outcome.ERROR, "The request failed, so it measures nothing."
    match exchange.outcome:
        case Replied() | Unparsed():
            tokens = exchange.reply.usage.prompt_tokens if exchange.reply else None
            outcome, detail = (
                (Outcome.PASS, f"The prompt took {tokens} tokens with {len(tools)} tools.")
                if tokens is not None
                else (Outcome.SKIPPED, "The reply reported no usage, so the cost is unknown.")
            )
        case Refused(refusal):
            outcome, detail = Outcome.REFUSED, refusal.message
        case Failed():
            pass
    case = cell_id.removeprefix("cost/")
    cell = exchange_cell(
        cell_id,
        Stage.COST,
        case,
        exchange,
        outcome=outcome,
        detail=detail,
        dialect=dialect,
        cases=tuple(t.name for t in tools),
    )
    return ctx.record(cell)


async def _capacity(ctx: Context, dialect: Dialect) -> None:
    search = CapacitySearch()
    while (count := search.next()) is not None:
        cell_id = f"capacity/{count}"
        cell = ctx.reuse(cell_id) or await _trial(ctx, cell_id, count, dialect)
        if cell.outcome is Outcome.ERROR:
            return  # a failure proves nothing: the search stops with what it has
        search.record(trial_of(cell))


async def _trial(ctx: Context, cell_id: str, count: int, dialect: Dialect) -> Cell:
    request = ChatRequest(
        ctx.target.model,
        (Message(Role.USER, NEEDLE_PROMPT),),
        tools=in_dialect(capacity_tools(count), dialect),
        max_tokens=ctx.options.prompt_max_tokens,
        temperature=ctx.options.temperature,
    )
    exchange = await ctx.send(request, cell_id)
    outcome, detail = Outcome.ERROR, "The request failed, so it measures nothing."
    tools = f"{count} tool{'s' * (count != 1)}"
    match exchange.outcome:
        case Replied(reply):
            asked = [
                c
                for c in reply.tool_calls
                if c.name == NEEDLE.name and NEEDLE_TICKET in c.arguments
            ]
            outcome, detail = (
                (Outcome.PASS, f"With {tools}, {NEEDLE.name} was called as asked.")
                if asked
                else (Outcome.NO_CALL, f"With {tools}, {NEEDLE.name} was not called.")
            )
        case Unparsed():
            outcome, detail = Outcome.NO_CALL, "The server couldn't parse the model's output."
        case Refused(refusal):
            outcome, detail = Outcome.REFUSED, refusal.message
        case Failed():
            pass
    return ctx.record(
        exchange_cell(
            cell_id,
            Stage.COST,
            f"capacity/{count}",
            exchange,
            outcome=outcome,
            detail=detail,
            dialect=dialect,
        )
    )
