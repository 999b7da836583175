"""The Anthropic Messages adapter: exact requests, replies parsed, event streams merged, quirks found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import ShapeKind, WireShapeError
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finish,
    Message,
    Reply,
    Role,
    ToolCall,
    ToolChoice,
    Usage,
)
from conchcheck.wire.framing import SSEDecoder

FIXTURES = Path(__file__).parent / "anthropic"
ADAPTER = AnthropicAdapter()
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ASK = Message(Role.USER, "Weather in Paris?")
WIRE_ASK = {"role": "user", "content": "Weather in Paris?"}
CALL = ToolCall("toolu_1", "get_weather", '{"city": "Paris"}')
WIRE_CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --- build -------------------------------------------------------------------------------


def test_build_plain_chat() -> None:
    built = ADAPTER.build(
        "https://api.anthropic.com/v1/",
        ChatRequest("claude-x", (ASK,), max_tokens=64),
        "sk-ant-secret",
    )
    assert (built.method, built.url, built.stream) == (
        "POST",
        "https://api.anthropic.com/v1/messages",
        False,
    )
    assert built.headers == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": "sk-ant-secret",
    }
    assert built.secret_headers == frozenset({"x-api-key"})
    assert built.redacted_headers() == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": "[redacted]",
    }
    assert built.body == {
        "model": "claude-x",
        "max_tokens": 64,
        "messages": [WIRE_ASK],
        "temperature": 0.0,
    }


def test_build_without_a_key_sends_no_key_header() -> None:
    built = ADAPTER.build("http://127.0.0.1:8080/v1", ChatRequest("m", (ASK,)), None)
    assert built.headers == {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    assert built.secret_headers == frozenset()


@pytest.mark.parametrize(
    ("request_", "body"),
    [
        pytest.param(
            # Anthropic requires max_tokens; the request sets none, so the default goes.
            ChatRequest("m", (ASK,), temperature=None),
            {"model": "m", "max_tokens": 1024, "messages": [WIRE_ASK]},
            id="max-tokens-required-default-1024",
        ),
        pytest.param(
            ChatRequest(
                "m",
                (Message(Role.SYSTEM, "Be brief."), ASK, Message(Role.SYSTEM, "Use metric.")),
                max_tokens=8,
            ),
            {
                "model": "m",
                "max_tokens": 8,
                "system": "Be brief.\n\nUse metric.",
                "messages": [WIRE_ASK],
                "temperature": 0.0,
            },
            id="system-is-a-top-level-string-not-a-role",
        ),
        pytest.param(
            ChatRequest("m", (ASK,), tools=(Tool("ping"),), temperature=None),
            {
                "model": "m",
                "max_tokens": 1024,
                "messages": [WIRE_ASK],
                "tools": [{"name": "ping", "input_schema": {"type": "object", "properties": {}}}],
            },
            id="empty-parameters-become-an-object-schema",
        ),
        pytest.param(
            ChatRequest(
                "m",
                (
                    Message(Role.SYSTEM, "Be brief."),
                    ASK,
                    Message(Role.ASSISTANT, "Let me check.", (CALL,)),
                    Message(Role.TOOL, "21 degrees", tool_call_id="toolu_1", name="get_weather"),
                    Message(Role.ASSISTANT, "It is 21 degrees."),
                ),
                stream=True,
                temperature=None,
            ),
            {
                "model": "m",
                "max_tokens": 1024,
                "system": "Be brief.",
                "messages": [
                    WIRE_ASK,
                    {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "Let me check."}, WIRE_CALL],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_1",
                                "content": "21 degrees",
                            }
                        ],
                    },
                    {"role": "assistant", "content": "It is 21 degrees."},
                ],
                "stream": True,
            },
            id="round-trip-tool-use-then-tool-result-user-turn",
        ),
        pytest.param(
            ChatRequest(
                "m",
                (
                    ASK,
                    Message(
                        Role.ASSISTANT,
                        "",
                        (
                            CALL,
                            ToolCall("toolu_2", "list_cities", "not json"),
                            ToolCall("toolu_3", "f", "[1]"),
                        ),
                    ),
                    Message(Role.TOOL, "21 degrees", tool_call_id="toolu_1"),
                    Message(Role.TOOL, "Paris, Lyon", tool_call_id="toolu_2"),
                    Message(Role.TOOL, "ok", tool_call_id="toolu_3"),
                    Message(Role.USER, "Thanks."),
                ),
                temperature=None,
            ),
            {
                "model": "m",
                "max_tokens": 1024,
                "messages": [
                    WIRE_ASK,
                    {
                        "role": "assistant",
                        "content": [
                            WIRE_CALL,
                            {
                                "type": "tool_use",
                                "id": "toolu_2",
                                "name": "list_cities",
                                "input": {},
                            },
                            {"type": "tool_use", "id": "toolu_3", "name": "f", "input": {}},
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_1",
                                "content": "21 degrees",
                            },
                            {
                                "type": "tool_result",
                                "tool_use_id": "toolu_2",
                                "content": "Paris, Lyon",
                            },
                            {"type": "tool_result", "tool_use_id": "toolu_3", "content": "ok"},
                        ],
                    },
                    {"role": "user", "content": "Thanks."},
                ],
            },
            id="tool-results-merge-into-one-user-turn-and-bad-arguments-replay-as-empty-input",
        ),
    ],
)
def test_build_body(request_: ChatRequest, body: dict[str, Any]) -> None:
    built = ADAPTER.build("https://api.anthropic.com/v1", request_, "k")
    assert built.body == body
    accept = {"accept": "text/event-stream"} if request_.stream else {}
    assert built.headers == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        **accept,
        "x-api-key": "k",
    }
    assert built.stream == request_.stream


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        pytest.param(ToolChoice(ChoiceMode.AUTO), {"type": "auto"}, id="auto"),
        pytest.param(ToolChoice(ChoiceMode.REQUIRED), {"type": "any"}, id="required-is-any"),
        pytest.param(ToolChoice(ChoiceMode.NONE), {"type": "none"}, id="none"),
        pytest.param(
            ToolChoice(ChoiceMode.TOOL, "get_weather"),
            {"type": "tool", "name": "get_weather"},
            id="forced-tool",
        ),
    ],
)
def test_build_tools_and_choice(choice: ToolChoice, wire: dict[str, Any]) -> None:
    built = ADAPTER.build(
        "https://api.anthropic.com/v1",
        ChatRequest("m", (ASK,), tools=(WEATHER,), tool_choice=choice),
        None,
    )
    assert built.body is not None
    assert built.body["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the weather.",
            "input_schema": dict(WEATHER.parameters),
        }
    ]
    assert built.body["tool_choice"] == wire


# --- parse -------------------------------------------------------------------------------


def message(content: Any, stop_reason: str | None = "end_turn") -> bytes:
    return json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": stop_reason,
            "usage": {"input_tokens": 3, "output_tokens": 4},
        }
    ).encode()


@pytest.mark.parametrize(
    ("body", "text", "calls", "finish", "usage", "findings"),
    [
        pytest.param(fixture("text.json"), "Hello!", [], Finish.STOP, (10, 5), [], id="text"),
        pytest.param(
            fixture("tool_use.json"),
            "",
            [
                (
                    "toolu_01A09q90qw90lq917835lq9",
                    "get_weather",
                    '{"city": "Zürich", "units": "celsius"}',
                )
            ],
            Finish.TOOL_CALLS,
            (612, 54),
            [],
            id="tool-use-input-is-an-object",
        ),
        pytest.param(
            fixture("text_and_tool_use.json"),
            "I'll check the weather in Paris.",
            [
                ("toolu_01A09q90qw90lq917835lq9", "get_weather", '{"city": "Paris"}'),
                ("toolu_01B19q90qw90lq917835lq0", "list_cities", "{}"),
            ],
            Finish.TOOL_CALLS,
            (633, 91),
            [],
            id="text-and-tool-use",
        ),
        pytest.param(
            fixture("max_tokens_cut.json"),
            "The weather in Paris is usually mild in",
            [],
            Finish.LENGTH,
            (20, 16),
            [],
            id="max-tokens-cut",
        ),
        pytest.param(
            fixture("refusal_stop_reason.json"),
            "",
            [],
            Finish.CONTENT_FILTER,
            (18, 5),
            [],
            id="refusal-stop-reason",
        ),
        pytest.param(
            fixture("call_markers_in_text.json"),
            '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
            [],
            Finish.STOP,
            (301, 29),
            ["call_markers_in_text"],
            id="call-markers-in-text",
        ),
        pytest.param(
            message(
                [
                    {"type": "thinking", "thinking": "Hmm.", "signature": "x"},
                    {"type": "text", "text": "Hi"},
                ]
            ),
            "Hi",
            [],
            Finish.STOP,
            (3, 4),
            [],
            id="thinking-block-stays-out-of-text",
        ),
        pytest.param(
            message(
                [
                    {"type": "tool_use", "id": "t1", "name": "f", "input": '{"a": 1}'},
                    {"type": "tool_use", "id": "t2", "name": "g", "input": [1]},
                    {"type": "tool_use", "id": "t3", "name": "h"},
                ],
                "tool_use",
            ),
            "",
            [("t1", "f", '{"a": 1}'), ("t2", "g", "[1]"), ("t3", "h", "")],
            Finish.TOOL_CALLS,
            (3, 4),
            ["input_not_object", "input_not_object", "input_not_object"],
            id="input-not-object",
        ),
        pytest.param(
            message([{"type": "tool_use", "id": "t1", "input": {}}, "stray"], "tool_use"),
            "",
            [],
            Finish.TOOL_CALLS,
            (3, 4),
            ["call_without_name", "block_not_object"],
            id="call-without-name-and-stray-block",
        ),
        pytest.param(
            message([{"type": "tool_use", "id": "t1", "name": "f", "input": {}}], "end_turn"),
            "",
            [("t1", "f", "{}")],
            Finish.STOP,
            (3, 4),
            ["calls_with_finish_stop"],
            id="calls-with-end-turn",
        ),
        pytest.param(
            message([{"type": "text", "text": "…"}], "pause_turn"),
            "…",
            [],
            Finish.OTHER,
            (3, 4),
            [],
            id="pause-turn-is-other",
        ),
        pytest.param(message([], None), "", [], Finish.UNKNOWN, (3, 4), [], id="no-stop-reason"),
    ],
)
def test_parse(
    body: bytes,
    text: str,
    calls: list[tuple[str, str, str]],
    finish: Finish,
    usage: tuple[int, int],
    findings: list[str],
) -> None:
    reply = ADAPTER.parse(body)
    assert reply.text == text
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == calls
    assert reply.finish == finish
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == usage
    assert [f.code for f in reply.findings] == findings
    assert reply.cut_off == (finish is Finish.LENGTH)
    assert reply.refusal is None


def test_parse_error_body_in_a_2xx_is_a_refusal() -> None:
    # Anthropic's overloaded envelope (provider-facts R05) passed on with a 200 by a gateway.
    reply = ADAPTER.parse(fixture("overloaded_error_in_2xx.json"))
    assert (reply.text, reply.tool_calls, reply.finish) == ("", (), Finish.UNKNOWN)
    assert reply.refusal is not None
    assert (reply.refusal.kind, reply.refusal.code, reply.refusal.message) == (
        RefusalKind.OTHER,
        "overloaded_error",
        "Overloaded",
    )


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(
            b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
            ShapeKind.HTML_PAGE,
            id="html-error-page",
        ),
        pytest.param(
            b'{"content": [{"type": "text", "text": "cut', ShapeKind.NOT_JSON, id="truncated-json"
        ),
        pytest.param(b"[1]", ShapeKind.UNEXPECTED_SHAPE, id="not-an-object"),
        pytest.param(message("Hi"), ShapeKind.UNEXPECTED_SHAPE, id="content-a-string-not-a-list"),
        pytest.param(
            b'{"choices": [{"message": {"content": "Hi"}}]}',
            ShapeKind.UNEXPECTED_SHAPE,
            id="openai-shape-no-content",
        ),
    ],
)
def test_parse_wrong_shapes(body: bytes, kind: ShapeKind) -> None:
    with pytest.raises(WireShapeError) as caught:
        ADAPTER.parse(body)
    assert caught.value.kind == kind


# --- streaming ---------------------------------------------------------------------------


def reduce(data: bytes, cuts: list[int] | None = None) -> Reply:
    # The transport builds the decoder from the adapter's done_marker: None, as Anthropic's
    # stream has no [DONE].
    decoder = SSEDecoder(done_marker=AnthropicAdapter.done_marker)
    reducer = ADAPTER.reducer()
    points = sorted(set(cuts or []))
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        for event, payload in decoder.feed(data[a:b]):
            reducer.feed(payload, event)
    for event, payload in decoder.close():
        reducer.feed(payload, event)
    return reducer.finish(terminated=decoder.done)


def outcome(data: bytes, cuts: list[int] | None = None) -> Any:
    try:
        return reduce(data, cuts)
    except WireShapeError as exc:
        return (exc.kind, exc.partial)


@pytest.mark.parametrize(
    ("name", "text", "calls", "finish", "usage", "findings"),
    [
        pytest.param(
            "input_json_split_in_key_and_string.sse",
            "",
            [
                (
                    "toolu_01KFbKqPYSuAKujiL6mTfzYA",
                    "get_weather",
                    '{"city": "Zürich", "units": "celsius"}',
                )
            ],
            Finish.TOOL_CALLS,
            Usage(849, 47),
            [],
            id="input-json-split-in-key-and-string",
        ),
        pytest.param(
            "text_then_tool_use.sse",
            "I'll check the weather in Paris.",
            [("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "get_weather", '{"city": "Paris"}')],
            Finish.TOOL_CALLS,
            Usage(565, 61),
            [],
            id="text-then-tool-use",
        ),
        pytest.param(
            "tool_use_without_arguments.sse",
            "I'll update the issue list for you.",
            [("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}")],
            Finish.TOOL_CALLS,
            Usage(565, 48),
            [],
            id="tool-use-without-arguments-takes-start-input",
        ),
        pytest.param(
            "thinking_then_tool_use.sse",
            "",
            [("toolu_01ThinkCall0000000000000", "get_weather", '{"city":"Paris"}')],
            Finish.TOOL_CALLS,
            Usage(412, 88),
            [],
            id="thinking-stays-out-of-text",
        ),
        pytest.param(
            "refusal_stop_reason.sse",
            "",
            [],
            Finish.CONTENT_FILTER,
            Usage(18, 5),
            [],
            id="refusal-stop-reason-no-blocks",
        ),
        pytest.param(
            "message_delta_input_tokens.sse",
            "pong",
            [],
            Finish.STOP,
            Usage(61, 2),
            [],
            id="message-delta-carries-input-tokens",
        ),
    ],
)
def test_stream(
    name: str,
    text: str,
    calls: list[tuple[str, str, str]],
    finish: Finish,
    usage: Usage,
    findings: list[str],
) -> None:
    reply = reduce(fixture(name))
    assert reply.text == text
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == calls
    assert (reply.finish, reply.usage) == (finish, usage)
    assert [f.code for f in reply.findings] == findings
    assert reply.refusal is None


def test_stream_error_event_mid_stream_is_a_refusal_with_the_text_so_far() -> None:
    # An overloaded_error event after the 200 (Anthropic's streaming docs; provider-facts R05):
    # no message_stop follows, and that is the refusal's doing, not a cut stream.
    reply = reduce(fixture("overloaded_error_mid_stream.sse"))
    assert (reply.text, reply.tool_calls, reply.finish, reply.usage) == (
        "Let me look that up",
        (),
        Finish.UNKNOWN,
        Usage(24, 1),
    )
    assert reply.refusal is not None
    assert (reply.refusal.kind, reply.refusal.code, reply.refusal.message) == (
        RefusalKind.OTHER,
        "overloaded_error",
        "Overloaded",
    )


def test_stream_cut_before_message_stop_is_unterminated_with_the_partial_reply() -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce(fixture("cut_before_message_stop.sse"))
    assert caught.value.kind == ShapeKind.STREAM_UNTERMINATED
    partial = caught.value.partial
    assert partial is not None
    assert (partial.text, partial.finish, partial.usage, partial.findings) == (
        "Checking.",
        Finish.UNKNOWN,
        Usage(120, 1),
        (),
    )
    assert [(c.id, c.name, c.arguments) for c in partial.tool_calls] == [
        ("toolu_01CutCall00000000000000", "get_weather", '{"city": "Par')
    ]


def test_empty_stream() -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce(b": keep-alive\n\n")
    assert caught.value.kind == ShapeKind.EMPTY_STREAM


def event(payload: dict[str, Any], name: str | None = None) -> str:
    return f"event: {name or payload['type']}\ndata: {json.dumps(payload)}\n\n"


def test_stream_quirks_are_findings() -> None:
    data = (
        event(
            {
                "type": "message_start",
                "message": {"content": [], "usage": {"input_tokens": 5, "output_tokens": 1}},
            }
        )
        + "event: content_block_delta\ndata: not json\n\n"
        + event(
            {
                "type": "content_block_start",
                "content_block": {"type": "tool_use", "id": "t0", "name": "f", "input": {}},
            }
        )
        + event(
            {
                "type": "content_block_delta",
                "delta": {"type": "input_json_delta", "partial_json": "[1, 2]"},
            }
        )
        + event(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"x": 1}'},
            }
        )
        + event(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "t2", "input": {}},
            }
        )
        + event(
            {
                "type": "content_block_start",
                "index": 3,
                "content_block": {"type": "tool_use", "id": "t3", "name": "g", "input": "{}"},
            }
        )
        + event({"type": "future_event", "surprise": True})
        + event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            }
        )
        + event({"type": "message_stop"})
    )
    reply = reduce(data.encode())
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("t0", "f", "[1, 2]"),
        ("t3", "g", "{}"),
    ]
    assert [f.code for f in reply.findings] == [
        "event_not_json",
        "event_without_index",
        "event_without_index",
        "delta_without_start",
        "input_not_object",
        "call_without_name",
        "call_without_name",
        "input_not_object",
    ]
    assert (reply.finish, reply.usage) == (Finish.TOOL_CALLS, Usage(5, 9))


def test_stream_message_start_with_whole_blocks() -> None:
    # A resumed turn may open with its blocks already whole (vercel/ai
    # anthropic-message-start-prepopulated-content.chunks.txt) and only message_stop after.
    data = event(
        {
            "type": "message_start",
            "message": {
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "code_execution",
                        "input": {},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_followup",
                        "name": "lookup_customer",
                        "input": {"id": "customer_123"},
                    },
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        }
    ) + event({"type": "message_stop"})
    reply = reduce(data.encode())
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("toolu_followup", "lookup_customer", '{"id": "customer_123"}')
    ]
    assert (reply.text, reply.finish, reply.findings) == ("", Finish.TOOL_CALLS, ())


STREAMS = sorted(path.name for path in FIXTURES.glob("*.sse"))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_stream_any_chunking_gives_the_same_reply(data: st.DataObject) -> None:
    body = fixture(data.draw(st.sampled_from(STREAMS)))
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=30))
    assert outcome(body, cuts) == outcome(body)
