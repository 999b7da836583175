"""A small streamable-HTTP MCP server for ``EmulatorServer``: tools/list in pages.

By default it answers as the 2025-06-18 transport says: a session id from ``initialize``
that every later request must carry (``server/discover`` without one gets the 400 a
stateful SDK 1.x server sends), 202 for a notification. With ``modern=True`` it is a
2026-07-28 server (docs/specification/2026-07-28/basic/transports/streamable-http.mdx): no
session, ``server/discover``, the ``MCP-Protocol-Version`` and ``Mcp-Method`` headers checked
against the body (400 and -32020 when they differ), and 400 with -32022 for a version it
doesn't speak (``versions``). Each response is JSON or an SSE stream (``sse=True``) that
stays open after the response, as a real server's may.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.server import Fault, Received, Response

SESSION = "session-7f3a"
VERSION = "2025-03-26"  # older than the client asks for: the client must accept it
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


@dataclass
class McpHttpEmulator:
    """Serves ``tools`` ``page_size`` at a time; ``hang_on`` names a method never answered."""

    tools: list[dict[str, Any]]
    page_size: int = 2
    sse: bool = False
    hang_on: str | None = None
    modern: bool = False
    versions: tuple[str, ...] = (MODERN,)
    """The 2026-07-28-era versions a ``modern`` server speaks."""
    seen: list[tuple[str, str | None, str | None, str | None]] = field(default_factory=list)
    """(method, session, protocol version and method headers) of every request."""

    def __call__(self, received: Received) -> Response:
        message = received.json()
        method = message.get("method")
        self.seen.append(
            (
                method,
                received.headers.get("mcp-session-id"),
                received.headers.get("mcp-protocol-version"),
                received.headers.get("mcp-method"),
            )
        )
        if method == self.hang_on:
            return Response(fault=Fault.HANG)
        if self.modern:
            return self._stateless(received, message)
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

    def _stateless(self, received: Received, message: dict[str, Any]) -> Response:
        ident, method = message.get("id"), message.get("method")
        meta = (message.get("params") or {}).get("_meta") or {}
        version = meta.get(VERSION_KEY)
        header = received.headers.get("mcp-protocol-version")
        if version is None or method == "initialize":
            requested = version or (message.get("params") or {}).get("protocolVersion")
            return _error(ident, -32022, "Unsupported protocol version", self.versions, requested)
        if header != version or received.headers.get("mcp-method") != method:
            return _error(ident, -32020, "Header mismatch: the headers do not match the body")
        if version not in self.versions:
            return _error(ident, -32022, "Unsupported protocol version", self.versions, version)
        if method == "server/discover":
            result = {
                "resultType": "complete",
                "supportedVersions": list(self.versions),
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
            }
            return self._answer(ident, result)
        if method == "tools/list":
            start = int(message.get("params", {}).get("cursor") or 0)
            page = self.tools[start : start + self.page_size]
            # Each page its own TTL, the last the shortest; one scope for them all.
            ttl = 60_000 // (1 + start // self.page_size)
            listed: dict[str, Any] = {"resultType": "complete", "tools": page, "ttlMs": ttl}
            listed["cacheScope"] = "public"
            if start + self.page_size < len(self.tools):
                listed["nextCursor"] = str(start + self.page_size)
            return self._answer(ident, listed)
        return Response.json(
            {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Not found"}},
            404,
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


def _error(
    ident: Any,
    code: int,
    message: str,
    supported: tuple[str, ...] = (),
    requested: Any = None,
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if code == -32022:
        error["data"] = {"supported": list(supported), "requested": requested}
    return Response.json({"jsonrpc": "2.0", "id": ident, "error": error}, 400)


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
