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
from collections.abc import Sequence

from jsonschema import Draft202012Validator

from conchcheck.core.fidelity import compare_arguments
from conchcheck.core.jsontypes import JsonValue
from conchcheck.core.knobs import Knob, KnobState
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import ChoiceMode, Tool
from conchcheck.matrix import Matrix, Prompt, knob_matrix
from conchcheck.probe.budget import URGENCY, StopProbe, Urgency
from conchcheck.probe.context import Context
from conchcheck.probe.judging import judge_native, judge_words
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
from conchcheck.wire.chat import ChatRequest, Message, Role, ToolCall
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied, Unparsed
from conchcheck.wire.providers import ApiFamily

__all__ = ["KNOB_CELLS", "run_knobs"]

EVIDENCE = frozenset({RefusalKind.SCHEMA, RefusalKind.OTHER})
"""Refusals that speak of the request (a parameter or a schema it can't take). Auth, rate
limits, quota, the context and a model that takes no tools say nothing of a knob."""
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


def spelling(knob: Knob, api: ApiFamily, name: str = "") -> str:
    """The knob as the API family writes it: ``tool_choice: none``, ``tool_choice: function
    remember``, ``disable_parallel_tool_use: true``."""
    if knob is Knob.PARALLEL_FALSE:
        if api is ApiFamily.ANTHROPIC:
            return "disable_parallel_tool_use: true"
        return "parallel_tool_calls: false"
    if knob is Knob.STRICT:
        return "strict: true"
    if api is ApiFamily.GEMINI:
        modes = {Knob.TOOL_CHOICE_NONE: "NONE", Knob.TOOL_CHOICE_REQUIRED: "ANY"}
        if knob in modes:
            return f"functionCallingConfig mode {modes[knob]}"
        return f"functionCallingConfig mode ANY, allowedFunctionNames [{name}]"
    anthropic = api is ApiFamily.ANTHROPIC
    match knob:
        case Knob.TOOL_CHOICE_NONE:
            return "tool_choice: none"
        case Knob.TOOL_CHOICE_REQUIRED:
            return f"tool_choice: {'any' if anthropic else 'required'}"
        case _:
            return f"tool_choice: {'tool' if anthropic else 'function'} {name}"


async def _choice(ctx: Context, matrix: Matrix, prompt: Prompt, knob: Knob) -> None:
    cell_id = f"knobs/{knob.value}"
    if ctx.reuse(cell_id) is not None or _not_offered(ctx, knob, cell_id, prompt):
        return
    exchange = await ctx.send(_request(ctx, matrix, prompt), cell_id)
    cell = _judged(ctx, matrix, cell_id, prompt, exchange)
    asked = spelling(knob, ctx.target.provider.api, prompt.tool_choice.name or "")
    state, why = _unanswered(exchange)
    calls = _called(exchange)
    if state is None:
        state, why = _choice_state(knob, prompt, asked, calls)
    ctx.record(_knob_cell(cell, KnobFacts(knob, state, len(calls)), why))


def _choice_state(
    knob: Knob, prompt: Prompt, asked: str, calls: Sequence[str]
) -> tuple[KnobState, str]:
    named = ", ".join(dict.fromkeys(calls))
    match knob:
        case Knob.TOOL_CHOICE_NONE if calls:
            return KnobState.IGNORED, f"{asked}, but the reply called {named}: it was ignored."
        case Knob.TOOL_CHOICE_NONE:
            return KnobState.HONOURED, f"{asked}: no call came back to a prompt that asks for one."
        case Knob.TOOL_CHOICE_REQUIRED if calls:
            return KnobState.HONOURED, f"{asked}: the reply called {named}, unasked."
        case Knob.TOOL_CHOICE_REQUIRED:
            return KnobState.IGNORED, f"{asked}, but no call came back: it was ignored."
        case _:
            forced = prompt.tool_choice.name or ""
            if calls and set(calls) == {forced}:
                return (
                    KnobState.HONOURED,
                    f"{asked}: the reply called {forced}, though the prompt points elsewhere.",
                )
            got = f"the reply called {named}" if calls else "no call came back"
            return KnobState.IGNORED, f"{asked}, but {got}: it was ignored."


async def _parallel(ctx: Context, matrix: Matrix, prompt: Prompt) -> None:
    knob, cell_id = Knob.PARALLEL_FALSE, "knobs/parallel_false"
    if _reused(ctx, cell_id) or _not_offered(ctx, knob, cell_id, prompt):
        return
    # Both at once, like the streaming pairs: a server that batches decodes them together.
    base_x, flag_x = await _both(
        ctx,
        (_request(ctx, matrix, prompt), f"{cell_id}/baseline"),
        (_request(ctx, matrix, prompt, parallel=False), cell_id),
    )
    base = _judged(ctx, matrix, f"{cell_id}/baseline", prompt, base_x)
    ctx.record(dataclasses.replace(base, detail=f"Without the flag: {base.detail}"))
    flagged = _judged(ctx, matrix, cell_id, prompt, flag_x)
    asked = spelling(knob, ctx.target.provider.api)
    calls = len(_called(flag_x))
    baseline = len(_called(base_x)) if isinstance(base_x.outcome, Replied) else None
    state, why = _unanswered(flag_x)
    if state is None:
        state, why = _parallel_state(asked, calls, baseline)
    ctx.record(_knob_cell(flagged, KnobFacts(knob, state, calls, baseline), why))


