"""`conchcheck probe` against endpoints that break the knobs and lose calls (issue 21, DESIGN
stage 8), end to end: one loopback server per behaviour (tests/emulators/knob_profiles.py),
probed through the CLI with the default matrix, asserting the exact knobs-and-losses section
of results.json and the same fields in the capability entry.

The honest endpoint (the oracle obeying every knob, OpenAI's strict-mode refusals, unique call
ids) gets every knob ``honoured``, every id fact true, ``finish_reason: agrees``, ``fidelity:
exact`` and no losses; each profile changes exactly the fields its quirk breaks.

The first tests check the emulators themselves, so a failure of the probe tests is the
probe's, not the emulators'.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.refusals import classify
from conchcheck.core.tools import ChoiceMode, ToolChoice
from conchcheck.matrix import knob_matrix, load_matrix
from conchcheck.wire.adapter import ChatAdapter
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.responses import ResponsesAdapter
from tests.emulators import knob_profiles
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.model import Answer, Asked, Behaviour
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import EmulatorServer, Handler, Received
from tests.emulators.strict import chat_refusal

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
KNOBS = knob_matrix()
PROMPT = {p.id: p for p in KNOBS.prompts}
PROFILES = knob_profiles.profiles(MATRIX)
runner = CliRunner()


# -- the emulators --------------------------------------------------------------------------


def tools(*names: str) -> list[dict[str, Any]]:
    return [
        {"name": KNOBS.tools[n].name, "parameters": dict(KNOBS.tools[n].parameters)} for n in names
    ]


def asked(prompt_id: str, **knobs: Any) -> Asked:
    prompt = PROMPT[prompt_id]
    return Asked(tools(*prompt.tools), [{"role": "user", "content": prompt.user}], **knobs)


def called(answer: Any) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in answer.calls]


ORACLE_CASES = [
    # (prompt, knobs, ignores, calls)
    ("tool-choice-none", {}, (), [("get_weather", {"city": "Paris"})]),
    ("tool-choice-none", {"choice": "none"}, (), []),
    ("tool-choice-none", {"choice": "none"}, ("none",), [("get_weather", {"city": "Paris"})]),
    ("tool-choice-required", {}, (), []),
    ("tool-choice-required", {"choice": "required"}, (), [("get_weather", {"city": "Paris"})]),
    ("tool-choice-required", {"choice": "required"}, ("required",), []),
    ("tool-choice-named", {}, (), [("get_weather", {"city": "Paris"})]),
    (
        "tool-choice-named",
        {"choice": "named", "named": "remember"},
        (),
        [("remember", {"fact": "anything"})],
    ),
    (
        "tool-choice-named",
        {"choice": "named", "named": "remember"},
        ("named",),
        [("get_weather", {"city": "Paris"})],
    ),
    ("parallel", {}, (), [("get_weather", {"city": "paris"}), ("get_weather", {"city": "tokyo"})]),
    ("parallel", {"parallel": False}, (), [("get_weather", {"city": "paris"})]),
    (
        "parallel",
        {"parallel": False},
        ("parallel",),
        [("get_weather", {"city": "paris"}), ("get_weather", {"city": "tokyo"})],
    ),
    ("strict-closed", {}, (), [("set_alarm", {"minutes": "ten", "label": "tea"})]),
    ("strict-closed", {"strict": {"set_alarm": True}}, (), [("set_alarm", {"minutes": 10})]),
]


@pytest.mark.parametrize(
    ("prompt", "knobs", "ignores", "calls"),
    ORACLE_CASES,
    ids=[
        "none-unset-calls-as-begged",
        "none-no-call",
        "none-ignored-calls",
        "required-unset-greets",
        "required-calls",
        "required-ignored-greets",
        "named-unset-calls-weather",
        "named-calls-the-named-tool",
        "named-ignored-calls-weather",
        "parallel-unset-two-calls",
        "parallel-false-one-call",
        "parallel-false-ignored-two-calls",
        "strict-unset-writes-what-the-prompt-tempts",
        "strict-holds-to-the-closed-schema",
    ],
)
def test_the_oracle_obeys_each_knob_unless_it_ignores_it(
    prompt: str, knobs: dict[str, Any], ignores: tuple[str, ...], calls: list[Any]
) -> None:
    assert called(oracle(MATRIX, ignores=ignores)(asked(prompt, **knobs))) == calls


def test_the_oracle_calls_one_city_a_round_then_answers() -> None:
    model = oracle(MATRIX)
    turns = asked("ids-rounds").messages
    cities = []
    for _ in range(3):
        answer = model(Asked(tools("get_weather"), turns))
        cities += [args["city"] for _, args in called(answer)]
        turns = [*turns, {"role": "assistant", "content": ""}, {"role": "tool", "content": "18"}]
    final = model(Asked(tools("get_weather"), turns))
    assert (cities, final.calls, "Lima" in final.text) == (["Paris", "Tokyo", "Lima"], [], True)


def test_the_oracle_copies_the_fidelity_arguments_exactly() -> None:
    [(name, arguments)] = called(oracle(MATRIX)(asked("fidelity")))
    expected = {a.name: a.matcher.value for a in PROMPT["fidelity"].expect.calls[0].arguments}
    assert (name, arguments) == ("save_snippet", expected)
    assert arguments["count"] == 2**53 + 1 and "</tool_call>" in arguments["note"]


def strict_tool(name: str, strict: bool = True) -> dict[str, Any]:
    tool = KNOBS.tools[name]
    function = {"name": tool.name, "parameters": dict(tool.parameters), "strict": strict}
    return {"type": "function", "function": function}


def test_chat_completions_refuses_a_strict_schema_it_cant_enforce_in_openais_words() -> None:
    refused = chat_refusal([strict_tool("set_alarm"), strict_tool("add_tag")])
    assert refused is not None and refused.status == 400
    found = classify(refused.status, refused.body.decode())
    assert (found.kind.value, found.tool_index, found.keyword, found.message) == (
        "schema",
        1,
        "additionalProperties",
        "Invalid schema for function 'add_tag': In context=(), 'additionalProperties' is "
        "required to be supplied and to be false.",
    )
    closed_optional = {"type": "function", "function": {"name": "f", "strict": True,
        "parameters": {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"],
                       "additionalProperties": False}}}  # fmt: skip
    refused = chat_refusal([closed_optional])
    assert refused is not None
    assert classify(400, refused.body.decode()).message == (
        "Invalid schema for function 'f': In context=(), 'required' is required to be supplied "
        "and to be an array including every key in properties. Missing 'b'."
    )
    # The closed schema, and any schema sent without the flag, are taken.
    assert chat_refusal([strict_tool("set_alarm"), strict_tool("add_tag", strict=False)]) is None


def post(emulator: OpenAIEmulator, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"model": "m", "messages": messages, "tools": [strict_tool("get_weather", False)]}
    answer = emulator(Received("POST", "/v1/chat/completions", {}, {}, json.dumps(body).encode()))
    data: dict[str, Any] = json.loads(answer.body)
    return data


@pytest.mark.parametrize(
    ("ids", "first", "second"),
    [
        ("unique", "call_[0-9a-f]{24}", "call_[0-9a-f]{24}"),
        ("constant", "call_0", "call_0"),
        ("per_reply", "call_0", "call_0"),
        ("hex8", "call_[0-9a-f]{8}", "call_[0-9a-f]{8}"),
    ],
    ids=["unique-each-round", "constant", "restarts-each-round", "short-hex"],
)
def test_call_id_schemes(ids: str, first: str, second: str) -> None:
    emulator = OpenAIEmulator(oracle(MATRIX), ids=ids)
    turns: list[dict[str, Any]] = [{"role": "user", "content": PROMPT["ids-rounds"].user}]
    one = post(emulator, turns)["choices"][0]["message"]["tool_calls"][0]
    turns += [
        {"role": "assistant", "content": None, "tool_calls": [one]},
        {"role": "tool", "tool_call_id": one["id"], "content": "18"},
    ]
    two = post(emulator, turns)["choices"][0]["message"]["tool_calls"][0]
    assert re.fullmatch(first, one["id"]) and re.fullmatch(second, two["id"]), (one, two)
    assert (one["id"] != two["id"]) is (ids in ("unique", "hex8"))


def test_an_id_of_its_own_refused_back_with_mistrals_words() -> None:
    emulator = OpenAIEmulator(oracle(MATRIX), ids="hex8", takes_ids=knob_profiles.MISTRAL_IDS)
    turns: list[dict[str, Any]] = [{"role": "user", "content": PROMPT["ids-rounds"].user}]
    call = post(emulator, turns)["choices"][0]["message"]["tool_calls"][0]
    turns += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "18"},
    ]
    body = json.dumps(post(emulator, turns))
    found = classify(400, body)
    assert (found.kind.value, found.message) == (
        "other",
        f"Tool call id was {call['id']} but must be a-z, A-Z, 0-9, with a length of 9.",
    )


def seen_by(emulator: Callable[[Behaviour], Handler], adapter: ChatAdapter, **knobs: Any) -> Asked:
    """What the model behind ``emulator`` sees of a request ``adapter`` builds with ``knobs``."""
    seen: list[Asked] = []

    def model(asked: Asked) -> Answer:
        seen.append(asked)
        return Answer(text="ok")

    tool = KNOBS.tools["set_alarm"]
    request = ChatRequest("m", (Message(Role.USER, "hi"),), tools=(tool,), **knobs)
    wire = adapter.build("http://127.0.0.1:1/v1", request, None)
    path = "/v1" + wire.url.split("/v1", 1)[1]
    headers = {k.lower(): v for k, v in wire.headers.items()}
    emulator(model)(Received("POST", path, {}, headers, json.dumps(wire.body).encode()))
    [asked] = seen
    return asked


EMULATORS = [
    pytest.param(OpenAIEmulator, OpenAIAdapter(), id="chat-completions"),
    pytest.param(ResponsesEmulator, ResponsesAdapter(), id="responses"),
    pytest.param(AnthropicEmulator, AnthropicAdapter(), id="anthropic"),
]
SEEN = [
    # (knobs as the request says them, what the model sees)
    ({}, ("auto", None, None)),
    ({"tool_choice": ToolChoice(ChoiceMode.NONE)}, ("none", None, None)),
    ({"tool_choice": ToolChoice(ChoiceMode.REQUIRED)}, ("required", None, None)),
    ({"tool_choice": ToolChoice(ChoiceMode.TOOL, "set_alarm")}, ("named", "set_alarm", None)),
    ({"parallel": False}, ("auto", None, False)),
]


@pytest.mark.parametrize("emulator, adapter", EMULATORS)
@pytest.mark.parametrize(
    ("knobs", "seen"), SEEN, ids=["unset", "none", "required", "named", "parallel-false"]
)
def test_each_emulator_reads_each_knob_in_its_apis_spelling(
    emulator: Callable[[Behaviour], Handler],
    adapter: ChatAdapter,
    knobs: dict[str, Any],
    seen: tuple[Any, ...],
) -> None:
    asked = seen_by(emulator, adapter, **knobs)
    assert (asked.choice, asked.named, asked.parallel) == seen


@pytest.mark.parametrize("emulator, adapter", EMULATORS)
def test_each_emulator_reads_the_strict_flag(
    emulator: Callable[[Behaviour], Handler], adapter: ChatAdapter
) -> None:
    assert seen_by(emulator, adapter, strict=True).strict == {"set_alarm": True}


STRICT_REFUSALS = [
    # (the open tool sent with strict: true, the refusal's message): each API in its own words.
    pytest.param(
        OpenAIEmulator, OpenAIAdapter(),
        "Invalid schema for function 'add_tag': In context=(), 'additionalProperties' is "
        "required to be supplied and to be false.",
        id="chat-completions-wants-additional-properties-false",
    ),
    pytest.param(
        ResponsesEmulator, ResponsesAdapter(),
        "Invalid schema for function 'add_tag': In context=(), 'additionalProperties' is "
        "required to be supplied and to be false.",
        id="responses-wants-additional-properties-false",
    ),
    pytest.param(
        AnthropicEmulator, AnthropicAdapter(),
        "tools.0.custom: For 'object' type, 'additionalProperties' must be explicitly set to "
        "false",
        id="anthropic-wants-every-object-closed",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("emulator", "adapter", "message"), STRICT_REFUSALS)
def test_each_emulator_refuses_an_open_schema_sent_strict(
    emulator: Callable[[Behaviour], Handler], adapter: ChatAdapter, message: str
) -> None:
    tool = KNOBS.tools["add_tag"]
    request = ChatRequest("m", (Message(Role.USER, "hi"),), tools=(tool,), strict=True)
    wire = adapter.build("http://127.0.0.1:1/v1", request, None)
    path = "/v1" + wire.url.split("/v1", 1)[1]
    headers = {k.lower(): v for k, v in wire.headers.items()}
    answer = emulator(oracle(MATRIX))(
        Received("POST", path, {}, headers, json.dumps(wire.body).encode())
    )
    found = classify(answer.status, answer.body.decode())
    assert (answer.status, found.kind.value, found.message) == (400, "schema", message)


# -- probing --------------------------------------------------------------------------------


HONEST: dict[str, Any] = {
    "knobs": {
        "tool_choice_none": "honoured",
        "tool_choice_required": "honoured",
        "tool_choice_named": "honoured",
        "parallel_false": "honoured",
        "strict": "honoured",
    },
    "ids": {
        "present": True,
        "unique_in_reply": True,
        "unique_across_rounds": True,
        "round_trip": True,
        "format": "call_<24 alphanumerics>",
    },
    "finish_reason": "agrees",
    "fidelity": "exact",
    "fidelity_changes": [],
    "reasoning": {"seen": False, "swallowed": 0},
    "streaming": {"agree": 11, "disagree": 0},
}
"""The section for an endpoint that honours everything: 11 default prompts streamed."""


def but(**changes: Any) -> dict[str, Any]:
    """``HONEST`` with ``changes``; a dict changes only the keys it names."""
    out = json.loads(json.dumps(HONEST))
    for key, value in changes.items():
        out[key] = {**out[key], **value} if isinstance(value, dict) else value
    return out


CASES = [
    ("honest", HONEST),
    ("ignores-tool-choice-none", but(knobs={"tool_choice_none": "ignored"})),
    ("ignores-tool-choice-required", but(knobs={"tool_choice_required": "ignored"})),
    ("ignores-named-tool-choice", but(knobs={"tool_choice_named": "ignored"})),
    ("ignores-parallel-false", but(knobs={"parallel_false": "ignored"})),
    ("strict-fails-open", but(knobs={"strict": "fails_open"})),
    ("strict-ignored", but(knobs={"strict": "ignored"})),
    (
        "one-constant-id",
        but(ids={"unique_in_reply": False, "unique_across_rounds": False, "format": "call_0"}),
    ),
    ("ids-restart-each-round", but(ids={"unique_across_rounds": False, "format": "call_0"})),
    # The second round is refused: one round of ids, nothing to compare across rounds.
    (
        "own-ids-refused-back",
        but(
            ids={
                "unique_across_rounds": None,
                "round_trip": False,
                "format": "call_<8 alphanumerics>",
            }
        ),
    ),
    ("finish-stop-with-calls", but(finish_reason="wrong")),
    ("strips-newlines", but(fidelity="altered", fidelity_changes=["newlines_stripped"])),
    ("cuts-at-a-marker", but(fidelity="altered", fidelity_changes=["cut_at_marker"])),
    ("rounds-big-integers", but(fidelity="altered", fidelity_changes=["number_rounded"])),
    # The greeting has no call to stream: its pair agrees; the ten with calls do not.
    ("stream-arguments-before-id", but(streaming={"agree": 1, "disagree": 10})),
    # Every native call lost in the reasoning: the mode falls to words (where fidelity is
    # then measured, exactly), nothing native shows an id, and every reply that wanted a call
    # is swallowed, counted once per reply: the ten default prompts that call, and the five
    # knob requests of their own whose answer is a call (required, parallel with the flag,
    # strict's closed schema, the first id round, fidelity); the named tool and the baseline
    # are the native prompts' own requests, read again. Their streamed copies agree: both
    # lost it.
    *(
        (
            profile,
            but(
                knobs={k: "untested" for k in HONEST["knobs"] if k != "tool_choice_none"},
                ids=dict.fromkeys(HONEST["ids"]),
                reasoning={"seen": True, "swallowed": 15},
            ),
        )
        for profile in ("calls-swallowed-in-reasoning-content", "calls-in-think-in-content")
    ),
]
MODE = {
    "calls-swallowed-in-reasoning-content": "words",
    "calls-in-think-in-content": "words",
}
"""The verdict's mode where it isn't native: a knob ignored or a loss never changes it, but
calls that never come out natively do."""


def probe(server: EmulatorServer, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(
        app,
        ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(tmp_path / "out"),
         "--quiet", "--json", "--concurrency", "4"],
    )  # fmt: skip
    data = json.loads(result.stdout) if result.stdout.lstrip().startswith("{") else {}
    return result.exit_code, data, result.stdout + result.stderr


API_FAMILIES = [
    # (--api, the emulator, what differs from HONEST): every family obeys every knob.
    pytest.param("openai", OpenAIEmulator, {}, id="chat-completions"),
    # The Responses API has no finish reason but for a cut reply, and none was cut.
    pytest.param("responses", ResponsesEmulator, {"finish_reason": None}, id="responses"),
    pytest.param(
        "anthropic", AnthropicEmulator, {"ids": {"format": "toolu_<24 alphanumerics>"}},
        id="anthropic-messages",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("api", "emulator", "differs"), API_FAMILIES)
def test_every_api_family_honouring_every_knob_is_measured_so(
    serve: Serve,
    tmp_path: Path,
    api: str,
    emulator: Callable[[Behaviour], Handler],
    differs: dict[str, Any],
) -> None:
    server = serve(emulator(oracle(MATRIX)))
    done = runner.invoke(
        app,
        ["probe", "llamacpp:local", "--api", api, "--base-url", server.url + "/v1",
         "--out", str(tmp_path / "out"), "--quiet"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    section = results["verdict"]["knobs_and_losses"]
    want = but(**differs)
    assert {k: section[k] for k in want} == want
    assert section["findings"] == []


@pytest.mark.parametrize(("profile", "want"), [pytest.param(*c, id=c[0]) for c in CASES])
def test_knobs_and_losses_end_to_end(
    serve: Serve, tmp_path: Path, profile: str, want: dict[str, Any]
) -> None:
    server = serve(PROFILES[profile]())
    code, outcome, said = probe(server, tmp_path)
    assert code == 0, said
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    section = results["verdict"]["knobs_and_losses"]
    # The capability file carries the same fields flat, under the same names, and so does the
    # --json outcome's entry.
    cache = yaml.safe_load(Path(os.environ["CONCHCHECK_CACHE"]).read_text())
    [written] = cache["entries"]
    entry = outcome["entry"]
    # Whatever a knob or a loss comes to, the mode stays what the calls say.
    mode = MODE.get(profile, "native")
    assert (results["verdict"]["mode"], written["mode"]) == (mode, mode)
    # A knob not honoured, or a loss, is a finding; the honest endpoint has none.
    assert bool(section["findings"]) is (profile != "honest"), section["findings"]
    for found in (section, written, entry):
        assert {k: found[k] for k in want} == want
