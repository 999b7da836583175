"""Anthropic's Messages API (``/v1/messages``), streamed as its documented events.

The root of each ``input_schema`` must be an object without a top-level combinator; a
refusal carries Anthropic's own text with the tool's index (provider-facts S20, S21). A tool
with ``strict: true`` must close every object (``additionalProperties: false``), else the
request is refused in the words of vector
anthropic-strict-object-additional-properties-must-be-false; optional properties are allowed
(Anthropic's strict tool use, unlike OpenAI's, does not require every property). Call ids are
``toolu_`` ids, new for every call of a conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.ids import conversation_ids
from tests.emulators.model import Asked, Behaviour
from tests.emulators.server import Received, Response
from tests.emulators.vectors import refusal, vector


def _error(message: str) -> Response:
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_emu",
    }
    # Anthropic marks schema refusals as not worth retrying (provider-facts S21 headers).
    return Response.json(body, 400, {"x-should-retry": "false"})


def check_tools(tools: list[dict[str, Any]]) -> Response | None:
    """Anthropic's 400 for the first tool whose input_schema it refuses, or None."""
    for index, tool in enumerate(tools):
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            return _error(f"tools.{index}.custom.input_schema: Field required")
        if any(key in schema for key in ("oneOf", "allOf", "anyOf")):
            # Text of vector anthropic-does-not-support-one-of-is-schema-not-tools, index moved.
            text = vector("anthropic-does-not-support-one-of-is-schema-not-tools")["want"][
                "message"
            ]
            return _error(f"tools.{index}.custom.input_schema:" + text.split(":", 1)[1])
        if "type" not in schema:
            # Text of vector anthropic-missing-root-type-says-x-should-retry-false, index moved.
            return _error(f"tools.{index}.custom.input_schema.type: Field required")
        if schema["type"] != "object":
            # Reconstructed in the shape of Anthropic's pydantic-style messages (S21, S22).
            return _error(f"tools.{index}.custom.input_schema.type: Input should be 'object'")
    return None


def strict_refusal(tools: list[dict[str, Any]]) -> Response | None:
    """Anthropic's 400 for the first tool sent with ``strict: true`` that leaves an object
    open, or None (a tool without the flag is never checked)."""
    for index, tool in enumerate(tools):
        if tool.get("strict") is True and _leaves_open(tool.get("input_schema")):
            text = vector("anthropic-strict-object-additional-properties-must-be-false")["want"][
                "message"
            ]
            return _error(f"tools.{index}.custom:" + text.split(":", 1)[1])
    return None


def _leaves_open(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    properties = schema.get("properties")
    is_object = schema.get("type") == "object" or isinstance(properties, dict)
    if is_object and schema.get("additionalProperties") is not False:
        return True
    children = list(properties.values()) if isinstance(properties, dict) else []
    children += [schema["items"]] if isinstance(schema.get("items"), dict) else []
    return any(_leaves_open(child) for child in children)


_CHOICES = {"none": "none", "any": "required", "tool": "named", "auto": "auto"}
"""Anthropic's ``tool_choice`` types as ``Asked`` says them."""


@dataclass
class AnthropicEmulator:
    """Serves Messages for ``model``; ``key`` requires that ``x-api-key``."""

    model: Behaviour
    key: str | None = None
    queue: list[Response] = field(default_factory=list)

    def __call__(self, received: Received) -> Response:
        if self.key is not None and received.headers.get("x-api-key") != self.key:
            return refusal("anthropic-401-invalid-x-api-key")
        if received.method == "GET":
            return Response.json(
                {"data": [{"id": "claude-emu", "type": "model"}], "has_more": False}
            )
        if self.queue:
            return self.queue.pop(0)
        if "anthropic-version" not in received.headers:
            return _error("anthropic-version: header is required")
        request = received.json()
        refused = check_tools(request.get("tools") or []) or strict_refusal(
            request.get("tools") or []
        )
        if refused is not None:
            return refused
        tools = [{"name": t["name"], "description": t.get("description", ""), "parameters": t["input_schema"]}
                 for t in request.get("tools") or []]  # fmt: skip
        messages = []
        for message in request.get("messages", []):
            content = message.get("content")
            for block in (
                content if isinstance(content, list) else [{"type": "text", "text": content}]
            ):
                if block.get("type") == "tool_result":
                    messages.append({"role": "tool", "content": str(block.get("content", ""))})
                elif block.get("type") == "text":
                    messages.append({"role": message["role"], "content": block.get("text", "")})
        choice = request.get("tool_choice") or {}
        asked = Asked(
            tools,
            messages,
            request.get("max_tokens"),
            _CHOICES.get(choice.get("type"), "auto"),
            choice.get("name") if choice.get("type") == "tool" else None,
            False if choice.get("disable_parallel_tool_use") is True else None,
            {t["name"]: t["strict"] for t in request.get("tools") or [] if "strict" in t},
        )
        answer = self.model(asked)
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": answer.text}] if answer.text else []
        )
        if answer.reasoning:
            # Extended thinking comes first, as a thinking block with its signature.
            thinking = {"type": "thinking", "thinking": answer.reasoning, "signature": "EqQB"}
            blocks.insert(0, thinking)
        ids = conversation_ids(request.get("messages"), len(answer.calls), "toolu_")
        for index, call in enumerate(answer.calls):
            args = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
            blocks.append(
                {"type": "tool_use", "id": ids[index], "name": call.name, "input": args or {}}
            )
        stop = (
            "tool_use"
            if answer.calls
            else ("max_tokens" if answer.finish == "length" else "end_turn")
        )
        usage = {"input_tokens": len(json.dumps(request)) // 4, "output_tokens": 7}
        if request.get("stream"):
            return Response(
                200,
                headers={"content-type": "text/event-stream"},
                chunks=_stream(blocks, stop, usage),
            )
        return Response.json({"id": "msg_emu", "type": "message", "role": "assistant", "content": blocks,
                              "stop_reason": stop, "usage": usage})  # fmt: skip


def _thinking(index: int, text: str, event: Any) -> Iterator[bytes]:
    """A thinking block streamed as thinking_delta pieces, then its signature_delta."""
    start = {"type": "thinking", "thinking": "", "signature": ""}
    yield event("content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start})  # fmt: skip
    deltas = [
        {"type": "thinking_delta", "thinking": text[i : i + 5]} for i in range(0, len(text), 5)
    ]
    for delta in [*deltas, {"type": "signature_delta", "signature": "EqQB"}]:
        yield event("content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta})  # fmt: skip


def _stream(blocks: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> Iterator[bytes]:
    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    yield event("message_start", {"type": "message_start", "message": {"id": "msg_emu", "type": "message",
                "role": "assistant", "content": [], "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1}}})  # fmt: skip
    yield event("ping", {"type": "ping"})
    for index, block in enumerate(blocks):
        if block["type"] == "thinking":
            yield from _thinking(index, block["thinking"], event)
        elif block["type"] == "text":
            yield event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            text = block["text"]
            for i in range(0, len(text), 5):
                yield event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": text[i : i + 5]},
                    },
                )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            text = json.dumps(block["input"])
            for i in range(0, len(text), 3):
                yield event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": text[i : i + 3]},
                    },
                )
        yield event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield event("message_stop", {"type": "message_stop"})
