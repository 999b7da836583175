"""A real MCP server of the ``initialize`` era over streamable HTTP: the MCP Python SDK 1.30
(the ``mcp==1.30.0`` the reference servers need, already in conchcheck's test packages).

    python tests/sources/legacy_http_server.py PORT stateful|stateless

SDK 1.30 speaks 2024-11-05 to 2025-11-25 (mcp/shared/version.py). Before ``initialize`` it
answers a POST without a session with 400 and -32600 "Bad Request: Missing session ID"
(stateful), and one carrying ``MCP-Protocol-Version: 2026-07-28`` with 400 and -32600 "Bad
Request: Unsupported protocol version: 2026-07-28. Supported versions: …" (stateless):
neither is a 2026-07-28 error, so a client falls back to ``initialize`` (both measured by
hand with curl, 2026-12-04).
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP

port, mode = int(sys.argv[1]), sys.argv[2]
mcp = FastMCP("conchcheck-legacy", host="127.0.0.1", port=port, stateless_http=mode == "stateless")


@mcp.tool()
def ping(note: str = "") -> str:
    """Answer pong."""
    return "pong " + note


if __name__ == "__main__":
    mcp.run("streamable-http")
