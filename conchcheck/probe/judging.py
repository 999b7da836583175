"""Judging: a prompt's exchange becomes a cell, its outcome and how its calls were read.

Native calls are read against each tool's original schema (root wrapping undone); calls in
words are read with ``read_calls``. Both are judged strictly against the prompt's
expectation. A refusal or a failed request is carried as it is: never a pass, never a miss.
Output the server couldn't parse is the model's answer: its own outcome, with the call read
from what the server quotes of it, when it quotes any (a 5xx saying so, or a refusal carrying
the model's failed generation, Groq's ``tool_use_failed``), and judged as a leaked call is.
Reasoning (the reply's reasoning channel, and reasoning written in its content) is never a
call nor the reply's words: a native call found only there was swallowed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from conchcheck.core.arguments import ArgumentsResult, read_arguments
from conchcheck.core.dialects import Dialect, unwrap_arguments
from conchcheck.core.excerpt import excerpt
from conchcheck.core.leaks import Server, family_of, server_fix
from conchcheck.core.matching import Judgement, judge
from conchcheck.core.reasoning import reasoning_fix, split_reasoning
from conchcheck.core.repair import Unreadable, read_json
from conchcheck.core.tools import ChoiceMode, Tool
from conchcheck.core.unparsed import ParseFailure
from conchcheck.core.words import WordsCall, read_calls
from conchcheck.core.words.forms import MAX_CALLS
from conchcheck.matrix import Prompt
from conchcheck.probe.evidence import exchange_cell
from conchcheck.results import (
    CallReading,
    Cell,
    CellMode,
    LeakFacts,
    NativeFacts,
    Outcome,
    ReadCall,
    Stage,
)
from conchcheck.wire.chat import Finding, Reply, ToolCall
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied, Unparsed

_OUTCOMES = {
    Judgement.PASS: Outcome.PASS,
    Judgement.WRONG_ARGUMENTS: Outcome.WRONG_ARGUMENTS,
    Judgement.WRONG_TOOL: Outcome.WRONG_TOOL,
    Judgement.NO_CALL: Outcome.NO_CALL,
    Judgement.UNWANTED_CALL: Outcome.UNWANTED_CALL,
}
RAW_LIMIT = 2000
"""Characters of a call's raw text kept in a reading."""


