"""The prompt stages: the matrix's prompts with tools passed natively, then in words, then the
follow-ups a real client needs (the result sent back, streaming against the whole reply).

Native and words run the same prompts so the two are comparable. Every call is read the
forgiving way (``arguments.read_arguments``, ``words.read_calls``) and judged strictly
against the prompt's expectation; a reply cut by its token limit is never mended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from conchcheck.core.arguments import ArgumentsResult, read_arguments
from conchcheck.core.dialects import to_dialect, unwrap_arguments
from conchcheck.core.matching import Judgement, judge, judge_answer
from conchcheck.core.repair import Unreadable, read_json
from conchcheck.core.tools import Tool
from conchcheck.core.words import ListLevel, read_calls, render_tools, tool_response
from conchcheck.results import Cell, Outcome, Stage
from conchcheck.wire.chat import ChatRequest, ChoiceMode, Message, Reply, Role, ToolCall, ToolChoice
from conchcheck.wire.transport import Exchange

if TYPE_CHECKING:
    from conchcheck.probe.context import StageContext as Probe

_OUTCOMES = {
    Judgement.PASS: Outcome.PASS,
    Judgement.WRONG_ARGUMENTS: Outcome.WRONG_ARGUMENTS,
    Judgement.WRONG_TOOL: Outcome.WRONG_TOOL,
    Judgement.NO_CALL: Outcome.NO_CALL,
    Judgement.UNWANTED_CALL: Outcome.UNWANTED_CALL,
}


async def run_prompts(probe: Probe, stage: str) -> None:
    """Every prompt × repeat for ``native`` or ``words``; or the follow-ups."""
    prompts = list(probe.matrix.prompts)
    if stage == "follow_up":
        await _follow_ups(probe, prompts)
        return
    repeats = range(1, probe.options.repeat + 1)
    if probe.observer:
        probe.observer.stage(Stage(stage), len(prompts) * len(repeats))
    jobs: list[Callable[[], Awaitable[None]]] = [
        partial(_prompt, probe, p, stage, n) for p in prompts for n in repeats
    ]
    await probe.gather(jobs)


def offered(probe: Probe, prompt: Any) -> tuple[Tool, ...]:
    """The prompt's tools as the matrix defines them (original schemas)."""
    return tuple(probe.matrix.tools[name] for name in prompt.tools)


def in_dialect(tools: Sequence[Tool], dialect: str) -> tuple[Tool, ...]:
    """The tools with their schemas in ``dialect``, as a client would send them natively."""
    return tuple(
        Tool(t.name, t.description, to_dialect(dict(t.parameters), dialect) if t.parameters else {})
        for t in tools
    )


def _choice(prompt: Any) -> ToolChoice | None:
    choice = prompt.tool_choice
    if choice is None or isinstance(choice, ToolChoice):
        return choice
    if isinstance(choice, str):
        return ToolChoice(ChoiceMode(choice))
    return ToolChoice(ChoiceMode.TOOL, choice.get("tool"))


def _dialect(probe: Probe) -> str:
    """The dialect natively offered tools go in: the verdict's so far, else the family's."""
    from conchcheck.verdict import decide_dialect

    invalid = [c.id for c in probe.matrix.schema_cases if not c.valid]
    chosen = decide_dialect(probe.cells, probe.target.dialect.value, invalid).dialect
    return (
        chosen
        if chosen in ("permissive", "gemini", "anthropic", "strict")
        else probe.target.dialect.value
    )


def _messages(prompt: Any, system: str = "") -> tuple[Message, ...]:
    text = "\n\n".join(part for part in (prompt.system or "", system) if part)
    head = (Message(Role.SYSTEM, text),) if text else ()
    return (*head, Message(Role.USER, prompt.user))


def _request(
    probe: Probe, messages: tuple[Message, ...], tools: tuple[Tool, ...] = (), **kw: Any
) -> ChatRequest:
    return ChatRequest(
        probe.target.model,
        messages,
        tools=tools,
        max_tokens=probe.options.prompt_max_tokens,
        temperature=probe.options.temperature,
        **kw,
    )


