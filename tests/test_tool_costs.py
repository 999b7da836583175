"""`--checks cost` end to end on a loopback emulator whose usage counts the tools it kept:
each tool's marginal prompt tokens in every dialect, the capacity point found by the search
(a model that stops calling past N tools; a window that drops tools from the front without a
word, as Ollama's does), and the section in results.json, the report and the capability file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile
from conchcheck.cli import app
from conchcheck.core.toolcost import NEEDLE_PROMPT, NEEDLE_TICKET
from conchcheck.results.reader import read_results
from tests.emulators.server import EmulatorServer, Handler, Received, Response

Serve = Callable[[Handler], EmulatorServer]
BASE = 10


def tokens(tool: dict[str, Any]) -> int:
    """What one tool costs this emulator: a quarter of its JSON's characters."""
    return len(json.dumps(tool, sort_keys=True)) // 4


class CostEmulator:
    """Answers ok to everything, with usage counting the tools it kept; calls the needle
    when it kept it and was sent at most ``calls_up_to`` tools. ``keeps``: only the last
    ``keeps`` tools reach the model (a window that cuts the prompt from the front)."""

    def __init__(self, calls_up_to: int, keeps: int | None = None) -> None:
        self.calls_up_to = calls_up_to
        self.keeps = keeps

    def __call__(self, received: Received) -> Response:
        if received.method == "GET":
            return Response.json({"error": {"message": "Not Found"}}, 404)
        body = received.json()
        tools = body.get("tools") or []
        kept = tools if self.keeps is None else tools[-self.keeps :]
        usage = {"prompt_tokens": BASE + sum(tokens(t) for t in kept), "completion_tokens": 1}
        message: dict[str, Any] = {"role": "assistant", "content": "ok"}
        asked = body["messages"][-1]["content"] == NEEDLE_PROMPT
        names = [t["function"]["name"] for t in kept]
        if asked and "get_ticket_status" in names and len(tools) <= self.calls_up_to:
            arguments = json.dumps({"ticket_id": NEEDLE_TICKET})
            call = {"id": "call_1", "type": "function",
                    "function": {"name": "get_ticket_status", "arguments": arguments}}  # fmt: skip
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls" if "tool_calls" in message else "stop"
        return Response.json(
            {"choices": [{"index": 0, "message": message, "finish_reason": finish}],
             "usage": usage, "model": body["model"], "object": "chat.completion"}
        )  # fmt: skip


def probe(serve: Serve, tmp_path: Path, emulator: CostEmulator) -> tuple[Any, EmulatorServer]:
    server = serve(emulator)
    result = CliRunner().invoke(
        app,
        ["probe", "vllm:m", "--base-url", f"{server.url}/v1", "--checks", "cost",
         "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache.yaml"), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return read_results(tmp_path / "out" / "results.json"), server


@pytest.mark.parametrize(
    ("emulator", "capacity", "point", "why"),
    [
        pytest.param(
            CostEmulator(calls_up_to=12), 12, 13,
            "With 13 tools the tool asked for was not called.",
            id="stops-calling-past-twelve",
        ),
        pytest.param(
            CostEmulator(calls_up_to=1000, keeps=6), 6, 7,
            "With 7 tools the prompt grew less than the tools added: the endpoint dropped"
            " tools without a word.",
            id="a-window-that-drops-tools-from-the-front",
        ),
    ],
)  # fmt: skip
def test_what_each_tool_costs_and_the_capacity_point(
    serve: Serve, tmp_path: Path, emulator: CostEmulator, capacity: int, point: int, why: str
) -> None:
    result, server = probe(serve, tmp_path, emulator)
    costs = result.verdict.tool_costs
    assert costs is not None
    # Each tool costs what it added to its prefix, as the emulator counted it: over the four
    # dialects, the costs of a tool are what its prefixes' last tool cost the emulator.
    counted: dict[str, list[int]] = {}
    for received in server.received:
        body = received.json() if received.method == "POST" else {}
        if body.get("max_tokens") == 1 and body.get("tools"):
            last = body["tools"][-1]
            counted.setdefault(last["function"]["name"], []).append(tokens(last))
    measured = {
        d: {c.tool: c.tokens[d] for c in costs.tools if c.tokens.get(d) is not None}
        for d in ("permissive", "anthropic", "gemini", "strict")
    }
    if emulator.keeps is None:
        assert {c.tool: sorted(set(c.tokens.values())) for c in costs.tools} == {
            name: sorted(set(values)) for name, values in counted.items()
        }
        assert len(costs.tools) == 15 and costs.baseline == BASE
    # A prefix a dialect leaves byte for byte as another did is not sent again: anthropic's
    # fifteen (every default tool has an object root), gemini's first (remember, as written)
    # and strict's first three (as gemini wrote them).
    prefixes = [c for c in result.cells if c.id.startswith("cost/") and c.id != "cost/none"]
    twins = [c for c in prefixes if c.requests == 0]
    assert (len(prefixes), len(twins)) == (4 * 15, 19)
    assert sum(len(values) for values in counted.values()) == 4 * 15 - len(twins)
    assert [c.tool for c in costs.tools][:3] == ["remember", "get_weather", "add_event"]
    assert (costs.capacity, costs.point, costs.why, costs.dialect) == (
        capacity,
        point,
        why,
        "permissive",
    )
    # The capability file keeps each tool's tokens in the dialect and the capacity.
    entry = CapabilityFile(tmp_path / "cache.yaml").entries()[0]
    assert entry.capacity == capacity
    assert entry.tokens_per_tool == measured["permissive"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## What the tools cost" in report
    assert f"**Capacity**: {capacity} tools (tools in the permissive dialect). {why}" in report


def test_cost_is_not_in_the_default_checks(serve: Serve, tmp_path: Path) -> None:
    from conchcheck.probe import DEFAULT_CHECKS, Check

    assert Check.COST not in DEFAULT_CHECKS
    assert set(DEFAULT_CHECKS) == {Check.DIALECT, Check.MODE, Check.KNOBS, Check.STREAMING}
