"""Evidence for cells: an exchange as plain data, trimmed, with keys already redacted.

The wire layer redacts keys in every ``Exchange``; this module only shapes and trims what a
cell keeps of it, so reports stay readable when a request carried 128 tools.
"""

from __future__ import annotations

import json
from typing import Any

from conchcheck.core.refusals import Refusal
from conchcheck.results import Cell, Stage
from conchcheck.wire.chat import Reply
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied

BODY_LIMIT = 6000
"""Characters of a request body kept in a cell (the rest is counted, not kept)."""


def request_evidence(exchange: Exchange) -> dict[str, Any]:
    """Method, URL, redacted headers and the body (as data, or trimmed text when large)."""
    text = json.dumps(exchange.request_body, ensure_ascii=False)
    body: Any = exchange.request_body
    if len(text) > BODY_LIMIT:
        body = text[:BODY_LIMIT] + f"… [{len(text) - BODY_LIMIT} more characters]"
    return {
        "method": exchange.method,
        "url": exchange.url,
        "headers": exchange.request_headers,
        "body": body,
    }


def reply_evidence(exchange: Exchange) -> dict[str, Any] | None:
    """Status, text, calls as received, finish, usage, findings, the body trimmed."""
    reply = exchange.reply or (exchange.error.partial if exchange.error else None)
    if reply is None and not exchange.body and exchange.status is None:
        return None
    data: dict[str, Any] = {"status": exchange.status, "attempts": exchange.attempts}
    if reply is not None:
        data.update(_reply(reply))
    if exchange.body:
        data["body"] = exchange.body
    if exchange.waits:
        data["waits"] = list(exchange.waits)
    return data


def _reply(reply: Reply) -> dict[str, Any]:
    return {
        "text": reply.text,
        "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
        "finish": reply.finish.value,
        "finish_reason": reply.finish_reason,
        "usage": {
            "prompt_tokens": reply.usage.prompt_tokens,
            "completion_tokens": reply.usage.completion_tokens,
        },
        "findings": [{"code": f.code, "detail": f.detail} for f in reply.findings],
    }


def refusal_evidence(refusal: Refusal | None) -> dict[str, Any] | None:
    """The refusal's kind, the provider's words, and the place it names."""
    if refusal is None:
        return None
    data = {
        "kind": refusal.kind.value,
        "status": refusal.status,
        "message": refusal.message,
        "code": refusal.code,
        "path": refusal.path,
        "tool_index": refusal.tool_index,
        "keyword": refusal.keyword,
        "retry_after": refusal.retry_after,
    }
    if refusal.failed_generation is not None:
        data["failed_generation"] = refusal.failed_generation
    return data


def tokens(exchange: Exchange) -> tuple[int | None, int | None]:
    """Prompt and completion tokens the provider reported."""
    reply = exchange.reply
    if reply is None:
        return None, None
    return reply.usage.prompt_tokens, reply.usage.completion_tokens


def exchange_cell(cell_id: str, stage: Stage, case: str, exchange: Exchange, **fields: Any) -> Cell:
    """A cell carrying an exchange's evidence; the outcome and detail are in ``fields``."""
    prompt, completion = tokens(exchange)
    refusal_kind = error_kind = None
    match exchange.outcome:
        case Refused(refusal):
            refusal_kind = refusal.kind.value
        case Failed(error):
            error_kind = error.kind.value
        case Replied():
            pass
    return Cell(
        cell_id,
        stage,
        case,
        refusal_kind=refusal_kind,
        error_kind=error_kind,
        request=request_evidence(exchange),
        reply=reply_evidence(exchange),
        refusal=refusal_evidence(exchange.refusal),
        requests=exchange.attempts,
        latency_ms=round(exchange.latency_ms, 1),
        prompt_tokens=prompt,
        completion_tokens=completion,
        **fields,
    )
