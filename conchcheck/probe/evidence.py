"""Evidence for cells: an exchange as typed evidence, trimmed, with keys already redacted.

The wire layer redacts keys in every ``Exchange``; this module only shapes and trims what a
cell keeps of it, so reports stay readable when a request carried 128 tools.
"""

from __future__ import annotations

import json
from typing import Any

from conchcheck.results import Cell, ReplyEvidence, RequestEvidence, Stage
from conchcheck.wire.chat import Reply
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied

BODY_LIMIT = 6000
"""Characters of a request body kept in a cell (the rest is counted, not kept)."""


def request_evidence(exchange: Exchange) -> RequestEvidence:
    """Method, URL, redacted headers and the body (as data, or trimmed text when large)."""
    text = json.dumps(exchange.request_body, ensure_ascii=False)
    body: Any = exchange.request_body
    if len(text) > BODY_LIMIT:
        body = text[:BODY_LIMIT] + f"… [{len(text) - BODY_LIMIT} more characters]"
    return RequestEvidence(exchange.method, exchange.url, dict(exchange.request_headers), body)


def reply_evidence(exchange: Exchange) -> ReplyEvidence | None:
    """Status, text, calls as received, finish, usage, findings, the body trimmed."""
    read: Reply | None
    match exchange.outcome:
        case Replied(reply):
            read = reply
        case Refused(_, partial):
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
