"""The live llama.cpp probes, replayed offline from tests/data/recordings/ (no server, no
network): the verdict and findings tests/live asserts, and the same results on every replay.

Recorded by ``python -m scripts.record_live`` from real llama-server runs (Qwen2.5-Coder-0.5B
with the default and the without-need matrices; SmolLM2 with its own template). A replay
answers every request from the recording, so a change in conchcheck that sends another
request, or reads a reply another way, shows here as a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conchcheck.matrix import load_matrix
from conchcheck.results import CatalogueFacts, Cell, CellMode, Outcome, Stage
from conchcheck.results.reader import read_results
from conchcheck.run import ProbeSpec, build, execute

RECORDINGS = Path(__file__).parent / "data" / "recordings"
MATRIX = load_matrix("default")
CALLING = [p.id for p in MATRIX.prompts if p.expect.calls]


def replay(name: str, tmp_path: Path, matrix: str = "default") -> dict[str, Any]:
    recording = RECORDINGS / f"{name}.json"
    target = json.loads(recording.read_text())["target"]
    out = tmp_path / name
    spec = ProbeSpec(
        target, matrix=matrix, out_dir=out, capability_file=tmp_path / "caps.yaml", replay=recording
    )
    outcome = execute(build(spec))
    result = read_results(out / "results.json")
    return {"outcome": outcome, "cells": result.cells, "result": result, "out": out}


def prompt_cells(run: dict[str, Any], mode: CellMode) -> dict[str, Cell]:
    stage = Stage.NATIVE if mode is CellMode.NATIVE else Stage.WORDS
    return {c.case: c for c in run["cells"] if c.stage is stage and c.mode is mode}


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return replay("qwen-coder.default", tmp_path_factory.mktemp("qwen"))


def test_qwen_coder_calls_in_neither_mode_well_enough(qwen: dict[str, Any]) -> None:
    verdict = qwen["result"].verdict
    assert (verdict.mode, verdict.dialect.dialect) == ("none", "permissive")
    assert (verdict.tools_declared, verdict.tools_observed) == (True, False)
    assert qwen["outcome"].exit_code == 0
    assert qwen["outcome"].message == "Dialect permissive, mode none."
    words = prompt_cells(qwen, CellMode.WORDS)
    passed = sorted(case for case, c in words.items() if c.outcome is Outcome.PASS)
    # Told to call remember, the 0.5B model still answers the weather question in words.
    assert passed == [
        "boolean-argument", "integer-argument", "no-tool-needed", "remember-fact",
        "three-arguments",
    ]  # fmt: skip
    assert (verdict.words.passed, verdict.words.total) == (5, 11)
    # What the verdict of none would hide: 7 more native replies held the right call as text
    # (and the fix is measured: 7 of 11 with the derived template, qwen-coder-native.default).
    assert [(o.route.value, o.share) for o in verdict.options] == [
        ("native_after_fix", "up to 8/11 (73%)"),
        ("from_text", "8/11 (73%)"),
        ("words", "5/11 (45%)"),
        ("native", "1/11 (9%)"),
    ]


def test_qwen_coder_leaks_plain_json(qwen: dict[str, Any]) -> None:
    native = prompt_cells(qwen, CellMode.NATIVE)
    assert {c.facts.native_calls for c in native.values()} == {0}
    leaked = sorted(case for case in CALLING if native[case].outcome is Outcome.LEAKED)
    assert len(leaked) * 2 >= len(CALLING), leaked
    assert {native[case].facts.leak.family for case in leaked} == {"plain_json"}
    verdict = qwen["result"].verdict
    assert [leak.family for leak in verdict.leaks] == ["plain_json"]
    assert "llama-server builds its call parser from the chat template" in verdict.leaks[0].fix
    assert "The catalogue declares tools, but the model never called natively." in verdict.findings


def test_qwen_coder_catalogue_and_greeting(qwen: dict[str, Any]) -> None:
    catalogue = next(c for c in qwen["cells"] if c.stage is Stage.CATALOGUE)
    assert catalogue.facts == CatalogueFacts(None, True, 2048)
    for mode in (CellMode.NATIVE, CellMode.WORDS):
        greeting = prompt_cells(qwen, mode)["no-tool-needed"]
        assert greeting.outcome is Outcome.PASS, (mode, greeting.detail)
        assert (greeting.reply.text or "").startswith("Hello!")  # type: ignore[union-attr]


def test_qwen_coder_calls_without_need(tmp_path: Path) -> None:
    run = replay("qwen-coder.without-need", tmp_path, str(RECORDINGS / "without-need.yaml"))
    native = prompt_cells(run, CellMode.NATIVE)["arithmetic"]
    assert native.outcome is Outcome.UNWANTED_CALL, native.detail
    assert "calls_leaked_as_text" in {f.code for f in native.findings}
    assert json.loads(native.reply.text or "")["name"] == "get_weather"  # type: ignore[union-attr]
    words = prompt_cells(run, CellMode.WORDS)["arithmetic"]
    assert words.outcome is Outcome.PASS and "4" in (words.reply.text or "")  # type: ignore[union-attr]


def without_clocks(path: Path) -> str:
    """results.json with the run's timestamps and every latency set to zero."""
    data = json.loads(path.read_text())
    data["run"]["started_at"] = data["run"]["finished_at"] = ""
    data["budget"]["stage_ms"] = dict.fromkeys(data["budget"]["stage_ms"], 0)
    data["budget"]["critical_path"] = None
    for cell in data["cells"]:
        cell["latency_ms"] = 0
    return json.dumps(data, sort_keys=True, indent=2)