async def _prompt(probe: Probe, prompt: Any, mode: str, attempt: int) -> None:
    cell_id = f"{mode}/{prompt.id}/{attempt}"
    if probe.reuse(cell_id) is not None:
        return
    tools = offered(probe, prompt)
    if mode == "native":
        dialect = _dialect(probe)
        sent = in_dialect(tools, dialect)
        request = _request(probe, _messages(prompt), sent, tool_choice=_choice(prompt))
        exchange = await probe.send(request)
        cell = _judge_native(probe, cell_id, prompt, exchange, tools, dialect, attempt)
    else:
        window = probe.catalogue.context_window if probe.catalogue else None
        listed = render_tools(tools, window)
        if listed.level is ListLevel.NONE:
            probe.record(
                Cell(
                    cell_id,
                    Stage.WORDS,
                    prompt.id,
                    Outcome.SKIPPED,
                    listed.note,
                    mode=mode,
                    attempt=attempt,
                )
            )
            return
        exchange = await probe.send(_request(probe, _messages(prompt, listed.text)))
        cell = _judge_words(probe, cell_id, prompt, exchange, tools, attempt, listed.level.value)
    probe.record(cell)


def read_native(
    reply: Reply, tools: Sequence[Tool], dialect: str
) -> list[tuple[ToolCall, ArgumentsResult | None]]:
    """Each native call read against its tool's original schema (root wrapping undone)."""
    schemas = {t.name: dict(t.parameters) for t in tools}
    out: list[tuple[ToolCall, ArgumentsResult | None]] = []
    for call in reply.tool_calls:
        schema = schemas.get(call.name)
        if schema is None:
            out.append((call, None))
            continue
        raw: Any = call.arguments
        try:
            value = read_json(raw, mend_unclosed=not reply.cut_off).value if raw.strip() else {}
            unwrapped = (
                unwrap_arguments(value, schema, dialect) if isinstance(value, dict) else value
            )
            if unwrapped is not value:
                raw = unwrapped
        except Unreadable:
            pass
        out.append((call, read_arguments(raw, schema, cut_off=reply.cut_off, tool=call.name)))
    return out


def _evidence(exchange: Exchange) -> tuple[Outcome | None, str]:
    if exchange.refusal is not None:
        return Outcome.REFUSED, exchange.refusal.message
    if exchange.error is not None:
        return Outcome.ERROR, exchange.error.detail
    return None, ""


def _outcome(
    prompt: Any, calls: list[tuple[str, Any]], failed: list[str], repairs: list[str], cut: bool
) -> tuple[Outcome, str]:
    judgement, detail = judge(calls, prompt.expect)
    outcome = _OUTCOMES[judgement]
    if outcome is Outcome.PASS and repairs:
        outcome = Outcome.PASS_AFTER_REPAIR
        detail = f"{detail} Repairs: {', '.join(repairs)}."
    elif outcome is not Outcome.PASS and failed:
        outcome, detail = Outcome.WRONG_ARGUMENTS, failed[0]
    if cut and outcome not in (Outcome.PASS, Outcome.PASS_AFTER_REPAIR):
        outcome, detail = Outcome.CUT_OFF, f"The reply hit its token limit. {detail}"
    return outcome, detail


