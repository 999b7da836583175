"""What the real servers do with each knob, replayed from their recordings (no server, no
network): llama-server with Qwen2.5-Coder-0.5B's own template and the derived one on chat,
Responses and Messages, SmolLM2 with its own template, llama-cpp-python's server, and a
LiteLLM proxy in front of llama-server (``python -m scripts.record_live`` recorded them).

The small models rarely make the calls parallel control, strict mode, the three-round id
conversation and the exact-arguments prompt need, so those stay ``untested`` here: measured
as not measured, never as fine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conchcheck.core.knobs import KnobsAndLosses
from conchcheck.results import Cell, ProbeResult
from conchcheck.results.plain import to_plain
from conchcheck.results.reader import read_results
from conchcheck.run import ProbeSpec, build, execute

RECORDINGS = Path(__file__).parent / "data" / "recordings"
FOCUS = str(RECORDINGS / "focus.yaml")
RUNS = {
    "qwen-coder.default": ("default", None),
    "qwen-coder-native.default": ("default", None),
    "qwen-coder-native.responses": (FOCUS, "responses"),
    "qwen-coder-native.anthropic": (FOCUS, "anthropic"),
    "smollm2-own.default": ("default", None),
    "llama-cpp-python.focus": (FOCUS, None),
    "litellm.chat": (FOCUS, None),
    "litellm.anthropic": (FOCUS, "anthropic"),
}
UNTESTED = {"parallel_false": "untested", "strict": "untested"}
NO_IDS = {"present": None, "unique_in_reply": None, "unique_across_rounds": None,
          "round_trip": None, "format": None}  # fmt: skip


def ids(**measured: Any) -> dict[str, Any]:
    return {**NO_IDS, **measured}


def knobs(none: str, required: str, named: str) -> dict[str, str]:
    return {"tool_choice_none": none, "tool_choice_required": required,
            "tool_choice_named": named, **UNTESTED}  # fmt: skip


# The sections, field by field; the tests below show the evidence of the notable ones.
SECTIONS = {
    "qwen-coder.default": (
        knobs("honoured", "ignored", "ignored"),
        ids(),
        "agrees",
        {"agree": 11, "disagree": 0},
    ),
    "qwen-coder-native.default": (
        knobs("honoured", "ignored", "ignored"),
        ids(present=True, round_trip=True, format="<32 alphanumerics>"),
        "agrees",
        {"agree": 11, "disagree": 0},
    ),
    "qwen-coder-native.responses": (
        knobs("honoured", "ignored", "ignored"),
        ids(present=True, format="call_<32 alphanumerics>"),
        "wrong",
        {"agree": 1, "disagree": 3},
    ),
    # llama-server's /v1/messages drops {"type": "none"} (server_chat_convert_anthropic_to_oai
    # maps only auto, any and tool: provider-facts "Real servers measured by hand"), so the
    # request runs as auto and the model's fenced JSON is the parser's HTTP 500. The knob is
    # untested all the same: a request that failed is no evidence.
    "qwen-coder-native.anthropic": (
        knobs("untested", "ignored", "ignored"),
        ids(present=True, format="<32 alphanumerics>"),
        "agrees",
        {"agree": 4, "disagree": 0},
    ),
    "smollm2-own.default": (
        knobs("honoured", "ignored", "ignored"),
        ids(),
        "agrees",
        {"agree": 11, "disagree": 0},
    ),
    "llama-cpp-python.focus": (
        knobs("honoured", "refused", "honoured"),
        ids(present=True, format="call__0_remember_cmpl-<uuid>"),
        "agrees",
        {"agree": 2, "disagree": 1},
    ),
    "litellm.chat": (
        knobs("honoured", "ignored", "ignored"),
        ids(present=True, format="<32 alphanumerics>"),
        "agrees",
        {"agree": 4, "disagree": 0},
    ),
    "litellm.anthropic": (
        knobs("honoured", "ignored", "ignored"),
        ids(present=True, format="call_<32 alphanumerics>"),
        "wrong",
        {"agree": 4, "disagree": 0},
    ),
}


def replay(name: str, tmp_path: Path) -> ProbeResult:
    matrix, api = RUNS[name]
    recording = RECORDINGS / f"{name}.json"
    target = json.loads(recording.read_text())["target"]
    spec = ProbeSpec(
        target, matrix=matrix, api_family=api, out_dir=tmp_path / name,
        capability_file=tmp_path / "caps.yaml", replay=recording,
    )  # fmt: skip
    execute(build(spec))
    return read_results(tmp_path / name / "results.json")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ProbeResult]:
    folder = tmp_path_factory.mktemp("knobs")
    return {name: replay(name, folder) for name in RUNS}


def section(result: ProbeResult) -> KnobsAndLosses:
    assert result.verdict is not None and result.verdict.knobs_and_losses is not None
    return result.verdict.knobs_and_losses


def cell(result: ProbeResult, cell_id: str) -> Cell:
    (found,) = [c for c in result.cells if c.id == cell_id]
    return found


@pytest.mark.parametrize("name", list(SECTIONS))
def test_each_real_server_s_knobs_and_losses(runs: dict[str, ProbeResult], name: str) -> None:
    found = to_plain(section(runs[name]))
    wanted_knobs, wanted_ids, finish, streaming = SECTIONS[name]
    assert (found["knobs"], found["ids"], found["finish_reason"], found["streaming"]) == (
        wanted_knobs, wanted_ids, finish, streaming,
    )  # fmt: skip
    # Nothing here carried a reasoning channel, and no reply lost a call in one.
    assert found["reasoning"] == {"seen": False, "swallowed": 0}


def test_llama_server_ignores_required_and_a_named_tool(runs: dict[str, ProbeResult]) -> None:
    chat = runs["qwen-coder-native.default"]
    required = cell(chat, "knobs/tool_choice_required")
    assert required.request is not None and isinstance(required.request.body, dict)
    assert required.request.body["tool_choice"] == "required"
    # Prose to the greeting, cut at the token limit: no call was forced.
    assert required.reply is not None and required.reply.calls == ()
    assert (required.reply.finish_reason, required.reply.text or "")[0] == "length"
    named = cell(chat, "knobs/tool_choice_named")
    assert named.request is not None and isinstance(named.request.body, dict)
    assert named.request.body["tool_choice"] == {
        "type": "function",
        "function": {"name": "remember"},
    }
    assert named.reply is not None and [c.name for c in named.reply.calls] == ["get_weather"]
    # none is honoured on chat: the model's call stays text (a fenced JSON), never a call.
    none = cell(chat, "knobs/tool_choice_none")
    assert none.reply is not None and none.reply.calls == ()
    assert '"name": "get_weather"' in (none.reply.text or "")


def test_llama_cpp_python_forces_a_named_tool_and_fails_on_required(
    runs: dict[str, ProbeResult],
) -> None:
    run = runs["llama-cpp-python.focus"]
    named = cell(run, "knobs/tool_choice_named")
    assert named.reply is not None and [c.name for c in named.reply.calls] == ["remember"]
    required = cell(run, "knobs/tool_choice_required")
    assert required.refusal is not None and required.refusal.status == 500
    assert required.detail == (
        'Refused: {"error":{"message":"","type":"internal_server_error","param":null,"code":null}}'
    )


@pytest.mark.parametrize(
    ("name", "said"),
    [("qwen-coder-native.responses", "completed"), ("litellm.anthropic", "end_turn")],
    ids=["llama-server-responses-says-completed", "litellm-messages-says-end-turn"],
)
def test_a_reply_cut_at_its_limit_is_not_said_to_be_cut(
    runs: dict[str, ProbeResult], name: str, said: str
) -> None:
    # The same greeting on llama-server's chat API ends with finish_reason "length".
    required = cell(runs[name], "knobs/tool_choice_required")
    assert required.reply is not None
    assert (required.reply.completion_tokens, required.reply.finish_reason) == (200, said)
    assert any(
        re.fullmatch(r"The finish reason disagrees with the reply in .*", f)
        for f in section(runs[name]).findings
    )


def test_llama_server_s_responses_streams_need_their_deltas_repaired(
    runs: dict[str, ProbeResult],
) -> None:
    run = runs["qwen-coder-native.responses"]
    pairs = [c for c in run.cells if c.id.startswith("follow_up/streaming/")]
    said = {c.case: c.detail for c in pairs}
    # Three streams agree with their whole replies only once their events are given the
    # output_index llama-server leaves out. (In the recording before, the forced choice's
    # stream carried the parse failure as an error event where the whole reply called the
    # wrong tool: the model's output varies from run to run at the parser's edge.)
    assert said == {
        "forced-choice": "Streamed and whole replies agree only after the deltas were repaired "
        "(event_without_output_index).",
        "no-tool-needed": "Streamed and whole replies agree (pass).",
        "remember-fact": "Streamed and whole replies agree only after the deltas were repaired "
        "(event_without_output_index).",
        "weather-enum": "Streamed and whole replies agree only after the deltas were repaired "
        "(event_without_output_index).",
    }
