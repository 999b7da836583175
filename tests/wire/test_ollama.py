"""Tests for conchcheck.wire.ollama: one row per wire quirk, fixtures in tests/wire/ollama/."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import Framing, ShapeKind, WireShapeError
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finding,
    Finish,
    Message,
    Reply,
    Role,
    ToolCall,
    ToolChoice,
    Usage,
)
from conchcheck.wire.framing import NDJSONDecoder
from conchcheck.wire.ollama import OllamaAdapter, truncation_finding

FIXTURES = Path(__file__).parent / "ollama"
BASE = "http://127.0.0.1:11434"
URL = "http://127.0.0.1:11434/api/chat"
JSON = {"content-type": "application/json"}
ADAPTER = OllamaAdapter()

WEATHER = Tool(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER_WIRE = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
USER = Message(Role.USER, "Weather in Paris?")
USER_WIRE = {"role": "user", "content": "Weather in Paris?"}
CALL = ToolCall("call_1", "get_weather", '{"city": "Paris"}')


def fixture(name: str) -> bytes:
    """A recorded or constructed body (provenance in tests/wire/ollama/README.md)."""
    return (FIXTURES / name).read_bytes()


def request(**fields: Any) -> ChatRequest:
    """A request for qwen3:4b with one user turn, overridden by ``fields``."""
    return ChatRequest(**{"model": "qwen3:4b", "messages": (USER,), **fields})


def test_adapter_identity() -> None:
    assert (OllamaAdapter.api, OllamaAdapter.framing) == ("ollama", Framing.NDJSON)
    assert OllamaAdapter.done_marker is None


@pytest.mark.parametrize(
    ("chat", "body"),
    [
        pytest.param(
            request(),
            {
                "model": "qwen3:4b",
                "messages": [USER_WIRE],
                "stream": False,
                "options": {"temperature": 0.0},
            },
            id="plain-chat-stream-false-written",
        ),
        pytest.param(
            request(
                messages=(Message(Role.SYSTEM, "Be brief."), USER),
                tools=(WEATHER, Tool("now")),
                temperature=None,
            ),
            {
                "model": "qwen3:4b",
                "messages": [{"role": "system", "content": "Be brief."}, USER_WIRE],
                "tools": [
                    WEATHER_WIRE,
                    {"type": "function", "function": {"name": "now", "parameters": {}}},
                ],
                "stream": False,
            },
            id="tools-openai-form-parameters-always-sent",
        ),
        pytest.param(
            request(
                messages=(
                    USER,
                    Message(Role.ASSISTANT, "", (CALL, ToolCall(None, "now", ""))),
                    Message(Role.TOOL, '{"c": 18}', tool_call_id="call_1", name="get_weather"),
                    Message(Role.TOOL, "12:00", name="now"),
                ),
                temperature=None,
            ),
            {
                "model": "qwen3:4b",
                "messages": [
                    USER_WIRE,
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                                "id": "call_1",
                            },
                            {"function": {"name": "now", "arguments": {}}},
                        ],
                    },
                    {
                        "role": "tool",
                        "content": '{"c": 18}',
                        "tool_name": "get_weather",
                        "tool_call_id": "call_1",
                    },
                    {"role": "tool", "content": "12:00", "tool_name": "now"},
                ],
                "stream": False,
            },
            id="round-trip-arguments-as-object-tool-name",
        ),
        pytest.param(
            request(
                messages=(
                    Message(Role.ASSISTANT, "", (ToolCall(None, "f", "[1, 2]"),)),
                    Message(Role.ASSISTANT, "", (ToolCall(None, "g", '{"a": '),)),
                ),
                temperature=None,
            ),
            {
                "model": "qwen3:4b",
                "messages": [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"function": {"name": "f", "arguments": {}}}],
                    },
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"function": {"name": "g", "arguments": {}}}],
                    },
                ],
                "stream": False,
            },
            id="arguments-not-an-object-replayed-as-empty-object",
        ),
        pytest.param(
            request(max_tokens=64, temperature=0.7),
            {
                "model": "qwen3:4b",
                "messages": [USER_WIRE],
                "stream": False,
                "options": {"num_predict": 64, "temperature": 0.7},
            },
            id="num-predict-and-temperature-in-options",
        ),
        pytest.param(
            request(tools=(WEATHER,), tool_choice=ToolChoice(ChoiceMode.REQUIRED)),
            {
                "model": "qwen3:4b",
                "messages": [USER_WIRE],
                "tools": [WEATHER_WIRE],
                "stream": False,
                "options": {"temperature": 0.0},
            },
            id="tool-choice-required-left-out",
        ),
        pytest.param(
            request(tools=(WEATHER,), tool_choice=ToolChoice(ChoiceMode.TOOL, "get_weather")),
            {
                "model": "qwen3:4b",
                "messages": [USER_WIRE],
                "tools": [WEATHER_WIRE],
                "stream": False,
                "options": {"temperature": 0.0},
            },
            id="tool-choice-named-tool-left-out",
        ),
    ],
)
def test_build_body(chat: ChatRequest, body: dict[str, Any]) -> None:
    wire = ADAPTER.build(BASE, chat, None)
    assert (wire.method, wire.url, dict(wire.headers), wire.stream) == ("POST", URL, JSON, False)
    assert wire.body == body
    assert wire.secret_headers == frozenset()


def test_build_stream_sets_flag_and_accept() -> None:
    wire = ADAPTER.build(BASE + "/", request(stream=True, temperature=None), None)
    assert wire.url == URL
    assert wire.body == {"model": "qwen3:4b", "messages": [USER_WIRE], "stream": True}
    assert dict(wire.headers) == {**JSON, "accept": "application/x-ndjson"}
    assert wire.stream is True


def test_build_key_behind_a_proxy_is_a_secret_bearer() -> None:
    wire = ADAPTER.build("https://ollama.example.test", request(), "proxy-secret")
    assert wire.url == "https://ollama.example.test/api/chat"
    assert dict(wire.headers) == {**JSON, "authorization": "Bearer proxy-secret"}
    assert wire.secret_headers == frozenset({"authorization"})
    assert wire.redacted_headers()["authorization"] == "[redacted]"


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param(
            "text_reply.json",
            Reply("The capital of France is Paris.", (), Finish.STOP, "stop", Usage(26, 8)),
            id="text",
        ),
        pytest.param(
            "tool_call_arguments_object_stop.json",
            Reply(
                "",
                (ToolCall(None, "calculate", '{"expression": "2 + 2"}'),),
                Finish.STOP,
                "stop",
            ),
            id="arguments-object-and-stop-after-calls-no-finding",
        ),
        pytest.param(
            "arguments_as_string.json",
            Reply(
                "",
                (ToolCall("call_k2v9x1qe", "get_weather", '{"city": "Paris"}'),),
                Finish.STOP,
                "stop",
                Usage(182, 21),
                (Finding("arguments_as_string", "tool_calls[0]: arguments sent as a string"),),
            ),
            id="arguments-as-string-kept-with-finding",
        ),
        pytest.param(
            "done_reason_length.json",
            Reply(
                "Paris is the capital and most populous city of France, with an",
                (),
                Finish.LENGTH,
                "length",
                Usage(24, 16),
            ),
            id="done-reason-length-cut-off",
        ),
        pytest.param(
            "not_done.json",
            Reply(
                "Paris",
                findings=(Finding("not_done", "done is false in a reply sent with stream false"),),
            ),
            id="not-done-in-unstreamed-body",
        ),
        pytest.param(
            "thinking_kept_out_of_text.json",
            Reply(
                "It is 18 °C in Paris.",
                (),
                Finish.STOP,
                "stop",
                Usage(240, 64),
                reasoning="The user asks about Paris. I could write <tool_call>"
                '{"name": "get_weather"}</tool_call>, but the tool result is already here.',
            ),
            id="thinking-kept-as-reasoning-no-marker-finding",
        ),
    ],
)
def test_parse(name: str, want: Reply) -> None:
    body = fixture(name)
    got = ADAPTER.parse(body)
    assert got == Reply(
        want.text,
        want.tool_calls,
        want.finish,
        want.finish_reason,
        want.usage,
        want.findings,
        raw=body.decode(),
        reasoning=want.reasoning,
    )


def test_parse_length_is_cut_off() -> None:
    assert ADAPTER.parse(fixture("done_reason_length.json")).cut_off


def test_parse_error_object_in_2xx_is_a_tools_refusal() -> None:
    # N01, verbatim from ollama/ollama#14795 (there with HTTP 400): a proxy may pass it as 2xx.
    reply = ADAPTER.parse(fixture("error_does_not_support_tools.json"))
    assert reply.refusal is not None
    assert reply.refusal.kind is RefusalKind.TOOLS
    assert reply.refusal.status == 200
    assert reply.refusal.message == (
        "registry.ollama.ai/library/Qwen3.5:0.8b does not support tools"
    )
    assert (reply.text, reply.tool_calls, reply.finish) == ("", (), Finish.UNKNOWN)


@pytest.mark.parametrize(
    ("body", "findings"),
    [
        pytest.param(
            b'{"message":{"content":"","tool_calls":[{"function":{"name":"now","arguments":null}}]},"done":true}',
            [("arguments_null", "tool_calls[0]: arguments is null")],
            id="arguments-null",
        ),
        pytest.param(
            b'{"message":{"content":"","tool_calls":[{"function":{"name":"f","arguments":[1]}}]},"done":true}',
            [("arguments_not_object", "tool_calls[0]: arguments sent as list")],
            id="arguments-list",
        ),
        pytest.param(
            b'{"message":{"content":"","tool_calls":[{"function":{}},{"function":{"name":"f","arguments":{}}}]},"done":true}',
            [("call_without_name", "tool_calls[0] has no function name")],
            id="call-without-name-skipped",
        ),
        pytest.param(
            b'{"message":{"content":"<tool_call>{\\"name\\": \\"f\\"}</tool_call>"},"done":true,"done_reason":"stop"}',
            [("call_markers_in_text", "the text holds <tool_call>")],
            id="call-left-as-text",
        ),
        pytest.param(
            b'{"message":{"content":"hi"}}',
            [("not_done", "done is missing in a reply sent with stream false")],
            id="done-missing",
        ),
        pytest.param(
            b'{"message":{"content":"hi"},"done":true,"done_reason":"unload"}',
            [],
            id="unload-is-other-no-finding",
        ),
    ],
)
def test_parse_findings(body: bytes, findings: list[tuple[str, str]]) -> None:
    reply = ADAPTER.parse(body)
    assert [(f.code, f.detail) for f in reply.findings] == findings


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        pytest.param("stop", Finish.STOP, id="stop"),
        pytest.param("length", Finish.LENGTH, id="length"),
        pytest.param("load", Finish.OTHER, id="load"),
        pytest.param("unload", Finish.OTHER, id="unload"),
        pytest.param("connection_closed", Finish.OTHER, id="unknown-word"),
        pytest.param("", Finish.UNKNOWN, id="empty-word"),
        pytest.param(None, Finish.UNKNOWN, id="missing"),
    ],
)
def test_done_reason(reason: str | None, finish: Finish) -> None:
    body: dict[str, Any] = {"message": {"content": ""}, "done": True}
    if reason is not None:
        body["done_reason"] = reason
    assert ADAPTER.parse(json.dumps(body).encode()).finish is finish


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(
            b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
            ShapeKind.HTML_PAGE,
            id="html-page-from-a-proxy",
        ),
        pytest.param(b"not json", ShapeKind.NOT_JSON, id="not-json"),
        pytest.param(b"[1, 2]", ShapeKind.UNEXPECTED_SHAPE, id="array"),
        pytest.param(b'{"done": true}', ShapeKind.UNEXPECTED_SHAPE, id="no-message"),
    ],
)
def test_parse_wrong_shape(body: bytes, kind: ShapeKind) -> None:
    with pytest.raises(WireShapeError) as caught:
        ADAPTER.parse(body)
    assert caught.value.kind is kind


def stream(body: bytes, cuts: list[int] | None = None) -> Reply:
    """``body`` through the NDJSON decoder and a fresh reducer, cut at ``cuts``."""
    decoder, reducer = NDJSONDecoder(), ADAPTER.reducer()
    bounds = [0, *sorted(cuts or []), len(body)]
    for start, end in itertools.pairwise(bounds):
        for event, data in decoder.feed(body[start:end]):
            reducer.feed(data, event)
    for event, data in decoder.close():
        reducer.feed(data, event)
    # The transport passes terminated=False for NDJSON: it has no terminator to see.
    return reducer.finish(terminated=False)


def raw_lines(name: str) -> str:
    return "\n".join(line for line in fixture(name).decode().splitlines() if line)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param(
            "stream_text_then_tool_call.ndjson",
            Reply(
                "Let me check the weather.",
                (
                    ToolCall(
                        None,
                        "get_current_weather",
                        '{"format": "celsius", "location": "Toronto"}',
                    ),
                ),
                Finish.STOP,
                "stop",
                Usage(213, 38),
            ),
            id="content-pieces-then-call-line-then-done",
        ),
        pytest.param(
            "stream_two_call_lines.ndjson",
            Reply(
                "",
                (
                    ToolCall("call_a1b2c3d4", "get_weather", '{"city": "Paris"}'),
                    ToolCall("call_e5f6a7b8", "get_weather", '{"city": "Zürich"}'),
                ),
                Finish.STOP,
                "stop",
                Usage(190, 44),
            ),
            id="calls-on-two-lines-in-order",
        ),
        pytest.param(
            "stream_thinking_then_answer.ndjson",
            Reply(
                "Hello!",
                (),
                Finish.STOP,
                "stop",
                Usage(71, 19),
                reasoning="The user wants <function=get_weather>? No, just a greeting.",
            ),
            id="thinking-pieces-kept-as-reasoning",
        ),
    ],
)
def test_stream(name: str, want: Reply) -> None:
    got = stream(fixture(name))
    assert got == Reply(
        want.text,
        want.tool_calls,
        want.finish,
        want.finish_reason,
        want.usage,
        want.findings,
        raw=raw_lines(name),
        reasoning=want.reasoning,
    )


def test_stream_error_line_mid_stream_is_a_refusal() -> None:
    reply = stream(fixture("stream_error_mid_stream.ndjson"))
    assert reply.refusal is not None
    assert (reply.refusal.kind, reply.refusal.status) == (RefusalKind.OTHER, 200)
    assert reply.refusal.message == "an error was encountered while running the model"
    assert (reply.text, reply.finish) == (" Yes.Ican", Finish.UNKNOWN)


def test_stream_cut_before_done_is_unterminated_with_partial() -> None:
    with pytest.raises(WireShapeError) as caught:
        stream(fixture("stream_cut_before_done.ndjson"))
    assert caught.value.kind is ShapeKind.STREAM_UNTERMINATED
    assert caught.value.partial is not None
    assert caught.value.partial.text == "Paris is the capital"
    assert caught.value.partial.finish is Finish.UNKNOWN


def test_stream_terminated_argument_is_ignored() -> None:
    # Only a "done": true line ends an Ollama stream; the caller's flag cannot vouch for it.
    reducer = ADAPTER.reducer()
    reducer.feed('{"message":{"content":"Paris"},"done":false}')
    with pytest.raises(WireShapeError) as caught:
        reducer.finish(terminated=True)
    assert caught.value.kind is ShapeKind.STREAM_UNTERMINATED


def test_stream_without_lines_is_empty() -> None:
    with pytest.raises(WireShapeError) as caught:
        stream(b"\n\n")
    assert caught.value.kind is ShapeKind.EMPTY_STREAM
    assert caught.value.partial is None


@pytest.mark.parametrize(
    ("line", "code"),
    [
        pytest.param("data: {}", "event_not_json", id="sse-line-in-ndjson"),
        pytest.param("[1]", "event_not_object", id="array-line"),
    ],
)
def test_stream_bad_line_is_a_finding(line: str, code: str) -> None:
    reducer = ADAPTER.reducer()
    reducer.feed(line)
    reducer.feed('{"message":{"content":"ok"},"done":true,"done_reason":"stop"}')
    reply = reducer.finish(terminated=False)
    assert [f.code for f in reply.findings] == [code]
    assert reply.text == "ok"


STREAMS = sorted(path.name for path in FIXTURES.glob("*.ndjson"))


def outcome(body: bytes, cuts: list[int]) -> object:
    """The reply, or the shape error's kind and partial reply, for comparison."""
    try:
        return stream(body, cuts)
    except WireShapeError as exc:
        return (exc.kind, exc.partial)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(STREAMS), data=st.data())
