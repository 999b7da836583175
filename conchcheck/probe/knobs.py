"""Stage 8, knobs and losses: the knob prompts sent with ``tool_choice``, parallel control and
strict mode set in the API family's own spelling, one three-round conversation for call ids,
and exact arguments that must come back byte for byte.

The knob tools are plain schemas every dialect carries alike, so the stage needs only a
reached target: it runs beside the dialect stage, never after it. Each knob ends honoured,
ignored (the reply shows it), refused (a refusal that speaks of the request), not offered (the
API has no way to say it) or untested (no usable reply, or nothing the knob could change).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable
from typing import TypeVar

from conchcheck.core.fidelity import compare_arguments
from conchcheck.core.jsontypes import JsonValue
from conchcheck.core.knobs import Knob, KnobState
from conchcheck.core.tools import Tool
from conchcheck.matrix import Matrix, Prompt, knob_matrix
from conchcheck.probe.budget import URGENCY, StopProbe, Urgency
from conchcheck.probe.context import CHAIN, Context
from conchcheck.probe.judging import judge_native, judge_words
from conchcheck.probe.knobrules import (
    breaking_calls,
    broken_ids,
    choice_state,
    lost,
    parallel_state,
    spelling,
    strict_state,
    unanswered,
)
from conchcheck.probe.prompts import in_dialect, listed, messages, request
from conchcheck.results import (
    Cell,
    CellMode,
    FidelityFacts,
    IdFacts,
    KnobFacts,
    Outcome,
    Stage,
)
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.exchange import Exchange, Replied, Unparsed

__all__ = ["KNOB_CELLS", "run_knobs"]

T = TypeVar("T")

ROUNDS = 3
"""Rounds of the call-id conversation."""
KNOB_CELLS = 13
"""Cells the stage records when every request gets an answer (for progress)."""

_OUTCOMES = {
    KnobState.HONOURED: Outcome.PASS,
    KnobState.IGNORED: Outcome.NOT_HONOURED,
    KnobState.FAILS_OPEN: Outcome.NOT_HONOURED,
    KnobState.REFUSED: Outcome.REFUSED,
    KnobState.NOT_OFFERED: Outcome.SKIPPED,
}


async def run_knobs(ctx: Context) -> None:
    """Every knob, the id conversation and the fidelity prompt, at once."""
    matrix = knob_matrix()
    prompt = {p.id: p for p in matrix.prompts}
    ctx.announce(Stage.KNOBS, KNOB_CELLS)
    await ctx.together(
        [
            _choice(ctx, matrix, prompt["tool-choice-none"], Knob.TOOL_CHOICE_NONE),
            _choice(ctx, matrix, prompt["tool-choice-required"], Knob.TOOL_CHOICE_REQUIRED),
            _choice(ctx, matrix, prompt["tool-choice-named"], Knob.TOOL_CHOICE_NAMED),
            _parallel(ctx, matrix, prompt["parallel"]),
            _strict(ctx, matrix, prompt["strict-closed"], prompt["strict-open"]),
            _ids(ctx, matrix, prompt["ids-rounds"]),
            _fidelity(ctx, matrix, prompt["fidelity"], CellMode.NATIVE),
            _fidelity(ctx, matrix, prompt["fidelity"], CellMode.WORDS),
        ]
    )


async def _choice(ctx: Context, matrix: Matrix, prompt: Prompt, knob: Knob) -> None:
    cell_id = f"knobs/{knob.value}"
    if ctx.reuse(cell_id) is not None or _not_offered(ctx, knob, cell_id, prompt):
        return
    exchange, shared = await _sent_once(ctx, matrix, prompt, _request(ctx, matrix, prompt), cell_id)
    cell = _judged(ctx, matrix, cell_id, prompt, exchange)
    asked = spelling(knob, ctx.target.provider.api, prompt.tool_choice.name or "")
    state, why = unanswered(exchange)
    calls = _called(exchange)
    if state is None and knob is not Knob.TOOL_CHOICE_NONE:
        state, why = lost(cell)
    if state is None:
        state, why = choice_state(knob, prompt, asked, calls)
    facts = KnobFacts(knob, state, len(calls), read_from=shared)
    ctx.record(_read_again(_knob_cell(cell, facts, why), shared))


async def _parallel(ctx: Context, matrix: Matrix, prompt: Prompt) -> None:
    knob, cell_id = Knob.PARALLEL_FALSE, "knobs/parallel_false"
    if _reused(ctx, cell_id) or _not_offered(ctx, knob, cell_id, prompt):
        return
    base_id = f"{cell_id}/baseline"
    # Both at once, like the streaming pairs (a server that batches decodes them together),
    # unless the native stage sends the baseline anyway: then it is read from there.
    (flag_x, _), (base_x, shared) = await _both(
        ctx,
        _alone(ctx, _request(ctx, matrix, prompt, parallel=False), cell_id),
        _sent_once(ctx, matrix, prompt, _request(ctx, matrix, prompt), base_id),
    )
    if shared is None:
        base = _judged(ctx, matrix, base_id, prompt, base_x)
        ctx.record(dataclasses.replace(base, detail=f"Without the flag: {base.detail}"))
    flagged = _judged(ctx, matrix, cell_id, prompt, flag_x)
    asked = spelling(knob, ctx.target.provider.api)
    calls = len(_called(flag_x))
    baseline = len(_called(base_x)) if isinstance(base_x.outcome, Replied) else None
    state, why = unanswered(flag_x)
    if state is None:
        state, why = lost(flagged)
    if state is None:
        state, why = parallel_state(asked, calls, baseline)
    if shared is not None:
        why = f"{why} (Without the flag: the reply of {shared}.)"
    facts = KnobFacts(knob, state, calls, baseline, baseline_from=shared)
    ctx.record(_knob_cell(flagged, facts, why))


async def _strict(ctx: Context, matrix: Matrix, closed: Prompt, open_: Prompt) -> None:
    knob, cell_id = Knob.STRICT, "knobs/strict"
    if _reused(ctx, cell_id) or _not_offered(ctx, knob, cell_id, closed):
        return
    closed_x, open_x = await _both(
        ctx,
        ctx.send(_request(ctx, matrix, closed, strict=True), cell_id),
        ctx.send(_request(ctx, matrix, open_, strict=True), f"{cell_id}/open"),
    )
    opened = _judged(ctx, matrix, f"{cell_id}/open", open_, open_x)
    took = "took" if isinstance(open_x.outcome, Replied | Unparsed) else "did not take"
    ctx.record(
        dataclasses.replace(
            opened, detail=f"With strict: true, it {took} an open schema with an optional field."
        )
    )
    cell = _judged(ctx, matrix, cell_id, closed, closed_x)
    schema = dict(matrix.tools[closed.tools[0]].parameters)
    reply = closed_x.outcome.reply if isinstance(closed_x.outcome, Replied) else None
    broken = breaking_calls(reply.tool_calls if reply else (), schema)
    calls = len(reply.tool_calls) if reply else None
    state, why = unanswered(closed_x)
    if state is None:
        state, why = lost(cell)
    if state is None:
        state, why = strict_state(broken, calls, open_x)
    ctx.record(_knob_cell(cell, KnobFacts(knob, state, calls, breaking=broken), why))


async def _ids(ctx: Context, matrix: Matrix, prompt: Prompt) -> None:
    """One conversation of up to three rounds, each answering the last round's calls."""
    if _reused(ctx, "knobs/ids/"):
        return
    URGENCY.set(Urgency.CHAIN)  # the longest chain of the stage: it goes first
    tools = _offered(matrix, prompt)
    turns = messages(prompt)
    result = prompt.follow_up.result if prompt.follow_up else "Done."
    rounds: list[tuple[str | None, ...]] = []
    round_trip: bool | None = None
    for number in range(1, ROUNDS + 1):
        cell_id = f"knobs/ids/{number}"
        sent = request(ctx, turns, in_dialect(tools, ctx.target.dialect))
        exchange = await ctx.send(sent, cell_id)
        cell = _judged(ctx, matrix, cell_id, prompt, exchange)
        if number > 1:
            # Round two onwards carries the server's own ids back: taken or refused is the
            # round-trip fact; a failure says nothing.
            state, _ = unanswered(exchange)
            if state is None or state is KnobState.REFUSED:
                round_trip = state is None
        if not isinstance(exchange.outcome, Replied):
            ctx.record(_ids_cell(cell, rounds, round_trip, last=True))
            return
        reply = exchange.outcome.reply
        rounds.append(tuple(c.id for c in reply.tool_calls))
        last = number == ROUNDS or not reply.tool_calls
        ctx.record(_ids_cell(cell, rounds, round_trip, last=last))
        if last:
            return
        turns = (
            *turns,
            Message(Role.ASSISTANT, reply.text, reply.tool_calls),
            *(Message(Role.TOOL, result, tool_call_id=c.id, name=c.name) for c in reply.tool_calls),
        )


