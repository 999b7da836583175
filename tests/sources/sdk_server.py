"""A real MCP server written with the MCP Python SDK 2.x, run in the SDK's own virtualenv.

    <sdk python> tests/sources/sdk_server.py stdio
    <sdk python> tests/sources/sdk_server.py http PORT      # streamable HTTP on 127.0.0.1
    <sdk python> tests/sources/sdk_server.py paged          # stdio, tools/list one tool a page

The tools are plain typed functions, as a user would write them: their schemas are the SDK's
(pydantic's) own. tools/list carries the cache hints ``ttlMs: 300000`` and ``cacheScope:
"public"`` (the SDK's ``cache_hints``). conchcheck's tests import nothing from here: the
file runs only under ``scripts/mcp_sdk.py``'s interpreter, never conchcheck's.
"""

from __future__ import annotations

import sys
from typing import Literal

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

HINT = CacheHint(ttl_ms=300_000, scope="public")

mcp = MCPServer("conchcheck-sdk-test", version="1.0.0", cache_hints={"tools/list": HINT})


@mcp.tool()
def search_mail(query: str, limit: int = 10) -> str:
    """Search the mailbox."""
    return f"{limit} results for {query}"


@mcp.tool()
def set_order(order: Literal["newest", "oldest"]) -> str:
    """Choose the sort order."""
    return order


def paged() -> Server[object]:
    """A low-level server that lists three tools one a page, each page its own hint."""
    tools = [
        types.Tool(name=f"tool_{i}", input_schema={"type": "object"}, description=f"Tool {i}.")
        for i in range(3)
    ]

    async def list_tools(
        ctx: ServerRequestContext[object], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        more = str(start + 1) if start < 2 else None
        return types.ListToolsResult(
            tools=tools[start : start + 1], next_cursor=more, ttl_ms=1000 * (start + 1)
        )

    return Server("conchcheck-sdk-paged", version="1.0.0", on_list_tools=list_tools)


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["stdio"]:
            mcp.run("stdio")
        case ["http", port]:
            mcp.run("streamable-http", host="127.0.0.1", port=int(port), json_response=False)
        case ["paged"]:

            async def main() -> None:
                server = paged()
                async with stdio_server() as (read, write):
                    await server.run(read, write, server.create_initialization_options())

            anyio.run(main)
        case _:
            sys.exit(__doc__)
