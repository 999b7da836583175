"""OpenAI's Responses API (``POST /v1/responses``) on loopback, in the documented event order.

A stream is: ``response.created``, ``response.in_progress``, then per output item
``response.output_item.added``, its deltas (``response.output_text.delta`` or
``response.function_call_arguments.delta``), its done events, ``response.output_item.done``,
and last ``response.completed`` carrying the whole response. ``strict: true`` on a function
tool applies strict mode's rules (every object closed, every property required) and refuses
with OpenAI's own words; ``quirks`` break the order the way a faulty server would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.ids import conversation_ids
from tests.emulators.model import Answer, Asked, Behaviour
from tests.emulators.server import Fault, Received, Response
from tests.emulators.strict import responses_refusal, strict_problem
from tests.emulators.vectors import refusal, vector


@dataclass
class ResponsesEmulator:
    """Serves responses for ``model``; ``fault`` is applied to every model answer."""

    model: Behaviour
    key: str | None = None
    """When set, requests must carry ``Authorization: Bearer <key>``."""
    quirks: set[str] = field(default_factory=set)
    """Stream quirks: delta_before_added, no_added, no_completed, error_event, done_differs,
    ignores_strict (the server takes ``strict: true`` as false and echoes false)."""
    queue: list[Response] = field(default_factory=list)
    """Responses sent before the model answers (refusals, retries, broken bodies)."""
    fault: Fault | None = None

    def __call__(self, received: Received) -> Response:
        if received.method == "GET":
            return Response.json({"object": "list", "data": []})
        if self.key is not None and received.headers.get("authorization") != f"Bearer {self.key}":
            return refusal("openai-401-incorrect-api-key-is-redacted")
        if self.queue:
            return self.queue.pop(0)
        request = received.json()
        tools = [t for t in request.get("tools") or [] if t.get("type") == "function"]
        if "ignores_strict" in self.quirks:
            tools = [dict(t, strict=False) for t in tools]
        for tool in tools:
            # strict defaults to true in this API: a tool without the flag is checked too.
            problem = strict_problem(tool.get("parameters")) if tool.get("strict", True) else None
            if problem is not None:
                return responses_refusal(tool["name"], problem)
        asked = Asked(
            [{"name": t["name"], "description": t.get("description", ""),
              "parameters": t.get("parameters") or {}} for t in tools],
            _messages(request.get("input")),
            request.get("max_output_tokens"),
            *_choice(request.get("tool_choice")),
            parallel=False if request.get("parallel_tool_calls") is False else None,
            strict={t["name"]: t.get("strict", True) is True for t in tools},
        )  # fmt: skip
        answer = self.model(asked)
        response = _response(answer, request, tools)
        if request.get("stream"):
            chunks = list(self.stream(answer, response))
            return Response(
                200, headers={"content-type": "text/event-stream"}, chunks=chunks, fault=self.fault
            )
        return Response(
            200, json.dumps(response).encode(), {"content-type": "application/json"},
            fault=self.fault,
        )  # fmt: skip

    def stream(self, answer: Answer, response: dict[str, Any]) -> Iterator[bytes]:
        number = 0

        def event(kind: str, **fields: Any) -> bytes:
            nonlocal number
            number += 1
            data = {"type": kind, "sequence_number": number - 1, **fields}
            return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

        started = dict(response, status="in_progress", output=[], usage=None)
        yield event("response.created", response=started)
        yield event("response.in_progress", response=started)
        for index, item in enumerate(response["output"]):
            if item["type"] == "reasoning":
                yield from _reasoning(index, item, event)
            elif item["type"] == "message":
                yield from self.message(index, item, event)
                if "error_event" in self.quirks:
                    # A failure mid-stream is an `error` event (code, message, param) in a
                    # 200 stream; the words are OpenAI's own rate-limit text.
                    found = json.loads(vector("openai-429-try-again-in-milliseconds")["body"])
                    yield event("error", code=None, param=None, message=found["error"]["message"])
                    return
            else:
                yield from self.call(index, item, event)
        if "no_completed" not in self.quirks:
            yield event("response.completed", response=response)

    def message(self, index: int, item: dict[str, Any], event: Any) -> Iterator[bytes]:
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        yield event("response.output_item.added", output_index=index,
                    item=dict(item, status="in_progress", content=[]))  # fmt: skip
        yield event("response.content_part.added", output_index=index, content_index=0,
                    item_id=item["id"], part=part)  # fmt: skip
        for i in range(0, len(text), 3):
            yield event("response.output_text.delta", output_index=index, content_index=0,
                        item_id=item["id"], delta=text[i : i + 3])  # fmt: skip
        yield event("response.output_text.done", output_index=index, content_index=0,
                    item_id=item["id"], text=text)  # fmt: skip
        yield event("response.content_part.done", output_index=index, content_index=0,
                    item_id=item["id"], part=dict(part, text=text))  # fmt: skip
        yield event("response.output_item.done", output_index=index, item=item)

    def call(self, index: int, item: dict[str, Any], event: Any) -> Iterator[bytes]:
        text = item["arguments"]
        added = event("response.output_item.added", output_index=index,
                      item=dict(item, status="in_progress", arguments=""))  # fmt: skip
        if "delta_before_added" not in self.quirks and "no_added" not in self.quirks:
            yield added
        # Two to four characters at a time: pieces break inside keys, strings and escapes.
        i, step = 0, 2
        while i < len(text):
            yield event("response.function_call_arguments.delta", output_index=index,
                        item_id=item["id"], delta=text[i : i + step])  # fmt: skip
            i, step = i + step, 2 + (step + 1) % 3
            if i >= 2 and "delta_before_added" in self.quirks and added:
                yield added
                added = b""
        done = text + " " if "done_differs" in self.quirks else text
        yield event("response.function_call_arguments.done", output_index=index,
                    item_id=item["id"], arguments=done)  # fmt: skip
        yield event(
            "response.output_item.done", output_index=index, item=dict(item, arguments=done)
        )


def _choice(choice: Any) -> tuple[str, str | None]:
    """``tool_choice`` as ``Asked`` says it: a word, or ``{"type": "function", "name": …}``."""
    if isinstance(choice, dict) and choice.get("type") == "function":
        return "named", choice.get("name")
    return (choice, None) if choice in ("none", "required") else ("auto", None)


def _messages(items: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else [{"role": "user", "content": items}]:
        if item.get("type") == "function_call_output":
            out.append({"role": "tool", "content": item.get("output", ""),
                        "call_id": item.get("call_id")})  # fmt: skip
        elif item.get("type") == "function_call":
            out.append({"role": "assistant", "content": "", "call_id": item.get("call_id")})
        else:
            content = item.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            out.append({"role": item.get("role"), "content": content or ""})
    return out


def _reasoning(index: int, item: dict[str, Any], event: Any) -> Iterator[bytes]:
    """A reasoning item: added, its ``reasoning_text`` in ``response.reasoning_text.delta``
    pieces, done (openai-python ``ResponseReasoningItem``, as vLLM sends it)."""
    text = item["content"][0]["text"]
    yield event("response.output_item.added", output_index=index, item=dict(item, content=[]))
    for i in range(0, len(text), 5):
        yield event("response.reasoning_text.delta", output_index=index, content_index=0,
                    item_id=item["id"], delta=text[i : i + 5])  # fmt: skip
    yield event("response.reasoning_text.done", output_index=index, content_index=0,
                item_id=item["id"], text=text)  # fmt: skip
    yield event("response.output_item.done", output_index=index, item=item)


def _response(answer: Answer, request: dict[str, Any], tools: list[Any]) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if answer.reasoning:
        output.append({"type": "reasoning", "id": "rs_emu", "summary": [],
                       "content": [{"type": "reasoning_text", "text": answer.reasoning}]})  # fmt: skip
    if answer.text:
        output.append({"type": "message", "id": "msg_emu", "status": "completed",
                       "role": "assistant",
                       "content": [{"type": "output_text", "text": answer.text,
                                    "annotations": []}]})  # fmt: skip
    # New ids for every call of the conversation, as OpenAI issues them.
    calls = conversation_ids(request.get("input"), len(answer.calls), "call_")
    items = conversation_ids(request.get("input"), len(answer.calls), "fc_")
    for i, call in enumerate(answer.calls):
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
        output.append({"type": "function_call", "id": items[i], "call_id": calls[i],
                       "name": call.name, "arguments": arguments, "status": "completed"})  # fmt: skip
    cut = answer.finish == "length"
    return {
        "id": "resp_emu", "object": "response", "created_at": 0, "model": request["model"],
        "status": "incomplete" if cut else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "error": None, "output": output, "parallel_tool_calls": True,
        "tool_choice": request.get("tool_choice", "auto"), "tools": tools,
        "usage": {"input_tokens": len(json.dumps(request.get("input"))) // 4,
                  "output_tokens": max(1, len(answer.text) // 4 + 8 * len(answer.calls))},
    }  # fmt: skip
