"""Ollama's native API end to end: the adapter and transport against the emulator on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.catalogue import Catalogues, ModelInfo
from conchcheck.wire.chat import ChatRequest, Finish, Message, Role, ToolCall
from conchcheck.wire.ollama import OllamaAdapter
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Exchange, Wire
from tests.emulators.model import answers_in_words, calls_cleanly, ignores_tools, rambles
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
MODELS = {
    "qwen3:4b": (["completion", "tools"], 40960, calls_cleanly(arguments={"city": "Oslo"})),
    "gemma3:4b": (["completion"], 8192, ignores_tools()),
    "words:1b": (
        ["completion", "tools"],
        2048,
        answers_in_words("hermes", "get_weather", {"city": "Oslo"}),
    ),
    "rambler:1b": (["completion", "tools"], 2048, rambles()),
}


def send(server: EmulatorServer, model: str, request: ChatRequest) -> Exchange:
    async def go() -> Exchange:
        async with Wire() as wire:
            return await wire.send(
                parse_target(f"ollama:{model}", base_url=server.url), OllamaAdapter(), request, None
            )

    return asyncio.run(go())


def ask(
    model: str,
    stream: bool,
    messages: tuple[Message, ...] = (Message(Role.USER, "Weather in Oslo?"),),
) -> ChatRequest:
    return ChatRequest(model, messages, tools=(WEATHER,), stream=stream, max_tokens=32)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_native_call(serve: Serve, stream: bool) -> None:
    server = serve(OllamaEmulator(MODELS))
    exchange = send(server, "qwen3:4b", ask("qwen3:4b", stream))
    assert exchange.reply is not None
    assert [(c.name, json.loads(c.arguments)) for c in exchange.reply.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert server.received[0].path == "/api/chat" and server.received[0].json()["stream"] is stream


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_round_trip_result_goes_back_as_a_tool_message(serve: Serve, stream: bool) -> None:
    server = serve(OllamaEmulator(MODELS))
    messages = (
        Message(Role.USER, "Weather in Oslo?"),
        Message(Role.ASSISTANT, "", (ToolCall(None, "get_weather", '{"city": "Oslo"}'),)),
        Message(Role.TOOL, "CODEWORD-7", name="get_weather"),
    )
    reply = send(server, "qwen3:4b", ask("qwen3:4b", stream, messages)).reply
    assert reply is not None and reply.text == "The tool said: CODEWORD-7"
    sent = server.received[0].json()["messages"]
    assert sent[1]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": {"city": "Oslo"},
    }
    assert sent[2] == {"role": "tool", "content": "CODEWORD-7", "tool_name": "get_weather"}


def test_model_without_tools_is_refused_with_ollamas_words(serve: Serve) -> None:
    exchange = send(serve(OllamaEmulator(MODELS)), "gemma3:4b", ask("gemma3:4b", False))
    assert exchange.refusal is not None
    assert (exchange.refusal.kind, exchange.refusal.message) == (
        RefusalKind.TOOLS,
        "registry.ollama.ai/library/gemma3:4b does not support tools",
    )


def test_unknown_model_is_not_found(serve: Serve) -> None:
    exchange = send(serve(OllamaEmulator(MODELS)), "llama3", ask("llama3", False))
    assert exchange.refusal is not None and exchange.refusal.kind is RefusalKind.NOT_FOUND


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_words_and_cut_off(serve: Serve, stream: bool) -> None:
    server = serve(OllamaEmulator(MODELS))
    words = send(server, "words:1b", ask("words:1b", stream)).reply
    assert (
        words is not None
        and words.tool_calls == ()
        and "call_markers_in_text" in [f.code for f in words.findings]
    )
    cut = send(server, "rambler:1b", ask("rambler:1b", stream)).reply
    assert cut is not None and cut.finish is Finish.LENGTH


def test_catalogue_reads_api_show(serve: Serve) -> None:
    server = serve(OllamaEmulator(MODELS))

    async def go() -> list[ModelInfo]:
        async with Wire() as wire:
            catalogues = Catalogues(wire)
            return [
                await catalogues.lookup(parse_target(f"ollama:{m}", base_url=server.url), None)
                for m in ("qwen3:4b", "gemma3:4b", "nope")
            ]

    tools, no_tools, missing = asyncio.run(go())
    assert (tools.tools, tools.context_window, no_tools.tools, missing.listed) == (
        True,
        40960,
        False,
        False,
    )
    assert tools.evidence == "capabilities: ['completion', 'tools'], context_length: 40960"