def _parallel_state(asked: str, calls: int, baseline: int | None) -> tuple[KnobState, str]:
    if calls > 1:
        return KnobState.IGNORED, f"{asked}, but {calls} calls came back: it was ignored."
    if baseline is not None and baseline > 1:
        return KnobState.HONOURED, f"{asked}: {calls} call came back, {baseline} without it."
    without = "no usable reply" if baseline is None else f"{baseline} call"
    return (
        KnobState.UNTESTED,
        f"{asked}: {calls} call, but {without} without it: nothing to hold back.",
    )


async def _strict(ctx: Context, matrix: Matrix, closed: Prompt, open_: Prompt) -> None:
    knob, cell_id = Knob.STRICT, "knobs/strict"
    if _reused(ctx, cell_id) or _not_offered(ctx, knob, cell_id, closed):
        return
    closed_x, open_x = await _both(
        ctx,
        (_request(ctx, matrix, closed, strict=True), cell_id),
        (_request(ctx, matrix, open_, strict=True), f"{cell_id}/open"),
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
    breaking = _breaking(reply.tool_calls if reply else (), schema)
    calls = len(reply.tool_calls) if reply else None
    state, why = _unanswered(closed_x)
    if state is None:
        state, why = _strict_state(breaking, calls, open_x)
    ctx.record(_knob_cell(cell, KnobFacts(knob, state, calls, breaking=breaking), why))


def _strict_state(
    breaking: tuple[str, ...], calls: int | None, open_x: Exchange
) -> tuple[KnobState, str]:
    if breaking:
        return (
            KnobState.FAILS_OPEN,
            f"strict: true was taken, and a call breaks the schema: {breaking[0]}",
        )
    if not calls:
        return KnobState.UNTESTED, "strict: true was taken, but no call came back to check."
    match open_x.outcome:
        case Refused(refusal) if refusal.kind in EVIDENCE:
            return (
                KnobState.HONOURED,
                "strict: true: the calls conform, and a schema strict mode can't enforce was "
                "refused.",
            )
        case Replied() | Unparsed():
            return (
                KnobState.IGNORED,
                "strict: true: the calls conform, but a schema strict mode can't enforce (open, "
                "with an optional field) was taken too: the flag isn't read.",
            )
        case _:
            return (
                KnobState.UNTESTED,
                "strict: true: the calls conform; the open schema got no usable answer.",
            )


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
            state, _ = _unanswered(exchange)
            round_trip = state is None if state is not KnobState.UNTESTED else round_trip
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
    if cell.outcome in (Outcome.ERROR, Outcome.REFUSED):
        detail, outcome = f"{cell.detail} (ids so far: {said or 'none'})", cell.outcome
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
        exchange = await ctx.send(_request(ctx, matrix, prompt), cell_id)
        cell = _judged(ctx, matrix, cell_id, prompt, exchange)
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
    tools = in_dialect(_offered(matrix, prompt), ctx.target.dialect)
    choice = prompt.tool_choice if prompt.tool_choice.mode is not ChoiceMode.AUTO else None
    sent = request(ctx, messages(prompt), tools, choice)
    return dataclasses.replace(sent, parallel=parallel, strict=strict)


def _offered(matrix: Matrix, prompt: Prompt) -> tuple[Tool, ...]:
    return tuple(matrix.tools[name] for name in prompt.tools)


async def _both(
    ctx: Context, first: tuple[ChatRequest, str], second: tuple[ChatRequest, str]
) -> tuple[Exchange, Exchange]:
    one, two = await ctx.together([ctx.send(*first), ctx.send(*second)])
    if one is None or two is None:
        raise StopProbe(ctx.budget.stopped or "the budget is spent")
    return one, two


def _judged(ctx: Context, matrix: Matrix, cell_id: str, prompt: Prompt, x: Exchange) -> Cell:
    cell = judge_native(cell_id, prompt, x, _offered(matrix, prompt), ctx.target.dialect)
    return dataclasses.replace(cell, stage=Stage.KNOBS, facts=None)


def _called(exchange: Exchange) -> list[str]:
    if not isinstance(exchange.outcome, Replied):
        return []
    return [c.name for c in exchange.outcome.reply.tool_calls]


def _unanswered(exchange: Exchange) -> tuple[KnobState | None, str]:
    """The state when no reply came (None when one did), and why."""
    match exchange.outcome:
        case Replied():
            return None, ""
        case Refused(refusal) if refusal.kind in EVIDENCE:
            return KnobState.REFUSED, f"Refused: {refusal.message}"
        case Refused(refusal) if refusal.kind is RefusalKind.TOOLS:
            return KnobState.UNTESTED, "The endpoint takes no tools: no knob can be tried."
        case Refused(refusal):
            return KnobState.UNTESTED, f"Refused ({refusal.kind.value}): nothing learnt."
        case Unparsed(failure):
            return KnobState.UNTESTED, f"The server couldn't parse the output: {failure.cause}"
        case Failed(error):
            return KnobState.UNTESTED, f"No usable reply: {error.detail}"


def _knob_cell(cell: Cell, facts: KnobFacts, why: str) -> Cell:
    outcome = _OUTCOMES.get(facts.state)
    if outcome is None:
        # Untested: a failed or refused request stays so; a reply that proves nothing is skipped.
        failed = cell.outcome in (Outcome.ERROR, Outcome.REFUSED)
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


def _breaking(calls: Sequence[ToolCall], schema: dict[str, object]) -> tuple[str, ...]:
    """Why each call breaks ``schema``, read as JSON exactly as sent (nothing mended)."""
    validator = Draft202012Validator(schema)
    out: list[str] = []
    for call in calls:
        try:
            value = json.loads(call.arguments)
        except (ValueError, RecursionError):
            out.append(f"{call.name}: the arguments are not JSON: {call.arguments[:80]!r}.")
            continue
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in error.path) or "arguments"
            out.append(f"{call.name}: {where}: {error.message}.")
    return tuple(out)
