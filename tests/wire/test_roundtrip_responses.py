"""The Responses API end to end: the adapter and transport against the emulator on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.chat import ChatRequest, Finding, Finish, Message, Role, ToolCall
from conchcheck.wire.exchange import WireErrorKind
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import parse_target
from conchcheck.wire.responses import ResponsesAdapter
from conchcheck.wire.transport import Exchange, Wire
from tests.emulators.model import Answer, Asked, Call, calls_cleanly, rambles
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import EmulatorServer, Fault, Handler

Serve = Callable[[Handler], EmulatorServer]
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOSED = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
     "additionalProperties": False},
)  # fmt: skip
ASK = (Message(Role.USER, "Weather in Oslo and Paris?"),)


def send(server: EmulatorServer, request: ChatRequest, key: Secret | None = None) -> Exchange:
    async def go() -> Exchange:
        async with Wire() as wire:
            target = parse_target("openai-responses:gpt-x", base_url=server.url + "/v1")
            return await wire.send(target, ResponsesAdapter(), request, key)

    return asyncio.run(go())


def ask(stream: bool, messages: tuple[Message, ...] = ASK, **kwargs: object) -> ChatRequest:
    return ChatRequest("gpt-x", messages, tools=(WEATHER,), stream=stream, max_tokens=32,
                       **kwargs)  # type: ignore[arg-type]  # fmt: skip


def parallel(asked: Asked) -> Answer:
    if asked.messages[-1]["role"] == "tool":
        said = [m["content"] for m in asked.messages if m["role"] == "tool"]
        return Answer(text="Tools said: " + ", ".join(said))
    return Answer(calls=[Call("get_weather", '{"city": "Oslo"}'),
                         Call("get_weather", '{"city": "Paris"}')])  # fmt: skip


STREAM = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
FIRST, SECOND = "call_b5e0691133a982b425b83dc1", "call_d80a02e5576f41a7c81e6806"
"""The emulator's ids for the first reply's two calls (tests/emulators/ids.py): new for every
call of a conversation, as OpenAI's are."""


@STREAM
def test_native_call(serve: Serve, stream: bool) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(arguments={"city": "Oslo"})))
    reply = send(server, ask(stream)).reply
    assert reply is not None
    assert reply.tool_calls == (ToolCall(FIRST, "get_weather", '{"city": "Oslo"}'),)
    assert (reply.finish, reply.findings) == (
        Finish.TOOL_CALLS,
        (Finding("tools_strict_echoed", "get_weather=false"),),
    )
    sent = server.received[0]
    assert (sent.path, sent.json().get("stream", False)) == ("/v1/responses", stream)


@STREAM
def test_parallel_calls_and_round_trip_by_call_id(serve: Serve, stream: bool) -> None:
    server = serve(ResponsesEmulator(parallel))
    first = send(server, ask(stream)).reply
    assert first is not None and [c.id for c in first.tool_calls] == [FIRST, SECOND]
    messages = (
        *ASK,
        Message(Role.ASSISTANT, "", first.tool_calls),
        Message(Role.TOOL, "CODEWORD-7", tool_call_id=FIRST),
        Message(Role.TOOL, "CODEWORD-8", tool_call_id=SECOND),
    )
    second = send(server, ask(stream, messages)).reply
    assert second is not None and second.text == "Tools said: CODEWORD-7, CODEWORD-8"
    assert server.received[1].json()["input"][-2:] == [
        {"type": "function_call_output", "call_id": FIRST, "output": "CODEWORD-7"},
        {"type": "function_call_output", "call_id": SECOND, "output": "CODEWORD-8"},
    ]


OPTIONAL = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
     "required": ["city"], "additionalProperties": False},
)  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "strict", "refused"),
    [
        pytest.param(WEATHER, False, None, id="open-schema-strict-false-accepted"),
        pytest.param(WEATHER, True, ("additionalProperties", "'additionalProperties' is required"
                                     " to be supplied and to be false."),
                     id="open-schema-strict-true-refused"),
        pytest.param(OPTIONAL, True, ("required", "'required' is required to be supplied and to be"
                                      " an array including every key in properties. Missing"
                                      " 'unit'."),
                     id="optional-field-strict-true-refused"),
        pytest.param(CLOSED, True, None, id="closed-schema-strict-true-accepted"),
    ],
)  # fmt: skip
def test_strict_flag_decides_which_schemas_pass(
    serve: Serve, tool: Tool, strict: bool, refused: tuple[str, str] | None
) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(arguments={"city": "Oslo"})))
    request = ChatRequest("gpt-x", ASK, tools=(tool,), strict=strict)
    exchange = send(server, request)
    assert server.received[0].json()["tools"][0]["strict"] is strict
    if refused:
        # A schema strict mode can't take is a classified refusal: evidence, not a crash.
        assert exchange.refusal is not None and exchange.refusal.kind is RefusalKind.SCHEMA
        keyword, problem = refused
        assert (exchange.refusal.keyword, exchange.refusal.message) == (
            keyword,
            f"Invalid schema for function 'get_weather': In context=(), {problem}",
        )
    else:
        assert exchange.reply is not None and exchange.reply.tool_calls