def test_a_replay_is_the_same_every_time(qwen: dict[str, Any], tmp_path: Path) -> None:
    again = replay("qwen-coder.default", tmp_path)
    assert without_clocks(again["out"] / "results.json") == without_clocks(
        qwen["out"] / "results.json"
    )


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return replay("smollm2-own.default", tmp_path_factory.mktemp("smollm2"))


def test_smollm2_own_template_takes_no_tools(smollm2: dict[str, Any]) -> None:
    catalogue = next(c for c in smollm2["cells"] if c.stage is Stage.CATALOGUE)
    assert catalogue.facts == CatalogueFacts(None, False, 2048)
    permissive = {
        c.case: c
        for c in smollm2["cells"]
        if c.stage is Stage.DIALECT and c.dialect == "permissive"
    }
    # Tools never reach a template without tool support: every case passes, even invalid ones.
    assert {c.outcome for c in permissive.values()} == {Outcome.ACCEPTED}
    assert sorted(permissive) == sorted(c.id for c in MATRIX.schema_cases)
    native = [c for c in smollm2["cells"] if c.stage is Stage.NATIVE]
    assert native and {c.facts.native_calls for c in native} == {0}
    verdict = smollm2["result"].verdict
    assert verdict.dialect.dialect == "permissive" and verdict.mode != "native"


def test_smollm2_streams_agree_with_whole_replies(smollm2: dict[str, Any]) -> None:
    checks = [c for c in smollm2["cells"] if c.stage is Stage.FOLLOW_UP and c.mode == "streaming"]
    # Every native prompt streamed beside its whole request, each pair in the same batch.
    assert [c.outcome for c in checks] == [Outcome.PASS] * len(MATRIX.prompts)
    assert all(c.detail.startswith("Streamed and whole replies agree (") for c in checks)


@pytest.mark.parametrize("name", sorted(p.stem for p in RECORDINGS.glob("*.json")))
def test_recordings_are_small_valid_and_hold_no_paths(name: str) -> None:
    from conchcheck.jsonschemas import problems

    text = (RECORDINGS / f"{name}.json").read_text()
    assert len(text.encode()) < 2 << 20
    assert problems("recording", json.loads(text)) == []
    for place in ("/root/", "/home/", "/tmp/", "/work/", "/Users/", "C:\\\\"):
        assert place not in text, place
