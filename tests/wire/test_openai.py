"""The OpenAI-compatible adapter: exact requests, replies parsed, streams merged, quirks found."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import ShapeKind, WireShapeError
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finish,
    Message,
    Role,
    ToolCall,
    ToolChoice,
)
from conchcheck.wire.framing import SSEDecoder
from conchcheck.wire.openai import OpenAIAdapter

ADAPTER = OpenAIAdapter()
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ASK = Message(Role.USER, "Weather in Paris?")


def body_for(**kwargs: Any) -> dict[str, Any]:
    request = ChatRequest("m", (ASK,), **kwargs)
    built = ADAPTER.build("http://127.0.0.1:8080/v1/", request, None)
    assert built.body is not None
    return dict(built.body)


def test_build_plain_chat() -> None:
    built = ADAPTER.build(
        "https://api.openai.com/v1", ChatRequest("gpt-x", (ASK,), max_tokens=64), "sk-secret"
    )
    assert (built.method, built.url, built.stream) == (
        "POST",
        "https://api.openai.com/v1/chat/completions",
        False,
    )
    assert built.headers == {
        "content-type": "application/json",
        "authorization": "Bearer sk-secret",
    }
    assert built.redacted_headers() == {
        "content-type": "application/json",
        "authorization": "[redacted]",
    }
    assert built.body == {
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "max_tokens": 64,
        "temperature": 0.0,
    }


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        pytest.param(ToolChoice(ChoiceMode.AUTO), "auto", id="auto"),
        pytest.param(ToolChoice(ChoiceMode.NONE), "none", id="none"),
        pytest.param(ToolChoice(ChoiceMode.REQUIRED), "required", id="required"),
        pytest.param(
            ToolChoice(ChoiceMode.TOOL, "get_weather"),
            {"type": "function", "function": {"name": "get_weather"}},
            id="forced-tool",
        ),
    ],
)
def test_build_tools_and_choice(choice: ToolChoice, wire: Any) -> None:
    body = body_for(tools=(WEATHER, Tool("ping")), tool_choice=choice)
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather.",
                "parameters": dict(WEATHER.parameters),
            },
        },
        {"type": "function", "function": {"name": "ping"}},
    ]
    assert body["tool_choice"] == wire


def test_build_round_trip_and_stream() -> None:
    call = ToolCall("call_1", "get_weather", '{"city": "Paris"}')
    messages = (
        Message(Role.SYSTEM, "Be brief."),
        ASK,
        Message(Role.ASSISTANT, "", (call,)),
        Message(Role.TOOL, "21 degrees", tool_call_id="call_1", name="get_weather"),
    )
    built = ADAPTER.build(
        "http://h/v1", ChatRequest("m", messages, stream=True, temperature=None), None
    )
    assert built.headers == {"content-type": "application/json", "accept": "text/event-stream"}
    assert built.body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "content": "21 degrees", "tool_call_id": "call_1"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> bytes:
    return json.dumps(
        {"choices": [{"index": 0, "message": message, "finish_reason": finish}], **extra}
    ).encode()


@pytest.mark.parametrize(
    ("body", "text", "calls", "finish", "findings"),
    [
        pytest.param(completion({"content": "Hi"}), "Hi", [], Finish.STOP, [], id="text"),
        pytest.param(
            completion(
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                },
                "tool_calls",
            ),
            "",
            [("c1", "f", '{"a": 1}')],
            Finish.TOOL_CALLS,
            [],
            id="tool-call",
        ),
        pytest.param(
            completion(
                {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"a": 1}}}]},
                "tool_calls",
            ),
            "",
            [("c1", "f", '{"a": 1}')],
            Finish.TOOL_CALLS,
            ["arguments_as_object"],
            id="arguments-as-object",
        ),
        pytest.param(
            completion(
                {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": None}}]},
                "tool_calls",
            ),
            "",
            [("c1", "f", "")],
            Finish.TOOL_CALLS,
            ["arguments_null"],
            id="arguments-null",
        ),
        pytest.param(
            completion(
                {"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]}, "stop"
            ),
            "",
            [("c1", "f", "{}")],
            Finish.STOP,
            ["calls_with_finish_stop"],
            id="calls-with-finish-stop",
        ),
        pytest.param(
            # vLLM's parser left the call in content (provider-facts N09; vllm-project/vllm#21571).
            completion(
                {
                    "content": "<tool_call>\n<function=square_the_number>\n<parameter=input_num>\n1024\n\n\n</tool_call>",
                    "tool_calls": [],
                }
            ),
            "<tool_call>\n<function=square_the_number>\n<parameter=input_num>\n1024\n\n\n</tool_call>",
            [],
            Finish.STOP,
            ["call_markers_in_text"],
            id="vllm-call-left-as-text",
        ),
        pytest.param(
            completion({"content": "a b c"}, "length"),
            "a b c",
            [],
            Finish.LENGTH,
            [],
            id="cut-by-length",
        ),
        pytest.param(
            completion({"content": [{"type": "text", "text": "Hi"}]}),
            "Hi",
            [],
            Finish.STOP,
            ["content_as_parts"],
            id="content-parts",
        ),
    ],
)
def test_parse(
    body: bytes, text: str, calls: list[tuple[str, str, str]], finish: Finish, findings: list[str]
) -> None:
    reply = ADAPTER.parse(body)
    assert reply.text == text
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == calls
    assert reply.finish == finish
    assert [f.code for f in reply.findings] == findings
    assert reply.cut_off == (finish is Finish.LENGTH)


def test_parse_usage() -> None:
    reply = ADAPTER.parse(
        completion({"content": "x"}, usage={"prompt_tokens": 41, "completion_tokens": 2})
    )
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (41, 2)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(
            b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
            ShapeKind.HTML_PAGE,
            id="html-error-page",
        ),
        pytest.param(
            b'{"choices": [{"message": {"content": "cut', ShapeKind.NOT_JSON, id="truncated-json"
        ),
        pytest.param(b'{"choices": []}', ShapeKind.EMPTY_CHOICES, id="empty-choices"),
        pytest.param(b'{"object": "list"}', ShapeKind.EMPTY_CHOICES, id="no-choices"),
        pytest.param(b"[1]", ShapeKind.UNEXPECTED_SHAPE, id="not-an-object"),
        pytest.param(
            b'{"choices": [{"text": "legacy"}]}', ShapeKind.UNEXPECTED_SHAPE, id="no-message"
        ),
    ],
)
def test_parse_wrong_shapes(body: bytes, kind: ShapeKind) -> None:
    with pytest.raises(WireShapeError) as caught:
        ADAPTER.parse(body)
    assert caught.value.kind == kind


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return (
        "data: "
        + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        + "\n\n"
    )


STREAM = (
    ": shape of chat.completion.chunk events per provider-facts 4.1 (vercel/ai deepseek-tool-call.chunks.txt)\n\n"
    + chunk({"role": "assistant", "content": "Let"})
    + chunk({"content": " me."})
    + chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    )
    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]})
    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Pa\\u00e9'}}]})
    + chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "ping", "arguments": "{}"},
                }
            ]
        }
    )
    + chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ris"}'}}]})
    + chunk({}, "tool_calls")
    + 'data: {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 7}}\n\n'
    + "data: [DONE]\n\n"
)


def reduce(data: bytes, pieces: list[int] | None = None) -> Any:
    decoder = SSEDecoder()
    reducer = ADAPTER.reducer()
    points = sorted(set(pieces or []))
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        for event, payload in decoder.feed(data[a:b]):
            reducer.feed(payload, event)
    for event, payload in decoder.close():
        reducer.feed(payload, event)
    return reducer.finish(terminated=decoder.done)


def test_stream_merges_deltas_by_index() -> None:
    reply = reduce(STREAM.encode())
    assert reply.text == "Let me."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_0", "get_weather", '{"city": "Pa\\u00e9ris"}'),
        ("call_1", "ping", "{}"),
    ]
    assert (reply.finish, reply.usage.prompt_tokens, reply.findings) == (Finish.TOOL_CALLS, 9, ())


@settings(max_examples=200)
@given(st.lists(st.integers(0, len(STREAM.encode())), max_size=20))
def test_stream_any_chunking_gives_the_same_reply(cuts: list[int]) -> None:
    assert reduce(STREAM.encode(), cuts) == reduce(STREAM.encode())


def test_stream_quirks_are_findings() -> None:
    data = (
        chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": None}}]})
        + chunk({"tool_calls": [{"function": {"arguments": '{"x": 1}'}}]})
        + chunk({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": {"y": 2}}}]})
        + chunk({}, "tool_calls")
        + "data: [DONE]\n\n"
    )
    reply = reduce(data.encode())
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("a", "f", '{"x": 1}'),
        ("b", "g", '{"y": 2}'),
    ]
    assert [f.code for f in reply.findings] == [
        "delta_without_index",
        "arguments_null",
        "delta_without_index",
        "delta_without_index",
        "arguments_as_object",
    ]


def test_stream_without_terminator_is_a_shape_error_with_the_partial_reply() -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce((chunk({"content": "Hel"}) + chunk({"content": "lo"})).encode())
    assert caught.value.kind == ShapeKind.STREAM_UNTERMINATED
    assert caught.value.partial is not None and caught.value.partial.text == "Hello"


def test_empty_stream() -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce(b"data: [DONE]\n\n")
    assert caught.value.kind == ShapeKind.EMPTY_STREAM


def test_error_event_in_a_200_stream_is_a_refusal() -> None:
    # Groq's streamed tool_use_failed (provider-facts S36; anomalyco/opencode#1018).
    error = {
        "error": {
            "message": "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": "<function=f>{}</function>",
        }
    }
    data = chunk({"content": "x"}) + "event: error\ndata: " + json.dumps(error) + "\n\n"
    reply = reduce(data.encode())
    assert reply.refusal is not None
    assert (reply.refusal.kind.value, reply.refusal.failed_generation) == (
        "tools",
        "<function=f>{}</function>",
    )


def test_fields_of_the_wrong_type_are_passed_over() -> None:
    # A number where a list belongs, or a part whose text is not text, once raised TypeError
    # out of the reducer and the parser; they carry nothing to read.
    data = (
        'data: {"choices": 7}\n\n'
        + 'data: {"choices": [{"delta": {"content": "ok", "tool_calls": 1}}]}\n\n'
        + "data: [DONE]\n\n"
    )
    assert reduce(data.encode()).text == "ok"
    parts = [{"type": "text", "text": None}, {"type": "text", "text": "ok"}]
    body = {"choices": [{"message": {"content": parts, "tool_calls": 3}}]}
    reply = ADAPTER.parse(json.dumps(body).encode())
    assert (reply.text, reply.tool_calls) == ("ok", ())
