"""Anthropic's Messages API end to end: the adapter and transport against the emulator."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from conchcheck.core.dialects import to_dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finish,
    Message,
    Role,
    ToolCall,
    ToolChoice,
)
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Exchange, Wire
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.model import calls_cleanly, ignores_tools, rambles
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
KEY = "sk-ant-emulated-key-0123456789"


def send(server: EmulatorServer, request: ChatRequest, key: str | None = KEY) -> Exchange:
    async def go() -> Exchange:
        async with Wire() as wire:
            target = parse_target("anthropic:claude-emu", base_url=server.url + "/v1")
            return await wire.send(
                target, AnthropicAdapter(), request, Secret(key) if key else None
            )

    return asyncio.run(go())


def ask(stream: bool, tools: tuple[Tool, ...] = (WEATHER,), **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        "claude-emu",
        (Message(Role.USER, "Weather in Rome?"),),
        tools=tools,
        stream=stream,
        max_tokens=64,
        **kwargs,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_native_call_and_forced_choice(serve: Serve, stream: bool) -> None:
    server = serve(AnthropicEmulator(calls_cleanly(arguments={"city": "Rome"}), key=KEY))
    exchange = send(server, ask(stream, tool_choice=ToolChoice(ChoiceMode.TOOL, "get_weather")))
    assert exchange.reply is not None
    assert [(c.name, json.loads(c.arguments)) for c in exchange.reply.tool_calls] == [
        ("get_weather", {"city": "Rome"})
    ]
    assert exchange.reply.finish is Finish.TOOL_CALLS
    sent = server.received[0]
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.json()["tool_choice"] == {"type": "tool", "name": "get_weather"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_round_trip_tool_result(serve: Serve, stream: bool) -> None:
    server = serve(AnthropicEmulator(calls_cleanly(), key=KEY))
    messages = (
        Message(Role.USER, "Weather in Rome?"),
        Message(Role.ASSISTANT, "", (ToolCall("toolu_0", "get_weather", '{"city": "Rome"}'),)),
        Message(Role.TOOL, "CODEWORD-9", tool_call_id="toolu_0", name="get_weather"),
    )
    reply = send(
        server, ChatRequest("claude-emu", messages, tools=(WEATHER,), stream=stream, max_tokens=64)
    ).reply
    assert reply is not None and reply.text == "The tool said: CODEWORD-9"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        pytest.param(
            {"type": "array", "items": {"type": "string"}},
            "tools.0.custom.input_schema.type: Input should be 'object'",
            id="array-root",
        ),
        pytest.param(
            {"oneOf": [{"type": "object"}, {"type": "object"}]},
            "tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level",
            id="top-level-one-of",
        ),
        pytest.param(
            {"properties": {"a": {"type": "string"}}},
            "tools.0.custom.input_schema.type: Field required",
            id="root-type-missing",
        ),
    ],
)
def test_root_must_be_an_object(serve: Serve, schema: dict[str, Any], message: str) -> None:
    server = serve(AnthropicEmulator(ignores_tools(), key=KEY))
    exchange = send(server, ask(False, (Tool("f", "", schema),)))
    assert exchange.refusal is not None
    assert (exchange.refusal.kind, exchange.refusal.message, exchange.refusal.retryable) == (
        RefusalKind.SCHEMA,
        message,
        False,
    )
    # The anthropic dialect is what makes the same tool acceptable.
    fixed = send(server, ask(False, (Tool("f", "", to_dialect(schema, "anthropic")),)))
    assert fixed.reply is not None


def test_bad_key_is_auth_and_never_recorded(serve: Serve) -> None:
    server = serve(AnthropicEmulator(ignores_tools(), key=KEY))
    exchange = send(server, ask(False), key="sk-ant-wrong-key-0123456789")
    assert exchange.refusal is not None and exchange.refusal.kind is RefusalKind.AUTH
    assert "sk-ant-wrong" not in repr(exchange)


def test_cut_off(serve: Serve) -> None:
    reply = send(serve(AnthropicEmulator(rambles(), key=KEY)), ask(True)).reply
    assert reply is not None and reply.cut_off
