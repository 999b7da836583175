"""Live: ``tools export`` from the results of the real llama.cpp server and of a Gemini
gateway (an emulator on loopback), probed with the same small tools file.

llama-server 0.3.36 (SmolLM2 with the Hermes template) can't render a ``type`` list: the
template's Jinja fails on it ("Object key of unhashable type: Array") and the server refuses
the request, in the permissive and the anthropic dialect alike, so its verdict is gemini, as
the gateway's is. The file written is in the gemini dialect, each change forced by both, with
llama-server's refusal named as the evidence, and it reads back as ``probe --tools`` reads it.
Only the dialect stage runs (``--checks dialect``): what the server does with the schemas,
not what the model writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import to_dialect
from conchcheck.matrix.own import own_matrix
from conchcheck.sources import read_tools
from scripts import local_model
from tests.emulators import profiles
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler
from tests.live.conftest import StartServer

pytestmark = pytest.mark.live
Serve = Callable[[Handler], EmulatorServer]
TOOLS = """\
tools:
  - name: open_issue
    description: Open an issue in a repository.
    parameters:
      type: object
      properties:
        repo: {type: string, format: uri}
        title: {type: string, minLength: 1}
        labels: {type: [array, "null"], items: {type: string}}
      required: [repo, title]
      additionalProperties: false
"""


def test_llamacpp_and_a_gemini_gateway_share_one_tools_file(
    start_server: StartServer, serve: Serve, tmp_path: Path
) -> None:
    source = tmp_path / "tools.yaml"
    source.write_text(TOOLS)
    runner = CliRunner()
    server = start_server("smollm2-hermes")
    try:
        target = f"llamacpp:{local_model.CONFIGS[server.config].target}"
        done = runner.invoke(
            app, ["probe", target, "--base-url", server.url + "/v1", "--tools", str(source),
                  "--checks", "dialect", "--out", str(tmp_path / "llamacpp"), "--quiet",
                  "--timeout", "600", "--cache", str(tmp_path / "capabilities.yaml")],
        )  # fmt: skip
    finally:
        server.stop()
    assert done.exit_code == 0, done.stderr
    gateway = serve(
        profiles.gemini_gateway(oracle(own_matrix([(str(source), read_tools(str(source)))])))
    )
    done = runner.invoke(
        app, ["probe", "vllm:gemini-gateway", "--base-url", f"{gateway.url}/v1", "--tools",
              str(source), "--checks", "dialect", "--out", str(tmp_path / "gateway"), "--quiet"],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    out = tmp_path / "fleet.json"
    done = runner.invoke(
        app, ["tools", "export", "--tools", str(source), "--from", str(tmp_path / "llamacpp"),
              "--from", str(tmp_path / "gateway"), "--out", str(out), "--json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)
    assert [(t["name"], t["dialect"]) for t in data["targets"]] == [
        (target, "gemini"),
        ("vllm:gemini-gateway", "gemini"),
    ]
    assert data["dialect"] == "gemini"
    assert [(c["path"], c["forced_by"]) for c in data["changes"]] == [
        (path, [target, "vllm:gemini-gateway"])
        for path in (
            "$.properties.repo.format",
            "$.properties.repo.description",
            "$.properties.labels.type",
            "$.properties.labels.nullable",
            "$.additionalProperties",
        )
    ]
    assert [(r["target"], r["dialects"], r["reason"]) for r in data["refusals"]] == [
        (target, ["permissive", "anthropic"], "schema: type"),
        ("vllm:gemini-gateway", ["permissive", "anthropic"], "schema: type"),
    ]
    [written] = read_tools(str(out))
    assert dict(written.parameters) == to_dialect(
        dict(read_tools(str(source))[0].parameters), "gemini"
    )
