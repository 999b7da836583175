"""Gemini's native API (``models/{model}:generateContent``, ``:streamGenerateContent?alt=sse``).

Calls travel as ``functionCall`` parts with their arguments as an object; quirks are findings
on the reply, never crashes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import ClassVar
from urllib.parse import quote

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.knobs import Knob
from conchcheck.core.refusals import Refusal, classify
from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import (
    ChatAdapter,
    EventReducer,
    Framing,
    ShapeKind,
    StreamReducer,
    WireRequest,
    WireShapeError,
    marker_findings,
    parse_json,
    trim,
)
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
from conchcheck.wire.providers import ApiFamily

SCHEMA_FIELDS = ("parameters", "parametersJsonSchema")
"""Where a declaration may carry its schema; the two are mutually exclusive (provider-facts 4.4)."""

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The ``thoughtSignature`` sent with every replayed ``functionCall`` part.

Gemini 3 refuses a call turn sent back without the signature it came with (400 "Function call
is missing a thought_signature in functionCall parts", or finishReason
MISSING_THOUGHT_SIGNATURE). ``ToolCall`` keeps no signature, so the replay carries the sentinel
Google's guide gives for calls it did not sign (ai.google.dev/gemini-api/docs/thought-signatures,
as cited by strands-agents/sdk-python PR #1298).
"""

_FINISH = {
    "STOP": Finish.STOP,
    "MAX_TOKENS": Finish.LENGTH,
    "SAFETY": Finish.CONTENT_FILTER,
    "RECITATION": Finish.CONTENT_FILTER,
    "BLOCKLIST": Finish.CONTENT_FILTER,
    "PROHIBITED_CONTENT": Finish.CONTENT_FILTER,
    "SPII": Finish.CONTENT_FILTER,
}
# A call that never came out: the model wrote one Gemini could not take, or (for
# MISSING_THOUGHT_SIGNATURE) a replayed call turn was refused. Evidence for the probe, not a
# crash; MALFORMED_FUNCTION_CALL carries the failed text in finishMessage ("Malformed function
# call: print(…)", googleapis/python-aiplatform#4472).
_CALL_FAILURES = frozenset(
    {
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "MISSING_THOUGHT_SIGNATURE",
    }
)
# REQUIRED and a forced tool are both ANY; the forced tool also names itself
# (FunctionCallingConfigMode in googleapis/python-genai types.py).
_MODES = {
    ChoiceMode.AUTO: "AUTO",
    ChoiceMode.NONE: "NONE",
    ChoiceMode.REQUIRED: "ANY",
    ChoiceMode.TOOL: "ANY",
}
# Keys a part may carry with no text and no call and still leave nothing unread.
_SIGNATURE_KEYS = frozenset({"thought", "thoughtSignature"})


class GeminiAdapter(ChatAdapter):
    """The generateContent API, with tools as ``{"functionDeclarations": […]}``."""

    api: ClassVar[ApiFamily] = ApiFamily.GEMINI
    framing: ClassVar[Framing] = Framing.SSE
    done_marker: ClassVar[str | None] = None
    """``alt=sse`` sends no ``[DONE]``; the last event carries ``finishReason`` instead."""
    knobs: ClassVar[frozenset[Knob]] = frozenset(
        {Knob.TOOL_CHOICE_NONE, Knob.TOOL_CHOICE_REQUIRED, Knob.TOOL_CHOICE_NAMED}
    )
    """``functionCallingConfig`` modes NONE and ANY (with ``allowedFunctionNames``); the API
    has no parallel control and no strict flag on function declarations."""

    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """A POST to ``{base_url}/models/{model}:generateContent``; the key in a header."""
        field = request.gemini_schema_field
        if field not in SCHEMA_FIELDS:
            raise ValueError(f"gemini_schema_field must be one of {SCHEMA_FIELDS}, not {field!r}.")
        body: JsonObject = {"contents": _contents(request.messages)}
        # Gemini has no system role in `contents`; instructions go in their own field.
        system = [m.content for m in request.messages if m.role is Role.SYSTEM]
        if system:
            body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
        if request.tools:
            declarations: list[JsonValue] = [_declaration(tool, field) for tool in request.tools]
            body["tools"] = [{"functionDeclarations": declarations}]
        if request.tool_choice is not None:
            body["toolConfig"] = {"functionCallingConfig": _calling(request.tool_choice)}
        config: JsonObject = {}
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if config:
            body["generationConfig"] = config
        headers = {"content-type": "application/json"}
        if request.stream:
            headers["accept"] = "text/event-stream"
        secret: frozenset[str] = frozenset()
        if key:
            # The key never goes in the URL: a `key=` query parameter (the other way Google
            # takes it) is written into proxy and server logs with the URL.
            headers["x-goog-api-key"] = key
            secret = frozenset({"x-goog-api-key"})
        # Gemini lists models as "models/…"; a pasted name keeps one prefix, and quoting keeps
        # a "/", "?" or "#" in a name from changing the path or the query.
        model = quote(request.model.removeprefix("models/"), safe="")
        method = "streamGenerateContent?alt=sse" if request.stream else "generateContent"
        url = f"{base_url.rstrip('/')}/models/{model}:{method}"
        return WireRequest("POST", url, headers, body, request.stream, secret)

    def parse(self, body: bytes) -> Reply:
        """A GenerateContentResponse; ``candidates[0].content.parts`` hold the text and calls."""
        data = parse_json(body)
        whole = body.decode("utf-8", errors="replace")
        raw = trim(whole)
        if not isinstance(data, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, f"Expected a JSON object: {raw[:200]}")
        if isinstance(data.get("error"), dict):
            # Google's error envelope {"error": {code, message, status, details}} (provider-facts
            # 2.4) inside a 2xx, from a proxy or gateway: still a refusal, classified by its words.
            return Reply("", raw=raw, refusal=classify(200, whole))
        candidates = data.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        if not isinstance(first, dict):
            raise WireShapeError(ShapeKind.EMPTY_CHOICES, _no_candidates(data, raw))
        reading = _Reading([])
        reading.response(data, "")
        return reading.reply(raw)

    def reducer(self) -> StreamReducer:
        """Merges GenerateContentResponse events: text pieces in order, calls whole per part."""
        return _Events()