def test_any_chunking_gives_the_same_reply(name: str, data: st.DataObject) -> None:
    body = fixture(name)
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts")
    assert outcome(body, cuts) == outcome(body, [])


def test_every_stream_fixture_is_read() -> None:
    assert set(STREAMS) == {
        "stream_cut_before_done.ndjson",
        "stream_error_mid_stream.ndjson",
        "stream_text_then_tool_call.ndjson",
        "stream_thinking_then_answer.ndjson",
        "stream_two_call_lines.ndjson",
    }


def counted(prompt_tokens: int | None) -> Reply:
    return Reply("", usage=Usage(prompt_tokens, 5))


@pytest.mark.parametrize(
    ("prompt_tokens", "expected", "finding"),
    [
        pytest.param(
            2048,
            3940,
            Finding(
                "prompt_truncated",
                "prompt_eval_count is 2048, below 80% of the about 3940 tokens sent:"
                " Ollama may have cut the prompt to num_ctx",
            ),
            id="c07-cut-to-num-ctx-2048",
        ),
        pytest.param(799, 1000, "prompt_truncated", id="just-below-80-percent"),
        pytest.param(800, 1000, None, id="exactly-80-percent-is-fine"),
        pytest.param(1000, 1000, None, id="as-expected"),
        pytest.param(1300, 1000, None, id="more-than-expected"),
        pytest.param(None, 1000, None, id="count-missing-cached-prompt"),
        pytest.param(0, 1000, None, id="count-zero-says-nothing"),
        pytest.param(10, 0, None, id="no-expectation"),
    ],
)
def test_truncation_finding(
    prompt_tokens: int | None, expected: int, finding: Finding | str | None
) -> None:
    got = truncation_finding(counted(prompt_tokens), expected)
    if isinstance(finding, str):
        assert got is not None
        assert got.code == finding
    else:
        assert got == finding
