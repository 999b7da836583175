"""MCP over streamable HTTP against a loopback server: JSON and SSE replies, pages, faults."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from conchcheck.errors import InputError
from conchcheck.sources import read_source, read_tools
from conchcheck.sources.mcp import MAX_MESSAGE_BYTES, CacheHint, CacheScope
from conchcheck.sources.mcp_http import read_http_listing, read_http_tools
from conchcheck.version import __version__
from tests.emulators.mcp_http import MODERN, SESSION, VERSION, McpHttpEmulator, tool
from tests.emulators.server import EmulatorServer, Handler, Received, Response

TOOLS = [tool("search_mail", ["query"]), tool("send_mail", ["to", "body"]), tool("ping")]
Serve = Callable[[Handler], EmulatorServer]


@pytest.mark.parametrize(
    ("sse", "prefix"),
    [
        pytest.param(False, "", id="json-replies"),
        pytest.param(True, "", id="sse-replies"),
        pytest.param(False, "mcp:", id="mcp-prefix"),
    ],
)
def test_lists_every_page(serve: Serve, sse: bool, prefix: str) -> None:
    emulator = McpHttpEmulator(TOOLS, page_size=2, sse=sse)
    server = serve(emulator)
    tools = read_tools(f"{prefix}{server.url}/mcp")
    assert [(t.name, t.description, t.parameters["required"]) for t in tools] == [
        ("search_mail", "The search_mail tool.", ["query"]),
        ("send_mail", "The send_mail tool.", ["to", "body"]),
        ("ping", "The ping tool.", []),
    ]
    # The probe's 400 without a session is not a 2026-07-28 error: the handshake follows.
    # The session and the version the server chose go on everything after initialize.
    assert emulator.seen == [
        ("server/discover", None, MODERN, "server/discover"),
        ("initialize", None, None, None),
        ("notifications/initialized", SESSION, VERSION, None),
        ("tools/list", SESSION, VERSION, None),
        ("tools/list", SESSION, VERSION, None),
    ]
    assert json.loads(server.received[1].body)["params"]["protocolVersion"] == "2025-06-18"
    assert [json.loads(r.body).get("params") for r in server.received[3:]] == [
        {},
        {"cursor": "2"},
    ]
    assert read_source(f"{prefix}{server.url}/mcp").revision == VERSION


@pytest.mark.parametrize("sse", [False, True], ids=["json-replies", "sse-replies"])
def test_a_2026_server_is_spoken_to_statelessly(serve: Serve, sse: bool) -> None:
    emulator = McpHttpEmulator(TOOLS, page_size=2, sse=sse, modern=True)
    server = serve(emulator)
    listing = read_http_listing(f"{server.url}/mcp")
    assert [t.name for t in listing.tools] == ["search_mail", "send_mail", "ping"]
    # The second page's TTL is the shorter: the list is fresh as long as its stalest page.
    assert (listing.revision, listing.cache) == (MODERN, CacheHint(30_000, CacheScope.PUBLIC))
    # No handshake, no session; every request's headers mirror its body.
    assert emulator.seen == [
        ("server/discover", None, MODERN, "server/discover"),
        ("tools/list", None, MODERN, "tools/list"),
        ("tools/list", None, MODERN, "tools/list"),
    ]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "conchcheck", "version": __version__},
    }
    assert [json.loads(r.body) for r in server.received] == [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/list",
            "params": {"cursor": "2", "_meta": meta},
        },
    ]


def test_a_2026_server_of_a_later_revision_only(serve: Serve) -> None:
    server = serve(McpHttpEmulator(TOOLS, modern=True, versions=("2027-03-01",)))
    with pytest.raises(InputError) as caught:
        read_http_tools(server.url)
    # Its 400 holds -32022: a 2026-07-28-era server, so no initialize is tried.
    assert str(caught.value) == (
        f"MCP server {server.url} speaks MCP 2027-03-01; conchcheck speaks 2026-07-28 and,"
        " through initialize, the revisions before it."
    )
    assert [r.path for r in server.received] == ["/"]


@pytest.mark.parametrize(
    ("modern", "method"),
    [
        pytest.param(False, "initialize", id="handshake"),
        pytest.param(True, "server/discover", id="discover"),
    ],
)
def test_server_that_never_answers_meets_the_deadline(
    serve: Serve, modern: bool, method: str
) -> None:
    # Over HTTP a hang is no sign of an era (streamable-http.mdx keys the fallback to a 4xx).
    server = serve(McpHttpEmulator(TOOLS, hang_on=method, modern=modern))
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        read_http_tools(server.url, deadline=1.0)
    assert 1.0 <= time.monotonic() - started < 4.0
    assert str(caught.value) == (
        f"The MCP server at {server.url} failed on {method}: no answer within the deadline."
    )


def test_hang_on_a_later_page(serve: Serve) -> None:
    server = serve(McpHttpEmulator(TOOLS, hang_on="tools/list"))
    with pytest.raises(InputError, match="failed on tools/list: no answer within the deadline"):
        read_http_tools(server.url, deadline=1.0)


@pytest.mark.parametrize(
    ("response", "message"),
    [
        pytest.param(
            Response(404, b"Not Found", {"content-type": "text/plain"}),
            "failed on initialize: HTTP 404: Not Found.",
            id="not-found",
        ),
        pytest.param(
            Response(200, b"<html>login</html>", {"content-type": "text/html"}),
            "failed on server/discover: a text/html body that is not JSON.",
            id="html-page",
        ),
        pytest.param(
            Response(200, b"x" * (MAX_MESSAGE_BYTES + 10), {"content-type": "application/json"}),
            f"failed on server/discover: a reply larger than {MAX_MESSAGE_BYTES} bytes.",
            id="oversized-reply",
        ),
        pytest.param(
            Response(500, b"upstream down", {"content-type": "text/plain"}),
            "failed on server/discover: HTTP 500: upstream down.",
            id="server-error-is-no-era",
        ),
        pytest.param(
            Response.json(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "error": {"code": -32602, "message": "Unsupported protocol version"},
                }
            ),
            "broke the protocol on initialize: it answered error -32602: Unsupported protocol version.",
            id="json-rpc-error",
        ),
        pytest.param(
            Response(202),
            "answered server/discover without a response.",
            id="no-response",
        ),
    ],
)
def test_bad_replies(serve: Serve, response: Response, message: str) -> None:
    def reply(received: Received) -> Response:
        if response.status == 200 and response.body.startswith(b'{"jsonrpc'):
            # The error answers each request by its own id: the probe's, then initialize's.
            body = json.loads(response.body)
            return Response.json({**body, "id": received.json()["id"]})
        return response

    server = serve(reply)
    with pytest.raises(InputError) as caught:
        read_http_tools(server.url, deadline=5.0)
    assert str(caught.value).endswith(message)
    assert str(caught.value).count(server.url) == 1


def test_oversized_list_over_pages(serve: Serve) -> None:
    big = {"type": "object", "description": "x" * (1 << 20)}
    many = [{"name": f"t{i}", "inputSchema": big} for i in range(12)]
    server = serve(McpHttpEmulator(many, page_size=3))
    with pytest.raises(InputError) as caught:
        read_http_tools(server.url)
    assert str(caught.value) == (
        f"MCP server {server.url} lists more than 8 MB of tools, the most conchcheck reads."
    )


def test_unreachable_url_is_one_line(serve: Serve) -> None:
    server = serve(McpHttpEmulator(TOOLS))
    url = server.url
    server.close()
    with pytest.raises(InputError) as caught:
        read_http_tools(url, deadline=2.0)
    assert str(caught.value).startswith(
        f"The MCP server at {url} failed on server/discover: ConnectError:"
    )
    assert "\n" not in str(caught.value)