def _declaration(tool: Tool, field: str) -> JsonObject:
    declaration: JsonObject = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    # A tool without parameters gets no schema at all: an OBJECT with empty properties is
    # refused ("properties: should be non-empty for OBJECT type", provider-facts S12).
    if tool.parameters:
        declaration[field] = dict(tool.parameters)
    return declaration


def _calling(choice: ToolChoice) -> JsonObject:
    config: JsonObject = {"mode": _MODES[choice.mode]}
    if choice.mode is ChoiceMode.TOOL and choice.name:
        config["allowedFunctionNames"] = [choice.name]
    return config


def _contents(messages: tuple[Message, ...]) -> list[JsonValue]:
    # functionResponse.name is required; a result that lacks one borrows its call's name.
    names = {call.id: call.name for m in messages for call in m.tool_calls if call.id}
    contents: list[JsonValue] = []
    results: list[JsonValue] | None = None  # the parts of the last turn, when it holds results
    for message in messages:
        if message.role is Role.SYSTEM:
            continue
        if message.role is Role.TOOL:
            # All answers to one call turn go in one user turn: Gemini wants as many
            # functionResponse parts as the call turn had functionCall parts.
            if results is None:
                results = []
                contents.append({"role": "user", "parts": results})
            results.append({"functionResponse": _response(message, names)})
            continue
        results = None
        if message.role is Role.ASSISTANT:
            contents.append({"role": "model", "parts": _model_parts(message)})
        else:
            contents.append({"role": "user", "parts": [{"text": message.content}]})
    return contents


def _model_parts(message: Message) -> list[JsonValue]:
    if not message.tool_calls:
        return [{"text": message.content}]
    parts: list[JsonValue] = [{"text": message.content}] if message.content else []
    for call in message.tool_calls:
        function: JsonObject = {"name": call.name, "args": _args(call.arguments)}
        if call.id is not None:
            function["id"] = call.id
        parts.append({"functionCall": function, "thoughtSignature": SKIP_SIGNATURE})
    return parts


def _args(arguments: str) -> JsonObject:
    # `args` is a protobuf Struct, an object or nothing: text that is not one JSON object
    # cannot travel, and `{}` keeps the call turn well-formed for the answer that follows.
    try:
        value: JsonValue = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _response(message: Message, names: Mapping[str, str]) -> JsonObject:
    name = message.name or names.get(message.tool_call_id or "", "")
    # `response` must be an object; without an "output" or "error" key the whole object is
    # read as the function's output (FunctionResponse.response in googleapis/python-genai).
    out: JsonObject = {"name": name, "response": {"content": message.content}}
    if message.tool_call_id is not None:
        out["id"] = message.tool_call_id
    return out


def _no_candidates(data: JsonObject, raw: str) -> str:
    # A prompt refused by the safety filters gets no candidates, only promptFeedback.
    feedback = data.get("promptFeedback")
    if not isinstance(feedback, dict):
        feedback = {}
    why, message = feedback.get("blockReason"), feedback.get("blockReasonMessage")
    if isinstance(why, str):
        if isinstance(message, str):
            why += f": {message}"
        return f"The reply has no candidates: the prompt was blocked ({trim(why, 200)})."
    return f"The reply has no candidates: {raw[:200]}"


def _usage(usage: JsonValue) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt, completion = usage.get("promptTokenCount"), usage.get("candidatesTokenCount")
    return Usage(
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
    )


