"""``--repeat auto`` in the engine: each prompt is sent until its label can't change, against
a model that answers each prompt right or wrong on a fixed pattern of its attempts; the exact
attempts per prompt, within the budget, and a resumed probe that ends where one whole probe
does.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from conchcheck.core.confidence import Label
from conchcheck.probe import Check
from conchcheck.results import Outcome, ProbeResult, Stage
from tests.emulators.model import Answer, Asked, Behaviour
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import Received, Response
from tests.probe.test_engine import MATRIX, run

CALLING = [p for p in MATRIX.prompts if p.expect.calls and p.follow_up is None][:4]
"""Four prompts a model passes only by calling: a text answer is a miss."""
SMALL = dataclasses.replace(MATRIX, prompts=tuple(CALLING))
MODE_ONLY: dict[str, Any] = {"checks": frozenset({Check.MODE}), "streaming_checks": 0}


def patterned(
    patterns: dict[str, str], answered: Counter[tuple[str, bool]] | None = None
) -> Behaviour:
    """The oracle's answer to prompt P's n-th request in each mode when ``patterns[P][n-1]``
    is ``P``, else a reply without a call (a miss); ``answered`` counts requests already
    answered, by (prompt, native). Requests of one prompt and mode are equal, so which cell
    gets which answer doesn't change how many pass."""
    right = oracle(SMALL)
    users = {p.user: p.id for p in SMALL.prompts}
    seen: Counter[tuple[str, bool]] = Counter(answered or {})

    def behave(asked: Asked) -> Answer:
        prompt = users.get(asked.messages[-1]["content"]) if asked.messages else None
        if prompt is None or asked.messages[-1]["role"] != "user":
            return right(asked)
        key = (prompt, bool(asked.tools))
        seen[key] += 1
        if patterns[prompt][seen[key] - 1] == "P":
            return right(asked)
        return Answer(text="I would rather not.")

    return behave


def attempts(result: ProbeResult, stage: Stage) -> dict[str, int]:
    return dict(Counter(c.case for c in result.cells if c.stage is stage))


# Each pattern with what auto sends for it (t = 0.5, c = 0.95, at most 10) and the label.
CASES = [
    pytest.param("PPPPPPPPPP", 4, Label.PASS, id="always-passes-four"),
    pytest.param("FFFFFFFFFF", 4, Label.FAIL, id="never-passes-four"),
    pytest.param("PFPFPFPFPF", 4, Label.INTERMITTENT, id="two-of-four-curtailed"),
    pytest.param("PPPFPPPPPP", 8, Label.PASS, id="one-miss-then-seven-of-eight"),
    pytest.param("PPPFPFPPPP", 6, Label.INTERMITTENT, id="second-miss-curtails-at-six"),
    pytest.param("FFFPFFFFFF", 8, Label.FAIL, id="one-pass-then-one-of-eight"),
]


@pytest.mark.parametrize(("pattern", "sent", "label"), CASES)
def test_auto_sends_each_prompt_until_its_label_is_settled(
    pattern: str, sent: int, label: Label
) -> None:
    others = "PPPPPPPPPP"
    patterns = {p.id: others for p in CALLING} | {CALLING[0].id: pattern}
    result, _ = run(OpenAIEmulator(patterned(patterns)), matrix=SMALL, repeat="auto", **MODE_ONLY)
    expected = {p.id: 4 for p in CALLING} | {CALLING[0].id: sent}
    assert attempts(result, Stage.NATIVE) == expected
    assert attempts(result, Stage.WORDS) == expected
    verdict = result.verdict
    assert verdict is not None and verdict.labels is not None
    got = {(p.prompt, p.mode): p.label for p in verdict.labels.prompts}
    assert got[(CALLING[0].id, "native")] is label
    assert got[(CALLING[0].id, "words")] is label
    assert got[(CALLING[1].id, "native")] is Label.PASS


def test_a_fixed_repeat_sends_every_attempt_and_labels_them_alike() -> None:
    patterns = {p.id: "PPPFPPPPPP" for p in CALLING}
    result, _ = run(OpenAIEmulator(patterned(patterns)), matrix=SMALL, repeat=5, **MODE_ONLY)
    assert attempts(result, Stage.NATIVE) == {p.id: 5 for p in CALLING}
    verdict = result.verdict
    assert verdict is not None and verdict.labels is not None
    # 4/5 at 95%: lo 0.376, below the threshold; hi 0.964.
    assert {(p.attempts, p.passes, p.label) for p in verdict.labels.prompts} == {
        (5, 4, Label.INTERMITTENT)
    }


def test_one_attempt_gives_no_label() -> None:
    result, _ = run(OpenAIEmulator(oracle(SMALL)), matrix=SMALL, **MODE_ONLY)
    verdict = result.verdict
    assert verdict is not None and verdict.labels is not None
    assert {(p.attempts, p.label) for p in verdict.labels.prompts} == {(1, None)}


def test_a_failed_request_counts_to_the_maximum_not_to_the_label() -> None:
    # The first request of the first prompt in each mode gets no usable reply: it proves
    # nothing, so the first wave of four holds three answers and one more is sent.
    emulator = OpenAIEmulator(oracle(SMALL))
    failed: set[bool] = set()

    def handler(received: Received) -> Response:
        body = received.json() or {}
        native = bool(body.get("tools"))
        if body["messages"][-1]["content"] == CALLING[0].user and native not in failed:
            failed.add(native)
            return Response(200, b"<html>busy</html>", {"content-type": "text/html"})
        return emulator(received)

    result, _ = run(handler, matrix=SMALL, repeat="auto", **MODE_ONLY)
    for stage in (Stage.NATIVE, Stage.WORDS):
        mine = [c for c in result.cells if c.stage is stage and c.case == CALLING[0].id]
        assert sorted(c.attempt for c in mine) == [1, 2, 3, 4, 5]
        assert [c.outcome for c in mine].count(Outcome.ERROR) == 1
    verdict = result.verdict
    assert verdict is not None and verdict.labels is not None
    first = [p for p in verdict.labels.prompts if p.prompt == CALLING[0].id]
    assert {(p.attempts, p.passes, p.label) for p in first} == {(4, 4, Label.PASS)}


def test_auto_stays_within_the_budget_and_resumes_to_the_same_cells() -> None:
    patterns = {p.id: "PPPFPFPPPP" for p in CALLING}
    whole, seen_whole = run(
        OpenAIEmulator(patterned(patterns)), matrix=SMALL, repeat="auto", **MODE_ONLY
    )
    first, seen_first = run(
        OpenAIEmulator(patterned(patterns)),
        matrix=SMALL,
        repeat="auto",
        max_requests=20,
        **MODE_ONLY,
    )
    assert first.stopped is not None and len(seen_first.seen) == 20
    # The model goes on where it was: it has answered what the first run sent.
    answered = Counter((c.case, c.stage is Stage.NATIVE) for c in first.cells)
    model = patterned(patterns, answered)
    second, seen_second = run(
        OpenAIEmulator(model), matrix=SMALL, repeat="auto", resume=first.cells, **MODE_ONLY
    )
    assert second.stopped is None
    assert len(seen_first.seen) + len(seen_second.seen) == len(seen_whole.seen)
    assert sorted((c.id, c.outcome) for c in second.cells) == sorted(
        (c.id, c.outcome) for c in whole.cells
    )
