"""HTTP for an MCP server at a URL (streamable HTTP): POST one JSON-RPC message, read the reply.

The reply is ``application/json`` (one message), an SSE stream (``text/event-stream``) that
carries the response among other messages, or ``202 Accepted`` with no body for a
notification. Every exchange keeps to a total deadline and a size cap, and JSON nested
deeper than ``core.nesting.MAX_DEPTH`` is refused unparsed (as a provider's reply is); what
went wrong comes back as a sentence in ``McpHttpReply.error``, never as an exception. The
protocol itself is ``conchcheck.sources.mcp``'s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from conchcheck.core.jsontypes import JsonValue
from conchcheck.core.nesting import MAX_DEPTH, text_too_deep
from conchcheck.wire.framing import SSEDecoder

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
"""Each 2026-07-28 request's method, mirrored from its body (streamable-http.mdx)."""


@dataclass(frozen=True, slots=True)
class McpHttpReply:
    """What one POST came to: the messages the server sent, or why there are none."""

    status: int | None = None
    messages: tuple[JsonValue, ...] = ()
    """The JSON-RPC messages; with ``error``, the JSON-RPC error the body held, if one."""
    session: str | None = None
    """The ``Mcp-Session-Id`` the server gave, if it gave one."""
    error: str | None = None
    """A sentence (no full stop) when the exchange failed."""


class McpHttpClient:
    """One connection pool to one MCP URL; ``close`` when done. ``headers`` go with every
    request."""

    def __init__(
        self,
        url: str,
        *,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self.max_bytes = max_bytes
        self.headers = dict(headers or {})
        """The user's own (``--tools-header``), sent with every POST."""
        # No environment proxies or redirects: the URL given is the server spoken to.
        self.client = httpx.Client(transport=transport, trust_env=False, follow_redirects=False)

    def close(self) -> None:
        """Close the connections."""
        self.client.close()

    def post(
        self, message: Mapping[str, object], *, headers: Mapping[str, str], deadline: float
    ) -> McpHttpReply:
        """POST ``message``; stop reading once the response to its id has come."""
        left = deadline - time.monotonic()
        if left <= 0:
            return McpHttpReply(error="no answer within the deadline")
        sent = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **self.headers,
            **headers,
        }
        try:
            with self.client.stream(
                "POST", self.url, content=json.dumps(message), headers=sent, timeout=left
            ) as response:
                return self._read(response, message.get("id"), deadline)
        except httpx.TimeoutException:
            return McpHttpReply(error="no answer within the deadline")
        except httpx.HTTPError as exc:
            return McpHttpReply(error=f"{type(exc).__name__}: {exc}")

    def _read(self, response: httpx.Response, ident: object, deadline: float) -> McpHttpReply:
        status, session = response.status_code, response.headers.get(SESSION_HEADER)
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        sse = kind == "text/event-stream" and 200 <= status < 300
        decoder = SSEDecoder(done_marker=None)
        body, messages = bytearray(), list[JsonValue]()
        for chunk in response.iter_raw() if sse else response.iter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                return McpHttpReply(status, error=f"a reply larger than {self.max_bytes} bytes")
            if time.monotonic() > deadline:
                return McpHttpReply(status, error="no complete answer within the deadline")
            if sse:
                parsed, deep = _parsed(decoder.feed(chunk))
                if deep is not None:
                    return McpHttpReply(status, error=deep)
                messages += parsed
                if any(_answers(m, ident) for m in messages):
                    # The stream may stay open for later messages: ours has come.
                    return McpHttpReply(status, tuple(messages), session)
        text = body.decode("utf-8", "replace")
        deep = None if sse else _too_deep(text)  # an SSE stream's events were each checked
        if deep is not None:
            # Not even an error's excerpt: the body is refused whole, before any parser.
            said = deep if 200 <= status < 300 else f"HTTP {status}: {deep}"
            return McpHttpReply(status, error=said)
        if not 200 <= status < 300:
            excerpt = " ".join(text.split())[:200]
            error = f"HTTP {status}{': ' + excerpt if excerpt else ''}"
            # A JSON-RPC error in the body is kept: a 2026-07-28 server's 400 names its versions.
            return McpHttpReply(status, _error_body(text), session, error)
        if sse:
            parsed, deep = _parsed(decoder.close())
            if deep is not None:
                return McpHttpReply(status, error=deep)
            return McpHttpReply(status, tuple(messages + parsed), session)
        if not text.strip():
            return McpHttpReply(status, (), session)
        try:
            value: JsonValue = json.loads(text)
        except ValueError:
            return McpHttpReply(status, error=f"a {kind or 'reply'} body that is not JSON")
        # JSON-RPC allows a batch (a list) in a reply as well as one message.
        return McpHttpReply(status, tuple(value if isinstance(value, list) else [value]), session)


def _error_body(text: str) -> tuple[JsonValue, ...]:
    """The body of a failed POST as one JSON-RPC error response, when it is one."""
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return ()
    if isinstance(value, Mapping) and isinstance(value.get("error"), Mapping):
        return (value,)
    return ()


def _parsed(events: list[tuple[str, str]]) -> tuple[list[JsonValue], str | None]:
    """The events' JSON-RPC messages; or why one of them can't be read at all."""
    out: list[JsonValue] = []
    for _, data in events:
        deep = _too_deep(data)
        if deep is not None:
            return [], deep
        try:
            out.append(json.loads(data))
        except ValueError:
            continue  # an event that is not JSON-RPC (a keep-alive, a note) is passed over
    return out, None


def _too_deep(text: str) -> str | None:
    """Why JSON ``text`` is not parsed (Python's parser recurses), when it nests too deep."""
    offset = text_too_deep(text)
    if offset is None:
        return None
    return f"a reply nested deeper than {MAX_DEPTH} levels (at character {offset}), not parsed"


def _answers(message: JsonValue, ident: object) -> bool:
    return (
        isinstance(message, Mapping)
        and message.get("id") == ident
        and ("result" in message or "error" in message)
    )
