"""An MCP server at a URL, spoken to over streamable HTTP (the wire layer does the HTTP).

A 2026-07-28 request mirrors its body in headers: ``MCP-Protocol-Version`` (the ``_meta``
version) and ``Mcp-Method``, and carries no session (docs/specification/2026-07-28/basic/
transports/streamable-http.mdx, "Request Metadata"). The revision is picked as that page's
"Backward Compatibility" says: ``server/discover`` first; a 4xx whose body is no JSON-RPC
error, or holds one that is not a 2026-07-28 error, means a server of the ``initialize`` era.

For that era the ``Mcp-Session-Id`` that ``initialize`` answers with goes on every later
request, as does the protocol version the server chose; the session is not deleted
afterwards, as a server drops idle sessions itself and a DELETE it does not support would
only add an error.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from conchcheck.core.credentials import credentials_in
from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.redaction import Redactor
from conchcheck.sources.environment import speech_mask
from conchcheck.sources.mcp import (
    DEADLINE,
    HINT,
    MAX_MESSAGE_BYTES,
    Listing,
    answers,
    list_tools,
    masked,
    request_version,
)
from conchcheck.wire.mcp_http import METHOD_HEADER, PROTOCOL_HEADER, McpHttpClient, McpHttpReply


def read_http_tools(
    url: str, *, deadline: float = DEADLINE, headers: Mapping[str, str] | None = None
) -> list[Tool]:
    """The tools of the MCP server at ``url``."""
    return list(read_http_listing(url, deadline=deadline, headers=headers).tools)


def read_http_listing(
    url: str, *, deadline: float = DEADLINE, headers: Mapping[str, str] | None = None
) -> Listing:
    """The tools, revision and cache hint of the MCP server at ``url``, asked with
    ``headers`` on every request (``--tools-header``); every key this process holds, the
    credentials written in ``url``, the header values, and anything shaped like a key,
    masked in what the server says (and the URL in a message)."""
    given = dict(headers or {})
    mask = speech_mask({}, (*credentials_in(url), *given.values()))
    return masked(lambda: _listing(url, deadline, mask, given), mask)


def _listing(url: str, deadline: float, mask: Redactor, headers: Mapping[str, str]) -> Listing:
    client = McpHttpClient(url, max_bytes=MAX_MESSAGE_BYTES, headers=headers)
    try:
        return list_tools(HttpChannel(client, mask), time.monotonic() + deadline)
    finally:
        client.close()


class HttpChannel:
    """Messages over POSTs: each reply's messages are queued for ``receive``."""

    def __init__(self, client: McpHttpClient, mask: Redactor) -> None:
        self.client = client
        self.name = client.url
        self.mask = mask
        self.headers: dict[str, str] = {}
        """The handshake era's session and version, once ``initialize`` gave them."""
        self.pending: deque[Any] = deque()

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        """POST ``message`` and queue what came back."""
        method = str(message.get("method"))
        reply = self._post(message, deadline)
        if reply.error is not None:
            raise self._failed(method, reply)
        if reply.session is not None and method == "initialize":
            self.headers["mcp-session-id"] = reply.session
        for item in reply.messages:
            if method == "initialize" and isinstance(item, Mapping):
                result = item.get("result")
                version = result.get("protocolVersion") if isinstance(result, Mapping) else None
                if isinstance(version, str):
                    self.headers[PROTOCOL_HEADER] = version
            self.pending.append(item)

    def probe(self, request: Mapping[str, Any], deadline: float) -> Mapping[str, Any] | None:
        """POST ``server/discover``: its response, or None for a 4xx without a JSON-RPC error.

        A 4xx or 5xx whose body is a JSON-RPC error is that error, whatever id it carries (a
        server that could not read the request may send none): each POST holds one request.
        """
        method = str(request.get("method"))
        reply = self._post(request, deadline)
        if reply.error is not None:
            errors = [m for m in reply.messages if isinstance(m, Mapping)]
            if errors:
                return {**errors[0], "id": request.get("id")}
            if reply.status is not None and 400 <= reply.status < 500:
                return None
            raise self._failed(method, reply)
        self.pending.extend(reply.messages)
        while self.pending:
            message = self.pending.popleft()
            if answers(message, request.get("id")):
                self.pending.clear()
                return message
        raise InputError(
            f"The MCP server at {self.name} answered {method} without a response.", hint=HINT
        )

    def receive(self, waiting_for: str, deadline: float) -> Any:
        """The next queued message; a POST whose reply lacked the response is an error."""
        if not self.pending:
            raise InputError(
                f"The MCP server at {self.name} answered {waiting_for} without a response.",
                hint=HINT,
            )
        return self.pending.popleft()

    def _post(self, message: Mapping[str, Any], deadline: float) -> McpHttpReply:
        version = request_version(message)
        if version is None:
            headers = self.headers
        else:
            # A stateless request: its headers mirror its body, and no session goes with it.
            headers = {PROTOCOL_HEADER: version, METHOD_HEADER: str(message.get("method"))}
        return self.client.post(message, headers=headers, deadline=deadline)

    def _failed(self, method: str, reply: McpHttpReply) -> InputError:
        return InputError(
            f"The MCP server at {self.name} failed on {method}: {reply.error}.", hint=HINT
        )
