"""A small streamable-HTTP MCP server for ``EmulatorServer``: initialize, tools/list in pages.

It answers as the 2025-06-18 transport says: a session id from ``initialize`` that every
later request must carry, 202 for a notification, and each response as JSON or as an SSE
stream (``sse=True``) that stays open after the response, as a real server's may.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.server import Fault, Received, Response

SESSION = "session-7f3a"
VERSION = "2025-03-26"  # older than the client asks for: the client must accept it


@dataclass
class McpHttpEmulator:
    """Serves ``tools`` ``page_size`` at a time; ``hang_on`` names a method never answered."""

    tools: list[dict[str, Any]]
    page_size: int = 2
    sse: bool = False
    hang_on: str | None = None
    seen: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(method, session header, protocol version header) of every request."""

    def __call__(self, received: Received) -> Response:
        message = received.json()
        method = message.get("method")
        self.seen.append(
            (
                method,
                received.headers.get("mcp-session-id"),
                received.headers.get("mcp-protocol-version"),
            )
        )
        if method == self.hang_on:
            return Response(fault=Fault.HANG)
        if method == "initialize":
            result = {
                "protocolVersion": VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "emulator", "version": "1"},
            }
            return self._answer(message["id"], result, {"mcp-session-id": SESSION})
        if received.headers.get("mcp-session-id") != SESSION:
            return Response.json(
                {
                    "jsonrpc": "2.0",
                    "id": "server-error",
                    "error": {
                        "code": -32000,
                        "message": "Bad Request: No valid session ID provided",
                    },
                },
                400,
            )
        if method == "notifications/initialized":
            return Response(202)
        if method == "tools/list":
            start = int(message.get("params", {}).get("cursor") or 0)
            page = self.tools[start : start + self.page_size]
            result: dict[str, Any] = {"tools": page}
            if start + self.page_size < len(self.tools):
                result["nextCursor"] = str(start + self.page_size)
            return self._answer(message["id"], result)
        return Response.json(
            {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": {"code": -32601, "message": "Method not found"},
            }
        )

    def _answer(self, ident: Any, result: Any, headers: dict[str, str] | None = None) -> Response:
        response = {"jsonrpc": "2.0", "id": ident, "result": result}
        if not self.sse:
            return Response.json(response, headers=headers)
        return Response(
            200,
            chunks=_stream(response),
            headers={"content-type": "text/event-stream", **(headers or {})},
        )


def _stream(response: Any) -> Iterator[bytes]:
    # A log notification first, then the response split across chunks, then a comment.
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "listing"},
    }
    yield f"event: message\ndata: {json.dumps(note)}\n\n".encode()
    text = f"event: message\ndata: {json.dumps(response)}\n\n".encode()
    yield text[:10]
    yield text[10:]
    yield b": keep-alive\n\n"


def tool(name: str, required: list[str] | None = None) -> dict[str, Any]:
    """An MCP tool with one string argument per ``required`` name."""
    names = required or []
    return {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {
            "type": "object",
            "properties": {n: {"type": "string"} for n in names},
            "required": names,
        },
    }