def test_a_server_that_ignores_strict_shows_it_in_the_echo(serve: Serve) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(), quirks={"ignores_strict"}))
    reply = send(server, ChatRequest("gpt-x", ASK, tools=(WEATHER,), strict=True)).reply
    assert reply is not None
    assert reply.findings == (Finding("tools_strict_echoed", "get_weather=false"),)


@pytest.mark.parametrize(
    ("quirk", "found"),
    [
        pytest.param(
            "delta_before_added",
            # The added event keeps the number it was made with, so it arrives out of order.
            ["event_before_item_added", "sequence_out_of_order", "arguments_before_name"],
            id="delta-before-added",
        ),
        pytest.param(
            "no_added", ["event_before_item_added", "arguments_before_name"], id="no-item-added"
        ),
        # The done events differ from the deltas, and the end event keeps what the deltas
        # said: the stream disagrees with the server's own answer, which wins.
        pytest.param(
            "done_differs",
            ["arguments_disagree_with_done", "stream_differs_from_completed"],
            id="done-differs",
        ),
    ],
)
def test_emulated_order_quirks_are_findings(serve: Serve, quirk: str, found: list[str]) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(arguments={"city": "Oslo"}), quirks={quirk}))
    reply = send(server, ask(True)).reply
    assert reply is not None and [c.name for c in reply.tool_calls] == ["get_weather"]
    assert [f.code for f in reply.findings] == [*found, "tools_strict_echoed"]


def test_error_event_mid_stream_is_a_rate_limit(serve: Serve) -> None:
    server = serve(ResponsesEmulator(lambda asked: Answer(text="Partly cloudy today."),
                                     quirks={"error_event"}))  # fmt: skip
    exchange = send(server, ask(True))
    assert exchange.refusal is not None
    assert (exchange.refusal.kind, exchange.refusal.retry_after) == (RefusalKind.RATE_LIMIT, 0.644)


def test_no_completed_event_is_an_unterminated_stream(serve: Serve) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(), quirks={"no_completed"}))
    error = send(server, ask(True)).error
    assert error is not None and error.shape == "stream_unterminated"


def test_stream_cut_on_the_socket_mid_call(serve: Serve) -> None:
    server = serve(ResponsesEmulator(calls_cleanly(arguments={"city": "Oslo"}),
                                     fault=Fault.CUT_STREAM))  # fmt: skip
    error = send(server, ask(True)).error
    assert error is not None
    # A broken socket is a connection failure; what came before it is kept as evidence.
    assert (error.kind, error.detail.startswith("The reply broke off")) == (
        WireErrorKind.CONNECT,
        True,
    )
    assert error.partial is not None
    assert error.partial.tool_calls == (ToolCall(FIRST, "get_weather", '{"city": "Oslo"}'),)


def test_cut_off_and_auth(serve: Serve) -> None:
    cut = send(serve(ResponsesEmulator(rambles())), ask(False)).reply
    assert cut is not None and (cut.finish, cut.finish_reason) == (
        Finish.LENGTH,
        "max_output_tokens",
    )
    refused = send(
        serve(ResponsesEmulator(rambles(), key="sk-right")), ask(False), Secret("sk-wrong")
    )
    assert refused.refusal is not None and refused.refusal.kind is RefusalKind.AUTH


def test_strict_refusal_vector_is_json(serve: Serve) -> None:
    server = serve(ResponsesEmulator(calls_cleanly()))
    exchange = send(server, ChatRequest("gpt-x", ASK, tools=(WEATHER,), strict=True))
    assert exchange.status == 400 and json.loads(exchange.body)["error"]["code"] == (
        "invalid_function_parameters"
    )
