"""Endpoint profiles: whole OpenAI-compatible servers that behave as real backends and gateways do.

Each profile is a handler for ``EmulatorServer``. The schema profiles are an
``OpenAIEmulator`` whose ``check_tools`` applies one backend's rules to the tools as sent and
answers with that backend's own error text; the broken profiles wrap a handler and spoil
every answer the way a broken gateway does (an HTML page, a cut body, a 429 before each
answer, a connection closed without a reply).

- ``gemini_gateway``: a proxy in front of Gemini's ``functionDeclarations[].parameters``:
  refuses exactly what ``check_declarations`` refuses, with Gemini's messages (S01-S09).
- ``strict_only``: takes a schema only when every node uses ``type, description, enum,
  items, properties, required`` (DESIGN rule 4's ``strict``), refusing with Gemini's
  unknown-field text (vector gemini-unknown-name-dollar-schema-at-request-path, S01) moved
  to the offending keyword and tool index.
- ``anthropic_like``: refuses only a root that is not a plain object, with Anthropic's
  messages (``anthropic_api.check_tools``: vectors
  anthropic-does-not-support-one-of-is-schema-not-tools (S20) and
  anthropic-missing-root-type-says-x-should-retry-false (S21)).
- ``html_200``, ``truncated_json``, ``rate_limited``, ``dies_after_first``: see each.
- ``swallows_calls``: a model whose native calls stay in its reasoning (a behaviour).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.emulators.anthropic_api import check_tools as anthropic_check
from tests.emulators.gemini_api import check_declarations
from tests.emulators.model import WORDS, Answer, Asked, Behaviour
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import Handler, Received, Response
from tests.emulators.vectors import refusal, vector

STRICT = frozenset({"type", "description", "enum", "items", "properties", "required"})
"""DESIGN rule 4: the only keywords of the ``strict`` dialect."""

UNKNOWN_NAME = "gemini-unknown-name-dollar-schema-at-request-path"
"""S01: ``Unknown name "$schema" at 'request.tools[0].function_declarations[0].parameters'``."""

RATE_LIMIT = "openai-429-try-again-in-milliseconds"
"""R01: OpenAI's per-minute 429 (``Please try again in 644ms``), retryable."""


# -- gemini behind a generic URL ------------------------------------------------------------


def gemini_refusal(tools: list[dict[str, Any]]) -> Response | None:
    """Gemini's 400 (its own JSON object envelope, passed through by the gateway), or None."""
    error = check_declarations([dict(t["function"]) for t in tools])
    return Response.json(error, 400) if error is not None else None


def gemini_gateway(model: Behaviour) -> OpenAIEmulator:
    """An OpenAI-compatible gateway forwarding to Gemini: Gemini's subset, Gemini's words."""
    return OpenAIEmulator(model, check_tools=gemini_refusal)


# -- strict only ----------------------------------------------------------------------------


def strict_violation(schema: Any, path: str = "") -> tuple[str, str] | None:
    """The first keyword outside ``STRICT`` in ``schema`` and where it is (Gemini's path
    notation, ``.properties[1].value.items``), or None when every node is strict."""
    if not isinstance(schema, dict):
        return None
    for key in schema:
        if key not in STRICT:
            return key, path
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for index, sub in enumerate(properties.values()):
            found = strict_violation(sub, f"{path}.properties[{index}].value")
            if found is not None:
                return found
    if "items" in schema:
        return strict_violation(schema["items"], f"{path}.items")
    return None


def unknown_name(keyword: str, index: int, where: str = "") -> Response:
    """Vector S01's body, naming ``keyword`` in tool ``index`` at ``where`` below its
    parameters (Gemini writes ``$ref`` as ``ref``: vector gemini-unknown-name-ref-means-dollar-ref).
    ``unknown_name("$schema", 0)`` is the vector's body byte for byte."""
    found = vector(UNKNOWN_NAME)
    body = json.loads(found["body"])
    shown = "ref" if keyword == "$ref" else keyword
    body["error"]["message"] = (
        body["error"]["message"]
        .replace('"$schema"', json.dumps(shown))
        .replace("function_declarations[0].parameters", f"function_declarations[{index}].parameters{where}")
    )  # fmt: skip
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return Response(found["status"], text.encode(), {"content-type": "application/json"})


def strict_refusal(tools: list[dict[str, Any]]) -> Response | None:
    """The refusal for the first tool with a keyword outside ``STRICT``, or None."""
    for index, tool in enumerate(tools):
        found = strict_violation(tool["function"].get("parameters") or {})
        if found is not None:
            return unknown_name(found[0], index, found[1])
    return None


def strict_only(model: Behaviour) -> OpenAIEmulator:
    """A backend that takes only the strict dialect's six keywords."""
    return OpenAIEmulator(model, check_tools=strict_refusal)


# -- anthropic-like -------------------------------------------------------------------------


