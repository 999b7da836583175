"""``probe --tools`` with real MCP servers of the 2026-07-28 revision: the MCP Python SDK
2.3.0 (its own virtualenv) over stdio and over streamable HTTP, against an emulated
OpenAI-compatible provider. The tools are the servers' exactly; results.json and the report
name the revision each server was spoken to in."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix.own import own_matrix
from conchcheck.sources import read_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler
from tests.sources import servers
from tests.sources.test_mcp_sdk import SEARCH_MAIL, SET_ORDER

Serve = Callable[[Handler], EmulatorServer]


def test_probe_with_the_sdk_servers_over_stdio_and_http(serve: Serve, tmp_path: Path) -> None:
    paged = servers.sdk_stdio("paged")
    with servers.sdk_http() as url:
        sources = [paged, f"mcp:{url}"]
        matrix = own_matrix([(s, read_tools(s)) for s in sources])
        provider = serve(OpenAIEmulator(oracle(matrix)))
        out = tmp_path / "out"
        args = ["probe", "vllm:m", "--base-url", f"{provider.url}/v1", "--out", str(out),
                "--quiet", "--json", "--tools", paged, "--tools", f"mcp:{url}"]  # fmt: skip
        done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.stderr
    verdict = json.loads(done.stdout)["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"]) == ("permissive", "native")
    results = json.loads((out / "results.json").read_text())
    assert [
        (t["name"], t["source"], t["parameters"], t["protocol"]) for t in results["own_tools"]
    ] == [
        *((f"tool_{i}", paged, {"type": "object"}, "2026-07-28") for i in range(3)),
        ("search_mail", sources[1], SEARCH_MAIL, "2026-07-28"),
        ("set_order", sources[1], SET_ORDER, "2026-07-28"),
    ]
    report = (out / "report.md").read_text()
    assert f"5 tools from `{paged}` (MCP 2026-07-28), `{sources[1]}` (MCP 2026-07-28)." in report
    # The smoke prompts read the SDK's schemas: `order` takes its first enum value, and
    # `query` (pydantic gives it no example) is the model's to choose.
    assert "- `search_mail`: `query` chosen by the model (the schema gives no value)" in report
    assert '- `set_order`: `order = "newest"` (enum)' in report