class _Reading:
    """What one or more GenerateContentResponse objects say, merged in order; where they
    strayed goes into ``findings``."""

    def __init__(self, findings: list[Finding]) -> None:
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[ToolCall] = []
        self.reason: str | None = None
        self.message: str | None = None
        self.usage = Usage()
        self.findings = findings
        self.candidates = 0
        self.blocked: JsonObject | None = None

    def response(self, data: JsonObject, where: str) -> None:
        if "usageMetadata" in data:
            # Each streamed event repeats the counts so far; the last one holds the totals.
            self.usage = _usage(data["usageMetadata"])
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            if "promptFeedback" in data:
                self.blocked = data
            return
        candidate = candidates[0]
        if not isinstance(candidate, dict):
            self.findings.append(Finding("candidate_not_object", f"{where}candidates[0]"))
            return
        self.candidates += 1
        reason, message = candidate.get("finishReason"), candidate.get("finishMessage")
        if isinstance(reason, str):
            self.reason = reason
        if isinstance(message, str):
            self.message = message
        # SAFETY and MALFORMED_FUNCTION_CALL candidates come without content: nothing to read.
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for index, part in enumerate(parts if isinstance(parts, list) else []):
            self.part(part, f"{where}parts[{index}]")

    def part(self, part: JsonValue, where: str) -> None:
        if not isinstance(part, dict):
            self.findings.append(Finding("part_not_object", f"{where} is {type(part).__name__}"))
            return
        text = part.get("text")
        if part.get("thought") is True:
            # A thought summary (includeThoughts: a part with "thought": true, Part.thought in
            # googleapis/python-genai types.py) is the model's reasoning, not its answer.
            if isinstance(text, str):
                self.thoughts.append(text)
            return
        if "functionCall" in part:
            self.call(part["functionCall"], where)
        elif isinstance(text, str):
            self.text.append(text)
        elif set(part) - _SIGNATURE_KEYS:
            # executableCode, inlineData, …: the model answered in a form a chat reply can't show.
            unread = ", ".join(sorted(set(part) - _SIGNATURE_KEYS))
            self.findings.append(Finding("part_unread", f"{where} holds {unread}"))

    def call(self, value: JsonValue, where: str) -> None:
        name = value.get("name") if isinstance(value, dict) else None
        if not isinstance(value, dict) or not isinstance(name, str):
            self.findings.append(Finding("call_without_name", f"{where}: functionCall has no name"))
            return
        args = value.get("args")
        if args is None:
            # `args` is optional: a call to a tool without parameters may leave it out.
            arguments = "{}"
        elif isinstance(args, dict):
            # An object on this API, as documented (FunctionCall.args); re-encoded as text.
            arguments = json.dumps(args, ensure_ascii=False)
        else:
            self.findings.append(
                Finding("arguments_not_object", f"{where}: args is {type(args).__name__}")
            )
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        call_id = value.get("id")
        self.calls.append(ToolCall(call_id if isinstance(call_id, str) else None, name, arguments))

    def reply(self, raw: str, refusal: Refusal | None = None) -> Reply:
        findings = list(self.findings)
        word = self.reason
        if word is None:
            finish = Finish.UNKNOWN
        elif word in _CALL_FAILURES:
            finish = Finish.ERROR
            detail = f"finishReason {word}" + (f": {self.message}" if self.message else "")
            findings.append(Finding(word.lower(), trim(detail, 500)))
        else:
            # STOP with calls is how Gemini ends a call turn (there is no TOOL_CALLS reason).
            finish = _FINISH.get(word, Finish.OTHER)
        text = "".join(self.text)
        if not self.calls:
            findings.extend(marker_findings(text))
        calls, reasoning = tuple(self.calls), "".join(self.thoughts)
        usage = self.usage
        return Reply(text, calls, finish, word, usage, tuple(findings), raw, refusal, reasoning)


class _Events(EventReducer):
    unterminated = "The stream ended before an event carried a finishReason; the reply may be cut."

    def __init__(self) -> None:
        super().__init__()
        self.reading = _Reading(self.findings)

    def take(self, body: JsonObject, data: str, event: str) -> None:
        if isinstance(body.get("error"), dict):
            # A failure after the 200 went out arrives as an event holding Google's error
            # envelope: classified like any refusal, and the reply does not pass.
            self.refusal = classify(200, data)
            return
        self.reading.response(body, f"event {self.events}: ")

    def reply(self, raw: str) -> Reply:
        reading = self.reading
        if self.refusal is None and not reading.candidates and reading.blocked is not None:
            # A prompt the safety filters blocked gets no candidates, as in `parse`.
            blocked = trim(json.dumps(reading.blocked, ensure_ascii=False), 200)
            raise WireShapeError(ShapeKind.EMPTY_CHOICES, _no_candidates(reading.blocked, blocked))
        return reading.reply(raw, self.refusal)

    def reached_end(self, *, terminated: bool) -> bool:
        # `terminated` is always False here (no done marker): the finishReason is the end.
        return self.reading.reason is not None
