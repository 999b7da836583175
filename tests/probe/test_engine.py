"""The engine driven in process through httpx.MockTransport: exact cells for splitting,
exploration, confirmation, budgets, dead endpoints, scheduling order, streaming and resume.

The handlers are the loopback emulators' own (tests/emulators), called without a socket, so
what the engine meets here is what it meets over HTTP, only faster and in a fixed order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from conchcheck.matrix import Matrix, knob_matrix, load_matrix
from conchcheck.probe import Probe, ProbeOptions
from conchcheck.results import Cell, Outcome, ProbeResult, Stage
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import Received, Response
from tests.emulators.vectors import refusal

MATRIX = load_matrix("default")
VALID = [c.id for c in MATRIX.schema_cases if c.valid]
INVALID = [c.id for c in MATRIX.schema_cases if not c.valid]
Handler = Callable[[Received], Response]


class Recorder:
    """A MockTransport around an emulator handler, keeping every request in order."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.seen: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = request.content
        self.seen.append(json.loads(body) if body else {"GET": request.url.path})
        received = Received(
            request.method, request.url.path, {}, {k.lower(): v for k, v in request.headers.items()},
            body,
        )  # fmt: skip
        response = self.handler(received)
        content = b"".join(response.chunks) if response.chunks is not None else response.body
        return httpx.Response(response.status, headers=response.headers, content=content)


def run(handler: Handler, concurrency: int = 4, resume: tuple[Cell, ...] = (),
        matrix: Matrix = MATRIX, **options: Any) -> tuple[ProbeResult, Recorder]:  # fmt: skip
    recorder = Recorder(handler)
    policy = Policy(concurrency=concurrency, backoff=0.0, max_wait=0.0)
    target = parse_target("vllm:m", base_url="http://127.0.0.1:9/v1")
    probe = Probe(
        target, matrix, options=ProbeOptions(policy=policy, **options),
        transport=httpx.MockTransport(recorder), resume=resume,
    )  # fmt: skip
    return asyncio.run(probe.run()), recorder


def cells(result: ProbeResult, stage: Stage) -> dict[str, Cell]:
    return {c.id: c for c in result.cells if c.stage is stage}


KNOB_USERS = {prompt.user for prompt in knob_matrix().prompts}


def kind(body: dict[str, Any]) -> str:
    """What a request was for, from its body alone."""
    users = [m.get("content") for m in body.get("messages") or () if m.get("role") == "user"]
    if users and users[0] in KNOB_USERS:
        return "knobs"
    text = (body.get("messages") or [{}])[-1].get("content") or ""
    if text.startswith("Reply with the single word: ready"):
        return "reach"
    if text.startswith("Reply with the single word: ok"):
        return "dialect"
    system = (body.get("messages") or [{}])[0].get("content") or ""
    if body.get("tools"):
        return "native"
    return "words" if "<tool_call>" in system else "other"


def test_an_endpoint_that_accepts_everything_is_settled_in_one_round() -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX)))
    dialect = cells(result, Stage.DIALECT)
    assert sorted(dialect) == sorted(f"dialect/permissive/{c}" for c in VALID + INVALID)
    assert all(c.outcome is Outcome.ACCEPTED and c.requests == 1 for c in dialect.values())
    assert result.stage_requests["dialect"] == 2 + len(INVALID)  # the group, many-tools, invalid
    assert result.verdict is not None and result.verdict.dialect.dialect == "permissive"
    assert result.requests == len(seen.seen)


