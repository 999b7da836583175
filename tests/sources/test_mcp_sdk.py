"""Real MCP servers, both eras: the MCP Python SDK 2.3.0 (2026-07-28, in its own virtualenv)
over stdio and streamable HTTP, and SDK 1.30 (the ``initialize`` era) over streamable HTTP.

The SDK 2.3.0 server is tests/sources/sdk_server.py; its schemas are pydantic's, from the
functions' type hints, exactly as the server printed them when listed by hand.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

import pytest

from conchcheck.sources import read_source
from conchcheck.sources.mcp import CacheHint, CacheScope
from conchcheck.sources.mcp_stdio import read_stdio_listing
from tests.sources import servers

SEARCH_MAIL = {
    "type": "object",
    "properties": {
        "query": {"title": "Query", "type": "string"},
        "limit": {"default": 10, "title": "Limit", "type": "integer"},
    },
    "required": ["query"],
    "title": "search_mailArguments",
}
SET_ORDER = {
    "type": "object",
    "properties": {"order": {"enum": ["newest", "oldest"], "title": "Order", "type": "string"}},
    "required": ["order"],
    "title": "set_orderArguments",
}
SDK_TOOLS = [
    ("search_mail", "Search the mailbox.", SEARCH_MAIL),
    ("set_order", "Choose the sort order.", SET_ORDER),
]
# sdk_server.py's `cache_hints` for tools/list.
SDK_HINT = CacheHint(300_000, CacheScope.PUBLIC)


def listed(source: str) -> tuple[list[tuple[str, str, Any]], str | None, CacheHint | None]:
    listing = read_source(source)
    tools = [(t.name, t.description, t.parameters) for t in listing.tools]
    return tools, listing.revision, listing.cache


def test_sdk_2026_over_stdio() -> None:
    assert listed(servers.sdk_stdio()) == (SDK_TOOLS, "2026-07-28", SDK_HINT)


def test_sdk_2026_over_http() -> None:
    with servers.sdk_http() as url:
        assert listed(url) == (SDK_TOOLS, "2026-07-28", SDK_HINT)


def test_sdk_2026_slow_to_start_over_stdio() -> None:
    # The server starts after the probe's patience: conchcheck has sent initialize too. The
    # SDK reads server/discover first, which makes the process's era 2026-07-28, answers it
    # late, and refuses initialize with -32022 naming 2026-07-28 (mcp/server/runner.py,
    # serve_dual_era_loop); conchcheck then asks server/discover again.
    command = shlex.split(servers.sdk_stdio().removeprefix("mcp:stdio:"))
    slow = f"sh -c {shlex.quote('sleep 1.5; exec ' + shlex.join(command))}"
    started = time.monotonic()
    listing = read_stdio_listing(slow, patience=1.0)
    assert time.monotonic() - started > 1.5
    tools = [(t.name, t.description, t.parameters) for t in listing.tools]
    assert (tools, listing.revision, listing.cache) == (SDK_TOOLS, "2026-07-28", SDK_HINT)


def test_sdk_2026_pages_over_stdio() -> None:
    # One tool a page, page n fresh for n seconds; the SDK's default scope is private.
    tools = [(f"tool_{i}", f"Tool {i}.", {"type": "object"}) for i in range(3)]
    hint = CacheHint(1000, CacheScope.PRIVATE)
    assert listed(servers.sdk_stdio("paged")) == (tools, "2026-07-28", hint)


@pytest.mark.parametrize("mode", ["stateful", "stateless"])
def test_sdk_1_30_over_http_falls_back_to_initialize(mode: str) -> None:
    # SDK 1.30 answers the probe with 400 and -32600, not a 2026-07-28 error: the handshake
    # follows and agrees on the version conchcheck asks for.
    ping = {
        "type": "object",
        "properties": {"note": {"default": "", "title": "Note", "type": "string"}},
        "title": "pingArguments",
    }
    with servers.legacy_http(mode) as url:
        assert listed(url) == ([("ping", "Answer pong.", ping)], "2025-06-18", None)
