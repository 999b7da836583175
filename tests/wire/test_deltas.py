"""How each API's stream reducer assembles tool calls from deltas, and every departure from the
documented order it repairs or tolerates named by a finding (``REPAIRED_DELTAS``).

Documented orders: chat completions, each call keyed by ``index`` with ``id``, ``type`` and
``function.name`` in its first delta and argument pieces after (provider-facts 4.1);
Responses, ``response.output_item.added`` with the function_call item (``call_id``, ``name``)
before ``response.function_call_arguments.delta`` and ``.done``; Anthropic Messages,
``content_block_start`` with the tool_use block (``id``, ``name``) before its
``input_json_delta`` events (provider-facts 4.2). Each row is raw SSE bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conchcheck.wire.adapter import REPAIRED_DELTAS, ChatAdapter
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import Finding, Reply, ToolCall
from conchcheck.wire.framing import SSEDecoder
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.responses import ResponsesAdapter


def reduce(adapter: ChatAdapter, data: bytes) -> Reply:
    decoder = SSEDecoder(done_marker=getattr(adapter, "done_marker", "[DONE]"))
    reducer = adapter.reducer()
    for event, payload in [*decoder.feed(data), *decoder.close()]:
        reducer.feed(payload, event)
    return reducer.finish(terminated=decoder.done)


# -- chat completions ---------------------------------------------------------------------


def chat(*pieces: dict[str, Any]) -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]} for piece in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def first(index: int | None, call_id: str | None, name: str | None, arguments: str = "") -> Any:
    piece: dict[str, Any] = {"type": "function", "function": {"arguments": arguments}}
    if index is not None:
        piece["index"] = index
    if call_id is not None:
        piece["id"] = call_id
    if name is not None:
        piece["function"]["name"] = name
    return piece


def more(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    function = {"arguments": arguments, **fields.pop("function", {})}
    return {"index": index, **fields, "function": function}


CHAT = [
    pytest.param(
        chat(first(0, "call_0", "f"), more(0, '{"x"'), more(0, ": 1}")),
        [ToolCall("call_0", "f", '{"x": 1}')], [], id="documented-order",
    ),
    pytest.param(
        chat(more(0, '{"x"'), first(0, "call_0", "f", ": 1}")),
        [ToolCall("call_0", "f", '{"x": 1}')],
        [("arguments_before_name", "delta tool_calls[0]: its id came after 4 characters of arguments")],
        id="arguments-before-id-and-name",
    ),
    pytest.param(
        chat(first(0, None, "f", '{"x"'), more(0, ": 1}", id="call_0")),
        [ToolCall("call_0", "f", '{"x": 1}')],
        [("arguments_before_name", "delta tool_calls[0]: its id came after 4 characters of arguments")],
        id="id-after-arguments",
    ),
    # LM Studio with Gemma 4 gives each later delta a new id and an empty name, at the same
    # index (shape as reported in NousResearch/hermes-agent#5254): one call, named once.
    pytest.param(
        chat(first(0, "701601222", "shell"), more(0, "{\n", id="tool-call-1", function={"name": ""}),
             more(0, '"command": "ls"}', id="tool-call-2", function={"name": ""})),
        [ToolCall("701601222", "shell", '{\n"command": "ls"}')],
        [("call_id_changed", "delta tool_calls[0]: 701601222, then tool-call-1")],
        id="id-changes-on-every-delta",
    ),
    pytest.param(
        chat(first(0, "call_0", "f", '{"x"'), more(0, ": 1}", function={"name": "g"})),
        [ToolCall("call_0", "f", '{"x": 1}')],
        [("call_name_changed", "delta tool_calls[0]: f, then g")], id="name-changes",
    ),
    # MiniMax through NVIDIA NIM repeats the whole name on every delta
    # (NousResearch/hermes-agent#8259): the same name again is no change.
    pytest.param(
        chat(first(0, "call_0", "f", '{"x"'), first(0, "call_0", "f", ": 1}")),
        [ToolCall("call_0", "f", '{"x": 1}')], [], id="same-id-and-name-repeated",
    ),
    pytest.param(
        chat(first(0, None, "f", '{"x"'), more(0, ": 1}")),
        [ToolCall(None, "f", '{"x": 1}')], [("call_without_id", "tool_calls[0]")],
        id="call-without-id",
    ),
    pytest.param(
        chat(first(0, "", "f", "{}")),
        [ToolCall(None, "f", "{}")], [("call_without_id", "tool_calls[0]")],
        id="empty-id-is-no-id",
    ),
    pytest.param(
        chat(first(None, "call_0", "f", '{"x"'), {"function": {"arguments": ": 1}"}}),
        [ToolCall("call_0", "f", '{"x": 1}')],
        [("delta_without_index", json.dumps(first(None, "call_0", "f", '{"x"'))),
         ("delta_without_index", '{"function": {"arguments": ": 1}"}}')],
        id="deltas-without-index",
    ),
    # Nebius and Cerebras move later pieces to another index without an id or name
    # (dirac-run/dirac#215): the pieces belong to no call.
    pytest.param(
        chat(first(0, "call_0", "f", '{"x"'), more(1, ": 1}")),
        [ToolCall("call_0", "f", '{"x"')], [("call_without_name", "tool_calls[1]")],
        id="pieces-at-an-index-without-a-name",
    ),
    pytest.param(
        chat(first(0, "call_0", "f", '{"x": 1}'), first(1, "call_1", "g", "{}")),
        [ToolCall("call_0", "f", '{"x": 1}'), ToolCall("call_1", "g", "{}")], [],
        id="two-calls-by-index",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("data", "calls", "found"), CHAT)
def test_chat_completions_deltas(
    data: bytes, calls: list[ToolCall], found: list[tuple[str, str]]
) -> None:
    reply = reduce(OpenAIAdapter(), data)
    assert list(reply.tool_calls) == calls
    assert [(f.code, f.detail) for f in reply.findings] == found


# -- Responses ------------------------------------------------------------------------------


def event(kind: str, **fields: Any) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()


def item(arguments: str = "", **fields: Any) -> dict[str, Any]:
    return {"type": "function_call", "id": "fc_0", "call_id": "call_0", "name": "a",
            "arguments": arguments, **fields}  # fmt: skip


def added(**fields: Any) -> bytes:
    return event("response.output_item.added", output_index=0, item=item(**fields))


def delta(text: str) -> bytes:
    return event("response.function_call_arguments.delta", output_index=0, delta=text)


def args_done(text: str) -> bytes:
    return event("response.function_call_arguments.done", output_index=0, arguments=text)


def item_done(text: str = '{"x": 1}', **fields: Any) -> bytes:
    return event("response.output_item.done", output_index=0, item=item(text, **fields))


def responses(*events: bytes, output: list[Any] | None = None) -> bytes:
    created = event("response.created", response={"status": "in_progress", "output": []})
    end = event("response.completed", response={"status": "completed", "output": output or []})
    return created + b"".join(events) + end


PIECES = (delta('{"x"'), delta(": 1}"))
A = [ToolCall("call_0", "a", '{"x": 1}')]

RESPONSES = [
    pytest.param(responses(added(), *PIECES, args_done('{"x": 1}'), item_done()), A, [],
                 id="documented-order"),
    pytest.param(responses(PIECES[0], added(), PIECES[1], args_done('{"x": 1}'), item_done()), A,
                 [("event_before_item_added", "response.function_call_arguments.delta at 0"),
                  ("arguments_before_name", "output_index 0")],
                 id="arguments-before-item-added"),
    pytest.param(responses(added(), *PIECES, item_done(call_id="call_9")), A,
                 [("call_id_changed", "output_index 0: call_0, then call_9")],
                 id="call-id-changes-at-item-done"),
    pytest.param(responses(added(), *PIECES, item_done(name="b")), A,
                 [("call_name_changed", "output_index 0: a, then b")],
                 id="name-changes-at-item-done"),
    # The done event's arguments are the call's: the deltas are progress towards them.
    pytest.param(responses(added(), *PIECES, args_done('{"x": 2}'), item_done('{"x": 2}')),
                 [ToolCall("call_0", "a", '{"x": 2}')],
                 [("arguments_disagree_with_done", "output_index 0")],
                 id="pieces-disagree-with-done-done-wins"),
    pytest.param(responses(added(call_id=None), *PIECES, item_done(call_id=None)),
                 [ToolCall(None, "a", '{"x": 1}')], [("call_without_id", "output_index 0")],
                 id="call-without-call-id"),
    pytest.param(responses(output=[item('{"x": 1}')]), A,
                 [("calls_only_in_completed", "1 calls")], id="calls-only-in-completed"),
    pytest.param(responses(added(), *PIECES, item_done(), output=[item('{"x": 3}')]),
                 [ToolCall("call_0", "a", '{"x": 3}')],
                 [("stream_differs_from_completed", "streamed 1 calls, completed holds 1")],
                 id="completed-differs-from-the-pieces"),
    pytest.param(
        responses(event("response.output_item.added", item=item()),
                  event("response.function_call_arguments.delta", item_id="fc_0", delta='{"x": 1}'),
                  event("response.output_item.done", item=item('{"x": 1}'))),
        A, [("event_without_output_index", "response.output_item.added 1, "
             "response.function_call_arguments.delta 1, response.output_item.done 1")],
        id="items-by-id-without-output-index",
    ),
    pytest.param(responses(item_done()), A, [("item_done_without_added", "output_index 0")],
                 id="item-done-without-added"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "calls", "found"), RESPONSES)
def test_responses_deltas(data: bytes, calls: list[ToolCall], found: list[tuple[str, str]]) -> None:
    reply = reduce(ResponsesAdapter(), data)
    assert list(reply.tool_calls) == calls
    assert [(f.code, f.detail) for f in reply.findings] == found


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic_event(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def start(index: int | None = 0, **block: Any) -> bytes:
    fields = {"type": "tool_use", "id": "toolu_0", "name": "a", "input": {}, **block}
    payload: dict[str, Any] = {"type": "content_block_start", "content_block": fields}
    if index is not None:
        payload["index"] = index
    return anthropic_event(payload)


def piece(text: str, index: int | None = 0) -> bytes:
    payload: dict[str, Any] = {
        "type": "content_block_delta",
        "delta": {"type": "input_json_delta", "partial_json": text},
    }
    if index is not None:
        payload["index"] = index
    return anthropic_event(payload)


def message(*events: bytes) -> bytes:
    opening = {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 1}}}
    closing: list[dict[str, Any]] = [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 2},
        },
        {"type": "message_stop"},
    ]
    return (
        anthropic_event(opening)
        + b"".join(events)
        + b"".join(anthropic_event(payload) for payload in closing)
    )


T = [ToolCall("toolu_0", "a", '{"x": 1}')]

ANTHROPIC = [
    pytest.param(message(start(), piece('{"x"'), piece(": 1}")), T, [], id="documented-order"),
    pytest.param(message(piece('{"x"'), start(), piece(": 1}")), T,
                 [("delta_without_start", "input_json_delta for content[0]"),
                  ("arguments_before_name", "content[0]")],
                 id="arguments-before-block-start"),
    pytest.param(message(start(), piece('{"x"'), start(id="toolu_9"), piece(": 1}")), T,
                 [("call_id_changed", "content[0]: toolu_0, then toolu_9")],
                 id="block-started-again-with-another-id"),
    pytest.param(message(start(), piece('{"x"'), start(name="b"), piece(": 1}")), T,
                 [("call_name_changed", "content[0]: a, then b")],
                 id="block-started-again-with-another-name"),
    pytest.param(message(start(id=None), piece('{"x": 1}')), [ToolCall(None, "a", '{"x": 1}')],
                 [("call_without_id", "content[0]: tool_use has no id")], id="tool-use-without-id"),
    pytest.param(message(start(None), piece('{"x": 1}', None)), T,
                 [("event_without_index", json.loads(start(None).split(b"data: ")[1])),
                  ("event_without_index", json.loads(piece('{"x": 1}', None).split(b"data: ")[1]))],
                 id="events-without-index"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "calls", "found"), ANTHROPIC)
def test_anthropic_deltas(data: bytes, calls: list[ToolCall], found: list[tuple[str, Any]]) -> None:
    reply = reduce(AnthropicAdapter(), data)
    assert list(reply.tool_calls) == calls
    # An event's detail is its JSON (compared as data: the key order is the server's).
    assert [(f.code, _data(f)) for f in reply.findings] == found


def _data(finding: Finding) -> Any:
    if finding.code == "event_without_index":
        return json.loads(finding.detail)
    return finding.detail


def data_of(row: Any) -> bytes:
    data: bytes = row.values[0]
    return data


def test_every_repaired_delta_code_is_shown_by_a_row() -> None:
    rows = [
        *((OpenAIAdapter(), data_of(row)) for row in CHAT),
        *((ResponsesAdapter(), data_of(row)) for row in RESPONSES),
        *((AnthropicAdapter(), data_of(row)) for row in ANTHROPIC),
    ]
    shown = {f.code for adapter, data in rows for f in reduce(adapter, data).findings}
    assert shown >= REPAIRED_DELTAS


def test_documented_streams_carry_no_repair() -> None:
    # The first row of each table is the documented order: nothing to repair, so a stream
    # that agrees with the whole reply counts as agreeing.
    for adapter, row in ((OpenAIAdapter(), CHAT[0]), (ResponsesAdapter(), RESPONSES[0]),
                         (AnthropicAdapter(), ANTHROPIC[0])):  # fmt: skip
        assert not {f.code for f in reduce(adapter, data_of(row)).findings} & REPAIRED_DELTAS
