"""Every refusal kind, through every adapter, over real sockets, streamed and not.

Each row sends a provider's real refusal body (from tests/data/refusals.yaml, with its
source there) from that provider's emulator, and checks the transport classifies it as the
vector says, retries only what may succeed later, and keeps no key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire import adapter_for
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Exchange, Policy, Wire
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.gemini_api import GeminiEmulator
from tests.emulators.model import ignores_tools
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.emulators.vectors import refusal, vector

Serve = Callable[[Handler], EmulatorServer]
KEY = "sk-matrix-key-0123456789abcdef"

EMULATORS: dict[str, tuple[str, str, Callable[[list[Response]], Any]]] = {
    "openai": ("openai:gpt-x", "/v1", lambda q: OpenAIEmulator(ignores_tools(), queue=q)),
    "anthropic": (
        "anthropic:claude-x",
        "/v1",
        lambda q: AnthropicEmulator(ignores_tools(), queue=q),
    ),
    "gemini": ("gemini:gemini-x", "/v1beta", lambda q: GeminiEmulator(ignores_tools(), queue=q)),
    "ollama": (
        "ollama:qwen3:4b",
        "",
        lambda q: OllamaEmulator({"qwen3:4b": (["tools"], 4096, ignores_tools())}, queue=q),
    ),
}

ROWS = [
    ("openai", "openai-root-must-be-object"),
    ("openai", "groq-tool-use-failed-carries-failed-generation"),
    ("openai", "openrouter-404-no-endpoints-for-tool-use-is-tools-not-not-found"),
    ("openai", "openai-401-incorrect-api-key-is-redacted"),
    ("openai", "openai-429-try-again-in-milliseconds"),
    ("openai", "openai-429-insufficient-quota-is-quota"),
    ("openai", "openrouter-402-insufficient-credits-is-quota"),
    ("openai", "openai-context-length-exceeded"),
    ("openai", "openai-404-model-not-found"),
    ("openai", "mistral-object-error-envelope-call-mismatch-is-other"),
    ("openai", "gemini-openai-compat-array-envelope"),
    ("openai", "llamacpp-500-tools-need-jinja-is-tools-not-retryable"),
    ("anthropic", "anthropic-tool-25-input-schema-not-draft-2020-12"),
    ("anthropic", "anthropic-401-invalid-x-api-key"),
    ("anthropic", "anthropic-429-rate-limit-error"),
    ("anthropic", "anthropic-prompt-is-too-long"),
    ("anthropic", "anthropic-404-not-found-error-names-model"),
    ("anthropic", "anthropic-529-overloaded-is-other-and-retryable"),
    ("gemini", "gemini-unknown-name-dollar-schema-at-request-path"),
    ("gemini", "gemini-api-key-invalid-400-is-auth"),
    ("gemini", "gemini-429-per-minute-quota-with-retryinfo-is-rate-limit"),
    ("gemini", "gemini-429-per-day-quota-is-quota"),
    ("gemini", "gemini-input-token-count-400-is-context-not-auth"),
    ("gemini", "gemini-404-model-not-found-for-api-version"),
    ("gemini", "gemini-bare-invalid-argument-is-other-never-tools"),
    ("ollama", "ollama-native-string-error-does-not-support-tools"),
    ("ollama", "ollama-404-model-not-found-try-pulling"),
]


def send(server: EmulatorServer, api: str, stream: bool) -> Exchange:
    text, suffix, _ = EMULATORS[api]
    target = parse_target(text, base_url=server.url + suffix)
    request = ChatRequest(
        target.model,
        (Message(Role.USER, "hi"),),
        tools=(Tool("ping"),),
        stream=stream,
        max_tokens=8,
    )
    key = None if api == "ollama" else Secret(KEY)

    async def go() -> Exchange:
        async with Wire(policy=Policy(retries=0)) as wire:
            return await wire.send(target, adapter_for(target), request, key)

    return asyncio.run(go())


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("api", "vector_id"), [pytest.param(f, v, id=v) for f, v in ROWS])
def test_refusal_through_the_adapter(serve: Serve, api: str, vector_id: str, stream: bool) -> None:
    server = serve(EMULATORS[api][2]([refusal(vector_id)]))
    exchange = send(server, api, stream)
    want = vector(vector_id)["want"]
    assert exchange.refusal is not None and exchange.reply is None and exchange.error is None
    assert exchange.refusal.kind == RefusalKind(want["kind"])
    assert exchange.refusal.message == want["message"]
    assert exchange.status == vector(vector_id)["status"]
    assert KEY not in repr(exchange)


def test_every_kind_is_covered() -> None:
    kinds = {vector(v)["want"]["kind"] for _, v in ROWS}
    assert kinds == {k.value for k in RefusalKind}
    assert {f for f, _ in ROWS} == set(EMULATORS)


def test_concurrency_is_limited_per_provider(serve: Serve) -> None:
    import threading
    import time

    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def slow(received: Any) -> Response:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Response.json({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]})

    server = serve(slow)
    target = parse_target("llamacpp:local", base_url=server.url + "/v1")
    request = ChatRequest("local", (Message(Role.USER, "hi"),))

    async def go() -> list[Exchange]:
        async with Wire(policy=Policy(concurrency=2)) as wire:
            return await asyncio.gather(
                *(wire.send(target, adapter_for(target), request, None) for _ in range(6))
            )

    exchanges = asyncio.run(go())
    assert all(e.reply is not None for e in exchanges)
    assert state["most"] == 2


REPLIES = {
    "openai": b'{"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}',
    "anthropic": b'{"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}',
    "gemini": b'{"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}',
    "ollama": b'{"message": {"role": "assistant", "content": "ok"}, "done": true, "done_reason": "stop"}',
}
AUTH = {
    "openai": ("authorization", f"Bearer {KEY}"),
    "anthropic": ("x-api-key", KEY),
    "gemini": ("x-goog-api-key", KEY),
    "ollama": ("authorization", f"Bearer {KEY}"),
}


@pytest.mark.parametrize("api", sorted(EMULATORS))
def test_request_bytes_on_the_transport(api: str) -> None:
    import json

    import httpx

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, content=REPLIES[api], headers={"content-type": "application/json"}
        )

    text, suffix, _ = EMULATORS[api]
    target = parse_target(text, base_url="https://provider.test" + suffix)
    adapter = adapter_for(target)
    request = ChatRequest(
        target.model, (Message(Role.USER, "hi"),), tools=(Tool("ping"),), max_tokens=8
    )

    async def go() -> Exchange:
        async with Wire(transport=httpx.MockTransport(handler)) as wire:
            return await wire.send(target, adapter, request, Secret(KEY))

    exchange = asyncio.run(go())
    built = adapter.build(target.base_url, request, KEY)
    (sent,) = seen
    assert (sent.method, str(sent.url)) == (built.method, built.url)
    assert json.loads(sent.content) == built.body
    assert sent.headers[AUTH[api][0]] == AUTH[api][1]
    assert exchange.reply is not None and exchange.reply.text == "ok"
    assert exchange.request_headers[AUTH[api][0]] == "[redacted]" and KEY not in repr(exchange)
