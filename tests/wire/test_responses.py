"""The Responses API adapter: exact requests, responses parsed, typed events merged in order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import ShapeKind, WireShapeError
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
from conchcheck.wire.framing import SSEDecoder
from conchcheck.wire.responses import ResponsesAdapter

ADAPTER = ResponsesAdapter()
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool("get_weather", "Get the weather.", SCHEMA)
ASK = Message(Role.USER, "Weather in Paris?")


def body_for(**kwargs: Any) -> dict[str, Any]:
    built = ADAPTER.build("http://127.0.0.1:8080/v1/", ChatRequest("m", (ASK,), **kwargs), None)
    assert built.body is not None
    return dict(built.body)


def test_build_plain_request() -> None:
    built = ADAPTER.build(
        "https://api.openai.com/v1", ChatRequest("gpt-x", (ASK,), max_tokens=64), "sk-secret"
    )
    assert (built.method, built.url, built.stream) == (
        "POST",
        "https://api.openai.com/v1/responses",
        False,
    )
    assert built.redacted_headers() == {
        "content-type": "application/json",
        "authorization": "[redacted]",
    }
    assert built.body == {
        "model": "gpt-x",
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "max_output_tokens": 64,
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
            {"type": "function", "name": "get_weather"},
            id="forced-tool-is-flat",
        ),
    ],
)
def test_build_tools_and_choice(choice: ToolChoice, wire: Any) -> None:
    body = body_for(tools=(WEATHER,), tool_choice=choice)
    assert body["tool_choice"] == wire


@pytest.mark.parametrize(
    ("strict", "tool"),
    [
        pytest.param(
            False,
            {"type": "function", "name": "get_weather", "description": "Get the weather.",
             "parameters": SCHEMA, "strict": False},
            id="strict-false-is-sent-not-left-to-the-default-true",
        ),
        pytest.param(
            True,
            {"type": "function", "name": "get_weather", "description": "Get the weather.",
             "parameters": SCHEMA, "strict": True},
            id="strict-true",
        ),
    ],
)  # fmt: skip
def test_build_tools_are_flat_with_strict_explicit(strict: bool, tool: dict[str, Any]) -> None:
    assert body_for(tools=(WEATHER, Tool("ping")), strict=strict)["tools"] == [
        tool,
        {"type": "function", "name": "ping", "strict": strict},
    ]


def test_build_round_trip_and_stream() -> None:
    calls = (
        ToolCall("call_1", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_2", "get_weather", '{"city": "Oslo"}'),
    )
    messages = (
        Message(Role.SYSTEM, "Be brief."),
        ASK,
        Message(Role.ASSISTANT, "", calls),
        Message(Role.TOOL, "18C", tool_call_id="call_1", name="get_weather"),
        Message(Role.TOOL, "4C", tool_call_id="call_2", name="get_weather"),
    )
    built = ADAPTER.build("http://h/v1", ChatRequest("m", messages, stream=True), None)
    assert built.body is not None and built.stream
    assert built.headers["accept"] == "text/event-stream"
    assert built.body["stream"] is True
    assert built.body["input"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
         "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "call_2", "name": "get_weather",
         "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        {"type": "function_call_output", "call_id": "call_2", "output": "4C"},
    ]  # fmt: skip


def response(*output: dict[str, Any], **extra: Any) -> bytes:
    body = {"object": "response", "status": "completed", "output": list(output), **extra}
    return json.dumps(body).encode()


def call_item(name: str, arguments: Any, call_id: str | None = "call_0") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def text_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


PARSED = [
    pytest.param(response(text_item("Hi")), "Hi", [], Finish.STOP, [], id="text"),
    pytest.param(
        response(call_item("a", '{"x": 1}'), call_item("b", "{}", "call_1")),
        "", [ToolCall("call_0", "a", '{"x": 1}'), ToolCall("call_1", "b", "{}")],
        Finish.TOOL_CALLS, [], id="parallel-calls",
    ),
    pytest.param(
        response({"type": "reasoning", "summary": []}, call_item("a", "{}")),
        "", [ToolCall("call_0", "a", "{}")], Finish.TOOL_CALLS, [], id="reasoning-item-skipped",
    ),
    pytest.param(
        response(call_item("a", {"x": 1})), "", [ToolCall("call_0", "a", '{"x": 1}')],
        Finish.TOOL_CALLS, [Finding("arguments_as_object", "output[0]: arguments sent as dict")],
        id="arguments-as-object",
    ),
    pytest.param(
        response(call_item("a", "{}", None)), "", [ToolCall(None, "a", "{}")], Finish.TOOL_CALLS,
        [Finding("call_without_call_id", "output[0] has no call_id")], id="no-call-id",
    ),
    pytest.param(
        response({"type": "function_call", "arguments": "{}"}), "", [], Finish.STOP,
        [Finding("call_without_name", "output[0] has no name")], id="call-without-name",
    ),
    pytest.param(
        response(text_item("Let"), status="incomplete",
                 incomplete_details={"reason": "max_output_tokens"}),
        "Let", [], Finish.LENGTH, [], id="incomplete-is-cut-off",
    ),
    pytest.param(
        response({"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}),
        "", [], Finish.STOP, [Finding("model_refusal", "No.")], id="model-refusal-part",
    ),
    pytest.param(
        response(text_item("<tool_call>{}</tool_call>")), "<tool_call>{}</tool_call>", [],
        Finish.STOP, [Finding("call_markers_in_text", "the text holds <tool_call>")],
        id="leaked-call-markers",
    ),
    pytest.param(
        response(call_item("a", "{}"), tools=[{"type": "function", "name": "a", "strict": True}]),
        "", [ToolCall("call_0", "a", "{}")], Finish.TOOL_CALLS,
        [Finding("tools_strict_echoed", "a=true")], id="strict-as-the-endpoint-applied-it",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("body", "text", "calls", "finish", "findings"), PARSED)
def test_parse(
    body: bytes, text: str, calls: list[ToolCall], finish: Finish, findings: list[Finding]
) -> None:
    reply = ADAPTER.parse(body)
    assert (reply.text, list(reply.tool_calls), reply.finish) == (text, calls, finish)
    assert list(reply.findings) == findings


def test_parse_usage_and_failed_status() -> None:
    reply = ADAPTER.parse(response(usage={"input_tokens": 12, "output_tokens": 5}))
    assert reply.usage == Usage(12, 5)
    failed = ADAPTER.parse(
        response(status="failed", error={"code": "server_error", "message": "Boom."})
    )
    assert failed.finish is Finish.ERROR and failed.refusal is not None
    assert (failed.refusal.kind, failed.refusal.message) == (RefusalKind.OTHER, "Boom.")


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        pytest.param(b"<html><body>502</body></html>", ShapeKind.HTML_PAGE, id="html-page"),
        pytest.param(b"nope", ShapeKind.NOT_JSON, id="not-json"),
        pytest.param(b"[1]", ShapeKind.UNEXPECTED_SHAPE, id="not-an-object"),
        pytest.param(b'{"choices": []}', ShapeKind.UNEXPECTED_SHAPE, id="chat-completion-shape"),
    ],
)
def test_parse_wrong_shapes(body: bytes, kind: ShapeKind) -> None:
    with pytest.raises(WireShapeError) as caught:
        ADAPTER.parse(body)
    assert caught.value.kind is kind


def event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


CREATED = event("response.created", response={"status": "in_progress", "output": []})
COMPLETED = event("response.completed", response={"status": "completed", "output": [],
                                                   "usage": {"input_tokens": 3,
                                                             "output_tokens": 4}})  # fmt: skip
ADDED = event(
    "response.output_item.added",
    output_index=0,
    item={"type": "function_call", "call_id": "call_0", "name": "a", "arguments": ""},
)
DELTA_1 = event("response.function_call_arguments.delta", output_index=0, delta='{"x"')
DELTA_2 = event("response.function_call_arguments.delta", output_index=0, delta=": 1}")
ARGS_DONE = event("response.function_call_arguments.done", output_index=0, arguments='{"x": 1}')
ITEM_DONE = event("response.output_item.done", output_index=0, item=call_item("a", '{"x": 1}'))
CALL = [ADDED, DELTA_1, DELTA_2, ARGS_DONE, ITEM_DONE]  # fmt: skip


def run(text: str) -> Reply:
    reducer = ADAPTER.reducer()
    decoder = SSEDecoder(done_marker=ADAPTER.done_marker)
    for name, data in decoder.feed(text.encode()):
        reducer.feed(data, name)
    return reducer.finish(terminated=decoder.done)


def codes(reply: Reply) -> list[str]:
    return [f.code for f in reply.findings]


A = [ToolCall("call_0", "a", '{"x": 1}')]

ORDERS = [
    pytest.param([CREATED, *CALL, COMPLETED], A, [], id="documented-order"),
    pytest.param(
        [CREATED, DELTA_1, ADDED, DELTA_2, ARGS_DONE, ITEM_DONE, COMPLETED], A,
        ["event_before_item_added", "arguments_before_name"], id="delta-before-item-added",
    ),
    pytest.param(
        [CREATED, DELTA_1, DELTA_2, ARGS_DONE, ITEM_DONE, COMPLETED], A,
        ["event_before_item_added", "arguments_before_name"], id="item-added-missing",
    ),
    pytest.param(
        [CREATED, ITEM_DONE, COMPLETED], A, ["item_done_without_added"], id="only-item-done",
    ),
    pytest.param([*CALL, COMPLETED], A, ["event_before_created"], id="created-missing"),
    pytest.param(
        [CREATED, *CALL, COMPLETED, DELTA_1], [ToolCall("call_0", "a", '{"x": 1}')],
        ["event_after_completed", "arguments_disagree_with_done"], id="event-after-completed",
    ),
    pytest.param(
        [CREATED, ADDED, DELTA_1, DELTA_2,
         event("response.function_call_arguments.done", output_index=0, arguments='{"x": 2}'),
         COMPLETED], [ToolCall("call_0", "a", '{"x": 2}')], ["arguments_disagree_with_done"],
        id="done-differs-from-deltas-done-wins",
    ),
    pytest.param(
        [CREATED, event("response.completed", response={"status": "completed",
                                                        "output": [call_item("a", '{"x": 1}')]})],
        A, ["calls_only_in_completed"], id="no-item-events-calls-in-completed",
    ),
    pytest.param(
        [CREATED, event("response.output_text.delta", output_index=0, delta="Hel"),
         event("response.output_text.delta", output_index=0, delta="lo"), COMPLETED],
        [], [], id="text-deltas",
    ),
]  # fmt: skip


# llama-server's Responses stream, event for event as its code writes it (server-task.cpp of
# the llama.cpp vendored by llama-cpp-python 0.3.36: to_json_oaicompat_resp for the deltas,
# to_json_oaicompat_resp_stream for the end): items are named by "id"/"item_id", never by
# output_index; no sequence_number; no function_call_arguments.done.
def llama_item(call: str = "k3", arguments: str = '{"x": 1}', **more: str) -> dict[str, str]:
    return {
        "id": f"fc_{call}",
        "type": "function_call",
        "status": "completed",
        "arguments": arguments,
        "call_id": f"call_{call}",
        "name": "a",
        **more,
    }


def llama_end(*items: dict[str, str]) -> str:
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [*items]}
    return event("response.completed", response=response)


LLAMA = [
    event("response.created", response={"id": "resp_1", "status": "in_progress"}),
    event("response.in_progress", response={"id": "resp_1", "status": "in_progress"}),
    event("response.output_item.added", item=llama_item(arguments="", status="in_progress")),
    event("response.function_call_arguments.delta", delta='{"x"', item_id="fc_k3"),
    event("response.function_call_arguments.delta", delta=": 1}", item_id="fc_k3"),
    event("response.output_item.done", item=llama_item()),
]
K3 = [ToolCall("call_k3", "a", '{"x": 1}')]
UNINDEXED = (
    "event_without_output_index",
    "response.output_item.added 1, response.function_call_arguments.delta 2, "
    "response.output_item.done 1",
)


@pytest.mark.parametrize(
    ("events", "calls", "found"),
    [
        pytest.param(
            [*LLAMA, llama_end(llama_item())],
            K3,
            [UNINDEXED],
            id="llama-server-one-call-by-item-id",
        ),
        pytest.param(
            [*LLAMA, llama_end(llama_item(arguments='{"x": 2}'))],
            [ToolCall("call_k3", "a", '{"x": 2}')],
            [UNINDEXED, ("stream_differs_from_completed", "streamed 1 calls, completed holds 1")],
            id="completed-differs-it-is-the-answer",
        ),
        pytest.param(
            [
                *LLAMA[:5],
                event("response.output_item.done", item=llama_item("k4")),
                llama_end(llama_item()),
            ],
            K3,
            [
                ("item_done_without_added", "output_index 1"),
                UNINDEXED,
                ("stream_differs_from_completed", "streamed 2 calls, completed holds 1"),
            ],
            id="an-item-done-of-another-id-completed-wins",
        ),
        pytest.param(
            [*LLAMA, llama_end()], K3, [UNINDEXED], id="completed-with-no-output-keeps-the-stream"
        ),
    ],
)
def test_streams_without_output_index(
    events: list[str], calls: list[ToolCall], found: list[tuple[str, str]]
) -> None:
    reply = run("".join(events))
    assert list(reply.tool_calls) == calls
    assert [(f.code, f.detail) for f in reply.findings] == found


@pytest.mark.parametrize(("events", "calls", "found"), ORDERS)
def test_event_order(events: list[str], calls: list[ToolCall], found: list[str]) -> None:
    reply = run("".join(events))
    assert (list(reply.tool_calls), codes(reply)) == (calls, found)


def test_stream_text_usage_and_finish() -> None:
    reply = run(
        CREATED + event("response.output_text.delta", output_index=0, delta="Hi") + COMPLETED
    )
    assert (reply.text, reply.finish, reply.usage) == ("Hi", Finish.STOP, Usage(3, 4))


def test_stream_any_chunking_gives_the_same_reply() -> None:
    text = "".join([CREATED, *CALL, COMPLETED])
    whole = run(text)
    for cut in range(1, len(text), 7):
        reducer, decoder = ADAPTER.reducer(), SSEDecoder(done_marker=None)
        for piece in (text[:cut], text[cut:]):
            for name, data in decoder.feed(piece.encode()):
                reducer.feed(data, name)
        assert reducer.finish(terminated=False).tool_calls == whole.tool_calls


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([CREATED, ADDED, DELTA_1], id="cut-mid-call"),
        pytest.param([CREATED, *CALL], id="cut-before-completed"),
    ],
)
def test_stream_cut_is_a_shape_error_with_the_partial_reply(events: list[str]) -> None:
    with pytest.raises(WireShapeError) as caught:
        run("".join(events))
    assert caught.value.kind is ShapeKind.STREAM_UNTERMINATED
    assert caught.value.partial is not None
    assert [c.name for c in caught.value.partial.tool_calls] == ["a"]


def test_empty_stream() -> None:
    with pytest.raises(WireShapeError) as caught:
        run("")
    assert caught.value.kind is ShapeKind.EMPTY_STREAM


@pytest.mark.parametrize(
    ("error", "kind", "message"),
    [
        pytest.param(
            event("error", code="rate_limit_exceeded", param=None, sequence_number=2,
                  message="Rate limit reached for gpt-4o in organization org-… on tokens per min "
                  "(TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms."),
            RefusalKind.RATE_LIMIT,
            "Rate limit reached for gpt-4o in organization org-… on tokens per min (TPM): Limit "
            "30000, Used 29937, Requested 385. Please try again in 644ms.",
            id="error-event",
        ),
        pytest.param(
            event("response.failed", response={"status": "failed", "output": [],
                                               "error": {"code": "server_error",
                                                         "message": "Boom."}}),
            RefusalKind.OTHER, "Boom.", id="response-failed",
        ),
    ],
)  # fmt: skip
def test_error_inside_a_200_stream_is_a_refusal(
    error: str, kind: RefusalKind, message: str
) -> None:
    reply = run(CREATED + ADDED + DELTA_1 + error)
    assert reply.refusal is not None
    assert (reply.refusal.kind, reply.refusal.message) == (kind, message)


def test_sequence_numbers_out_of_order_are_named() -> None:
    first = event("response.created", sequence_number=5, response={"status": "in_progress"})
    second = event("response.output_text.delta", sequence_number=3, output_index=0, delta="x")
    reply = run(first + second + COMPLETED)
    assert reply.findings[0] == Finding(
        "sequence_out_of_order", "response.output_text.delta #3 after #5"
    )
