"""The follow-ups a real client needs: the tool's result sent back (a round trip), and the
same prompt streamed against the whole reply.

A round trip follows one passed prompt cell and answers the calls that cell carries (typed,
never re-read from its evidence). A streaming check compares two replies; a failure on
either side is compared with nothing: it is an error, never an agreement.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from conchcheck.core.dialects import Dialect
from conchcheck.core.matching import judge_answer
from conchcheck.core.words import read_calls, tool_response
from conchcheck.matrix import Prompt
from conchcheck.probe.budget import StopProbe
from conchcheck.probe.context import Context
from conchcheck.probe.evidence import exchange_cell
from conchcheck.probe.judging import judge_native, unanswered
from conchcheck.probe.prompts import in_dialect, listed, messages, native_request, offered, request
from conchcheck.results import PASSING, Cell, CellMode, NativeFacts, Outcome, Stage, StreamFacts
from conchcheck.wire.adapter import REPAIRED_DELTAS
from conchcheck.wire.chat import Message, Role
from conchcheck.wire.exchange import Exchange, Replied


async def round_trip(ctx: Context, prompt: Prompt, source: Cell) -> Cell | None:
    """Send the tool's result back after ``source``; None when there is nothing to answer."""
    follow = prompt.follow_up
    native = source.mode is not CellMode.WORDS
    if follow is None or source.outcome not in PASSING or not source.calls:
        return None
    check = CellMode.ROUND_TRIP_NATIVE if native else CellMode.ROUND_TRIP_WORDS
    cell_id = f"follow_up/{check.value}/{prompt.id}"
    prior = ctx.reuse(cell_id)
    if prior is not None:
        return prior
    tools = offered(ctx, prompt)
    said = (source.reply.text if source.reply is not None else None) or ""
    if native:
        dialect = Dialect(source.dialect) if source.dialect else ctx.target.dialect
        turns = (
            *messages(prompt),
            Message(Role.ASSISTANT, said, source.calls),
            *(
                Message(Role.TOOL, follow.result, tool_call_id=c.id, name=c.name)
                for c in source.calls
            ),
        )
        sent = request(ctx, turns, in_dialect(tools, dialect))
    else:
        blocks = "\n".join(tool_response(c.name, follow.result) for c in source.calls)
        turns = (
            *messages(prompt, listed(ctx, tools).text),
            Message(Role.ASSISTANT, said),
            Message(Role.USER, blocks),
        )
        sent = request(ctx, turns)
    exchange = await ctx.send(sent, cell_id)
    fields: dict[str, Any] = {"mode": check}
    if not isinstance(exchange.outcome, Replied):
        cell = unanswered(cell_id, Stage.FOLLOW_UP, prompt.id, exchange, tools, **fields)
        return ctx.record(cell)
    text = exchange.outcome.reply.text
    if not native:
        text = read_calls(text, tools).text
    miss = judge_answer(text, follow.answer)
    outcome, detail = (
        (Outcome.PASS, "The final answer used the tool's result.")
        if miss is None
        else (Outcome.WRONG_ARGUMENTS, miss)
    )
    cell = exchange_cell(
        cell_id, Stage.FOLLOW_UP, prompt.id, exchange, outcome=outcome, detail=detail, **fields
    )
    return ctx.record(cell)


async def streaming(ctx: Context, prompt: Prompt, dialect: Dialect, whole: Awaitable[Cell]) -> Cell:
    """The prompt streamed at the same time as its whole native cell, and the two compared."""
    cell_id = f"follow_up/streaming/{prompt.id}"
    if cell_id in ctx.prior:
        await whole
        return ctx.reuse(cell_id) or ctx.cells[-1]
    tools = offered(ctx, prompt)
    # Both at once, so a server that batches requests (llama.cpp --parallel) decodes the two
    # in the same batch: a batch that differs can change what it writes at temperature 0
    # (seen live with SmolLM2).
    streamed_x, whole_cell = await ctx.together(
        [ctx.send(native_request(ctx, prompt, dialect, stream=True), cell_id), whole]
    )
    if not isinstance(streamed_x, Exchange) or not isinstance(whole_cell, Cell):
        raise StopProbe(ctx.budget.stopped or "the budget is spent")
    streamed = judge_native(cell_id, prompt, streamed_x, tools, dialect, server=ctx.server)
    repaired = [f for f in streamed.findings if f.code in REPAIRED_DELTAS]
    failed = [c for c in (whole_cell, streamed) if c.outcome is Outcome.ERROR]
    if failed:
        # Two failures do not agree, and one failure is compared with nothing.
        sides = " and ".join("whole" if c is whole_cell else "streamed" for c in failed)
        outcome, detail = Outcome.ERROR, f"No usable reply to compare ({sides}): {failed[0].detail}"
    elif whole_cell.label == streamed.label and _calls(whole_cell) == _calls(streamed):
        outcome, detail = Outcome.PASS, f"Streamed and whole replies agree ({streamed.label})."
        if repaired:
            # Agreement only after conchcheck mended the deltas: a client that reads deltas
            # by the book gets something else.
            outcome = Outcome.WRONG_ARGUMENTS
            codes = ", ".join(dict.fromkeys(f.code for f in repaired))
            detail = (
                f"Streamed and whole replies agree only after the deltas were repaired ({codes})."
            )
    else:
        # The two disagree: that is no pass, even when the streamed reply alone would be one.
        outcome = streamed.outcome if streamed.outcome not in PASSING else Outcome.WRONG_ARGUMENTS
        detail = f"Streamed: {streamed.label}; whole: {whole_cell.label}. {streamed.detail}"
    cell = exchange_cell(
        cell_id,
        Stage.FOLLOW_UP,
        prompt.id,
        streamed_x,
        outcome=outcome,
        detail=detail,
        mode=CellMode.STREAMING,
        dialect=dialect,
        repairs=streamed.repairs,
        reading=streamed.reading,
        findings=streamed.findings,
        facts=StreamFacts(_native(streamed), whole_cell.label, whole_cell.reply),
    )
    return ctx.record(cell)


def _native(cell: Cell) -> NativeFacts | None:
    return cell.facts if isinstance(cell.facts, NativeFacts) else None


def _calls(cell: Cell) -> list[Any]:
    return [(c.name, c.arguments) for c in cell.reading.calls] if cell.reading else []
