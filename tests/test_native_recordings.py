"""The live probes of Qwen2.5-Coder-0.5B on llama-server with the derived template
(configuration qwen-coder-native, tests/live/test_qwen_native.py), replayed offline from
tests/data/recordings/ (no server, no network): chat with the default matrix, the Responses
and Anthropic Messages APIs with the focus matrix.

Recorded by ``python -m scripts.record_live qwen-coder-native``. The first real model whose
native calls a real server parses: the verdict is native on every API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conchcheck.results import CatalogueFacts, Cell, CellMode, Outcome, Stage, StreamFacts
from conchcheck.results.reader import read_results
from conchcheck.run import ProbeSpec, build, execute

RECORDINGS = Path(__file__).parent / "data" / "recordings"
FOCUS = str(RECORDINGS / "focus.yaml")
UNPARSED = "The model produced output that does not match the expected peg-native format"
RUNS = {
    "chat": ("qwen-coder-native.default", "default", None),
    "responses": ("qwen-coder-native.responses", FOCUS, "responses"),
    "anthropic": ("qwen-coder-native.anthropic", FOCUS, "anthropic"),
}


def replay(api: str, tmp_path: Path) -> dict[str, Any]:
    name, matrix, family = RUNS[api]
    recording = RECORDINGS / f"{name}.json"
    target = json.loads(recording.read_text())["target"]
    out = tmp_path / name
    spec = ProbeSpec(
        target,
        matrix=matrix,
        api_family=family,
        out_dir=out,
        capability_file=tmp_path / "caps.yaml",
        replay=recording,
    )
    outcome = execute(build(spec))
    result = read_results(out / "results.json")
    return {"outcome": outcome, "cells": result.cells, "result": result, "out": out}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {api: replay(api, tmp_path_factory.mktemp(api)) for api in RUNS}


def native(run: dict[str, Any]) -> dict[str, Cell]:
    return {c.case: c for c in run["cells"] if c.stage is Stage.NATIVE}


@pytest.mark.parametrize("api", list(RUNS))
def test_native_on_every_api(runs: dict[str, dict[str, Any]], api: str) -> None:
    run = runs[api]
    verdict = run["result"].verdict
    assert (verdict.mode, verdict.dialect.dialect) == ("native", "permissive"), verdict.reason
    assert verdict.tools_observed is True and verdict.leaks == ()
    assert run["outcome"].exit_code == 0
    cells = native(run)
    for case, tool in (("weather-enum", "get_weather"), ("remember-fact", "remember")):
        assert cells[case].outcome is Outcome.PASS, (case, cells[case].detail)
        assert cells[case].reply is not None
        assert [c.name for c in cells[case].reply.calls] == [tool]  # type: ignore[union-attr]


# Every native prompt is streamed beside its whole request. On chat and Messages every pair
# agrees (the three the server couldn't parse agree as unparsed both ways); the Responses
# API's pairs are in tests/test_knob_recordings.py (its streams need their deltas repaired).
AGREE = {
    "chat": {
        "boolean-argument": 1, "choose-among-ten": 1, "follow-up-code-word": 1,
        "forced-choice": 1, "integer-argument": 1, "nested-object": None, "no-tool-needed": 0,
        "parallel-calls": None, "remember-fact": 1, "three-arguments": None, "weather-enum": 1,
    },
    "anthropic": {"forced-choice": 1, "no-tool-needed": 0, "remember-fact": 1, "weather-enum": 1},
}  # fmt: skip


@pytest.mark.parametrize("api", list(AGREE))
def test_streams_agree(runs: dict[str, dict[str, Any]], api: str) -> None:
    checks = [
        c for c in runs[api]["cells"] if c.stage is Stage.FOLLOW_UP and c.mode is CellMode.STREAMING
    ]
    assert all(c.outcome is Outcome.PASS for c in checks), [(c.id, c.detail) for c in checks]
    calls = {
        c.case: c.facts.native.native_calls if isinstance(c.facts, StreamFacts) and c.facts.native
        else None
        for c in checks
    }  # fmt: skip
    assert calls == AGREE[api]


@pytest.mark.parametrize("api", list(RUNS))
def test_invalid_schemas_are_refused(runs: dict[str, dict[str, Any]], api: str) -> None:
    dialect = runs[api]["result"].verdict.dialect
    refused = {(r.case, r.kind) for r in dialect.refused if r.dialect == "permissive"}
    assert refused == {("dangling-ref", "schema"), ("unknown-type", "schema")}
    assert dialect.invalid_accepted == ()


def test_chat_catalogue_and_rates(runs: dict[str, dict[str, Any]]) -> None:
    chat = runs["chat"]
    catalogue = next(c for c in chat["cells"] if c.stage is Stage.CATALOGUE)
    assert catalogue.facts == CatalogueFacts(None, True, 2048)
    verdict = chat["result"].verdict
    # 8 of 11 by hand with the old forced-choice prompt (it forced the tool asked for); the
    # model's own template gave 1 of 11 (qwen-coder.default). Forcing remember on a weather
    # question is ignored on chat (llama-server replaces an object tool_choice by "auto":
    # "Wrong type supplied for parameter 'tool_choice'"), so that prompt fails: 7 of 11.
    assert (verdict.native.passed, verdict.native.total) == (7, 11)
    assert (verdict.words.passed, verdict.words.total) == (5, 11)
    passed = sorted(case for case, c in native(chat).items() if c.outcome is Outcome.PASS)
    assert passed == [
        "boolean-argument", "choose-among-ten", "follow-up-code-word", "integer-argument",
        "no-tool-needed", "remember-fact", "weather-enum",
    ]  # fmt: skip
    forced = native(chat)["forced-choice"]
    assert forced.outcome is Outcome.WRONG_TOOL
    assert [f.code for f in forced.findings] == ["forced_choice_ignored"]
    assert (
        (chat["out"] / "report.md")
        .read_text()
        .startswith(
            "**llamacpp:qwen2.5-coder-0.5b** — dialect **permissive**, mode **native** "
            "(native 7/11, 7 clean; words 5/11, 5 clean)"
        )
    )
    assert verdict.reason.endswith("Best measured: native as is, 7/11 (64%).")


def test_a_fenced_call_is_the_servers_500(runs: dict[str, dict[str, Any]]) -> None:
    cells = native(runs["chat"])
    unparsed = [c for c in cells.values() if c.reply is not None and c.reply.status == 500]
    # The model fenced its JSON for these three; the template's parser failed on the fence.
    assert sorted(c.case for c in unparsed) == [
        "nested-object",
        "parallel-calls",
        "three-arguments",
    ]
    for cell in unparsed:
        assert cell.reply is not None and UNPARSED in (cell.reply.body or "")
        assert cell.outcome is not Outcome.REFUSED and cell.requests == 1


@pytest.mark.parametrize("api", list(RUNS))
def test_recordings_are_small_valid_and_hold_no_paths(api: str) -> None:
    from conchcheck.jsonschemas import problems

    text = (RECORDINGS / f"{RUNS[api][0]}.json").read_text()
    assert len(text.encode()) < 2 << 20
    assert problems("recording", json.loads(text)) == []
    for place in ("/root/", "/home/", "/tmp/", "/work/", "/Users/", "C:\\\\"):
        assert place not in text, place