def test_gemini_behind_a_generic_url_is_explored_to_gemini_and_confirmed() -> None:
    result, _ = run(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"))
    verdict = result.verdict
    assert verdict is not None and verdict.dialect.dialect == "gemini"
    dialect = cells(result, Stage.DIALECT)
    # Confirmed: every valid case was sent in gemini, none taken on a twin's word.
    confirmed = [dialect[f"dialect/gemini/{case}"] for case in VALID]
    assert all(c.outcome is Outcome.ACCEPTED and c.requests == 1 for c in confirmed)
    # Both more permissive dialects were refused on a schema, with Gemini's own words.
    for more in ("permissive", "anthropic"):
        refused = [c for c in dialect.values() if c.dialect == more and c.refusal_kind == "schema"]
        assert refused and all("Unknown name" in c.detail or "Invalid" in c.detail for c in refused)
    assert "strict" not in {c.dialect for c in dialect.values()}
    assert result.stage_requests["dialect"] <= 29


def test_a_refusal_naming_its_tool_settles_that_case_without_sending_it_again() -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"))
    named = [
        c for c in result.cells
        if c.stage is Stage.DIALECT and c.outcome is Outcome.REFUSED and len(c.cases) > 1
    ]  # fmt: skip
    assert named, "a refused group names its tool"
    for cell in named:
        # The cell keeps the whole group it was sent with: the evidence is that request.
        assert cell.case in cell.cases and cell.requests == 1
    alone = [b for b in seen.seen if kind(b) == "dialect" and len(b.get("tools") or ()) == 1]
    names = {c.case for c in named}
    sent_alone = {t["function"]["name"] for b in alone for t in b["tools"]}
    tools = {c.id: c.tool.name for c in MATRIX.schema_cases}
    assert not {tools[n] for n in names} & sent_alone


def test_an_endpoint_refusing_tools_stops_exploring_and_carries_no_dialect() -> None:
    catalogue = [{"id": "m", "supported_parameters": ["max_tokens"]}]
    handler = OpenAIEmulator(oracle(MATRIX), flavour="openrouter", catalogue=catalogue)
    recorder = Recorder(handler)
    target = parse_target("openrouter:m", base_url="http://127.0.0.1:9/api/v1")
    policy = Policy(concurrency=4, backoff=0.0, max_wait=0.0)
    probe = Probe(target, MATRIX, options=ProbeOptions(policy=policy),
                  transport=httpx.MockTransport(recorder))  # fmt: skip
    result = asyncio.run(probe.run())
    assert result.verdict is not None and result.verdict.dialect.dialect is None
    assert {c.dialect for c in cells(result, Stage.DIALECT).values()} == {"permissive"}
    assert result.verdict.mode.value == "words"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        pytest.param(
            Response(
                200,
                b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
                {"content-type": "text/html"},
            ),
            "bad_shape: The provider answered 2xx with an HTML page",
            id="html-200-to-everything",
        ),
        pytest.param(
            Response(
                200,
                b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess',
                {"content-type": "application/json"},
            ),
            "bad_shape: The provider answered 2xx with a body that is not JSON",
            id="truncated-json-to-everything",
        ),
    ],
)
def test_an_endpoint_that_never_answers_usably_is_unusable(reply: Response, reason: str) -> None:
    result, seen = run(lambda received: reply)
    assert result.unusable is not None and result.unusable.startswith(reason)
    assert result.verdict is None
    assert [c.id for c in result.cells] == ["reach"]  # nothing after it was evidence
    assert len(seen.seen) == 1


def test_an_endpoint_that_dies_after_the_first_request_is_unusable() -> None:
    first = OpenAIEmulator(oracle(MATRIX))

    def handler(received: Received) -> Response:
        if len(calls) == 0:
            calls.append(1)
            return first(received)
        return Response(200, b"<html><body>gone</body></html>", {"content-type": "text/html"})

    calls: list[int] = []
    result, _ = run(handler)
    assert result.unusable is not None
    assert result.unusable.startswith("every request after the first failed: ")
    assert result.verdict is None


@pytest.mark.parametrize("budget", [5, 12])
def test_the_request_budget_counts_retries_and_is_never_exceeded(budget: int) -> None:
    emulator = OpenAIEmulator(oracle(MATRIX))
    state = {"n": 0}

    def handler(received: Received) -> Response:
        state["n"] += 1
        # Every other attempt after the first is rate-limited (OpenAI's real 429); a 429 to
        # the plain first request would make the target unusable.
        if state["n"] % 2 == 0:
            return refusal("openai-429-try-again-in-milliseconds")
        return emulator(received)

    result, seen = run(handler, max_requests=budget)
    assert len(seen.seen) == result.requests == budget
    assert result.stopped == f"the request budget ({budget}) is spent"
    assert sum(result.stage_requests.values()) == budget


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_the_token_budget_stops_the_probe_and_is_never_exceeded(concurrency: int) -> None:
    result, seen = run(OpenAIEmulator(oracle(MATRIX)), concurrency=concurrency, max_tokens=2000)
    assert result.stopped == "the token budget (2000) is spent"
    assert len(seen.seen) == result.requests < 33
    # Requests in flight together held what they might spend before they went.
    assert result.prompt_tokens + result.completion_tokens <= 2000


