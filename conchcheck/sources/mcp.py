"""The MCP protocol as conchcheck speaks it: the handshake and ``tools/list``, over a channel.

A channel moves JSON-RPC messages (stdio or streamable HTTP); this module owns what is said
on it: ``initialize``, the ``notifications/initialized`` notification, then ``tools/list``
page by page (``nextCursor``) within one total deadline and a size limit on the whole list.
conchcheck reads the tools and never calls them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Protocol

from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.version import __version__

PROTOCOL_VERSION = "2025-06-18"
"""The version conchcheck asks for; it accepts whatever version the server answers with."""
DEADLINE = 30.0
"""Seconds for the whole exchange, from starting the server to the last page."""
MAX_MESSAGE_BYTES = 4 << 20
"""The largest single JSON-RPC message read from a server."""
MAX_LIST_BYTES = 8 << 20
"""The largest tool list, all pages together, as JSON."""
MAX_PAGES = 100
"""Pages of ``tools/list`` read before a server that keeps sending cursors is given up on."""
HINT = "Check that the command or URL starts an MCP server that answers tools/list."


class Channel(Protocol):
    """A JSON-RPC connection to one MCP server; every error is an ``InputError`` line."""

    name: str
    """How messages name the server: its command line or URL."""

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        """Send one message; ``deadline`` is a ``time.monotonic`` value."""

    def receive(self, waiting_for: str, deadline: float) -> Any:
        """The next message from the server, parsed; ``waiting_for`` names it in errors."""


def list_tools(channel: Channel, deadline: float) -> list[Tool]:
    """The server's tools, read by the handshake and every page of ``tools/list``."""
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "conchcheck", "version": __version__},
    }
    init = call(channel, 1, "initialize", params, deadline)
    if not isinstance(init.get("capabilities"), Mapping) or "tools" not in init["capabilities"]:
        raise InputError(
            f"MCP server {channel.name} does not offer tools (no 'tools' capability).",
            hint=HINT,
        )
    channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, deadline)
    tools: list[Tool] = []
    size, cursor = 0, None
    for page in range(MAX_PAGES):
        result = call(
            channel, 2 + page, "tools/list", {"cursor": cursor} if cursor else {}, deadline
        )
        items = result.get("tools")
        if not isinstance(items, list):
            raise _bad(channel, "tools/list", "its result has no 'tools' list")
        size += len(json.dumps(items))
        if size > MAX_LIST_BYTES:
            raise InputError(
                f"MCP server {channel.name} lists more than {MAX_LIST_BYTES >> 20} MB of tools,"
                " the most conchcheck reads.",
                hint="Point conchcheck at a server with fewer tools.",
            )
        tools.extend(as_mcp_tool(channel, item) for item in items)
        cursor = result.get("nextCursor")
        if not cursor:
            return tools
        if not isinstance(cursor, str):
            raise _bad(channel, "tools/list", "its 'nextCursor' is not text")
    raise InputError(
        f"MCP server {channel.name} sent more than {MAX_PAGES} pages of tools/list.",
        hint="The server may be repeating its cursor; check it.",
    )


def call(
    channel: Channel, ident: int, method: str, params: Mapping[str, Any], deadline: float
) -> Mapping[str, Any]:
    """Send one request and return its result; messages that are not its response are passed.

    Servers may send notifications (logging, progress) or requests of their own before the
    response; conchcheck answers none of them, and a server waiting on an answer meets the
    deadline.
    """
    channel.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, deadline)
    while True:
        message = channel.receive(method, deadline)
        if not isinstance(message, Mapping) or message.get("id") != ident:
            continue
        if "method" in message:
            continue  # a request from the server that reuses our id: not our response
        error = message.get("error")
        if isinstance(error, Mapping):
            text = " ".join(str(error.get("message", "")).split())[:200]
            raise _bad(channel, method, f"it answered error {error.get('code')}: {text}")
        result = message.get("result")
        if not isinstance(result, Mapping):
            raise _bad(channel, method, "its response has no result object")
        return result


def as_mcp_tool(channel: Channel, item: Any) -> Tool:
    """One MCP tool (``name``, ``description``, ``inputSchema``) as a ``Tool``."""
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise _bad(channel, "tools/list", "a tool has no 'name'")
    schema = item.get("inputSchema")
    if not isinstance(schema, Mapping):
        raise _bad(channel, "tools/list", f"tool '{item['name']}' has no 'inputSchema' object")
    description = item.get("description")
    return Tool(item["name"], description if isinstance(description, str) else "", schema)


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline`` (a ``time.monotonic`` value), never negative."""
    return max(0.0, deadline - time.monotonic())


def _bad(channel: Channel, method: str, what: str) -> InputError:
    return InputError(
        f"MCP server {channel.name} broke the protocol on {method}: {what}.", hint=HINT
    )
