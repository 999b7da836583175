"""`conchcheck probe` end to end against a server that loses calls in the reasoning (issue 21,
7): an OpenAI-compatible emulator on loopback whose model writes every native call inside its
reasoning, in ``reasoning_content`` (vLLM's reasoning parser keeping it, vllm#39056) or in
``<think>`` in the content (a server with no reasoning parser). Every native prompt that wants
a call is ``swallowed`` (never ``no_call``), with the fix for the server at hand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.profiles import swallows_calls
from tests.emulators.server import EmulatorServer, Handler
from tests.test_probe_profiles import probe, written

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
CALLING = sorted(p.id for p in MATRIX.prompts if not p.expect.no_call)
QUIET = sorted(p.id for p in MATRIX.prompts if p.expect.no_call)


@pytest.mark.parametrize(
    ("in_text", "target", "where", "fix", "finding"),
    [
        pytest.param(False, "vllm:m", "the reasoning channel",
                     "start vLLM with the model's own --reasoning-parser (qwen3", [],
                     id="reasoning-content-vllm"),
        pytest.param(True, "llamacpp:m", "reasoning written in the text",
                     "turn thinking off with --reasoning off", ["reasoning_in_content"],
                     id="think-in-content-llamacpp"),
    ],
)  # fmt: skip
def test_calls_only_in_the_reasoning_are_swallowed(
    serve: Serve,
    tmp_path: Path,
    in_text: bool,
    target: str,
    where: str,
    fix: str,
    finding: list[str],
) -> None:
    server = serve(OpenAIEmulator(swallows_calls(oracle(MATRIX), in_text=in_text)))
    code, _, _, err = probe(server, target, tmp_path)
    assert code == 0, err
    results = written(tmp_path)
    native = {c["case"]: c for c in results["cells"] if c["stage"] == "native"}
    assert {case: c["outcome"] for case, c in native.items()} == (
        dict.fromkeys(CALLING, "swallowed") | dict.fromkeys(QUIET, "pass")
    )
    weather = native["weather-enum"]
    assert weather["detail"].startswith(
        f"The call to get_weather was written in {where} and never emitted; read from it, it "
        "would be pass. The model wrote its call in its reasoning, and the server never "
        "emitted it: "
    )
    assert fix in weather["detail"]
    assert [f["code"] for f in weather["findings"]] == [*finding, "calls_in_reasoning"]
    assert weather["reply"]["calls"] == []
    # The reasoning is evidence of its own, never the reply's words.
    reasoning = weather["reply"]["reasoning"]
    if in_text:
        assert reasoning is None and weather["reply"]["text"].startswith("<think>")
    else:
        assert reasoning.startswith("The user asks for this, so I call the tool.\n<tool_call>")
        assert weather["reply"]["text"] == ""
    assert weather["reading"]["text"] in ("", "\nOne moment.")
    # A swallowed cell is a failed native cell: not passed, not a refusal, not "no call".
    rates = results["verdict"]["native"]
    assert (rates["total"], rates["passed"], rates["no_call"], rates["refused_tools"]) == (
        len(CALLING) + len(QUIET),
        len(QUIET),
        0,
        0,
    )
    assert results["verdict"]["mode"] == "words"
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"{len(CALLING)} swallowed" in report
