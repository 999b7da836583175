"""A knob the API family has no way to say is recorded as not offered, and never sent: Ollama's
own chat API has no tool_choice, parallel control or strict flag (``api.ChatRequest``); Gemini's
``generateContent`` has tool choice (``functionCallingConfig``) but no parallel control and no
strict flag on a function declaration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.gemini_api import GeminiEmulator
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

MATRIX = load_matrix("default")
KEY = "gm-emulated-0123456789abcdef"


def handler(api: str) -> Handler:
    if api == "ollama":
        return OllamaEmulator({"m": (["completion", "tools"], 32768, oracle(MATRIX))})
    return GeminiEmulator(oracle(MATRIX), key=KEY)


@pytest.mark.parametrize(
    ("api", "path", "not_offered", "forbidden"),
    [
        (
            "ollama",
            "",
            ["tool_choice_none", "tool_choice_required", "tool_choice_named", "parallel_false",
             "strict"],
            ["tool_choice", "parallel_tool_calls", "strict", "toolConfig"],
        ),
        ("gemini", "/v1beta", ["parallel_false", "strict"], ["parallel_tool_calls", "strict"]),
    ],
    ids=["ollama-offers-no-knob", "gemini-offers-tool-choice-only"],
)  # fmt: skip
def test_a_knob_the_api_cannot_say_is_not_offered_and_never_sent(
    serve: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    api: str,
    path: str,
    not_offered: list[str],
    forbidden: list[str],
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "caps.yaml"))
    server: EmulatorServer = serve(handler(api))
    out = tmp_path / "out"
    done = CliRunner().invoke(
        app,
        ["probe", f"{api}:m", "--base-url", server.url + path, "--out", str(out), "--quiet"],
    )
    assert done.exit_code == 0, done.output
    results = json.loads((out / "results.json").read_text())
    knobs = results["verdict"]["knobs_and_losses"]["knobs"]
    assert sorted(k for k, state in knobs.items() if state == "not_offered") == sorted(not_offered)
    cells = {c["id"]: c for c in results["cells"]}
    for knob in not_offered:
        cell = cells[f"knobs/{knob}"]
        assert (cell["outcome"], cell["requests"]) == ("skipped", 0)
        assert cell["detail"] == (
            f"The {api} API has no way to say {knob}: not offered, nothing sent."
        )
    sent = [r.json() for r in server.received if r.method == "POST"]
    assert sent and all(not _has_key(body, forbidden) for body in sent)
    # The capability entry says not offered too: never a pass, never untested.
    entry = (tmp_path / "caps.yaml").read_text()
    for knob in not_offered:
        assert f"      {knob}: not_offered\n" in entry


def test_gemini_spells_tool_choice_in_function_calling_config(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "caps.yaml"))
    server: EmulatorServer = serve(handler("gemini"))
    done = CliRunner().invoke(
        app,
        ["probe", "gemini:m", "--base-url", server.url + "/v1beta", "--out",
         str(tmp_path / "out"), "--quiet"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    configs = [
        r.json()["toolConfig"]["functionCallingConfig"]
        for r in server.received
        if r.method == "POST" and "toolConfig" in (r.json() or {})
    ]
    assert {"mode": "NONE"} in configs and {"mode": "ANY"} in configs
    assert {"mode": "ANY", "allowedFunctionNames": ["remember"]} in configs


def _has_key(node: Any, keys: list[str]) -> bool:
    if isinstance(node, dict):
        return any(k in keys or _has_key(v, keys) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_key(v, keys) for v in node)
    return False
