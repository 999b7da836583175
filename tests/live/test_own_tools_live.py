"""Live: a real model's tools from a real MCP server, over llama.cpp's Responses API.

SmolLM2 with the Hermes template behind llama-server's ``/v1/responses``, probed with the
tools of the real ``mcp-server-time`` (started over stdio by the probe, and stopped):
``conchcheck probe llamacpp:… --api responses --tools "mcp:stdio:python -m mcp_server_time"``.
The assertions are what the server does with the tools, not what the tiny model writes.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.results import Outcome, Stage
from conchcheck.results.reader import read_results
from scripts import local_model
from tests.live.conftest import StartServer

pytestmark = pytest.mark.live
TIME = f"mcp:stdio:{shlex.quote(sys.executable)} -m mcp_server_time"
TOOLS = ["get_current_time", "convert_time"]


@pytest.fixture(scope="module")
def probed(
    start_server: StartServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    server = start_server("smollm2-hermes")
    out = tmp_path_factory.mktemp("own-tools-responses")
    try:
        target = f"llamacpp:{local_model.CONFIGS[server.config].target}"
        result = CliRunner().invoke(
            app, ["probe", target, "--base-url", server.url + "/v1", "--api", "responses",
                  "--tools", TIME, "--out", str(out), "--json",
                  "--cache", str(out / "capabilities.yaml")],
        )  # fmt: skip
    finally:
        server.stop()
    assert result.exit_code == 0, result.stderr
    probed = read_results(out / "results.json")  # validates against results.schema.json
    yield {
        "outcome": json.loads(result.stdout),
        "cells": probed.cells,
        "result": probed,
        "out": out,
    }


def test_the_servers_tools_are_the_matrix(probed: dict[str, Any]) -> None:
    result = probed["result"]
    assert result.matrix == "own-tools"
    assert [(t.name, t.source, t.protocol) for t in result.own_tools] == [
        (n, TIME, "2025-06-18") for n in TOOLS
    ]
    # mcp-server-time's schemas give no example or default: the model chooses every value.
    assert [[(a.name, a.origin) for a in t.smoke or ()] for t in result.own_tools] == [
        [("timezone", "model")],
        [("source_timezone", "model"), ("time", "model"), ("target_timezone", "model")],
    ]


def test_every_request_went_to_the_responses_endpoint(probed: dict[str, Any]) -> None:
    paths = {
        (c.stage, c.request.url.split("/", 3)[3]) for c in probed["cells"] if c.request is not None
    }
    # The catalogue reads llama.cpp's /props; every chat request went to /v1/responses.
    assert {path for stage, path in paths if stage is not Stage.CATALOGUE} == {"v1/responses"}
    assert {path for stage, path in paths if stage is Stage.CATALOGUE} == {"props"}
    assert {Stage.REACH, Stage.DIALECT, Stage.NATIVE, Stage.WORDS} <= {s for s, _ in paths}


def test_llamacpp_takes_both_schemas_with_strict_true_and_false(probed: dict[str, Any]) -> None:
    dialect = {(c.case, c.dialect): c.outcome for c in probed["cells"] if c.stage is Stage.DIALECT}
    # llama-server 0.3.36 takes strict as given and applies none of strict mode's rules, so
    # mcp-server-time's open schemas pass where OpenAI's strict mode would refuse them.
    assert dialect == {
        (tool, dialect): Outcome.ACCEPTED
        for tool in TOOLS
        for dialect in ("permissive", "strict_mode")
    }
    flags = {
        tool["strict"]
        for c in probed["cells"]
        if c.stage is Stage.DIALECT and c.request is not None
        for tool in c.request.body["tools"]
    }
    assert flags == {False, True}
    verdict = probed["outcome"]["result"]["verdict"]
    assert verdict["dialect"]["dialect"] == "permissive"
    # llama-server never reads strict (provider-facts, measured by hand 2026-12-04), and
    # mcp-server-time's schemas leave optional fields that OpenAI's strict mode refuses
    # (S25): taking them with strict: true shows strict mode ignored.
    assert (
        "Strict mode (strict: true) is ignored: the endpoint took 2 schema cases that strict "
        "mode must refuse (convert_time, get_current_time: an open object or an optional "
        "property), so its calls are not held to the schema."
    ) in verdict["findings"]


def test_each_tool_has_its_smoke_prompt_natively_and_in_words(probed: dict[str, Any]) -> None:
    prompts = sorted(
        (c.case, c.stage.value) for c in probed["cells"] if c.stage in (Stage.NATIVE, Stage.WORDS)
    )
    assert prompts == sorted(
        (f"smoke-{tool}", stage) for tool in TOOLS for stage in ("native", "words")
    )


def test_the_report_has_the_your_tools_section(probed: dict[str, Any]) -> None:
    report = (probed["out"] / "report.md").read_text()
    section = report[report.index("## Your tools") : report.index("## Prompts")]
    # mcp-server-time (SDK 1.30) is of the initialize era: it agreed on 2025-06-18.
    assert f"2 tools from `{TIME}` (MCP 2025-06-18)." in section
    assert "| tool | permissive | strict_mode | smoke (native) | smoke (words) |" in section
    assert "Sent unchanged in every dialect: `get_current_time`, `convert_time`." in section
