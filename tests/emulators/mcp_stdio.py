"""Misbehaving MCP stdio servers, run as ``python tests/emulators/mcp_stdio.py MODE``.

Of the ``initialize`` era (they answer a request they don't know, ``server/discover`` among
them, with -32601 as the MCP SDKs do, unless the mode says otherwise):
``silent`` reads and never answers; ``quiet`` ignores every request before ``initialize``
(the stdio binding's "does not respond" server); ``huge`` pages past the list limit;
``giant`` one message past the message limit; ``chatty`` writes a log line on stdout;
``pages`` serves three tools a page at a time with a notification before each response;
``no-tools`` has no tools capability; ``discover-handshake`` answers ``server/discover``
naming only handshake versions (as Go's stateful server does).

Of the 2026-07-28 era: ``future`` speaks only a later revision (-32022); ``future-or-old``
refuses 2026-07-28 but names 2025-06-18 too; ``capability`` answers ``server/discover`` with
-32021; ``modern-no-tools`` has no tools capability; ``input-required`` and ``odd-result``
answer ``tools/list`` with a ``resultType`` conchcheck can't take; ``slow-start`` answers
nothing for 2 s, then refuses ``initialize`` with -32022 naming 2026-07-28.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def main(mode: str) -> None:
    initialized = False
    started = time.monotonic()
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if mode == "silent" or ident is None:
            continue
        if mode == "slow-start":
            time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))
        if mode == "quiet" and not initialized and method != "initialize":
            continue
        modern = VERSION_KEY in ((message.get("params") or {}).get("_meta") or {})
        if mode in MODERN_MODES:
            answer(ident, *modern_answer(mode, method, message, modern))
            continue
        if method == "initialize":
            initialized = True
            capabilities = {} if mode == "no-tools" else {"tools": {}}
            if mode == "chatty":
                print("Server started on stdio", flush=True)
            result = {
                "protocolVersion": "2024-11-05",
                "capabilities": capabilities,
                "serverInfo": {"name": "x", "version": "1"},
            }
        elif method == "server/discover" and mode == "discover-handshake":
            result = {"supportedVersions": ["2025-06-18"], "capabilities": {"tools": {}}}
        elif method == "tools/list" and mode in {"huge", "giant"}:
            # huge: pages of 3 MB, each under the message limit, 9 MB together; giant: one
            # message of 5 MB.
            big = {"type": "object", "description": "x" * (1 << 20)}
            count = 5 if mode == "giant" else 3
            result = {"tools": [{"name": f"t{i}", "inputSchema": big} for i in range(count)]}
            result["nextCursor"] = "more"
        elif method == "tools/list":
            start = int((message.get("params") or {}).get("cursor") or 0)
            result = {"tools": [{"name": f"tool_{start}", "inputSchema": {"type": "object"}}]}
            if start < 2:
                result["nextCursor"] = str(start + 1)
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "page"}}
            print(json.dumps(note), flush=True)
        else:
            answer(ident, None, {"code": -32601, "message": "Method not found"})
            continue
        answer(ident, result, None)


MODERN_MODES = {
    "future",
    "future-or-old",
    "capability",
    "modern-no-tools",
    "input-required",
    "odd-result",
    "slow-start",
}


def modern_answer(
    mode: str, method: str, message: dict[str, Any], modern: bool
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(result, error) of a server of the 2026-07-28 era."""
    requested = ((message.get("params") or {}).get("_meta") or {}).get(VERSION_KEY)
    if mode in {"future", "future-or-old"}:
        supported = ["2027-03-01"] + (["2025-06-18"] if mode == "future-or-old" else [])
        if mode == "future-or-old" and method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}
            return result, None
        if mode == "future-or-old" and method == "tools/list" and not modern:
            return {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}, None
        data = {"supported": supported, "requested": requested}
        return None, {"code": -32022, "message": "Unsupported protocol version", "data": data}
    if mode == "capability" and method == "server/discover":
        text = "Missing required client capability: elicitation"
        return None, {"code": -32021, "message": text, "data": {"requiredCapabilities": {}}}
    if method == "initialize" or not modern:
        data = {"supported": [MODERN], "requested": requested}
        return None, {"code": -32022, "message": "Unsupported protocol version", "data": data}
    if method == "server/discover":
        capabilities = {} if mode == "modern-no-tools" else {"tools": {}}
        result = {"resultType": "complete", "supportedVersions": [MODERN]}
        return {**result, "capabilities": capabilities, "ttlMs": 0, "cacheScope": "public"}, None
    if method == "tools/list":
        kind = {"input-required": "input_required", "odd-result": "partial"}.get(mode, "complete")
        tool = {"name": "ping", "inputSchema": {"type": "object"}}
        return {"resultType": kind, "tools": [tool], "ttlMs": 60_000, "cacheScope": "public"}, None
    return None, {"code": -32601, "message": "Method not found"}


def answer(ident: Any, result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
    body = {"result": result} if error is None else {"error": error}
    print(json.dumps({"jsonrpc": "2.0", "id": ident, **body}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
