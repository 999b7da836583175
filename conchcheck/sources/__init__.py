"""Where a user's own tools come from: an MCP server, an OpenAPI document, or a tools file.

``read_tools(source)`` reads a tool list and never calls a tool; ``read_source(source)`` also
says which MCP revision an MCP server was spoken to in. This layer does I/O (it
starts processes and reads files); the HTTP itself is the wire layer's.
"""

from __future__ import annotations

from collections.abc import Mapping

from conchcheck.core.credentials import source_url
from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.files import load_document, tools_in
from conchcheck.sources.mcp import DEADLINE, Listing
from conchcheck.sources.mcp_http import read_http_listing
from conchcheck.sources.mcp_stdio import read_stdio_listing
from conchcheck.sources.openapi import is_openapi, openapi_tools

__all__ = ["Listing", "read_source", "read_tools"]

SOURCE_HINT = (
    "Write mcp:stdio:<command line>, mcp:<http(s) URL>, an http(s) URL, or the path of an"
    " OpenAPI document or a tools file (JSON or YAML)."
)


def read_tools(
    source: str,
    *,
    deadline: float = DEADLINE,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[Tool]:
    """The tools a source string names: ``mcp:stdio:<command>``, an MCP URL, or a file.

    An MCP server gets ``deadline`` seconds for its whole answer; one started is stopped.
    A stdio server runs with a small default environment plus ``env`` (``--tools-env``);
    a server at a URL gets ``headers`` with every request (``--tools-header``).
    """
    return list(read_source(source, deadline=deadline, env=env, headers=headers).tools)


def read_source(
    source: str,
    *,
    deadline: float = DEADLINE,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Listing:
    """``read_tools``'s tools, with the MCP revision (and cache hint) of an MCP server."""
    if source.startswith("mcp:stdio:"):
        command = source.removeprefix("mcp:stdio:")
        return read_stdio_listing(command, deadline=deadline, env=env)
    url = source_url(source)
    if url is not None:
        return read_http_listing(url, deadline=deadline, headers=headers)
    if source.startswith("mcp:"):
        raise InputError(
            f"The tool source '{source}' is not an MCP source I know.", hint=SOURCE_HINT
        )
    value, text, name = load_document(source)
    if is_openapi(value):
        return Listing(tuple(openapi_tools(value, text, name)))
    return Listing(tuple(tools_in(value, text, name)))
