"""Ollama's native API: ``/api/chat`` (NDJSON when streaming) and ``/api/show``.

A model without the ``tools`` capability refuses tools with Ollama's own text (provider-facts
N01: ``registry.ollama.ai/library/<model> does not support tools``); an unknown model is a
404 ``model '<name>' not found, try pulling it first`` (ollama/ollama#3876).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.model import Asked, Behaviour
from tests.emulators.server import Received, Response


@dataclass
class OllamaEmulator:
    """Serves ``models``: each name with its capabilities, context length and behaviour."""

    models: dict[str, tuple[list[str], int, Behaviour]]
    queue: list[Response] = field(default_factory=list)

    def __call__(self, received: Received) -> Response:
        request = received.json() or {}
        name = request.get("model", "")
        if name not in self.models:
            return Response.json({"error": f"model '{name}' not found, try pulling it first"}, 404)
        capabilities, window, behaviour = self.models[name]
        if received.path == "/api/show":
            return Response.json({
                "capabilities": capabilities,
                "model_info": {"general.architecture": "llama", "llama.context_length": window},
                "details": {"family": "llama"},
            })  # fmt: skip
        if self.queue:
            return self.queue.pop(0)
        if request.get("tools") and "tools" not in capabilities:
            return Response.json(
                {"error": f"registry.ollama.ai/library/{name} does not support tools"}, 400
            )
        tools = [
            dict(t["function"], parameters=t["function"].get("parameters") or {})
            for t in request.get("tools") or []
        ]
        messages = [
            {"role": m.get("role"), "content": m.get("content") or ""}
            for m in request.get("messages", [])
        ]
        answer = behaviour(
            Asked(tools, messages, (request.get("options") or {}).get("num_predict"))
        )
        calls = [
            {"function": {"name": c.name, "arguments": json.loads(c.arguments) if isinstance(c.arguments, str) else c.arguments or {}}}
            for c in answer.calls
        ]  # fmt: skip
        reason = "length" if answer.finish == "length" else "stop"
        counts = {"prompt_eval_count": len(json.dumps(messages + tools)) // 4, "eval_count": 9}
        # Ollama streams unless told not to (its API default).
        if request.get("stream", True):
            return Response(200, headers={"content-type": "application/x-ndjson"},
                            chunks=_lines(name, answer.text, calls, reason, counts,
                                          answer.reasoning))  # fmt: skip
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if answer.reasoning:
            message["thinking"] = answer.reasoning
        if calls:
            message["tool_calls"] = calls
        return Response.json(
            {"model": name, "message": message, "done": True, "done_reason": reason, **counts}
        )


def _lines(
    name: str,
    text: str,
    calls: list[dict[str, Any]],
    reason: str,
    counts: dict[str, int],
    thinking: str = "",
) -> Iterator[bytes]:
    def line(message: dict[str, Any], done: bool = False, **extra: Any) -> bytes:
        return (
            json.dumps(
                {"model": name, "message": {"role": "assistant", **message}, "done": done, **extra}
            ).encode()
            + b"\n"
        )

    for i in range(0, len(thinking), 4):
        yield line({"content": "", "thinking": thinking[i : i + 4]})
    for i in range(0, len(text), 4):
        yield line({"content": text[i : i + 4]})
    if calls:
        # Tool calls arrive whole, in a line of their own (ollama.com/blog/streaming-tool).
        yield line({"content": "", "tool_calls": calls})
    yield line({"content": ""}, True, done_reason=reason, **counts)