def _ids_cell(
    cell: Cell, rounds: list[tuple[str | None, ...]], round_trip: bool | None, *, last: bool
) -> Cell:
    said = "; ".join(
        f"round {n}: {', '.join(str(i) for i in ids) or 'no call'}"
        for n, ids in enumerate(rounds, 1)
    )
    outcome: Outcome = Outcome.PASS
    detail = f"Call ids by round: {said}."
    broken = broken_ids(rounds, round_trip) if last else []
    if cell.outcome in _KEPT:
        detail, outcome = f"{cell.detail} (ids so far: {said or 'none'})", cell.outcome
    elif broken:
        detail, outcome = f"{detail} {' '.join(broken)}", Outcome.NOT_HONOURED
    facts = IdFacts(tuple(rounds), round_trip) if last else None
    return dataclasses.replace(cell, outcome=outcome, detail=detail, facts=facts)


async def _fidelity(ctx: Context, matrix: Matrix, prompt: Prompt, mode: CellMode) -> None:
    """The exact arguments, natively or in words: what the app gets after decoding (in words,
    after conchcheck's reader), compared byte for byte."""
    words = mode is CellMode.WORDS
    cell_id = "knobs/fidelity/words" if words else "knobs/fidelity"
    if ctx.reuse(cell_id) is not None:
        return
    tools = _offered(matrix, prompt)
    if words:
        listing = listed(ctx, tools)
        exchange = await ctx.send(request(ctx, messages(prompt, listing.text)), cell_id)
        judged = judge_words(cell_id, prompt, exchange, tools, listing.level.value)
        cell = dataclasses.replace(judged, stage=Stage.KNOBS)
    else:
        sent = _request(ctx, matrix, prompt)
        exchange, shared = await _sent_once(ctx, matrix, prompt, sent, cell_id)
        cell = _read_again(_judged(ctx, matrix, cell_id, prompt, exchange), shared)
    wanted = prompt.expect.calls[0]
    expected: dict[str, JsonValue] = {a.name: a.matcher.value for a in wanted.arguments}
    call = next((c for c in cell.calls if c.name == wanted.tool), None)
    reply = exchange.outcome.reply if isinstance(exchange.outcome, Replied) else None
    if reply is None or call is None or reply.cut_off:
        # No call to compare (or one cut short): fidelity stays untested.
        ctx.record(cell)
        return
    try:
        got: JsonValue = json.loads(call.arguments)
    except (ValueError, RecursionError):
        got = call.arguments
    changed = compare_arguments(expected, got)
    if changed:
        paths = ", ".join(f"{c.path} ({c.change.value})" for c in changed)
        outcome, detail = Outcome.NOT_HONOURED, f"The arguments came back altered: {paths}."
    else:
        outcome, detail = Outcome.PASS, "Every argument came back byte for byte."
    ctx.record(
        dataclasses.replace(cell, outcome=outcome, detail=detail, facts=FidelityFacts(changed))
    )


