"""The Gemini adapter: exact requests, replies parsed, streams merged, quirks found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import Framing, ShapeKind, WireShapeError
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finish,
    Message,
    Reply,
    Role,
    ToolCall,
    ToolChoice,
)
from conchcheck.wire.framing import SSEDecoder
from conchcheck.wire.gemini import SKIP_SIGNATURE, GeminiAdapter

ADAPTER = GeminiAdapter()
FIXTURES = Path(__file__).parent / "gemini"
BASE = "https://generativelanguage.googleapis.com/v1beta"
KEY = "AIzaSy-test-key-0123456789"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool("get_weather", "Get the weather.", SCHEMA)
PING = Tool("ping")
ASK = Message(Role.USER, "Weather in Paris?")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def body_for(*messages: Message, **kwargs: Any) -> dict[str, Any]:
    built = ADAPTER.build(BASE, ChatRequest("gemini-2.5-flash", messages or (ASK,), **kwargs), None)
    assert built.body is not None
    return dict(built.body)


def test_adapter_speaks_sse_without_a_done_marker() -> None:
    assert (GeminiAdapter.api, GeminiAdapter.framing, GeminiAdapter.done_marker) == (
        "gemini",
        Framing.SSE,
        None,
    )


def test_build_plain_chat_key_only_in_header() -> None:
    request = ChatRequest("gemini-2.5-flash", (ASK,), max_tokens=64)
    built = ADAPTER.build(BASE, request, KEY)
    assert (built.method, built.stream) == ("POST", False)
    assert built.url == f"{BASE}/models/gemini-2.5-flash:generateContent"
    assert "key=" not in built.url and KEY not in built.url
    assert built.headers == {"content-type": "application/json", "x-goog-api-key": KEY}
    assert built.secret_headers == frozenset({"x-goog-api-key"})
    assert built.redacted_headers() == {
        "content-type": "application/json",
        "x-goog-api-key": "[redacted]",
    }
    assert built.body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "generationConfig": {"maxOutputTokens": 64, "temperature": 0.0},
    }
    assert KEY not in json.dumps(built.body)


def test_build_streaming_url_uses_alt_sse() -> None:
    # A name pasted from the models list keeps one "models/" prefix; no key, no auth header.
    request = ChatRequest("models/gemini-2.5-flash", (ASK,), stream=True, temperature=None)
    built = ADAPTER.build(BASE + "/", request, None)
    assert built.url == f"{BASE}/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert "key=" not in built.url
    assert built.stream is True
    assert built.headers == {"content-type": "application/json", "accept": "text/event-stream"}
    assert built.secret_headers == frozenset()
    assert built.body == {"contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]}


def test_build_model_name_cannot_change_the_path_or_query() -> None:
    built = ADAPTER.build(BASE, ChatRequest("../x?key=1#y", (ASK,)), None)
    assert built.url == f"{BASE}/models/..%2Fx%3Fkey%3D1%23y:generateContent"


def test_build_system_instruction() -> None:
    body = body_for(Message(Role.SYSTEM, "Be brief."), ASK, Message(Role.SYSTEM, "Use metric."))
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}, {"text": "Use metric."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]


@pytest.mark.parametrize(
    "field",
    [
        pytest.param("parameters", id="openapi-subset-parameters"),
        pytest.param("parametersJsonSchema", id="json-schema-parameters"),
    ],
)
def test_build_tools_put_the_schema_in_one_field(field: str) -> None:
    body = body_for(tools=(WEATHER, PING), gemini_schema_field=field)
    # PING takes no parameters: no schema field at all (provider-facts S12), no description.
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "Get the weather.", field: SCHEMA},
                {"name": "ping"},
            ]
        }
    ]
    assert "toolConfig" not in body


def test_build_refuses_an_unknown_schema_field() -> None:
    with pytest.raises(ValueError, match="gemini_schema_field"):
        body_for(tools=(WEATHER,), gemini_schema_field="input_schema")


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        pytest.param(ToolChoice(ChoiceMode.AUTO), {"mode": "AUTO"}, id="auto"),
        pytest.param(ToolChoice(ChoiceMode.NONE), {"mode": "NONE"}, id="none"),
        pytest.param(ToolChoice(ChoiceMode.REQUIRED), {"mode": "ANY"}, id="required-is-any"),
        pytest.param(
            ToolChoice(ChoiceMode.TOOL, "get_weather"),
            {"mode": "ANY", "allowedFunctionNames": ["get_weather"]},
            id="forced-tool-is-any-with-its-name",
        ),
    ],
)
def test_build_tool_choice(choice: ToolChoice, config: dict[str, Any]) -> None:
    body = body_for(tools=(WEATHER,), tool_choice=choice)
    assert body["toolConfig"] == {"functionCallingConfig": config}


def test_build_round_trip() -> None:
    calls = (
        ToolCall("call_1", "get_weather", '{"city": "Zürich"}'),
        ToolCall(None, "ping", "not json"),
    )
    messages = (
        Message(Role.SYSTEM, "Be brief."),
        ASK,
        Message(Role.ASSISTANT, "Checking.", calls),
        Message(Role.TOOL, "21 degrees", tool_call_id="call_1"),
        Message(Role.TOOL, "pong", name="ping"),
        Message(Role.ASSISTANT, "21 degrees in Zürich."),
        Message(Role.USER, "Thanks"),
    )
    body = body_for(*messages, tools=(WEATHER, PING), temperature=None)
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {
                        "functionCall": {
                            "name": "get_weather",
                            "args": {"city": "Zürich"},
                            "id": "call_1",
                        },
                        "thoughtSignature": SKIP_SIGNATURE,
                    },
                    # Argument text that is not a JSON object travels as {} (args is a Struct).
                    {
                        "functionCall": {"name": "ping", "args": {}},
                        "thoughtSignature": SKIP_SIGNATURE,
                    },
                ],
            },
            {
                # Both answers in one user turn; the first borrows its call's name.
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "get_weather",
                            "response": {"content": "21 degrees"},
                            "id": "call_1",
                        }
                    },
                    {"functionResponse": {"name": "ping", "response": {"content": "pong"}}},
                ],
            },
            {"role": "model", "parts": [{"text": "21 degrees in Zürich."}]},
            {"role": "user", "parts": [{"text": "Thanks"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_weather",
                        "description": "Get the weather.",
                        "parameters": SCHEMA,
                    },
                    {"name": "ping"},
                ]
            }
        ],
    }
    assert SKIP_SIGNATURE == "skip_thought_signature_validator"


def test_build_results_of_separate_call_turns_stay_separate() -> None:
    messages = (
        ASK,
        Message(Role.ASSISTANT, "", (ToolCall("a", "ping", "{}"),)),
        Message(Role.TOOL, "pong", tool_call_id="a", name="ping"),
        Message(Role.ASSISTANT, "", (ToolCall("b", "ping", "{}"),)),
        Message(Role.TOOL, "pong", tool_call_id="b", name="ping"),
    )
    roles = [(c["role"], len(c["parts"])) for c in body_for(*messages)["contents"]]
    assert roles == [("user", 1), ("model", 1), ("user", 1), ("model", 1), ("user", 1)]


def response(
    parts: list[dict[str, Any]] | None, finish: str | None = "STOP", **extra: Any
) -> bytes:
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    return json.dumps({"candidates": [candidate], **extra}).encode()


@pytest.mark.parametrize(
    ("body", "text", "calls", "finish", "findings"),
    [
        pytest.param(
            response([{"text": "Hi"}, {"text": " there"}]),
            "Hi there",
            [],
            Finish.STOP,
            [],
            id="text-parts-joined",
        ),
        pytest.param(
            fixture("function-call-with-id.json"),
            "",
            [("x7kq2mpa", "get_weather", '{"city": "Zürich", "days": 2}')],
            Finish.STOP,
            [],
            id="function-call-with-id-and-finish-stop",
        ),
        pytest.param(
            fixture("calls-without-id-or-args.json"),
            "Checking both.",
            [(None, "get_weather", '{"city": "Paris"}'), (None, "ping", "{}")],
            Finish.STOP,
            [],
            id="calls-without-id-or-args",
        ),
        pytest.param(
            fixture("thought-parts-skipped.json"),
            "Hello! How can I help?",
            [],
            Finish.STOP,
            [],
            id="thought-parts-skipped",
        ),
        pytest.param(
            fixture("max-tokens-cut-off.json"),
            "The forecast for the next three days is",
            [],
            Finish.LENGTH,
            [],
            id="max-tokens-is-cut-off",
        ),
        pytest.param(
            fixture("malformed-function-call.json"),
            "",
            [],
            Finish.ERROR,
            ["malformed_function_call"],
            id="malformed-function-call",
        ),
        pytest.param(
            response(None, "UNEXPECTED_TOOL_CALL"),
            "",
            [],
            Finish.ERROR,
            ["unexpected_tool_call"],
            id="unexpected-tool-call",
        ),
        pytest.param(
            response(None, "TOO_MANY_TOOL_CALLS"),
            "",
            [],
            Finish.ERROR,
            ["too_many_tool_calls"],
            id="too-many-tool-calls",
        ),
        pytest.param(
            response(None, "SAFETY"), "", [], Finish.CONTENT_FILTER, [], id="safety-without-content"
        ),
        pytest.param(
            response([{"text": "x"}], "RECITATION"),
            "x",
            [],
            Finish.CONTENT_FILTER,
            [],
            id="recitation",
        ),
        pytest.param(
            response([{"text": "x"}], "LANGUAGE"), "x", [], Finish.OTHER, [], id="other-reason"
        ),
        pytest.param(
            response([{"text": "x"}], None), "x", [], Finish.UNKNOWN, [], id="no-finish-reason"
        ),
        pytest.param(
            response([{"functionCall": {"name": "f", "args": '{"a": 1}'}}]),
            "",
            [(None, "f", '{"a": 1}')],
            Finish.STOP,
            ["arguments_not_object"],
            id="args-as-text",
        ),
        pytest.param(
            response([{"functionCall": {"args": {}}}, {"text": "ok"}]),
            "ok",
            [],
            Finish.STOP,
            ["call_without_name"],
            id="call-without-name",
        ),
        pytest.param(
            response([{"executableCode": {"language": "PYTHON", "code": "print(1)"}}]),
            "",
            [],
            Finish.STOP,
            ["part_unread"],
            id="executable-code-part-unread",
        ),
        pytest.param(
            response([{"text": '<tool_call>{"name": "f", "arguments": {}}</tool_call>'}]),
            '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
            [],
            Finish.STOP,
            ["call_markers_in_text"],
            id="call-left-as-text",
        ),
        pytest.param(
            response([{"thoughtSignature": "c2ln"}, {"text": "x"}]),
            "x",
            [],
            Finish.STOP,
            [],
            id="signature-only-part",
        ),
    ],
)
def test_parse(
    body: bytes,
    text: str,
    calls: list[tuple[str | None, str, str]],
    finish: Finish,
    findings: list[str],
) -> None:
    reply = ADAPTER.parse(body)
    assert reply.text == text
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == calls
    assert reply.finish == finish
    assert [f.code for f in reply.findings] == findings
    assert reply.cut_off == (finish is Finish.LENGTH)
    assert reply.refusal is None


def test_parse_usage_and_provider_reason() -> None:
    reply = ADAPTER.parse(fixture("function-call-with-id.json"))
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (83, 14)
    assert reply.finish_reason == "STOP"
    assert reply.raw == fixture("function-call-with-id.json").decode()


def test_parse_malformed_call_finding_keeps_the_failed_text() -> None:
    reply = ADAPTER.parse(fixture("malformed-function-call.json"))
    assert reply.findings[0].detail == (
        "finishReason MALFORMED_FUNCTION_CALL: Malformed function call: "
        "print(default_api.get_weather(city='Paris'))"
    )
    assert (reply.finish_reason, reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        "MALFORMED_FUNCTION_CALL",
        57,
        None,
    )


def test_parse_error_envelope_in_2xx_is_a_refusal() -> None:
    reply = ADAPTER.parse(fixture("error-envelope-in-2xx.json"))
    assert reply.refusal is not None
    assert (reply.refusal.kind.value, reply.refusal.status, reply.refusal.code) == (
        "auth",
        200,
        "API_KEY_INVALID",
    )
    assert (reply.text, reply.tool_calls, reply.finish) == ("", (), Finish.UNKNOWN)


@pytest.mark.parametrize(
    ("body", "kind", "message"),
    [
        pytest.param(
            fixture("prompt-blocked-no-candidates.json"),
            ShapeKind.EMPTY_CHOICES,
            "The reply has no candidates: the prompt was blocked (PROHIBITED_CONTENT).",
            id="prompt-blocked",
        ),
        pytest.param(
            b'{"promptFeedback": {"blockReason": "OTHER", "blockReasonMessage": "Blocked."}}',
            ShapeKind.EMPTY_CHOICES,
            "The reply has no candidates: the prompt was blocked (OTHER: Blocked.).",
            id="prompt-blocked-with-message",
        ),
        pytest.param(b'{"candidates": []}', ShapeKind.EMPTY_CHOICES, None, id="empty-candidates"),
        pytest.param(
            b'{"candidates": ["x"]}', ShapeKind.EMPTY_CHOICES, None, id="candidate-not-object"
        ),
        pytest.param(
            b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>",
            ShapeKind.HTML_PAGE,
            None,
            id="html-error-page",
        ),
        pytest.param(
            b'{"candidates": [{"content": {"parts": [{"text": "cut',
            ShapeKind.NOT_JSON,
            None,
            id="truncated-json",
        ),
        pytest.param(
            b'[{"candidates": []}]',
            ShapeKind.UNEXPECTED_SHAPE,
            None,
            id="alt-json-array-not-an-object",
        ),
    ],
)
def test_parse_wrong_shapes(body: bytes, kind: ShapeKind, message: str | None) -> None:
    with pytest.raises(WireShapeError) as caught:
        ADAPTER.parse(body)
    assert caught.value.kind == kind
    if message is not None:
        assert str(caught.value) == message


def reduce(
    data: bytes, pieces: list[int] | None = None, *, terminated: bool | None = None
) -> Reply:
    decoder = SSEDecoder(done_marker=None)
    reducer = ADAPTER.reducer()
    points = sorted(set(pieces or []))
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        for event, payload in decoder.feed(data[a:b]):
            reducer.feed(payload, event)
    for event, payload in decoder.close():
        reducer.feed(payload, event)
    return reducer.finish(terminated=decoder.done if terminated is None else terminated)


def event(value: Any) -> str:
    return "data: " + json.dumps(value) + "\r\n\r\n"


def test_stream_text_in_pieces() -> None:
    reply = reduce(fixture("text-in-pieces-crlf.sse"))
    # The thought summary of the first event stays out; the empty signed part adds nothing.
    assert reply.text == "Bonjour, ça va très bien — merci ! 🌤"
    assert (reply.tool_calls, reply.finish, reply.finish_reason, reply.findings) == (
        (),
        Finish.STOP,
        "STOP",
        (),
    )
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 11)


def test_stream_function_calls_arrive_whole() -> None:
    reply = reduce(fixture("calls-whole-with-finish-stop.sse"))
    assert reply.text == "Let me look that up."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        (None, "get_weather", '{"city": "Zürich", "days": 2}'),
        (None, "ping", "{}"),
    ]
    assert (reply.finish, reply.findings, reply.usage.completion_tokens) == (Finish.STOP, (), 21)


@pytest.mark.parametrize(
    "terminated",
    [pytest.param(False, id="decoder-says-open"), pytest.param(True, id="terminated-flag-ignored")],
)
def test_stream_cut_before_finish_reason_is_unterminated_with_the_partial_reply(
    terminated: bool,
) -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce(fixture("cut-before-finish-reason.sse"), terminated=terminated)
    assert caught.value.kind == ShapeKind.STREAM_UNTERMINATED
    assert caught.value.partial is not None
    assert caught.value.partial.text == "The forecast for Zürich is sunny wi"
    assert caught.value.partial.finish == Finish.UNKNOWN


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["text-in-pieces-crlf.sse", "calls-whole-with-finish-stop.sse"]),
    st.data(),
)
def test_stream_any_chunking_gives_the_same_reply(name: str, data: st.DataObject) -> None:
    body = fixture(name)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=20))
    assert reduce(body, cuts) == reduce(body)


def test_stream_malformed_function_call_is_an_error_with_a_finding() -> None:
    data = event(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sure."}]}}]}
    ) + event(
        {
            "candidates": [
                {
                    "finishReason": "MALFORMED_FUNCTION_CALL",
                    "finishMessage": "Malformed function call: f(x=)",
                }
            ]
        }
    )
    reply = reduce(data.encode())
    assert (reply.text, reply.finish) == ("Sure.", Finish.ERROR)
    assert [(f.code, f.detail) for f in reply.findings] == [
        (
            "malformed_function_call",
            "finishReason MALFORMED_FUNCTION_CALL: Malformed function call: f(x=)",
        )
    ]


def test_stream_error_event_is_a_refusal() -> None:
    error = {
        "error": {
            "code": 500,
            "message": "An internal error has occurred. Please retry.",
            "status": "INTERNAL",
        }
    }
    data = event(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}
    ) + event(error)
    reply = reduce(data.encode())
    assert reply.refusal is not None
    assert (reply.refusal.kind.value, reply.refusal.status, reply.text) == ("other", 200, "Hel")


def test_stream_blocked_prompt_has_no_candidates() -> None:
    data = event(
        {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}}
    )
    with pytest.raises(WireShapeError) as caught:
        reduce(data.encode())
    assert caught.value.kind == ShapeKind.EMPTY_CHOICES
    assert str(caught.value) == "The reply has no candidates: the prompt was blocked (SAFETY)."


def test_stream_events_that_are_not_objects_are_findings() -> None:
    data = (
        "data: not json\r\n\r\n"
        + "data: [1]\r\n\r\n"
        + event({"candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}]})
    )
    reply = reduce(data.encode())
    assert (reply.text, [f.code for f in reply.findings]) == (
        "ok",
        ["event_not_json", "event_not_object"],
    )


def test_empty_stream() -> None:
    with pytest.raises(WireShapeError) as caught:
        reduce(b": keep-alive\r\n\r\n")
    assert caught.value.kind == ShapeKind.EMPTY_STREAM
