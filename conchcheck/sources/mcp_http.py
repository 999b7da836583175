"""An MCP server at a URL, spoken to over streamable HTTP (the wire layer does the HTTP).

The ``Mcp-Session-Id`` that ``initialize`` answers with goes on every later request, as does
the protocol version the server chose; the session is not deleted afterwards, as a server
drops idle sessions itself and a DELETE it does not support would only add an error.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.sources.mcp import DEADLINE, HINT, MAX_MESSAGE_BYTES, list_tools
from conchcheck.wire.mcp_http import PROTOCOL_HEADER, McpHttpClient


def read_http_tools(url: str, *, deadline: float = DEADLINE) -> list[Tool]:
    """The tools of the MCP server at ``url``."""
    client = McpHttpClient(url, max_bytes=MAX_MESSAGE_BYTES)
    try:
        return list_tools(HttpChannel(client), time.monotonic() + deadline)
    finally:
        client.close()


class HttpChannel:
    """Messages over POSTs: each reply's messages are queued for ``receive``."""

    def __init__(self, client: McpHttpClient) -> None:
        self.client = client
        self.name = client.url
        self.headers: dict[str, str] = {}
        self.pending: deque[Any] = deque()

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        """POST ``message`` and queue what came back."""
        method = str(message.get("method"))
        reply = self.client.post(message, headers=self.headers, deadline=deadline)
        if reply.error is not None:
            raise InputError(
                f"The MCP server at {self.name} failed on {method}: {reply.error}.", hint=HINT
            )
        if reply.session is not None and method == "initialize":
            self.headers["mcp-session-id"] = reply.session
        for item in reply.messages:
            if method == "initialize" and isinstance(item, Mapping):
                result = item.get("result")
                version = result.get("protocolVersion") if isinstance(result, Mapping) else None
                if isinstance(version, str):
                    self.headers[PROTOCOL_HEADER] = version
            self.pending.append(item)

    def receive(self, waiting_for: str, deadline: float) -> Any:
        """The next queued message; a POST whose reply lacked the response is an error."""
        if not self.pending:
            raise InputError(
                f"The MCP server at {self.name} answered {waiting_for} without a response.",
                hint=HINT,
            )
        return self.pending.popleft()
