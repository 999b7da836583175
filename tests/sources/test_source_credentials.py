"""Credentials written inside a ``--tools`` source, through the real command line.

A token in an MCP URL (a query value, the userinfo, a path segment) or on a stdio server's
command line (``--token=T``) reaches the server it is for, and nothing else: not stdout,
stderr, results.json (``run.command``, ``own_tools[].source``, each cell's feature),
report.md, report.html, junit.xml, the recording or a request to the provider.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import pytest

from conchcheck.errors import InputError
from conchcheck.sources import read_tools
from tests.sources.test_hostile_sources import Probed, Serve, http_server, leaks, probe, stdio
from tests.test_secrets import forms

SOURCE_TOKEN = "tok3nQ8v2Lm5Rx9Wp4Zj7Hd1Kc6"
"""A token written in a source: shaped like nothing known but a long mix of letters and
digits, so a path segment holding it is taken for one."""


def nowhere(probed: Probed, token: str) -> list[str]:
    """``leaks(probed)``, and where any form of ``token`` shows: stdout, stderr, a file, a
    request to the provider (its headers too)."""
    places = {"stdout": probed.stdout, "stderr": probed.stderr, **probed.files}
    places |= {f"request {i}": body for i, body in enumerate(probed.sent)}
    places |= {f"request {i}'s headers": head for i, head in enumerate(probed.heads)}
    found = {where for where, text in places.items() for f in forms(token) if f in text}
    return sorted({*leaks(probed), *found})


BASIC = "Basic " + base64.b64encode(f"user:{SOURCE_TOKEN}".encode()).decode()


@pytest.mark.parametrize(
    ("source", "shown", "reached"),
    [
        pytest.param("mcp:{url}/mcp?token={T}", "mcp:{url}/mcp?token=[redacted]", ("/mcp", {"token": [SOURCE_TOKEN]}, None), id="token-in-the-query"),
        pytest.param("mcp:http://user:{T}@{host}/mcp", "mcp:http://user:[redacted]@{host}/mcp", ("/mcp", {}, BASIC), id="token-as-the-password"),
        pytest.param("mcp:{url}/mcp/{T}/", "mcp:{url}/mcp/[redacted]/", (f"/mcp/{SOURCE_TOKEN}/", {}, None), id="token-as-a-path-segment"),
        pytest.param("mcp:stdio:{cmd} --token={T}", "mcp:stdio:{cmd} --token=[redacted]", None, id="token-as-a-stdio-flag"),
    ],
)  # fmt: skip
def test_a_token_in_a_source_is_masked_everywhere(
    serve: Serve,
    tmp_path: Path,
    source: str,
    shown: str,
    reached: tuple[str, dict[str, list[str]], str | None] | None,
) -> None:
    server = http_server(serve, "ping")
    command = stdio("ping", tmp_path / "child.pid")
    host = server.url.removeprefix("http://")
    values = {"url": server.url, "host": host, "cmd": command, "T": SOURCE_TOKEN}
    source, shown = source.format(**values), shown.format(**values)
    record = tmp_path / "recording.json"
    probed = probe(serve, tmp_path, source, "--record", str(record))
    assert probed.code == 0, probed.stderr
    assert nowhere(probed, SOURCE_TOKEN) == []
    results = json.loads(probed.files["out/results.json"])
    assert results["run"]["command"].endswith(f" --tools {shown} --record {record}")
    [own] = results["own_tools"]
    assert own["source"] == shown
    features = {c["extra"]["feature"] for c in results["cells"] if c["stage"] == "dialect"}
    assert features == {f"your tool, from {shown}"}
    # The reports name the source (junit.xml and the recording don't: nothing to mask there).
    assert shown in probed.files["out/report.md"]
    assert html.escape(shown) in probed.files["out/report.html"]
    if reached is not None:
        # The server the token is for got it, every time.
        got = {(r.path, str(r.query), r.headers.get("authorization")) for r in server.received}
        assert got == {(reached[0], str(reached[1]), reached[2])}


@pytest.mark.parametrize(
    ("source", "line"),
    [
        pytest.param("mcp:{url}/mcp?token={T}", "conchcheck: The MCP server at {url}/mcp?token=[redacted] failed on initialize: HTTP 401: Bearer [redacted] is not valid for this server. Check that the command or URL starts an MCP server that answers tools/list.", id="url-in-a-failure"),
        pytest.param("mcp:stdio:{chatter} --token={T}", "conchcheck: The MCP server `{chatter} --token=[redacted]` wrote a line that is not JSON-RPC on stdout ('Starting hostile MCP server v1.0 (press Ctrl-C to quit)'). An MCP stdio server writes only JSON-RPC on stdout; logs go to stderr.", id="command-in-a-failure"),
    ],
)  # fmt: skip
def test_a_token_in_a_failing_source_is_masked_in_its_one_line(
    serve: Serve, tmp_path: Path, source: str, line: str
) -> None:
    # The 401 echoes the token it was sent: the URL's, held since the source was read.
    server = http_server(serve, "echo-401", echoed=SOURCE_TOKEN)
    chatter = stdio("chatter", tmp_path / "child.pid")
    values = {"url": server.url, "chatter": chatter, "T": SOURCE_TOKEN}
    probed = probe(serve, tmp_path, source.format(**values))
    assert probed.code == 2
    assert (probed.stdout, probed.stderr) == ("", line.format(**values) + "\n")
    assert nowhere(probed, SOURCE_TOKEN) == []


@pytest.mark.parametrize(
    ("source", "headers", "message"),
    [
        pytest.param("mcp:{url}/mcp?token={T}", {}, "The MCP server at {url}/mcp?token=[redacted] failed on initialize: HTTP 401: Bearer [redacted] is not valid for this server.", id="url-query"),
        pytest.param("mcp:{url}/mcp", {"Authorization": f"Bearer {SOURCE_TOKEN}"}, "The MCP server at {url}/mcp failed on initialize: HTTP 401: [redacted] is not valid for this server.", id="header-echoed-whole"),
        pytest.param("mcp:stdio:{chatter} --token={T}", {}, "The MCP server `{chatter} --token=[redacted]` wrote a line that is not JSON-RPC on stdout ('Starting hostile MCP server v1.0 (press Ctrl-C to quit)').", id="stdio-flag"),
    ],
)  # fmt: skip
def test_read_tools_masks_what_its_source_and_headers_hold(
    serve: Serve, tmp_path: Path, source: str, headers: dict[str, str], message: str
) -> None:
    # A library caller that held nothing: the source's own credentials are masked all the same.
    server = http_server(serve, "echo-401", echoed=SOURCE_TOKEN)
    chatter = stdio("chatter", tmp_path / "child.pid")
    values = {"url": server.url, "chatter": chatter, "T": SOURCE_TOKEN}
    with pytest.raises(InputError) as caught:
        read_tools(source.format(**values), deadline=5.0, headers=headers)
    assert str(caught.value) == message.format(**values)


MCP_TOKEN = "mcpT0k3nZ9x8W7v6U5t4S3r2Q1p0"
"""The bearer token the MCP server wants, given with --tools-header."""
FROM_ENV = "Authorization: Bearer ${MCP_TOKEN}"


@pytest.mark.parametrize(
    ("header", "environ", "shown"),
    [
        pytest.param(FROM_ENV, {"MCP_TOKEN": MCP_TOKEN}, FROM_ENV, id="token-from-a-variable"),
        pytest.param(f"Authorization: Bearer {MCP_TOKEN}", {}, "Authorization: [redacted]", id="token-written-in-the-header"),
    ],
)  # fmt: skip
def test_a_header_goes_with_every_request_to_the_mcp_server_and_nowhere_else(
    serve: Serve, tmp_path: Path, header: str, environ: dict[str, str], shown: str
) -> None:
    server = http_server(serve, "needs-bearer", echoed=MCP_TOKEN)
    source = f"mcp:{server.url}/mcp"
    probed = probe(serve, tmp_path, source, "--tools-header", header, environ=environ)
    assert probed.code == 0, probed.stderr
    assert nowhere(probed, MCP_TOKEN) == []
    asked = [(r.json()["method"], r.headers.get("authorization")) for r in server.received]
    bearer = f"Bearer {MCP_TOKEN}"
    assert asked == [
        ("server/discover", bearer),
        ("initialize", bearer),
        ("notifications/initialized", bearer),
        ("tools/list", bearer),
    ]
    results = json.loads(probed.files["out/results.json"])
    assert results["run"]["command"].endswith(f" --tools {source} --tools-header {shown}")
    [own] = results["own_tools"]
    assert own["name"] == "ping"


def test_without_the_header_the_server_refuses_in_one_line(serve: Serve, tmp_path: Path) -> None:
    server = http_server(serve, "needs-bearer", echoed=MCP_TOKEN)
    probed = probe(serve, tmp_path, f"mcp:{server.url}/mcp", environ={"MCP_TOKEN": MCP_TOKEN})
    assert probed.code == 2
    assert (probed.stdout, probed.stderr) == ("", f"conchcheck: The MCP server at {server.url}/mcp failed on initialize: HTTP 401: Unauthorized. Check that the command or URL starts an MCP server that answers tools/list.\n")  # fmt: skip
    assert probed.files == {} and probed.sent == []
