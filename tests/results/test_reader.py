"""results.json read back: the whole typed result, every version still read, one-line errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.errors import InputError
from conchcheck.report import ReportFormat, render
from conchcheck.results import (
    CatalogueFacts,
    Cell,
    CellMode,
    Mode,
    NativeFacts,
    Outcome,
    ProbeResult,
    ReplyEvidence,
    RunInfo,
    SchemaFacts,
    Stage,
    StreamFacts,
)
from conchcheck.results.reader import read_results
from conchcheck.wire.providers import ApiFamily
from tests.report.conftest import build_result

LIVE = Path(__file__).parent.parent / "data" / "live"
INFO = RunInfo("0.1.0", "2026-03-01T09:00:00Z", "2026-03-01T09:01:13Z", "conchcheck probe x")


def _written(result: ProbeResult, tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(render(result, ReportFormat.JSON, INFO), encoding="utf-8")
    return path


def test_a_result_reads_back_whole(tmp_path: Path):
    result = build_result()
    assert read_results(_written(result, tmp_path)) == dataclasses.replace(result, run=INFO)


def test_read_back_writes_the_same_bytes(tmp_path: Path):
    text = _written(build_result(), tmp_path).read_text(encoding="utf-8")
    assert render(read_results(tmp_path / "results.json"), ReportFormat.JSON, INFO) == text


def _streaming(facts: StreamFacts) -> Cell:
    return Cell(
        "follow_up/streaming/weather", Stage.FOLLOW_UP, "weather", Outcome.PASS,
        mode=CellMode.STREAMING, facts=facts,
    )  # fmt: skip


WHOLE = ReplyEvidence(200, text="", body='{"choices": []}')


@pytest.mark.parametrize(
    "facts",
    [
        StreamFacts(NativeFacts(1, False), "pass", WHOLE),
        StreamFacts(NativeFacts(0, True), "no_call", None),
        StreamFacts(None, "error:timeout", None),
    ],
    ids=["whole-reply-kept", "whole-failed-no-reply", "streamed-had-no-native-facts"],
)
def test_stream_facts_read_back(facts: StreamFacts, tmp_path: Path):
    result = build_result(cells=(_streaming(facts),))
    assert read_results(_written(result, tmp_path)).cells[0].facts == facts


@pytest.mark.parametrize(
    ("name", "mode", "dialect", "native_calls"),
    [
        ("gemma3", Mode.NONE, Dialect.PERMISSIVE, {0}),
        ("smollm2-hermes", Mode.NONE, Dialect.STRICT, {0, 2}),
    ],
    ids=["v1-gemma3", "v1-smollm2-hermes-strict"],
)
def test_version_1_files_read_as_typed_results(name, mode, dialect, native_calls):
    result = read_results(LIVE / f"{name}.results.json")
    assert result.verdict is not None
    assert (result.verdict.mode, result.verdict.dialect.dialect) == (mode, dialect)
    assert result.run is not None and result.run.conchcheck_version == "0.1.0"
    catalogue = next(c for c in result.cells if c.stage is Stage.CATALOGUE)
    assert isinstance(catalogue.facts, CatalogueFacts)
    assert catalogue.facts.context_window == 2048
    schema = [c.facts for c in result.cells if c.stage is Stage.DIALECT]
    assert schema and all(isinstance(f, SchemaFacts) for f in schema)
    native = [c.facts for c in result.cells if c.stage is Stage.NATIVE and c.requests]
    assert {f.native_calls for f in native if isinstance(f, NativeFacts)} == native_calls
    streamed = [c.facts for c in result.cells if c.mode is CellMode.STREAMING]
    # Version 1 kept the streamed reply's facts only: no whole reply to compare.
    assert streamed and all(isinstance(f, StreamFacts) and f.whole is None for f in streamed)


def test_a_refusal_reads_back_with_its_kind(tmp_path: Path):
    result = read_results(_written(build_result(), tmp_path))
    kinds = {c.refusal_kind for c in result.cells if c.refusal is not None}
    assert kinds == {RefusalKind.SCHEMA, RefusalKind.TOOLS, RefusalKind.CONTEXT_LENGTH}


def test_read_results_names_the_line_and_path(result: ProbeResult, info: RunInfo, tmp_path: Path):
    text = render(result, ReportFormat.JSON, info)
    bad = text.replace('"outcome": "wrong_arguments"', '"outcome": "wrong"', 1)
    path = tmp_path / "results.json"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path)
    line = bad.splitlines().index('      "outcome": "wrong",') + 1
    assert line == 929
    assert str(caught.value) == (
        f"{path}:929: $.cells[13].outcome: 'wrong' is not one of ['accepted', 'pass', "
        "'pass_after_repair', 'wrong_arguments', 'wrong_tool', 'no_call', 'leaked', 'swallowed', "
        "'unwanted_call', 'cut_off', 'unparsed_by_server', 'not_honoured', 'refused', 'error', "
        "'skipped']."
    )


def test_read_results_missing_field(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "schema_version": 1,\n  "cells": []\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path)
    assert str(caught.value) == f"{path}:1: $: 'run' is a required property."


def test_read_results_newer_version(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "cells": [],\n  "schema_version": 4\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path)
    assert str(caught.value) == (
        f"{path}:3: $.schema_version: version 4 is not one this conchcheck reads (it reads 1, 2 "
        "and 3)."
    )


def test_read_results_not_json(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "cells": [,]\n}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"results\.json:2: not JSON"):
        read_results(path)


@pytest.mark.parametrize(
    "name", ["gemma3", "smollm2-hermes", "smollm2-own", "qwen-coder"],
    ids=["v1-gemma3", "v1-smollm2-hermes", "v1-smollm2-own", "v2-qwen-coder"],
)  # fmt: skip
def test_older_files_read_the_api_their_requests_went_to(name: str):
    # Each was a llama-server probe through its chat API (tests/data/live/README.md).
    result = read_results(LIVE / f"{name}.results.json")
    assert result.api is ApiFamily.OPENAI
    assert any(c.request is not None and c.request.url == f"{result.endpoint}/chat/completions"
               for c in result.cells)  # fmt: skip


def test_version_3_must_name_its_api(tmp_path: Path):
    text = _written(build_result(), tmp_path).read_text(encoding="utf-8")
    assert '\n  "api": "openai",\n' in text and '"schema_version": 3' in text
    (tmp_path / "results.json").write_text(text.replace('  "api": "openai",\n', ""))
    with pytest.raises(InputError) as caught:
        read_results(tmp_path / "results.json")
    assert str(caught.value) == f"{tmp_path / 'results.json'}:1: $: 'api' is a required property."
