"""Evidence for cells: an exchange as typed evidence, trimmed, with keys already redacted.

The wire layer redacts keys in every ``Exchange``; this module only shapes and trims what a
cell keeps of it, so reports stay readable when a request carried 128 tools, and small when a
reply carried megabytes (``bound``: every cell passes through it when it is recorded).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from conchcheck.core.excerpt import bounded, excerpt
from conchcheck.core.jsontypes import JsonValue
from conchcheck.results import (
    CallReading,
    Cell,
    FidelityFacts,
    KnobFacts,
    ReadCall,
    ReplyEvidence,
    RequestEvidence,
    Stage,
    StreamFacts,
)
from conchcheck.wire.chat import Finding, Reply, ToolCall
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied, Unparsed

BODY_LIMIT = 6000
"""Characters of a request body kept in a cell (the rest is counted, not kept)."""


def request_evidence(exchange: Exchange) -> RequestEvidence:
    """Method, URL, redacted headers and the body (as data, or trimmed text when large)."""
    text = json.dumps(exchange.request_body, ensure_ascii=False)
    body: JsonValue = exchange.request_body
    if len(text) > BODY_LIMIT:
        body = excerpt(text, BODY_LIMIT)
    return RequestEvidence(exchange.method, exchange.url, dict(exchange.request_headers), body)


def reply_evidence(exchange: Exchange) -> ReplyEvidence | None:
    """Status, text, calls as received, finish, usage, findings, the body and the reasoning."""
    read: Reply | None
    match exchange.outcome:
        case Replied(reply):
            read = reply
        case Refused(_, partial) | Unparsed(_, partial):
            read = partial
        case Failed(error):
            read = error.partial
    if read is None and not exchange.body and exchange.status is None:
        return None
    if read is None:
        return ReplyEvidence(
            exchange.status, exchange.attempts, body=exchange.body, waits=exchange.waits
        )
    return ReplyEvidence(
        exchange.status,
        exchange.attempts,
        read.text,
        read.tool_calls,
        read.finish,
        read.finish_reason,
        read.usage.prompt_tokens,
        read.usage.completion_tokens,
        read.findings,
        exchange.body,
        exchange.waits,
        read.reasoning or None,
    )


def tokens(exchange: Exchange) -> tuple[int | None, int | None]:
    """Prompt and completion tokens the provider reported."""
    reply = exchange.reply
    if reply is None:
        return None, None
    return reply.usage.prompt_tokens, reply.usage.completion_tokens


def exchange_cell(cell_id: str, stage: Stage, case: str, exchange: Exchange, **fields: Any) -> Cell:
    """A cell carrying an exchange's evidence; the outcome and detail are in ``fields``."""
    prompt, completion = tokens(exchange)
    error_kind = exchange.error.kind if exchange.error is not None else None
    return Cell(
        cell_id,
        stage,
        case,
        error_kind=error_kind,
        request=request_evidence(exchange),
        reply=reply_evidence(exchange),
        refusal=fields.pop("refusal", exchange.refusal),
        requests=exchange.attempts,
        latency_ms=round(exchange.latency_ms, 1),
        prompt_tokens=prompt,
        completion_tokens=completion,
        **fields,
    )


def bound(cell: Cell) -> Cell:
    """``cell`` with every text and value a provider sent cut to an excerpt.

    The verdict was judged on the whole reply; what is kept is the evidence of it: a head, a
    tail, the full length and a sha256 of anything long (``conchcheck.core.excerpt``).
    """
    replace = dataclasses.replace
    reading, refusal = cell.reading, cell.refusal
    if reading is not None:
        reading = CallReading(
            tuple(_read_call(call) for call in reading.calls),
            None if reading.text is None else excerpt(reading.text),
            reading.fake_responses,
            reading.list_level,
        )
    if refusal is not None:
        failed = refusal.failed_generation
        refusal = replace(
            refusal,
            message=excerpt(refusal.message),
            failed_generation=None if failed is None else excerpt(failed),
        )
    facts = cell.facts
    if isinstance(facts, StreamFacts) and facts.whole_reply is not None:
        # The whole reply a stream was compared with is evidence like the cell's own reply.
        facts = replace(facts, whole_reply=_reply(facts.whole_reply))
    elif isinstance(facts, FidelityFacts):
        # An altered argument keeps what was wanted and what came, as excerpts.
        changed = tuple(
            replace(c, expected=bounded(c.expected), got=bounded(c.got)) for c in facts.changed
        )
        facts = FidelityFacts(changed)
    elif isinstance(facts, KnobFacts):
        # Why a call broke the schema quotes the value it sent.
        facts = replace(facts, breaking=tuple(excerpt(b) for b in facts.breaking))
    return replace(
        cell,
        detail=excerpt(cell.detail),
        findings=_findings(cell.findings),
        reply=None if cell.reply is None else _reply(cell.reply),
        reading=reading,
        refusal=refusal,
        calls=_calls(cell.calls),
        facts=facts,
    )


def _reply(reply: ReplyEvidence) -> ReplyEvidence:
    return dataclasses.replace(
        reply,
        text=None if reply.text is None else excerpt(reply.text),
        reasoning=None if reply.reasoning is None else excerpt(reply.reasoning),
        calls=_calls(reply.calls),
        findings=_findings(reply.findings),
        body=excerpt(reply.body),
    )


def _calls(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.id, excerpt(c.name, 200), excerpt(c.arguments)) for c in calls)


def _findings(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    return tuple(Finding(f.code, excerpt(f.detail)) for f in findings)


def _read_call(call: ReadCall) -> ReadCall:
    return dataclasses.replace(
        call,
        name=None if call.name is None else excerpt(call.name, 200),
        arguments=bounded(call.arguments),
        message=None if call.message is None else excerpt(call.message),
        raw=None if call.raw is None else excerpt(call.raw),
    )
