"""A fixed probe result for the report tests, and ``--update-golden`` to rewrite the goldens."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import Dialect
from conchcheck.core.fidelity import compare_arguments
from conchcheck.core.knobs import Knob, KnobState
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.results import (
    CallReading,
    CatalogueFacts,
    Cell,
    CellMode,
    FidelityFacts,
    IdFacts,
    KnobFacts,
    NativeFacts,
    Outcome,
    ProbeResult,
    ReadCall,
    ReplyEvidence,
    RequestEvidence,
    RunInfo,
    SchemaFacts,
    Stage,
)
from conchcheck.verdict import decide
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.chat import Finding, Finish, ToolCall
from conchcheck.wire.exchange import WireErrorKind
from conchcheck.wire.providers import ApiFamily
from tests.conftest import _loopback_only
from tests.emulators.server import EmulatorServer
from tests.report.compatibility.conftest import PROFILES

URL = "https://openrouter.ai/api/v1"
MODEL = "qwen/qwen3-8b"
HEADERS = {"authorization": "Bearer [redacted]", "content-type": "application/json"}
PIPE_REFUSAL = (
    'Invalid JSON payload received. Unknown name "$ref" at '
    "'tools[0].function_declarations[0].parameters.properties[0].value': Cannot find field. "
    "| Use `parameters` with the OpenAPI subset."
)
CONTEXT_REFUSAL = (
    "This endpoint's maximum context length is 8192 tokens. However, you requested about "
    "41250 tokens (41050 of text input, 200 in the output)."
)
# OpenRouter's 404 for a tool_choice no endpoint of the model takes (zed-industries/zed#36094,
# provider-facts N04); classify() reads it as kind tools, so the knob stays untested.
TOOL_CHOICE_REFUSAL = (
    "No endpoints found that support the provided 'tool_choice' value. To learn more about "
    "provider routing, visit: https://openrouter.ai/docs/provider-routing"
)
TOOLS_REFUSAL = (
    "No endpoints found that support tool use. To learn more about provider routing, visit: "
    "https://openrouter.ai/docs/provider-routing"
)


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden", default=False))


def _request(body: dict[str, Any]) -> RequestEvidence:
    return RequestEvidence("POST", f"{URL}/chat/completions", HEADERS, body)


def _reply(
    text: str = "", calls: list[dict[str, Any]] | None = None, finish: str = "stop"
) -> ReplyEvidence:
    sent = tuple(ToolCall(c["id"], c["name"], json.dumps(c["arguments"])) for c in calls or [])
    return ReplyEvidence(200, 1, text, sent, Finish(finish), finish, 180, 24)


def _refusal(kind: str, status: int, message: str, **fields: Any) -> Refusal:
    return Refusal(
        RefusalKind(kind), status, message, fields.get("code"), None, fields.get("path"),
        fields.get("tool_index"), fields.get("keyword"),
    )  # fmt: skip


def _dialect(
    dialect: str, case: str, cases: tuple[str, ...], refusal: Refusal | None, **kw
) -> Cell:
    body = {"model": MODEL, "tools": [{"type": "function", "function": {"name": c}} for c in cases]}
    accepted = refusal is None
    detail = (
        "Accepted." if len(cases) == 1 else f"Accepted (sent with {len(cases) - 1} other cases)."
    )
    return Cell(
        f"dialect/{dialect}/{case}",
        Stage.DIALECT,
        case,
        Outcome.ACCEPTED if accepted else Outcome.REFUSED,
        detail if refusal is None else refusal.message,
        dialect=dialect,
        request=_request(body),
        reply=_reply("ok") if refusal is None else ReplyEvidence(refusal.status),
        refusal=refusal,
        cases=cases,
        latency_ms=kw.get("latency_ms", 310.5),
        prompt_tokens=60 if accepted else None,
        completion_tokens=1 if accepted else None,
        facts=SchemaFacts(kw.get("feature", case), kw.get("valid", True)),
    )


def _prompt(stage: Stage, case: str, attempt: int, outcome: Outcome, detail: str, **kw) -> Cell:
    calls = kw.pop("calls", [])
    mode = stage.value
    fields: dict[str, Any] = {
        "mode": CellMode(mode),
        "attempt": attempt,
        "request": _request({"model": MODEL, "messages": [{"role": "user", "content": case}]}),
        "reply": _reply(kw.pop("text", ""), calls, kw.pop("finish", "stop")),
        "reading": CallReading(
            tuple(ReadCall(mode, c["name"], True, c["arguments"]) for c in calls)
        ),
        "latency_ms": 820.0 + attempt,
        "prompt_tokens": 180,
        "completion_tokens": 24,
    }
    if stage is Stage.NATIVE:
        fields["dialect"] = "gemini"
        fields["facts"] = NativeFacts(len(calls), False)
    fields.update(kw)
    return Cell(f"{mode}/{case}/{attempt}", stage, case, outcome, detail, **fields)


REMEMBER = [{"id": "call_1", "name": "remember", "arguments": {"fact": "Ada likes tea"}}]
WEATHER = [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}]
KELVIN = [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo", "unit": "kelvin"}}]
GOOD = "Called the expected tool with the expected arguments."


# fmt: off
def cells() -> tuple[Cell, ...]:
    """Every cell of the fixed probe, in the order ``Probe.partial`` sorts them."""
    schema_ref = _refusal(
        "schema", 400, PIPE_REFUSAL, keyword="$ref", tool_index=1,
        path="tools[0].function_declarations[0].parameters.properties[0].value",
    )
    root = _refusal(
        "schema", 400, "Invalid schema for function 'set_mode': schema must be a JSON Schema "
        "of 'type: \"object\"', got 'type: \"string\"'.",
        keyword="type", path="tools[0].function.parameters",
    )
    context = _refusal("context_length", 400, CONTEXT_REFUSAL)
    pair = ("baseline", "ref-defs")
    N, W = Stage.NATIVE, Stage.WORDS
    return (
        Cell(
            "reach", Stage.REACH, "reach", Outcome.PASS,
            "The target answered a plain chat request.",
            request=_request({"model": MODEL, "max_tokens": 8}), reply=_reply("ready"),
            latency_ms=412.3, prompt_tokens=12, completion_tokens=1,
        ),
        Cell(
            "catalogue", Stage.CATALOGUE, "catalogue", Outcome.PASS,
            'supported_parameters: ["max_tokens", "temperature"]',
            request=RequestEvidence("GET", f"{URL}/models"),
            facts=CatalogueFacts(True, False, 40960),
        ),
        _dialect("gemini", "baseline", pair, None),
        _dialect("gemini", "many-tools", ("many-tools",), context, feature="128 tools"),
        _dialect("gemini", "ref-defs", pair, None, feature="$ref into $defs"),
        _dialect("permissive", "baseline", ("baseline",), None),
        _dialect("permissive", "many-tools", ("many-tools",), context, feature="128 tools"),
        _dialect(
            "permissive", "not-object-root", ("not-object-root",), root,
            feature="a string at the root", valid=False,
        ),
        _dialect("permissive", "ref-defs", ("ref-defs",), schema_ref, feature="$ref into $defs"),
        _prompt(N, "remember", 1, Outcome.PASS, GOOD, calls=REMEMBER),
        _prompt(
            N, "remember", 2, Outcome.PASS_AFTER_REPAIR, f"{GOOD} Repairs: trailing_comma.",
            calls=REMEMBER, repairs=("trailing_comma",),
        ),
        _prompt(
            N, "three-args", 1, Outcome.REFUSED, TOOLS_REFUSAL,
            reply=ReplyEvidence(404),
            refusal=_refusal("tools", 404, TOOLS_REFUSAL), reading=None,
            prompt_tokens=None, completion_tokens=None, facts=None,
        ),
        _prompt(
            N, "three-args", 2, Outcome.CUT_OFF,
            "The reply hit its token limit. The model called no tool.",
            text='<tool_call>{"name": "add_event", "arguments": {"title": "Lunch"', finish="length",
            findings=(
                Finding("call_markers_in_text",
                        "The text content holds <tool_call> markers: a call written as words."),
            ),
            facts=NativeFacts(0, True),
        ),
        _prompt(
            N, "weather-enum", 1, Outcome.WRONG_ARGUMENTS,
            'The arguments for get_weather don\'t fit: unit: expected one of "c"|"f", got the '
            'text "kelvin".',
            calls=KELVIN,
        ),
        _prompt(N, "weather-enum", 2, Outcome.PASS, GOOD, calls=WEATHER),
        _prompt(
            W, "pick-tool", 1, Outcome.SKIPPED,
            "The tool list doesn't fit the model's window: chat only.",
            request=None, reply=None, reading=None, latency_ms=0.0,
            prompt_tokens=None, completion_tokens=None,
        ),
        _prompt(W, "remember", 1, Outcome.PASS, GOOD, calls=REMEMBER),
        _prompt(W, "remember", 2, Outcome.PASS, GOOD, calls=REMEMBER),
        _prompt(W, "three-args", 1, Outcome.NO_CALL, "The model answered without a call.",
                text="Sure! I have added lunch to your calendar."),
        _prompt(
            W, "three-args", 2, Outcome.CUT_OFF,
            "The reply hit its token limit. The model wrote an unclosed call.",
            text='<tool_call>{"name": "add_event", "arguments": {"title": "Lu', finish="length",
        ),
        _prompt(
            W, "weather-enum", 1, Outcome.PASS_AFTER_REPAIR,
            f"{GOOD} Repairs: single_quotes, fence.",
            calls=WEATHER, repairs=("single_quotes", "fence"),
        ),
        _prompt(W, "weather-enum", 2, Outcome.PASS, GOOD, calls=WEATHER),
        Cell(
            "follow_up/round_trip/native/remember", Stage.FOLLOW_UP, "remember", Outcome.PASS,
            "The final answer used the tool's result.", mode=CellMode.ROUND_TRIP_NATIVE,
            request=_request({"model": MODEL}), reply=_reply("Noted: PELICAN-7."),
            latency_ms=640.0, prompt_tokens=220, completion_tokens=9,
        ),
        Cell(
            "follow_up/round_trip/words/remember", Stage.FOLLOW_UP, "remember",
            Outcome.WRONG_ARGUMENTS, 'The final answer doesn\'t contain "PELICAN-7".',
            mode=CellMode.ROUND_TRIP_WORDS, request=_request({"model": MODEL}),
            reply=_reply("I have remembered that."), latency_ms=700.0,
            prompt_tokens=240, completion_tokens=7,
        ),
        Cell(
            "follow_up/streaming/weather-enum", Stage.FOLLOW_UP, "weather-enum", Outcome.ERROR,
            "No reply within 60 s.", mode=CellMode.STREAMING, error_kind=WireErrorKind.TIMEOUT,
            request=_request({"model": MODEL, "stream": True}), latency_ms=60000.0,
        ),
    )
# fmt: on


SNIPPET = {
    "code": 'def greet(name):\n    print("Hello, " + name)\n    return "C:\\temp\\new"\n',
    "note": "Keep </tool_call> and <|im_end|> as they are.",
    "label": "Crème brûlée 🍮",
    "count": 9007199254740993,
    "empty": "",
}
"""The knob matrix's fidelity prompt's arguments."""
STRIPPED = {**SNIPPET, "code": SNIPPET["code"].replace("\n", "")}
"""What a server that strips newlines gives back."""


def _knob(cell_id: str, outcome: Outcome, detail: str, body: dict[str, Any], **kw: Any) -> Cell:
    calls, case = kw.pop("calls", []), kw.pop("case")
    fields: dict[str, Any] = {
        "mode": CellMode.NATIVE,
        "dialect": "gemini",
        "request": _request({"model": MODEL, **body}),
        "reply": _reply(kw.pop("text", ""), calls, "tool_calls" if calls else "stop"),
        "reading": CallReading(
            tuple(ReadCall("native", c["name"], True, c["arguments"]) for c in calls)
        ),
        "latency_ms": 700.0,
        "prompt_tokens": 150,
        "completion_tokens": 20,
    }
    fields.update(kw)
    return Cell(cell_id, Stage.KNOBS, case, outcome, detail, **fields)


def _call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{number}", "name": name, "arguments": arguments}


# fmt: off
def knob_cells() -> tuple[Cell, ...]:
    """The knobs stage of the fixed probe: one knob honoured, two ignored, one failing open,
    one refused for a reason that says nothing of it, ids repeated across rounds, newlines
    stripped from an exact argument."""
    paris, tokyo = {"city": "Paris"}, {"city": "Tokyo"}
    two = [_call(1, "get_weather", paris), _call(2, "get_weather", tokyo)]
    refusal = _refusal("tools", 404, TOOL_CHOICE_REFUSAL)
    breaking = (
        "set_alarm: minutes: 'ten' is not of type 'integer'.",
        "set_alarm: arguments: Additional properties are not allowed ('label' was unexpected).",
    )
    alarm = [_call(1, "set_alarm", {"minutes": "ten", "label": "tea"})]
    rounds = (("call_1",), ("call_1",), ())
    return (
        _knob(
            "knobs/tool_choice_none", Outcome.PASS,
            "tool_choice: none: no call came back to a prompt that asks for one.",
            {"tool_choice": "none"}, case="tool-choice-none", text="I can't check that now.",
            facts=KnobFacts(Knob.TOOL_CHOICE_NONE, KnobState.HONOURED, 0),
        ),
        _knob(
            "knobs/tool_choice_required", Outcome.NOT_HONOURED,
            "tool_choice: required, but no call came back: it was ignored.",
            {"tool_choice": "required"}, case="tool-choice-required", text="Hello there!",
            facts=KnobFacts(Knob.TOOL_CHOICE_REQUIRED, KnobState.IGNORED, 0),
        ),
        _knob(
            "knobs/tool_choice_named", Outcome.REFUSED,
            "The endpoint takes no tools: no knob can be tried.",
            {"tool_choice": {"type": "function", "function": {"name": "remember"}}},
            case="tool-choice-named", reply=ReplyEvidence(404), refusal=refusal, reading=None,
            prompt_tokens=None, completion_tokens=None,
            facts=KnobFacts(Knob.TOOL_CHOICE_NAMED, KnobState.UNTESTED),
        ),
        _knob(
            "knobs/parallel_false/baseline", Outcome.PASS,
            "Without the flag: Called the expected tool with the expected arguments.",
            {}, case="parallel", calls=two,
        ),
        _knob(
            "knobs/parallel_false", Outcome.NOT_HONOURED,
            "parallel_tool_calls: false, but 2 calls came back: it was ignored.",
            {"parallel_tool_calls": False}, case="parallel", calls=two,
            facts=KnobFacts(Knob.PARALLEL_FALSE, KnobState.IGNORED, 2, 2),
        ),
        _knob(
            "knobs/strict", Outcome.NOT_HONOURED,
            f"strict: true was taken, and a call breaks the schema: {breaking[0]}",
            {"tools": [{"type": "function", "function": {"name": "set_alarm", "strict": True}}]},
            case="strict-closed", calls=alarm,
            facts=KnobFacts(Knob.STRICT, KnobState.FAILS_OPEN, 1, breaking=breaking),
        ),
        _knob(
            "knobs/strict/open", Outcome.PASS,
            "With strict: true, it took an open schema with an optional field.",
            {"tools": [{"type": "function", "function": {"name": "add_tag", "strict": True}}]},
            case="strict-open", text="ok",
        ),
        _knob(
            "knobs/ids/1", Outcome.PASS, "Call ids by round: round 1: call_1.", {},
            case="ids-rounds", calls=[_call(1, "get_weather", paris)],
        ),
        _knob(
            "knobs/ids/2", Outcome.PASS, "Call ids by round: round 1: call_1; round 2: call_1.",
            {}, case="ids-rounds", calls=[_call(1, "get_weather", {"city": "Tokyo"})],
        ),
        _knob(
            "knobs/ids/3", Outcome.PASS,
            "Call ids by round: round 1: call_1; round 2: call_1; round 3: no call.", {},
            case="ids-rounds", text="Paris 18, Tokyo 18, Lima 18: sunny everywhere.",
            facts=IdFacts(rounds, True),
        ),
        _knob(
            "knobs/fidelity", Outcome.NOT_HONOURED,
            "The arguments came back altered: code (newlines_stripped).", {},
            case="fidelity", calls=[_call(1, "save_snippet", STRIPPED)],
            facts=FidelityFacts(compare_arguments(SNIPPET, STRIPPED)),
        ),
    )
# fmt: on


def cost_cells() -> tuple[Cell, ...]:
    """The cost stage of the fixed probe: two tools measured in gemini and strict, and a
    capacity search that doubles to 8 tools (refused for its context), then settles at 6."""

    def cost(cell_id: str, tokens: int, tools: tuple[str, ...], dialect: str | None) -> Cell:
        return Cell(
            cell_id, Stage.COST, cell_id.removeprefix("cost/"), Outcome.PASS,
            f"The prompt took {tokens} tokens with {len(tools)} tools.",
            dialect=dialect, cases=tools, prompt_tokens=tokens, completion_tokens=1,
        )  # fmt: skip

    def trial(count: int, outcome: Outcome, tokens: int | None, detail: str) -> Cell:
        refusal = _refusal("context_length", 400, CONTEXT_REFUSAL) if tokens is None else None
        return Cell(
            f"capacity/{count}", Stage.COST, f"capacity/{count}", outcome, detail,
            dialect="gemini", prompt_tokens=tokens, refusal=refusal,
        )  # fmt: skip

    return (
        cost("cost/none", 20, (), None),
        cost("cost/gemini/1", 85, ("get_weather",), "gemini"),
        cost("cost/gemini/2", 160, ("get_weather", "remember"), "gemini"),
        cost("cost/strict/1", 80, ("get_weather",), "strict"),
        cost("cost/strict/2", 150, ("get_weather", "remember"), "strict"),
        trial(1, Outcome.PASS, 90, "With 1 tool, get_ticket_status was called as asked."),
        trial(2, Outcome.PASS, 150, "With 2 tools, get_ticket_status was called as asked."),
        trial(4, Outcome.PASS, 270, "With 4 tools, get_ticket_status was called as asked."),
        trial(8, Outcome.REFUSED, None, CONTEXT_REFUSAL),
        trial(6, Outcome.PASS, 390, "With 6 tools, get_ticket_status was called as asked."),
        trial(7, Outcome.NO_CALL, 450, "With 7 tools, get_ticket_status was not called."),
    )


def build_result(**changes: Any) -> ProbeResult:
    everything = changes.get("cells", cells() + knob_cells() + cost_cells())
    catalogue = ModelInfo(
        f"GET {URL}/models",
        listed=True,
        tools=False,
        context_window=40960,
        evidence='supported_parameters: ["max_tokens", "temperature"]',
    )
    verdict = decide(
        everything, family="gemini", invalid_cases=["not-object-root"], tools_declared=False
    )
    values: dict[str, Any] = {
        "target": f"openrouter:{MODEL}",
        "provider": "openrouter",
        "model": MODEL,
        "endpoint": URL,
        "api": ApiFamily.OPENAI,
        "family_dialect": Dialect.GEMINI,
        "matrix": "default",
        "matrix_digest": "sha256:" + "0123456789abcdef" * 4,
        "cells": everything,
        "catalogue": catalogue,
        "verdict": verdict,
        "requests": 22,
        "prompt_tokens": 5234,
        "completion_tokens": 318,
        "stage_ms": {
            "reach": 412.3,
            "catalogue": 35.0,
            "dialect": 2310.4,
            "native": 5120.9,
            "words": 4876.2,
            "follow_up": 60210.5,
            "knobs": 2150.0,
            "cost": 3300.0,
        },
    }
    values.update(changes)
    return ProbeResult(**values)


@pytest.fixture
def make_result() -> Callable[..., ProbeResult]:
    """The fixed result with some fields changed: ``make_result(stopped="…")``."""
    return build_result


@pytest.fixture
def result() -> ProbeResult:
    return build_result()


@pytest.fixture
def info() -> RunInfo:
    return RunInfo(
        conchcheck_version="0.1.0",
        started_at="2026-03-01T09:00:00Z",
        finished_at="2026-03-01T09:01:13Z",
        command="conchcheck probe openrouter:qwen/qwen3-8b --repeat 2 --out out",
    )


DEFAULT_PROBES = ("gemini-openai:gemini-x", "openrouter:m")
"""Default-matrix probes of emulated providers: the most evidence (Gemini's refusals of many
schema cases, each naming every tool), and the most refusals (no tools at all)."""


@pytest.fixture(scope="session")
def default_probes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{target: folder}`` of each default probe, every report written, probed once."""
    root = tmp_path_factory.mktemp("default-probes")
    folders = {}
    # The suite's guards, held while probing only: the fixture outlives any one test.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _loopback_only)
        patch.setenv("CONCHCHECK_CACHE", str(root / "capabilities.yaml"))
        # Keys a probe holds stay masked for the whole process: none shares text with goldens.
        patch.setenv("GEMINI_API_KEY", "AIzaCompatReportKeyQwertyuiopZx")
        patch.setenv("OPENROUTER_API_KEY", "sk-or-compat-report-qwertyuiopzx")
        for target in DEFAULT_PROBES:
            folder = root / target.replace(":", "-")
            server = EmulatorServer(PROFILES[target]())
            try:
                args = ["probe", target, "--base-url", f"{server.url}/v1", "--out", str(folder)]
                done = CliRunner().invoke(app, [*args, "--quiet"])
            finally:
                server.close()
            assert done.exit_code == 0, done.output
            folders[target] = folder
    return folders