def anthropic_refusal(tools: list[dict[str, Any]]) -> Response | None:
    """Anthropic's 400 for a root that is not a plain object, or None.

    A gateway turns OpenAI's ``parameters`` into ``input_schema``, and fills in the empty
    object a tool without parameters means.
    """
    converted = [
        {
            "name": t["function"]["name"],
            "input_schema": t["function"].get("parameters", {"type": "object", "properties": {}}),
        }
        for t in tools
    ]
    return anthropic_check(converted)


def anthropic_like(model: Behaviour) -> OpenAIEmulator:
    """A gateway in front of Anthropic: one object at the root, everything else allowed."""
    return OpenAIEmulator(model, check_tools=anthropic_refusal)


# -- broken gateways ------------------------------------------------------------------------

HTML_PAGE = b"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Service unavailable</title>
  <style>body { font-family: sans-serif; margin: 4em; }</style>
</head>
<body>
  <h1>Something went wrong</h1>
  <p>The service you requested is temporarily unavailable.
     Please try again later or contact your administrator.</p>
  <p>Reference: 7f3a9c2e</p>
</body>
</html>
"""


def html_200(received: Received) -> Response:
    """Every request, GET or POST, gets 200 and an HTML error page (a proxy's fallback page,
    a captive portal): no reply is usable, and nothing is refused either."""
    return Response(200, HTML_PAGE, {"content-type": "text/html; charset=utf-8"})


@dataclass
class TruncatedJSON:
    """Every answer of ``inner`` (GET or POST) sent with 200 and its JSON cut in the middle,
    correctly framed: a gateway that forwards only part of the upstream body."""

    inner: Handler

    def __call__(self, received: Received) -> Response:
        if received.method == "POST":
            request = received.json() or {}
            # The whole completion, even for a stream: the gateway buffers and cuts it.
            received = Received(
                received.method, received.path, received.query, received.headers,
                json.dumps({**request, "stream": False}).encode(),
            )  # fmt: skip
        answer = self.inner(received)
        body = answer.body if answer.chunks is None else b"".join(answer.chunks)
        if not body:
            body = json.dumps({"object": "list", "data": []}).encode()
        return Response(200, body[: len(body) // 2], {"content-type": "application/json"})


def truncated_json(model: Behaviour) -> TruncatedJSON:
    return TruncatedJSON(OpenAIEmulator(model))


@dataclass
class RateLimited:
    """Every other attempt at the same POST is R01's 429 with ``Retry-After`` (so, for a
    client that sends a request once and retries it, exactly its first try); the retry
    reaches ``inner``."""

    inner: Handler
    retry_after: str = "0"
    seen: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, received: Received) -> Response:
        if received.method == "POST":
            key = hashlib.sha256(received.path.encode() + b"\0" + received.body).hexdigest()
            with self.lock:
                count = self.seen.get(key, 0)
                self.seen[key] = count + 1
            if count % 2 == 0:
                limited = refusal(RATE_LIMIT)
                limited.headers["retry-after"] = self.retry_after
                return limited
        return self.inner(received)


def rate_limited(model: Behaviour, retry_after: str = "0") -> RateLimited:
    return RateLimited(OpenAIEmulator(model), retry_after)


@dataclass
class DiesAfterFirst:
    """Answers the first POST through ``inner``; after it, every POST is met with a closed
    connection and no reply (a backend that crashed after its first answer)."""

    inner: Handler
    answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, received: Received) -> Response:
        with self.lock:
            first = received.method == "POST" and self.answered == 0
            if first:
                self.answered += 1
        if first:
            return self.inner(received)
        if received.method == "GET":
            return self.inner(received)
        return Response(hang_up=True)


def dies_after_first(model: Behaviour) -> DiesAfterFirst:
    return DiesAfterFirst(OpenAIEmulator(model))


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema node of a converted schema: the root, each property, each items."""
    if not isinstance(schema, dict):
        return
    yield schema
    for sub in (schema.get("properties") or {}).values():
        yield from nodes(sub)
    if "items" in schema:
        yield from nodes(schema["items"])
    for branch in schema.get("anyOf") or ():
        yield from nodes(branch)


# -- calls swallowed by the reasoning -------------------------------------------------------


def swallows_calls(inner: Behaviour, *, in_text: bool = False) -> Behaviour:
    """A thinking model behind a server whose reasoning parser kept its native calls
    (vllm-project/vllm#39056): each call ``inner`` makes with tools offered natively is
    written, in Hermes form, inside the reasoning (``reasoning_content``) and never emitted;
    ``in_text`` writes the reasoning into the content between ``<think>`` markers instead (a
    server with no reasoning parser). Everything else ``inner`` says is said as it is."""

    def behave(asked: Asked) -> Answer:
        answer = inner(asked)
        if not asked.tools or not answer.calls:
            return answer
        written = "\n".join(
            WORDS["hermes"](
                c.name, json.loads(c.arguments) if isinstance(c.arguments, str) else c.arguments
            )
            for c in answer.calls
        )
        thought = f"The user asks for this, so I call the tool.\n{written}"
        if in_text:
            return Answer(text=f"<think>{thought}</think>\nOne moment.")
        return Answer(reasoning=thought)

    return behave