def _request(
    ctx: Context,
    matrix: Matrix,
    prompt: Prompt,
    *,
    parallel: bool | None = None,
    strict: bool = False,
) -> ChatRequest:
    # The choice goes as the native stage sends it ("auto" too), so a knob prompt the probe's
    # matrix holds as well is the same request, byte for byte, and is sent once.
    tools = in_dialect(_offered(matrix, prompt), ctx.target.dialect)
    sent = request(ctx, messages(prompt), tools, prompt.tool_choice)
    return dataclasses.replace(sent, parallel=parallel, strict=strict)


def _offered(matrix: Matrix, prompt: Prompt) -> tuple[Tool, ...]:
    return tuple(matrix.tools[name] for name in prompt.tools)


async def _sent_once(
    ctx: Context, matrix: Matrix, prompt: Prompt, sent: ChatRequest, cell_id: str
) -> tuple[Exchange, str | None]:
    """The exchange of ``sent`` and, when the native stage sent that very request, the cell
    it is read from (no request of its own); else it is sent for ``cell_id``."""
    same = next((p for p in ctx.matrix.prompts if _asks_alike(ctx, p, matrix, prompt)), None)
    shared = None if same is None else await ctx.sharing.take(same.id, sent)
    if shared is None:
        return await _alone(ctx, sent, cell_id)
    CHAIN.set(max(CHAIN.get(), shared.chain))
    return shared.exchange, shared.cell.id


