"""The knobs-and-losses section from hand-made cells: each field from the cells it stands on,
and nothing measured never reads as fine."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.fidelity import FidelityChange, FieldChange
from conchcheck.core.knobs import Agreement, Fidelity, Ids, Knob, KnobState
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.knobs import decide_knobs, id_format
from conchcheck.results import (
    Cell,
    CellMode,
    FidelityFacts,
    IdFacts,
    KnobFacts,
    Outcome,
    ReplyEvidence,
    RequestEvidence,
    Stage,
)
from conchcheck.wire.chat import Finish, ToolCall
from conchcheck.wire.providers import ApiFamily


def call(call_id: str | None, name: str = "get_weather") -> ToolCall:
    return ToolCall(call_id, name, '{"city": "Paris"}')


def native(
    cell_id: str,
    *calls: ToolCall,
    finish: Finish = Finish.TOOL_CALLS,
    spent: int | None = None,
    limit: int = 200,
    outcome: Outcome = Outcome.PASS,
    forced: bool = False,
) -> Cell:
    reply = ReplyEvidence(200, text="", calls=calls, finish=finish, completion_tokens=spent)
    body: dict[str, Any] = {"max_tokens": limit}
    if forced:
        body["tool_choice"] = {"type": "function", "function": {"name": "get_weather"}}
    request = RequestEvidence("POST", "http://127.0.0.1/v1/chat/completions", body=body)
    return Cell(cell_id, Stage.NATIVE, cell_id, outcome, mode=CellMode.NATIVE, request=request, reply=reply)  # fmt: skip


def knob(knob: Knob, state: KnobState) -> Cell:
    return Cell(f"knobs/{knob.value}", Stage.KNOBS, "k", Outcome.PASS, facts=KnobFacts(knob, state))


def rounds(*ids: tuple[str | None, ...], trip: bool | None = True) -> Cell:
    return Cell("knobs/ids/3", Stage.KNOBS, "ids-rounds", Outcome.PASS, facts=IdFacts(ids, trip))


@pytest.mark.parametrize(
    ("cells", "ids"),
    [
        ([], Ids()),
        (
            [native("a", call("call_abcdefghijklmnopqrstuvwx")), rounds(("c1",), ("c2",), ("c3",))],
            Ids(True, None, True, True, "call_<24 alphanumerics>"),
        ),
        ([native("a", call("x1"), call("x1"))], Ids(True, False, None, None, "x1")),
        ([native("a", call(None))], Ids(False, None, None, None, None)),
        ([rounds(("call_0", "call_1"), ("call_0",), ())], Ids(None, None, False, True, None)),
        ([rounds(("call_0",), ())], Ids(None, None, None, True, None)),
        ([rounds(("a",), ("b",), trip=False)], Ids(None, None, True, False, None)),
    ],
    ids=[
        "nothing-measured-is-null-never-true",
        "all-good",
        "constant-id-in-one-reply",
        "a-call-without-id",
        "ids-restart-each-round",
        "one-round-with-calls-proves-nothing-across-rounds",
        "own-ids-refused-on-the-way-back",
    ],
)
def test_ids(cells: list[Cell], ids: Ids) -> None:
    assert decide_knobs(cells).ids == ids


@pytest.mark.parametrize(
    ("api", "cells", "finish"),
    [
        (ApiFamily.OPENAI, [native("a", call("c"))], Agreement.AGREES),
        (ApiFamily.OPENAI, [native("a", call("c"), finish=Finish.STOP)], Agreement.WRONG),
        (
            ApiFamily.OPENAI,
            [native("a", call("c"), finish=Finish.STOP, forced=True)],
            Agreement.AGREES,
        ),
        (
            ApiFamily.ANTHROPIC,
            [native("a", call("c"), finish=Finish.STOP, forced=True)],
            Agreement.WRONG,
        ),
        (ApiFamily.OPENAI, [native("a", finish=Finish.TOOL_CALLS)], Agreement.WRONG),
        (ApiFamily.GEMINI, [native("a", call("c"), finish=Finish.STOP)], None),
        (ApiFamily.GEMINI, [native("a", finish=Finish.STOP, spent=200)], Agreement.WRONG),
        (ApiFamily.OPENAI, [native("a", finish=Finish.LENGTH, spent=200)], Agreement.AGREES),
        (ApiFamily.OPENAI, [native("a", finish=Finish.UNKNOWN)], None),
        (ApiFamily.OPENAI, [], None),
    ],
    ids=[
        "calls-say-tool-calls",
        "calls-say-stop",
        "a-forced-function-says-stop-as-openai-documents",
        "anthropic-forced-tool-says-tool-use",
        "no-call-says-tool-calls",
        "gemini-says-stop-for-calls-as-documented",
        "cut-at-the-limit-but-says-stop",
        "cut-and-says-length",
        "no-finish-reason-is-not-measured",
        "no-replies",
    ],
)
def test_finish_reason(api: ApiFamily, cells: list[Cell], finish: Agreement | None) -> None:
    assert decide_knobs(cells, api).finish_reason is finish


def test_knobs_untested_unless_a_cell_says_otherwise() -> None:
    section = decide_knobs([knob(Knob.STRICT, KnobState.FAILS_OPEN)])
    assert [section.knobs.of(k) for k in Knob] == [KnobState.UNTESTED] * 4 + [KnobState.FAILS_OPEN]
    assert section.findings == (
        "strict fails open (a call broke the schema it was told to enforce): an app can't rely "
        "on it.",
    )


def fidelity(mode: CellMode, *changed: FieldChange) -> Cell:
    return Cell("f", Stage.KNOBS, "fidelity", Outcome.PASS, mode=mode, facts=FidelityFacts(changed))


CUT = FieldChange("note", FidelityChange.CUT_AT_MARKER, "Keep </tool_call>", "Keep ")


@pytest.mark.parametrize(
    ("cells", "words", "expected"),
    [
        ([], False, (Fidelity.UNTESTED, ())),
        ([fidelity(CellMode.NATIVE)], False, (Fidelity.EXACT, ())),
        ([fidelity(CellMode.NATIVE, CUT)], False, (Fidelity.ALTERED, (FidelityChange.CUT_AT_MARKER,))),
        ([fidelity(CellMode.NATIVE, CUT), fidelity(CellMode.WORDS)], True, (Fidelity.EXACT, ())),
        ([fidelity(CellMode.NATIVE)], True, (Fidelity.UNTESTED, ())),
    ],
    ids=["no-cell", "exact", "cut-at-marker", "words-mode-reads-the-words-cell", "words-mode-without-one"],
)  # fmt: skip
def test_fidelity(cells: list[Cell], words: bool, expected: Any) -> None:
    section = decide_knobs(cells, words=words)
    assert (section.fidelity, section.fidelity_changes) == expected


def test_reasoning_and_streaming() -> None:
    reasoned = ReplyEvidence(200, text="", reasoning="I should call get_weather.")
    cells = [
        Cell("native/a/1", Stage.NATIVE, "a", Outcome.SWALLOWED, mode=CellMode.NATIVE, reply=reasoned),
        Cell("follow_up/streaming/a", Stage.FOLLOW_UP, "a", Outcome.PASS, mode=CellMode.STREAMING),
        Cell("follow_up/streaming/b", Stage.FOLLOW_UP, "b", Outcome.WRONG_ARGUMENTS, mode=CellMode.STREAMING),
        Cell("follow_up/streaming/c", Stage.FOLLOW_UP, "c", Outcome.ERROR, mode=CellMode.STREAMING),
    ]  # fmt: skip
    section = decide_knobs(cells)
    assert (section.reasoning.seen, section.reasoning.swallowed) == (True, 1)
    # A pair whose request failed agrees and disagrees with nothing.
    assert (section.streaming.agree, section.streaming.disagree) == (1, 1)


def test_a_refused_round_trip_of_the_matrix_counts_only_when_it_speaks_of_the_request() -> None:
    def trip(kind: RefusalKind) -> Cell:
        refusal = Refusal(kind, 400, "bad tool_call_id")
        return Cell("t", Stage.FOLLOW_UP, "t", Outcome.REFUSED, mode=CellMode.ROUND_TRIP_NATIVE, refusal=refusal)  # fmt: skip

    assert decide_knobs([trip(RefusalKind.OTHER)]).ids.round_trip is False
    assert decide_knobs([trip(RefusalKind.RATE_LIMIT)]).ids.round_trip is None


@pytest.mark.parametrize(
    ("call_id", "shape"),
    [
        ("call_abc123def456ghi789jkl012", "call_<24 alphanumerics>"),
        ("toolu_01A09q90qw90lq917835lq9", "toolu_<23 alphanumerics>"),
        ("functions.get_weather:0", "functions.get_weather:0"),
        ("abcdef1234", "<10 alphanumerics>"),
        ("call_0", "call_0"),
        # llama-cpp-python: "call_" + f"_{i}_" + the tool's name + "_" + the completion's id,
        # "cmpl-" and a uuid4 (tests/data/recordings/llama-cpp-python.focus.json).
        (
            "call__0_remember_cmpl-272fd56e-1c7e-4629-9d3a-0c1f5e8b7a21",
            "call__0_remember_cmpl-<uuid>",
        ),
    ],
    ids=[
        "openai",
        "anthropic",
        "kimi-through-vllm",
        "bare",
        "short-kept-as-is",
        "llama-cpp-python-uuid-said-once",
    ],
)
def test_id_format(call_id: str, shape: str) -> None:
    assert id_format(call_id) == shape
