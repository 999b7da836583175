"""Misbehaving MCP stdio servers, run as ``python -m tests.emulators.mcp_stdio MODE``.

``silent`` reads and never answers; ``huge`` pages past the list limit; ``giant`` one message past the message limit;
``chatty`` writes a log line on stdout; ``pages`` serves three tools a page at a time with a
notification before each response; ``no-tools`` has no tools capability.
"""

from __future__ import annotations

import json
import sys


def main(mode: str) -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if mode == "silent":
            continue
        if method == "initialize":
            capabilities = {} if mode == "no-tools" else {"tools": {}}
            if mode == "chatty":
                print("Server started on stdio", flush=True)
            result = {
                "protocolVersion": "2024-11-05",
                "capabilities": capabilities,
                "serverInfo": {"name": "x", "version": "1"},
            }
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
            continue  # notifications
        print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