async def _alone(ctx: Context, sent: ChatRequest, cell_id: str) -> tuple[Exchange, str | None]:
    """``sent`` sent for ``cell_id``: a request no other stage sends."""
    return await ctx.send(sent, cell_id), None


def _asks_alike(ctx: Context, native: Prompt, matrix: Matrix, prompt: Prompt) -> bool:
    """The same conversation, tools and choice: the request itself is compared on taking."""
    return (
        messages(native) == messages(prompt)
        and native.tool_choice == prompt.tool_choice
        and tuple(ctx.matrix.tools[n] for n in native.tools) == _offered(matrix, prompt)
    )


def _read_again(cell: Cell, shared: str | None) -> Cell:
    """A knob cell read from another stage's request: the evidence is that request's, the
    cost was counted there."""
    if shared is None:
        return cell
    return dataclasses.replace(
        cell,
        detail=f"{cell.detail} (Read from {shared}: the same request.)",
        requests=0,
        latency_ms=0.0,
        prompt_tokens=None,
        completion_tokens=None,
    )


def _done(ctx: Context, value: T | None) -> T:
    """A job ``together`` ran, which the budget did not stop."""
    if value is None:
        raise StopProbe(ctx.budget.stopped or "the budget is spent")
    return value


async def _both(ctx: Context, first: Awaitable[T], second: Awaitable[T]) -> tuple[T, T]:
    one, two = await ctx.together([first, second])
    return _done(ctx, one), _done(ctx, two)


def _judged(ctx: Context, matrix: Matrix, cell_id: str, prompt: Prompt, x: Exchange) -> Cell:
    tools = _offered(matrix, prompt)
    cell = judge_native(cell_id, prompt, x, tools, ctx.target.dialect, server=ctx.server)
    return dataclasses.replace(cell, stage=Stage.KNOBS, facts=None)


def _called(exchange: Exchange) -> list[str]:
    if not isinstance(exchange.outcome, Replied):
        return []
    return [c.name for c in exchange.outcome.reply.tool_calls]


_KEPT = (Outcome.ERROR, Outcome.REFUSED, Outcome.SWALLOWED, Outcome.UNPARSED_BY_SERVER)
"""Outcomes a knob cell keeps when the knob is untested: what happened to the request."""


def _knob_cell(cell: Cell, facts: KnobFacts, why: str) -> Cell:
    outcome = _OUTCOMES.get(facts.state)
    if outcome is None:
        # Untested: a failed or refused request stays so; a reply that proves nothing is skipped.
        failed = cell.outcome in _KEPT
        outcome = cell.outcome if failed else Outcome.SKIPPED
    return dataclasses.replace(cell, outcome=outcome, detail=why, facts=facts)


def _not_offered(ctx: Context, knob: Knob, cell_id: str, prompt: Prompt) -> bool:
    if knob in ctx.adapter.knobs:
        return False
    api = ctx.target.provider.api.value
    why = f"The {api} API has no way to say {knob.value}: not offered, nothing sent."
    facts = KnobFacts(knob, KnobState.NOT_OFFERED)
    ctx.record(Cell(cell_id, Stage.KNOBS, prompt.id, Outcome.SKIPPED, why, requests=0, facts=facts))
    return True


def _reused(ctx: Context, prefix: str) -> bool:
    """A resumed probe's cells of one knob, all of them, when its last one finished."""
    done = [cell_id for cell_id in ctx.prior if cell_id.startswith(prefix)]
    final = any(isinstance(ctx.prior[c].facts, KnobFacts | IdFacts) for c in done)
    if not final:
        return False
    for cell_id in done:
        ctx.reuse(cell_id)
    return True
