"""A request two stages would send is sent once: the knob stage reads the native stage's
``forced-choice`` and ``parallel-calls`` replies again, and only when the request is equal
field for field (tests/probe/test_engine.py drives the engine the same way)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest

from conchcheck.core.tools import Tool
from conchcheck.probe import Check
from conchcheck.results import KnobFacts, Outcome, Stage
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.probe.test_engine import MATRIX, cells, run

ALL_BUT_MODE = frozenset({Check.DIALECT, Check.KNOBS, Check.STREAMING})


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_a_default_probe_sends_no_request_twice(concurrency: int) -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX)), concurrency=concurrency)
    bodies = Counter(json.dumps(b, sort_keys=True) for b in seen.seen if "GET" not in b)
    assert [n for n in bodies.values() if n > 1] == []
    assert result.requests == len(seen.seen) == 50
    knobs, native = cells(result, Stage.KNOBS), cells(result, Stage.NATIVE)
    named = knobs["knobs/tool_choice_named"]
    forced = native["native/forced-choice/1"]
    assert isinstance(named.facts, KnobFacts)
    assert (named.facts.read_from, named.facts.baseline_from) == ("native/forced-choice/1", None)
    assert (named.requests, named.prompt_tokens, named.outcome) == (0, None, Outcome.PASS)
    # The evidence is the native request's and reply's, as they were.
    assert (named.request, named.reply) == (forced.request, forced.reply)
    assert named.detail.endswith(" (Read from native/forced-choice/1: the same request.)")
    flagged = knobs["knobs/parallel_false"]
    assert isinstance(flagged.facts, KnobFacts)
    assert (flagged.facts.read_from, flagged.facts.baseline_from) == (
        None,
        "native/parallel-calls/1",
    )
    assert (flagged.facts.calls, flagged.facts.baseline, flagged.requests) == (1, 2, 1)
    assert "knobs/parallel_false/baseline" not in knobs


def test_without_the_native_prompts_the_knobs_send_their_own() -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX)), checks=ALL_BUT_MODE)
    knobs = cells(result, Stage.KNOBS)
    named, flagged = knobs["knobs/tool_choice_named"], knobs["knobs/parallel_false"]
    assert isinstance(named.facts, KnobFacts) and isinstance(flagged.facts, KnobFacts)
    assert (named.facts.read_from, named.requests) == (None, 1)
    assert (flagged.facts.baseline_from, flagged.facts.baseline) == (None, 2)
    assert knobs["knobs/parallel_false/baseline"].requests == 1
    assert result.requests == len(seen.seen)


def test_a_matrix_prompt_alike_but_for_a_tool_is_not_read_again() -> None:
    # The user's forced-choice prompt offers a remember tool of its own: the same words, a
    # different request, so the knob is sent as the knob stage wrote it.
    remember = MATRIX.tools["remember"]
    other = Tool(remember.name, "Keep a note of something.", remember.parameters)
    matrix = dataclasses.replace(MATRIX, tools={**MATRIX.tools, "remember": other})
    result, _ = run(OpenAIEmulator(oracle(matrix)), matrix=matrix)
    named = cells(result, Stage.KNOBS)["knobs/tool_choice_named"]
    assert isinstance(named.facts, KnobFacts)
    assert (named.facts.read_from, named.requests) == (None, 1)


@pytest.mark.parametrize("budget", [3, 20, 40])
def test_a_stopped_native_stage_leaves_no_knob_waiting(budget: int) -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX)), max_requests=budget)
    assert result.stopped == f"the request budget ({budget}) is spent"
    assert len(seen.seen) == result.requests == budget