def read_native(
    reply: Reply, tools: Sequence[Tool], dialect: Dialect
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


def unanswered(
    cell_id: str,
    stage: Stage,
    case: str,
    exchange: Exchange,
    tools: Sequence[Tool] = (),
    prompt: Prompt | None = None,
    **fields: Any,
) -> Cell:
    """The cell of a prompt that got no reply to judge: refused, unparsed by the server (the
    model's output read against ``tools``, where the server quotes it, and judged against
    ``prompt`` when given), or failed."""
    match exchange.outcome:
        case Unparsed(failure, partial):
            return _unparsed(
                cell_id, stage, case, exchange, failure, partial, tools, prompt, **fields
            )
        case Refused(refusal):
            return exchange_cell(
                cell_id,
                stage,
                case,
                exchange,
                outcome=Outcome.REFUSED,
                detail=refusal.message,
                **fields,
            )
        case Failed(error):
            return exchange_cell(
                cell_id,
                stage,
                case,
                exchange,
                outcome=Outcome.ERROR,
                detail=error.detail,
                **fields,
            )
        case Replied():
            raise AssertionError("a replied exchange is judged, not carried")


def judge_native(
    cell_id: str,
    prompt: Prompt,
    exchange: Exchange,
    tools: Sequence[Tool],
    dialect: Dialect,
    attempt: int = 1,
    server: Server = Server.OTHER,
) -> Cell:
    """A native prompt's cell: the provider's calls read and judged; calls found in the text
    instead (the server didn't parse them) are read too, and the cell says they leaked; a call
    found only in the reasoning was swallowed."""
    common: dict[str, Any] = {"mode": CellMode.NATIVE, "attempt": attempt, "dialect": dialect}
    if not isinstance(exchange.outcome, Replied):
        return unanswered(cell_id, Stage.NATIVE, prompt.id, exchange, tools, prompt, **common)
    reply = exchange.outcome.reply
    read = read_native(reply, tools, dialect)
    good = [(c.name, r.arguments) for c, r in read if r is not None and r.ok]
    failed = [
        r.message if r is not None else f"The model called {c.name}, which was not offered."
        for c, r in read
        if r is None or not r.ok
    ]
    repairs = _unique(x.value for _, r in read if r is not None for x in r.repairs)
    outcome, detail = _outcome(prompt, good, failed, repairs, reply.cut_off)
    detail = _escaped_note(outcome, detail, reply)
    reading = CallReading(tuple(_call_reading(c.name, r) for c, r in read))
    findings = reply.findings
    shown = split_reasoning(reply.text)
    if shown.formats:
        seen = ", ".join(f.value for f in shown.formats)
        findings = (*findings, Finding("reasoning_in_content", f"reasoning markers: {seen}"))
    visible = shown.text
    leaked = () if reply.tool_calls or not visible.strip() else _leaked(visible, reply, tools)
    leak = None
    if leaked:
        # Calls in the content with none native: the server didn't parse them (a missing
        # --jinja or --tool-call-parser, a wrong template; provider-facts N09, vllm#21571).
        family = family_of(leaked[0])
        fix = server_fix(family, server)
        reading = _words_reading(leaked, visible, 0, "")
        passes = False
        if prompt.expect.no_call:
            # Any call, read or not, is one the prompt didn't need.
            outcome = Outcome.UNWANTED_CALL
            detail = "The model called a tool the prompt didn't need, and "
        else:
            wanted = [(c.name, c.arguments) for c in leaked if c.ok and c.name]
            errors = [c.error for c in leaked if c.error]
            judged, _ = _outcome(prompt, wanted, errors, (), False)
            passes = judged is Outcome.PASS
            names = ", ".join(dict.fromkeys(c.name or "?" for c in leaked))
            outcome = Outcome.LEAKED
            detail = f"Native calls to {names} leaked as text; read from it they would be "
            detail += f"{judged.value}; "
        detail += f"the calls were in the {family.value} format. {fix}"
        findings = (*findings, Finding("calls_leaked_as_text", f"{family.value}: {fix}"))
        leak = LeakFacts(family.value, len(leaked), fix, passes)
    where, swallowed = (
        ("", ()) if reply.tool_calls or leaked else _swallowed(reply, shown.reasoning, tools)
    )
    if swallowed:
        reading = _words_reading(swallowed, visible, 0, "")
        fix = reasoning_fix(server)
        names = ", ".join(dict.fromkeys(c.name or "?" for c in swallowed))
        findings = (*findings, Finding("calls_in_reasoning", f"{names} in {where}: {fix}"))
        if not reply.cut_off:
            # Never no_call: the model made the call, and the server lost it.
            wanted = [(c.name, c.arguments) for c in swallowed if c.ok and c.name]
            judged, _ = _outcome(prompt, wanted, [c.error for c in swallowed if c.error], (), False)
            outcome = Outcome.SWALLOWED
            detail = (
                f"The call to {names} was written in {where} and never emitted; read from it, "
                f"it would be {judged.value}. {fix}"
            )
    ignored = _forcing_ignored(
        prompt, [c.name for c in reply.tool_calls] or [c.name for c in leaked]
    )
    if ignored is not None:
        detail = f"{ignored} {detail}"
        findings = (*findings, Finding("forced_choice_ignored", ignored))
    markers = bool(leaked) or any(f.code == "call_markers_in_text" for f in reply.findings)
    facts = NativeFacts(len(reply.tool_calls), markers, leak)
    return exchange_cell(
        cell_id,
        Stage.NATIVE,
        prompt.id,
        exchange,
        outcome=outcome,
        detail=detail,
        repairs=repairs,
        reading=reading,
        calls=reply.tool_calls,
        findings=findings,
        facts=facts,
        **common,
    )


def _escaped_note(outcome: Outcome, detail: str, reply: Reply) -> str:
    """A reply without a call whose text holds an escaped opener says why no call was read."""
    escaped = [f for f in reply.findings if f.code == "html_escaped_call_markers"]
    if outcome is not Outcome.NO_CALL or not escaped:
        return detail
    return f"{detail}; {escaped[0].detail}, so the model wrote its call escaped"


def _forcing_ignored(prompt: Prompt, called: Sequence[str | None]) -> str | None:
    """The sentence that says a named ``tool_choice`` was ignored: the reply called tools, and
    none of them the forced one (the prompt asks for another, so only forcing picks it)."""
    choice = prompt.tool_choice
    names = [n for n in called if n]
    if choice.mode is not ChoiceMode.TOOL or not names or choice.name in names:
        return None
    shown = ", ".join(dict.fromkeys(names))
    return (
        f"tool_choice forced {choice.name}, but the model called {shown}: the endpoint "
        "ignored the forced choice."
    )


def _unparsed(
    cell_id: str,
    stage: Stage,
    case: str,
    exchange: Exchange,
    failure: ParseFailure,
    partial: Reply | None,
    tools: Sequence[Tool],
    prompt: Prompt | None,
    **fields: Any,
) -> Cell:
    """Output the server couldn't parse (llama-server's 500 "does not match the expected
    peg-native format", vector llamacpp-500-output-does-not-match-peg-native; Groq's 400
    tool_use_failed): the model's answer, with the calls read from the output where the server
    quotes it or streamed it, and judged against ``prompt`` as leaked calls are."""
    output = failure.output if failure.output is not None else (partial.text if partial else "")
    read = read_calls(output, tools).calls if output.strip() and tools else ()
    detail = failure.cause
    if read:
        names = ", ".join(dict.fromkeys(c.name or "?" for c in read))
        detail += f" Its output held a call to {names}"
        if prompt is not None:
            wanted = [(c.name, c.arguments) for c in read if c.ok and c.name]
            judged, _ = _outcome(prompt, wanted, [c.error for c in read if c.error], (), False)
            detail += f"; read from it, it would be {judged.value}"
        detail += "."
    elif not output.strip():
        detail += " The server quoted none of the output."
    else:
        detail += " Its output held no call that could be read."
    finding = Finding("server_could_not_parse_output", f"{failure.cause} {failure.message}")
    return exchange_cell(
        cell_id,
        stage,
        case,
        exchange,
        outcome=Outcome.UNPARSED_BY_SERVER,
        detail=detail,
        reading=_words_reading(read, output, 0, "") if output.strip() else None,
        findings=(finding,),
        **fields,
    )


def _leaked(visible: str, reply: Reply, tools: Sequence[Tool]) -> tuple[WordsCall, ...]:
    """Calls written in the visible text of a native reply, as a tolerant client would find
    them (the reasoning taken out: what is there was never a call)."""
    return read_calls(visible, tools, cut_off=reply.cut_off).calls


def _swallowed(
    reply: Reply, written: str, tools: Sequence[Tool]
) -> tuple[str, tuple[WordsCall, ...]]:
    """Where a reply's reasoning (its channel, then ``written`` in its text) holds calls to
    offered tools, and those calls, read as a tolerant client reads words: the calls a server
    lost when its reasoning parser kept them (vllm-project/vllm#39056), or that a model wrote
    inside its own reasoning markers."""
    offered = {t.name for t in tools}
    sources = (
        ("the reasoning channel", reply.reasoning),
        ("reasoning written in the text", written),
    )
    for where, thought in sources:
        if thought.strip() and offered:
            found = read_calls(thought, tools, cut_off=reply.cut_off).calls
            calls = tuple(c for c in found if c.name in offered)
            if calls:
                return where, calls
    return "", ()


def judge_words(
    cell_id: str,
    prompt: Prompt,
    exchange: Exchange,
    tools: Sequence[Tool],
    level: str,
    attempt: int = 1,
) -> Cell:
    """A words prompt's cell: the calls written in the reply's text read and judged."""
    common: dict[str, Any] = {"mode": CellMode.WORDS, "attempt": attempt}
    if not isinstance(exchange.outcome, Replied):
        return unanswered(cell_id, Stage.WORDS, prompt.id, exchange, tools, prompt, **common)
    reply = exchange.outcome.reply
    reading = read_calls(reply.text, tools, cut_off=reply.cut_off)
    good = [(c.name, c.arguments) for c in reading.calls if c.ok and c.name]
    failed = [c.error for c in reading.calls if c.error]
    repairs = _unique(x.value for c in reading.calls for x in c.repairs)
    outcome, detail = _outcome(prompt, good, failed, repairs, reply.cut_off)
    detail = _escaped_note(outcome, detail, reply)
    evidence = _words_reading(reading.calls, reading.text, reading.fake_responses, level)
    findings = (over_cap(reading.over_cap),) if reading.over_cap else ()
    # The calls a round trip answers: the ones read with a name, as the client would run them.
    calls = tuple(
        ToolCall(f"call_{i}", c.name, _json(c.arguments))
        for i, c in enumerate(reading.calls)
        if c.name
    )
    return exchange_cell(
        cell_id,
        Stage.WORDS,
        prompt.id,
        exchange,
        outcome=outcome,
        detail=detail,
        repairs=repairs,
        reading=evidence,
        calls=calls,
        findings=findings,
        **common,
    )


def over_cap(count: int) -> Finding:
    """The finding for a reply holding more calls than are read from one (``MAX_CALLS``)."""
    return Finding(
        "calls_over_cap",
        f"the reply held {count} more calls than the {MAX_CALLS} read from one reply; "
        "they were not read",
    )


def _words_reading(calls: Sequence[WordsCall], text: str, fake: int, level: str) -> CallReading:
    return CallReading(
        tuple(
            ReadCall(
                c.form.value,
                c.name,
                c.ok,
                c.arguments,
                tuple(r.value for r in c.repairs),
                tuple(c.reading.dropped) if c.reading is not None else (),
                c.error,
                excerpt(c.raw, RAW_LIMIT),
            )
            for c in calls
        ),
        text,
        fake,
        level,
    )


def _outcome(
    prompt: Prompt,
    calls: list[tuple[str, Any]],
    failed: list[str],
    repairs: tuple[str, ...],
    cut: bool,
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


def _call_reading(name: str, result: ArgumentsResult | None) -> ReadCall:
    if result is None:
        return ReadCall("native", name, False, message="not an offered tool")
    return ReadCall(
        "native",
        name,
        result.ok,
        result.arguments,
        tuple(r.value for r in result.repairs),
        tuple(result.dropped),
        result.message,
    )


def _unique(values: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(v) for v in values))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
