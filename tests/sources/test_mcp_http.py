"""MCP over streamable HTTP against a loopback server: JSON and SSE replies, pages, faults."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from conchcheck.errors import InputError
from conchcheck.sources import read_tools
from conchcheck.sources.mcp import MAX_MESSAGE_BYTES
from conchcheck.sources.mcp_http import read_http_tools
from tests.emulators.mcp_http import SESSION, VERSION, McpHttpEmulator, tool
from tests.emulators.server import EmulatorServer, Handler, Response

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
    # The session and the version the server chose go on everything after initialize.
    assert emulator.seen == [
        ("initialize", None, None),
        ("notifications/initialized", SESSION, VERSION),
        ("tools/list", SESSION, VERSION),
        ("tools/list", SESSION, VERSION),
    ]
    assert json.loads(server.received[0].body)["params"]["protocolVersion"] == "2025-06-18"
    assert [json.loads(r.body).get("params") for r in server.received[2:]] == [
        {},
        {"cursor": "2"},
    ]


def test_server_that_never_answers_meets_the_deadline(serve: Serve) -> None:
    server = serve(McpHttpEmulator(TOOLS, hang_on="initialize"))
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        read_http_tools(server.url, deadline=1.0)
    assert 1.0 <= time.monotonic() - started < 4.0
    assert str(caught.value) == (
        f"The MCP server at {server.url} failed on initialize: no answer within the deadline."
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
            "failed on initialize: a text/html body that is not JSON.",
            id="html-page",
        ),
        pytest.param(
            Response(200, b"x" * (MAX_MESSAGE_BYTES + 10), {"content-type": "application/json"}),
            f"failed on initialize: a reply larger than {MAX_MESSAGE_BYTES} bytes.",
            id="oversized-reply",
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
            "answered initialize without a response.",
            id="no-response",
        ),
    ],
)
def test_bad_replies(serve: Serve, response: Response, message: str) -> None:
    server = serve(lambda received: response)
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
        f"The MCP server at {url} failed on initialize: ConnectError:"
    )
    assert "\n" not in str(caught.value)
