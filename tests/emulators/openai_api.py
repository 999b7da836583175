"""An OpenAI-compatible chat completions server, with the flavours of the servers that speak it.

Flavours: ``openai``; ``openrouter`` (its ``/api/v1/models`` catalogue, and its 404 for a
model without tool support); ``llamacpp`` (``/props``, a template with or without tools,
``--jinja``, its schema refusals); ``lmstudio`` (an error event inside a 200 stream);
``gemini-openai`` (errors as a JSON array). Streams are SSE in awkward pieces.

Every flavour obeys the request's knobs the way OpenAI does unless told otherwise: a function
sent with ``strict: true`` whose schema strict mode can't enforce is refused with OpenAI's
words (tests/emulators/strict.py), and call ids are unique across a conversation. The options
``strict_mode``, ``ids``, ``takes_ids`` and the quirks break that the way real servers do
(tests/emulators/knob_profiles.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.gemini_api import check_declarations
from tests.emulators.ids import conversation_ids
from tests.emulators.model import Answer, Asked, Behaviour
from tests.emulators.server import Received, Response
from tests.emulators.strict import chat_refusal
from tests.emulators.vectors import refusal, vector


@dataclass
class OpenAIEmulator:
    """Serves chat completions for ``model``; options reproduce each flavour's behaviour."""

    model: Behaviour
    flavour: str = "openai"
    key: str | None = None
    """When set, requests must carry ``Authorization: Bearer <key>``."""
    catalogue: list[dict[str, Any]] = field(default_factory=list)
    """OpenRouter's ``/api/v1/models`` entries."""
    template_tools: bool = True
    """llama.cpp: the chat template renders tools (False: tools are accepted and ignored)."""
    jinja: bool = True
    """llama.cpp: started with --jinja (False: any request with tools is a 500)."""
    n_ctx: int = 8192
    quirks: set[str] = field(default_factory=set)
    """Stream quirks: no_index, args_object, args_null, error_event, no_done, one_char,
    args_first (each call's argument deltas before the one with its id and name); and
    finish_stop (``finish_reason: "stop"`` on a reply with calls, whole or streamed)."""
    strict_mode: str = "enforced"
    """What ``strict: true`` does: ``enforced`` (OpenAI: a schema strict mode can't enforce
    is refused, the model is held to the rest), ``ignored`` (every schema taken, the model
    still held), ``fails_open`` (every schema taken, the model free: llama.cpp's grammar
    that fails open)."""
    ids: str = "unique"
    """Call ids: ``unique`` (``call_`` and 24 hex digits, different for every call of a
    conversation), ``constant`` (``call_0`` for every call), ``per_reply`` (``call_0``,
    ``call_1``, … afresh in every reply), ``hex8`` (``call_`` and 8 hex digits)."""
    takes_ids: str | None = None
    """A pattern every ``tool_call_id`` sent back must match, else the request is refused
    (a server that can't take the ids it issues)."""
    queue: list[Response] = field(default_factory=list)
    """Responses sent before the model answers (refusals, retries, broken bodies)."""
    check_tools: Callable[[list[dict[str, Any]]], Response | None] | None = None
    """A backend's own schema rules: given the request's ``tools`` as sent (OpenAI shape),
    the refusal to answer with, or None to let the model answer (after the flavour's rules)."""

    def __call__(self, received: Received) -> Response:
        if received.method == "GET":
            return self.get(received)
        if self.key is not None and received.headers.get("authorization") != f"Bearer {self.key}":
            return refusal("openai-401-incorrect-api-key-is-redacted")
        if self.queue:
            return self.queue.pop(0)
        request = received.json()
        tools = request.get("tools") or []
        refused = self.refuse(request, tools) or self.refuse_ids(request)
        if refused is not None:
            return refused
        seen = tools if (self.flavour != "llamacpp" or self.template_tools) else []
        functions = [t["function"] for t in seen]
        asked = Asked(
            [dict(f, parameters=f.get("parameters") or {}) for f in functions],
            [_neutral(m) for m in request.get("messages", [])],
            request.get("max_tokens"),
            *_choice(request.get("tool_choice")),
            parallel=False if request.get("parallel_tool_calls") is False else None,
            # A server that fails open takes the flag and never holds the model to it.
            strict={}
            if self.strict_mode == "fails_open"
            else {f["name"]: f["strict"] for f in functions if "strict" in f},
        )
        answer = self.model(asked)
        ids = self.call_ids(request.get("messages", []), len(answer.calls))
        usage = {
            "prompt_tokens": len(json.dumps([request.get("messages"), seen])) // 4,
            "completion_tokens": max(1, len(answer.text) // 4 + 8 * len(answer.calls)),
        }
        if request.get("stream"):
            return Response(200, headers={"content-type": "text/event-stream"},
                            chunks=self.stream(answer, usage, request["model"], ids))  # fmt: skip
        return Response.json(_completion(answer, usage, request["model"], ids, self.finish(answer)))

    def get(self, received: Received) -> Response:
        if received.path == "/props" and self.flavour == "llamacpp":
            return Response.json({
                "chat_template_caps": {"supports_tools": self.template_tools,
                                       "supports_tool_calls": self.template_tools},
                "default_generation_settings": {"n_ctx": self.n_ctx},
                "n_ctx": self.n_ctx,
            })  # fmt: skip
        if received.path.endswith("/models"):
            return Response.json({"data": self.catalogue, "object": "list"})
        return Response.json({"error": {"message": "Not Found", "code": 404}}, 404)

    def refuse(self, request: dict[str, Any], tools: list[dict[str, Any]]) -> Response | None:
        if not tools:
            return None
        if self.flavour == "openrouter":
            entry = next((m for m in self.catalogue if m["id"] == request["model"]), None)
            if entry is not None and "tools" not in entry.get("supported_parameters", []):
                return refusal("openrouter-404-no-endpoints-for-tool-use-is-tools-not-not-found")
        if self.flavour == "gemini-openai":
            # Gemini's OpenAI-compatible endpoint checks the same subset and answers with a
            # JSON array of one error (provider-facts S17; jackmpcollins/magentic#382).
            error = check_declarations([dict(t["function"]) for t in tools])
            if error is not None:
                return Response(
                    400, json.dumps([error]).encode(), {"content-type": "application/json"}
                )
        if self.flavour == "llamacpp":
            if not self.jinja:
                return refusal("llamacpp-500-tools-need-jinja-is-tools-not-retryable")
            text = json.dumps(tools)
            if self.template_tools and '"$ref": "#/$defs/missing"' in text:
                return refusal("llamacpp-400-dangling-ref-is-schema-with-path")
            if self.template_tools and '"type": "strung"' in text:
                return refusal("llamacpp-400-unrecognized-type-at-root")
        if self.strict_mode == "enforced":
            strict = chat_refusal(tools)
            if strict is not None:
                return strict
        if self.check_tools is not None:
            return self.check_tools(tools)
        return None

    def refuse_ids(self, request: dict[str, Any]) -> Response | None:
        """Mistral's 400 for a ``tool_call_id`` that doesn't match ``takes_ids``, or None."""
        if self.takes_ids is None:
            return None
        for message in request.get("messages") or []:
            call_id = message.get("tool_call_id")
            if message.get("role") == "tool" and not re.fullmatch(self.takes_ids, str(call_id)):
                found = vector("mistral-400-tool-call-id-must-be-nine-alphanumerics")
                body = json.loads(found["body"])
                body["message"] = re.sub(r"was \S+ but", f"was {call_id} but", body["message"])
                return Response.json(body, found["status"])
        return None

    def call_ids(self, messages: list[dict[str, Any]], count: int) -> list[str]:
        """The ids of a reply's ``count`` calls, after ``messages``."""
        match self.ids:
            case "constant":
                return ["call_0"] * count
            case "per_reply":
                return [f"call_{i}" for i in range(count)]
            case _:
                size = 8 if self.ids == "hex8" else 24
                return conversation_ids(messages, count, "call_", size)

    def finish(self, answer: Answer) -> str:
        if answer.calls and "finish_stop" not in self.quirks:
            return "tool_calls"
        return "stop" if answer.calls else answer.finish

    def stream(
        self, answer: Answer, usage: dict[str, int], model: str, ids: list[str]
    ) -> Iterator[bytes]:
        size = 1 if "one_char" in self.quirks else 3

        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {"id": "chatcmpl-emu", "object": "chat.completion.chunk", "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        yield event({"role": "assistant", "content": ""})
        for i in range(0, len(answer.reasoning), size):
            # llama-server and DeepSeek's spelling (tools/server/README.md --reasoning-format).
            yield event({"reasoning_content": answer.reasoning[i : i + size]})
        for i in range(0, len(answer.text), size):
            yield event({"content": answer.text[i : i + size]})
            if "error_event" in self.quirks and i >= size:
                # LM Studio sends its failure as an event inside a 200 stream (provider-facts N10).
                body = vector("lmstudio-200-stream-jinja-error-is-tools")["body"]
                yield b"data: " + body.encode() + b"\n\n"
                return
        for index, call in enumerate(answer.calls):
            yield from self.call_pieces(index, ids[index], call.name, call.arguments, event)
        yield event({}, self.finish(answer))
        usage_chunk = {
            "id": "chatcmpl-emu",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": usage,
        }
        yield b"data: " + json.dumps(usage_chunk).encode() + b"\n\n"
        if "no_done" not in self.quirks:
            yield b"data: [DONE]\n\n"

    def call_pieces(
        self, index: int, call_id: str, name: str, arguments: Any, event: Any
    ) -> Iterator[bytes]:
        def piece(extra: dict[str, Any]) -> dict[str, Any]:
            return extra if "no_index" in self.quirks else {"index": index, **extra}

        first: dict[str, Any] = {"id": call_id, "type": "function", "function": {"name": name}}
        if "args_object" in self.quirks:
            first["function"]["arguments"] = (
                json.loads(arguments) if isinstance(arguments, str) else arguments
            )
            yield event({"tool_calls": [piece(first)]})
            return
        first["function"]["arguments"] = None if "args_null" in self.quirks else ""
        if "args_first" not in self.quirks:
            yield event({"tool_calls": [piece(first)]})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        # Two to four characters at a time: pieces break inside keys, strings and escapes.
        i, step = 0, 2
        while i < len(text):
            yield event({"tool_calls": [piece({"function": {"arguments": text[i : i + step]}})]})
            i, step = i + step, 2 + (step + 1) % 3
        if "args_first" in self.quirks:
            yield event({"tool_calls": [piece(first)]})


def _neutral(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return {"role": message.get("role"), "content": content or ""}


def _choice(choice: Any) -> tuple[str, str | None]:
    """``tool_choice`` as ``Asked`` says it: a word, or ``{"type": "function", "function":
    {"name": …}}``."""
    if isinstance(choice, dict) and choice.get("type") == "function":
        return "named", (choice.get("function") or {}).get("name")
    return (choice, None) if choice in ("none", "required") else ("auto", None)


def _completion(
    answer: Answer, usage: dict[str, int], model: str, ids: list[str], finish: str
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
    if answer.calls:
        message["tool_calls"] = [
            {"id": ids[i], "type": "function",
             "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for i, c in enumerate(answer.calls)
        ]  # fmt: skip
    return {
        "id": "chatcmpl-emu", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {**usage, "total_tokens": sum(usage.values())},
    }  # fmt: skip