def test_native_prompts_wait_for_every_exploration_request() -> None:
    _, seen = run(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"), concurrency=1)
    bodies = [b for b in seen.seen if "GET" not in b]
    kinds = [kind(b) for b in bodies]
    invalid = {c.tool.name for c in MATRIX.schema_cases if not c.valid}
    names = [{t["function"]["name"] for t in b.get("tools") or ()} for b in bodies]
    exploring = [i for i, k in enumerate(kinds) if k == "dialect" and not names[i] & invalid]
    natives = [i for i, k in enumerate(kinds) if k == "native"]
    assert kinds[0] == "reach"
    assert max(exploring) < min(natives)  # native tools go in the verdict's dialect


def test_words_prompts_do_not_wait_for_the_dialect() -> None:
    # Two at a time: while the dialect is explored round by round, words prompts fill the slot.
    _, seen = run(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"), concurrency=2)
    kinds = [kind(b) for b in seen.seen if "GET" not in b]
    last_dialect = max(i for i, k in enumerate(kinds) if k == "dialect")
    assert kinds.index("words") < last_dialect


def test_streaming_failures_never_agree() -> None:
    emulator = OpenAIEmulator(oracle(MATRIX))

    def handler(received: Received) -> Response:
        if (received.json() or {}).get("stream"):
            return Response(200, b"<html><body>no streams here</body></html>",
                            {"content-type": "text/html"})  # fmt: skip
        return emulator(received)

    result, _ = run(handler)
    streaming = [c for c in result.cells if c.mode == "streaming"]
    assert len(streaming) == len(MATRIX.prompts)  # every native prompt is also streamed
    assert all(c.outcome is Outcome.ERROR for c in streaming)
    assert all(c.detail.startswith("No usable reply to compare (streamed): ") for c in streaming)


def test_resume_repeats_no_finished_cell() -> None:
    handler = OpenAIEmulator(oracle(MATRIX))
    first, seen_first = run(handler, max_requests=8)
    assert first.stopped is not None
    finished = tuple(c for c in first.cells if c.outcome is not Outcome.ERROR)
    second, seen_second = run(handler, resume=finished)
    assert second.stopped is None and second.verdict is not None
    assert len({c.id for c in second.cells}) == len(second.cells)
    # Together, the two runs sent what one whole probe sends.
    _, seen_whole = run(handler)
    assert len(seen_first.seen) + len(seen_second.seen) == len(seen_whole.seen)


def test_a_model_without_tools_is_judged_on_answers_not_failures() -> None:
    result, _ = run(OpenAIEmulator(ignores_tools()))
    verdict = result.verdict
    assert verdict is not None
    assert (verdict.native.failed, verdict.words.failed) == (0, 0)
    assert verdict.mode.value == "none"
    assert verdict.tools_observed is False


def test_a_group_refused_without_naming_a_case_is_split_to_find_it() -> None:
    # llama.cpp's template errors name no tool (provider-facts: llama-server observations).
    emulator = OpenAIEmulator(oracle(MATRIX))

    def handler(received: Received) -> Response:
        tools = (received.json() or {}).get("tools") or []
        if any('"type": ["string", "null"]' in json.dumps(t) for t in tools):
            return refusal("llamacpp-jinja-type-list-is-type")
        return emulator(received)

    result, _ = run(handler)
    dialect = cells(result, Stage.DIALECT)
    refused = {c.id for c in dialect.values() if c.refusal_kind == "schema" and c.cases}
    assert "dialect/permissive/type-list-null" in refused
    assert all(c.outcome is Outcome.ACCEPTED for i, c in dialect.items() if i not in refused)
    # anthropic keeps the type list and is refused the same way; gemini writes `nullable`.
    assert dialect["dialect/anthropic/type-list-null"].refusal_kind == "schema"
    verdict = result.verdict
    assert verdict is not None and verdict.dialect.dialect == "gemini"


def test_a_refusal_naming_several_tools_settles_each_with_its_own_keyword() -> None:
    # Gemini lists every violation, one a line (vector
    # gemini-unknown-name-snake-case-additional-properties): one request settles them all.
    result, _ = run(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"))
    permissive = [
        c for c in result.cells if c.dialect == "permissive" and c.refusal_kind == "schema"
        and len(c.cases) > 1
    ]  # fmt: skip
    assert len(permissive) > 5
    assert len({c.cases for c in permissive}) == 1  # all named by the one grouped request
    keywords = {c.case: c.refusal.keyword for c in permissive if c.refusal}
    assert (keywords["const"], keywords["ref-defs"], keywords["schema-id"]) == (
        "const",
        "$ref",
        "$schema",
    )
    assert result.stage_requests["dialect"] <= 12
