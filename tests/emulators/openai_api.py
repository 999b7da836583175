"""An OpenAI-compatible chat completions server, with the flavours of the servers that speak it.

Flavours: ``openai``; ``openrouter`` (its ``/api/v1/models`` catalogue, and its 404 for a
model without tool support); ``llamacpp`` (``/props``, a template with or without tools,
``--jinja``, its schema refusals); ``lmstudio`` (an error event inside a 200 stream);
``gemini-openai`` (errors as a JSON array). Streams are SSE in awkward pieces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.gemini_api import check_declarations
from tests.emulators.model import Answer, Asked, Behaviour
from tests.emulators.server import Received, Response
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
    """Stream quirks: no_index, args_object, args_null, error_event, no_done, one_char."""
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
        refused = self.refuse(request, tools)
        if refused is not None:
            return refused
        seen = tools if (self.flavour != "llamacpp" or self.template_tools) else []
        asked = Asked(
            [dict(t["function"], parameters=t["function"].get("parameters") or {}) for t in seen],
            [_neutral(m) for m in request.get("messages", [])],
            request.get("max_tokens"),
        )
        answer = self.model(asked)
        usage = {
            "prompt_tokens": len(json.dumps([request.get("messages"), seen])) // 4,
            "completion_tokens": max(1, len(answer.text) // 4 + 8 * len(answer.calls)),
        }
        if request.get("stream"):
            return Response(200, headers={"content-type": "text/event-stream"},
                            chunks=self.stream(answer, usage, request["model"]))  # fmt: skip
        return Response.json(_completion(answer, usage, request["model"]))

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
        if self.check_tools is not None:
            return self.check_tools(tools)
        return None

    def stream(self, answer: Answer, usage: dict[str, int], model: str) -> Iterator[bytes]:
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
            yield from self.call_pieces(index, call.name, call.arguments, event)
        yield event({}, answer.finish if not answer.calls else "tool_calls")
        usage_chunk = {
            "id": "chatcmpl-emu",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": usage,
        }
        yield b"data: " + json.dumps(usage_chunk).encode() + b"\n\n"
        if "no_done" not in self.quirks:
            yield b"data: [DONE]\n\n"

    def call_pieces(self, index: int, name: str, arguments: Any, event: Any) -> Iterator[bytes]:
        def piece(extra: dict[str, Any]) -> dict[str, Any]:
            return extra if "no_index" in self.quirks else {"index": index, **extra}

        first: dict[str, Any] = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name},
        }
        if "args_object" in self.quirks:
            first["function"]["arguments"] = (
                json.loads(arguments) if isinstance(arguments, str) else arguments
            )
            yield event({"tool_calls": [piece(first)]})
            return
        first["function"]["arguments"] = None if "args_null" in self.quirks else ""
        yield event({"tool_calls": [piece(first)]})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        # Two to four characters at a time: pieces break inside keys, strings and escapes.
        i, step = 0, 2
        while i < len(text):
            yield event({"tool_calls": [piece({"function": {"arguments": text[i : i + step]}})]})
            i, step = i + step, 2 + (step + 1) % 3


def _neutral(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return {"role": message.get("role"), "content": content or ""}


def _completion(answer: Answer, usage: dict[str, int], model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
    if answer.calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for i, c in enumerate(answer.calls)
        ]  # fmt: skip
    finish = "tool_calls" if answer.calls else answer.finish
    return {
        "id": "chatcmpl-emu", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {**usage, "total_tokens": sum(usage.values())},
    }  # fmt: skip