def _judge_native(
    probe: Probe,
    cell_id: str,
    prompt: Any,
    exchange: Exchange,
    tools: Sequence[Tool],
    dialect: str,
    attempt: int,
) -> Cell:
    stopped, detail = _evidence(exchange)
    common: dict[str, Any] = {"mode": "native", "attempt": attempt, "dialect": dialect}
    if stopped is not None or exchange.reply is None:
        return probe.exchange_cell(
            cell_id,
            Stage.NATIVE,
            prompt.id,
            exchange,
            outcome=stopped or Outcome.ERROR,
            detail=detail,
            **common,
        )
    reply = exchange.reply
    read = read_native(reply, tools, dialect)
    good = [(c.name, r.arguments) for c, r in read if r is not None and r.ok]
    failed = [
        r.message if r is not None else f"The model called {c.name}, which was not offered."
        for c, r in read
        if r is None or not r.ok
    ]
    repairs = list(dict.fromkeys(str(x.value) for _, r in read if r is not None for x in r.repairs))
    outcome, detail = _outcome(prompt, good, failed, repairs, reply.cut_off)
    reading = {"calls": [_call_reading(c.name, r, "native") for c, r in read]}
    leaks = [f.code for f in reply.findings if f.code == "call_markers_in_text"]
    return probe.exchange_cell(
        cell_id,
        Stage.NATIVE,
        prompt.id,
        exchange,
        outcome=outcome,
        detail=detail,
        repairs=tuple(repairs),
        reading=reading,
        findings=tuple({"code": f.code, "detail": f.detail} for f in reply.findings),
        extra={"native_calls": len(reply.tool_calls), "marker_leak": bool(leaks)},
        **common,
    )


def _judge_words(
    probe: Probe,
    cell_id: str,
    prompt: Any,
    exchange: Exchange,
    tools: Sequence[Tool],
    attempt: int,
    level: str,
) -> Cell:
    stopped, detail = _evidence(exchange)
    common: dict[str, Any] = {"mode": "words", "attempt": attempt}
    if stopped is not None or exchange.reply is None:
        return probe.exchange_cell(
            cell_id,
            Stage.WORDS,
            prompt.id,
            exchange,
            outcome=stopped or Outcome.ERROR,
            detail=detail,
            **common,
        )
    reply = exchange.reply
    reading = read_calls(reply.text, tools, cut_off=reply.cut_off)
    good = [(c.name, c.arguments) for c in reading.calls if c.ok and c.name]
    failed = [c.error for c in reading.calls if c.error]
    repairs = list(dict.fromkeys(str(x.value) for c in reading.calls for x in c.repairs))
    outcome, detail = _outcome(prompt, good, failed, repairs, reply.cut_off)
    evidence = {
        "text": reading.text,
        "fake_responses": reading.fake_responses,
        "list_level": level,
        "calls": [
            {
                "form": c.form.value,
                "name": c.name,
                "arguments": c.arguments,
                "repairs": [r.value for r in c.repairs],
                "error": c.error,
                "raw": c.raw[:2000],
            }
            for c in reading.calls
        ],
    }
    return probe.exchange_cell(
        cell_id,
        Stage.WORDS,
        prompt.id,
        exchange,
        outcome=outcome,
        detail=detail,
        repairs=tuple(repairs),
        reading=evidence,
        **common,
    )


def _call_reading(name: str, result: ArgumentsResult | None, form: str) -> dict[str, Any]:
    if result is None:
        return {"form": form, "name": name, "error": "not an offered tool"}
    return {
        "form": form,
        "name": name,
        "ok": result.ok,
        "arguments": result.arguments,
        "repairs": [r.value for r in result.repairs],
        "dropped": list(result.dropped),
        "message": result.message,
    }


# -- follow-ups ---------------------------------------------------------------------------------


async def _follow_ups(probe: Probe, prompts: list[Any]) -> None:
    passed = {
        c.id: c for c in probe.cells if c.outcome in (Outcome.PASS, Outcome.PASS_AFTER_REPAIR)
    }
    jobs: list[Callable[[], Awaitable[None]]] = []
    for prompt in prompts:
        if prompt.follow_up is None:
            continue
        for mode in ("native", "words"):
            source = passed.get(f"{mode}/{prompt.id}/1")
            if source is not None:
                jobs.append(partial(_round_trip, probe, prompt, mode, source))
    calling = [p for p in prompts if not p.expect.no_call and p.follow_up is None][
        : probe.options.streaming_checks
    ]
    if probe.observer:
        probe.observer.stage(Stage.FOLLOW_UP, len(jobs) + len(calling))
    await probe.gather(jobs)
    # Streamed against whole, one pair at a time with nothing else in flight: a server that
    # batches concurrent requests (llama.cpp --parallel) can decode the same prompt
    # differently at temperature 0 when the batch around it differs (seen live, SmolLM2).
    for prompt in calling:
        await probe.gather([partial(_streaming, probe, prompt)])


