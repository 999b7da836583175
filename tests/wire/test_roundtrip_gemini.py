"""Gemini's native API end to end: the adapter and transport against the emulator."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from conchcheck.core.dialects import to_dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire import ADAPTERS, adapter_for
from conchcheck.wire.catalogue import Catalogues, ModelInfo
from conchcheck.wire.chat import ChatRequest, ChoiceMode, Message, Role, ToolCall, ToolChoice
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import PROVIDERS, parse_target
from conchcheck.wire.transport import Exchange, Wire
from tests.emulators.gemini_api import GeminiEmulator
from tests.emulators.model import calls_cleanly, rambles
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
KEY = "AIzaEmulatedKey0123456789abcdef"
MEETING = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "room": {"type": ["string", "null"]},
        "kind": {"const": "meeting"},
        "when": {"$ref": "#/$defs/when"},
    },
    "required": ["title"],
    "additionalProperties": False,
    "$defs": {"when": {"type": "string", "format": "date-time", "default": "now"}},
}


def send(server: EmulatorServer, request: ChatRequest, key: str = KEY) -> Exchange:
    async def go() -> Exchange:
        async with Wire() as wire:
            target = parse_target("gemini:gemini-2.5-flash", base_url=server.url + "/v1beta")
            return await wire.send(target, adapter_for(target), request, Secret(key))

    return asyncio.run(go())


def ask(schema: dict[str, Any], *, stream: bool = False, field: str = "parameters") -> ChatRequest:
    return ChatRequest(
        "gemini-2.5-flash", (Message(Role.USER, "Book it."),), tools=(Tool("book", "Book a meeting.", schema),),
        tool_choice=ToolChoice(ChoiceMode.TOOL, "book"), stream=stream, max_tokens=64, gemini_schema_field=field,
    )  # fmt: skip


def test_every_provider_has_an_adapter() -> None:
    assert {p.api for p in PROVIDERS.values()} <= set(ADAPTERS)


def test_parameters_outside_the_subset_are_refused_with_the_path(serve: Serve) -> None:
    exchange = send(serve(GeminiEmulator(calls_cleanly(), key=KEY)), ask(MEETING))
    assert exchange.refusal is not None
    refusal = exchange.refusal
    assert (refusal.kind, refusal.tool_index, refusal.keyword) == (RefusalKind.SCHEMA, 0, "type")
    assert refusal.path == "tools[0].function_declarations[0].parameters.properties[1].value.type"
    assert exchange.refusal.message.startswith(
        "Invalid value at 'tools[0].function_declarations[0].parameters.properties[1].value.type'"
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_gemini_dialect_is_accepted(serve: Serve, stream: bool) -> None:
    server = serve(GeminiEmulator(calls_cleanly(arguments={"title": "Sync"}), key=KEY))
    exchange = send(server, ask(to_dialect(MEETING, "gemini"), stream=stream))
    assert exchange.reply is not None and exchange.refusal is None
    assert [(c.name, json.loads(c.arguments)) for c in exchange.reply.tool_calls] == [
        ("book", {"title": "Sync"})
    ]
    sent = server.received[0]
    assert "key=" not in sent.path and sent.headers["x-goog-api-key"] == KEY
    assert sent.path.endswith(":streamGenerateContent" if stream else ":generateContent")
    assert sent.json()["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["book"]}
    }


def test_parameters_json_schema_takes_full_json_schema(serve: Serve) -> None:
    server = serve(GeminiEmulator(calls_cleanly(arguments={"title": "Sync"}), key=KEY))
    exchange = send(server, ask(MEETING, field="parametersJsonSchema"))
    assert exchange.reply is not None
    assert (
        "parametersJsonSchema" in server.received[0].json()["tools"][0]["functionDeclarations"][0]
    )


def test_round_trip_and_cut_off(serve: Serve) -> None:
    server = serve(GeminiEmulator(calls_cleanly(), key=KEY))
    messages = (
        Message(Role.USER, "Book it."),
        Message(Role.ASSISTANT, "", (ToolCall(None, "book", '{"title": "Sync"}'),)),
        Message(Role.TOOL, "CODEWORD-3", name="book"),
    )
    reply = send(server, ChatRequest("gemini-2.5-flash", messages, tools=(Tool("book"),))).reply
    assert reply is not None and "CODEWORD-3" in reply.text
    cut = send(serve(GeminiEmulator(rambles(), key=KEY)), ask({}, stream=True)).reply
    assert cut is not None and cut.cut_off


def test_bad_key_is_a_400_that_means_auth(serve: Serve) -> None:
    exchange = send(
        serve(GeminiEmulator(calls_cleanly(), key=KEY)),
        ask({}),
        key="AIzaWrongKey0123456789abcdefgh",
    )
    assert (
        exchange.refusal is not None
        and exchange.status == 400
        and exchange.refusal.kind is RefusalKind.AUTH
    )


def test_catalogue_reads_the_input_token_limit(serve: Serve) -> None:
    server = serve(GeminiEmulator(calls_cleanly(), key=KEY, input_token_limit=1048576))

    async def go() -> ModelInfo:
        async with Wire() as wire:
            return await Catalogues(wire).lookup(
                parse_target("gemini:models/gemini-2.5-flash", base_url=server.url + "/v1beta"),
                Secret(KEY),
            )

    info = asyncio.run(go())
    assert (info.context_window, info.listed) == (1048576, True)
    assert server.received[0].path == "/v1beta/models/gemini-2.5-flash"
