"""Gemini's native API (generateContent, streamGenerateContent?alt=sse, models/{model}).

``parameters`` is checked the way Gemini checks its OpenAPI subset: a keyword outside it is
refused with Gemini's own error text naming the field path (provider-facts S01–S09); a
``parametersJsonSchema`` takes full JSON Schema. ``check_declarations`` is shared with the
OpenAI-compatible endpoint's flavour, which wraps the same error in a JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.model import Asked, Behaviour
from tests.emulators.server import Received, Response
from tests.emulators.vectors import refusal

# The Schema fields of functionDeclarations[].parameters (googleapis/python-genai Schema, as
# the Developer API accepted them in 2025-2026 reports; provider-facts 4.4).
ACCEPTED = {
    "type", "format", "description", "nullable", "enum", "properties", "required", "items",
    "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
    "title", "propertyOrdering", "minProperties", "maxProperties", "example",
}  # fmt: skip
TYPES = {"string", "number", "integer", "boolean", "array", "object"}


def _violations(node: Any, path: str) -> Iterator[tuple[str, str]]:
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key not in ACCEPTED:
            # Gemini drops the "$" of "$ref" in its message (provider-facts S04).
            name = key.removeprefix("$")
            yield (
                path,
                f"Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Cannot find field.",
            )
            continue
        if key == "type" and (not isinstance(value, str) or value.lower() not in TYPES):
            shown = json.dumps(value) if not isinstance(value, str) else f'"{value}"'
            yield (
                f"{path}.type",
                (
                    f"Invalid value at '{path}.type' "
                    f"(type.googleapis.com/google.ai.generativelanguage.v1beta.Type), {shown}"
                ),
            )
        elif key == "properties" and isinstance(value, dict):
            for index, sub in enumerate(value.values()):
                yield from _violations(sub, f"{path}.properties[{index}].value")
        elif key == "items":
            yield from _violations(value, f"{path}.items")
        elif key == "anyOf" and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _violations(sub, f"{path}.any_of[{index}]")


def check_declarations(
    declarations: list[dict[str, Any]], prefix: str = "tools[0]"
) -> dict[str, Any] | None:
    """Gemini's 400 error for the first declaration outside the subset, or None."""
    found = [
        violation
        for index, declaration in enumerate(declarations)
        if "parameters" in declaration
        for violation in _violations(
            declaration["parameters"], f"{prefix}.function_declarations[{index}].parameters"
        )
    ]
    if not found:
        return None
    return {
        "error": {
            "code": 400,
            "message": "\n".join(message for _, message in found),
            "status": "INVALID_ARGUMENT",
            "details": [{
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": where, "description": message} for where, message in found],
            }],
        }
    }  # fmt: skip


@dataclass
class GeminiEmulator:
    """Serves Gemini's native generateContent for ``model``."""

    model: Behaviour
    key: str | None = None
    input_token_limit: int = 1048576
    queue: list[Response] = field(default_factory=list)

    def __call__(self, received: Received) -> Response:
        if self.key is not None and received.headers.get("x-goog-api-key") != self.key:
            return refusal("gemini-api-key-invalid-400-is-auth")
        if received.method == "GET":
            name = received.path.rsplit("/", 1)[-1]
            return Response.json({"name": f"models/{name}", "inputTokenLimit": self.input_token_limit,
                                  "supportedGenerationMethods": ["generateContent"]})  # fmt: skip
        if self.queue:
            return self.queue.pop(0)
        request = received.json()
        declarations = [
            d for t in request.get("tools", []) for d in t.get("functionDeclarations", [])
        ]
        error = check_declarations(declarations)
        if error is not None:
            return Response.json(error, 400)
        tools = [
            {"name": d["name"], "description": d.get("description", ""),
             "parameters": d.get("parameters") or d.get("parametersJsonSchema") or {}}
            for d in declarations
        ]  # fmt: skip
        messages = []
        for content in request.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    response = part["functionResponse"].get("response", {})
                    messages.append(
                        {"role": "tool", "content": json.dumps(response.get("content", response))}
                    )
                elif "text" in part:
                    messages.append({"role": content.get("role", "user"), "content": part["text"]})
        config = request.get("generationConfig") or {}
        answer = self.model(Asked(tools, messages, config.get("maxOutputTokens")))
        parts: list[dict[str, Any]] = [{"text": answer.text}] if answer.text else []
        if answer.reasoning:
            parts.insert(0, {"text": answer.reasoning, "thought": True})  # a thought summary
        for call in answer.calls:
            args = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
            parts.append({"functionCall": {"name": call.name, "args": args or {}}})
        finish = "MAX_TOKENS" if answer.finish == "length" else "STOP"
        usage = {"promptTokenCount": len(json.dumps(request)) // 4, "candidatesTokenCount": 5}
        if received.path.endswith(":streamGenerateContent"):
            return Response(
                200,
                headers={"content-type": "text/event-stream"},
                chunks=_stream(parts, finish, usage),
            )
        return Response.json({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
                              "usageMetadata": usage})  # fmt: skip


def _stream(parts: list[dict[str, Any]], finish: str, usage: dict[str, int]) -> Iterator[bytes]:
    def event(piece: list[dict[str, Any]], last: bool) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": piece}}
        body: dict[str, Any] = {"candidates": [candidate]}
        if last:
            candidate["finishReason"] = finish
            body["usageMetadata"] = usage
        return b"data: " + json.dumps(body).encode() + b"\r\n\r\n"

    pieces: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" in part:
            text = part["text"]
            pieces += [[{**part, "text": text[i : i + 4]}] for i in range(0, len(text), 4)]
        else:
            pieces.append([part])  # function calls arrive whole
    for index, piece in enumerate(pieces or [[]]):
        yield event(piece, index == len(pieces or [[]]) - 1)