async def _round_trip(probe: Probe, prompt: Any, mode: str, source: Cell) -> None:
    cell_id = f"follow_up/round_trip/{mode}/{prompt.id}"
    if probe.reuse(cell_id) is not None:
        return
    tools = offered(probe, prompt)
    result = prompt.follow_up.result
    reply = source.reply or {}
    calls = [
        ToolCall(c.get("id") or f"call_{i}", c["name"], c["arguments"])
        for i, c in enumerate(reply.get("calls", []))
    ]
    if mode == "native":
        dialect = source.dialect or probe.target.dialect.value
        sent = in_dialect(tools, dialect)
        messages = (
            *_messages(prompt),
            Message(Role.ASSISTANT, reply.get("text", ""), tuple(calls)),
            *(Message(Role.TOOL, result, tool_call_id=c.id, name=c.name) for c in calls),
        )
        request = _request(probe, messages, sent)
    else:
        read = (source.reading or {}).get("calls", [])
        blocks = "\n".join(tool_response(c["name"], result) for c in read if c.get("name"))
        listed = render_tools(tools, probe.catalogue.context_window if probe.catalogue else None)
        messages = (
            *_messages(prompt, listed.text),
            Message(Role.ASSISTANT, reply.get("text", "")),
            Message(Role.USER, blocks),
        )
        request = _request(probe, messages)
    exchange = await probe.send(request)
    stopped, detail = _evidence(exchange)
    if stopped is None and exchange.reply is not None:
        text = exchange.reply.text
        if mode == "words":
            text = read_calls(text, tools).text
        miss = judge_answer(text, prompt.follow_up.answer)
        stopped, detail = (
            (Outcome.PASS, "The final answer used the tool's result.")
            if miss is None
            else (Outcome.WRONG_ARGUMENTS, miss)
        )
    probe.record(
        probe.exchange_cell(
            cell_id,
            Stage.FOLLOW_UP,
            prompt.id,
            exchange,
            outcome=stopped or Outcome.ERROR,
            detail=detail,
            mode=f"round_trip/{mode}",
        )
    )


async def _streaming(probe: Probe, prompt: Any) -> None:
    cell_id = f"follow_up/streaming/{prompt.id}"
    if probe.reuse(cell_id) is not None:
        return
    tools = offered(probe, prompt)
    dialect = _dialect(probe)
    sent = in_dialect(tools, dialect)
    request = _request(probe, _messages(prompt), sent, tool_choice=_choice(prompt))
    whole = _judge_native(probe, cell_id, prompt, await probe.send(request), tools, dialect, 1)
    exchange = await probe.send(dataclasses.replace(request, stream=True))
    streamed = _judge_native(probe, cell_id, prompt, exchange, tools, dialect, 1)
    same = whole.label == streamed.label and _calls(whole) == _calls(streamed)
    outcome = Outcome.PASS if same else streamed.outcome
    if same:
        detail = f"Streamed and whole replies agree ({streamed.label})."
    else:
        detail = f"Streamed: {streamed.label}; whole: {whole.label}. {streamed.detail}"
    probe.record(
        Cell(
            **{
                **_fields(streamed),
                "outcome": outcome,
                "detail": detail,
                "stage": Stage.FOLLOW_UP,
                "mode": "streaming",
                "requests": whole.requests + streamed.requests,
                "extra": {**streamed.extra, "whole": whole.label, "whole_reply": whole.reply},
            }
        )
    )


def _calls(cell: Cell) -> list[Any]:
    return [(c.get("name"), c.get("arguments")) for c in (cell.reading or {}).get("calls", [])]


def _fields(cell: Cell) -> dict[str, Any]:
    return {name: getattr(cell, name) for name in cell.__dataclass_fields__}
