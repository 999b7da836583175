"""OpenAI-compatible chat completions (``/chat/completions``).

Spoken by OpenAI, OpenRouter, Gemini's OpenAI-compatible endpoint, Ollama's ``/v1``,
llama.cpp's server, vLLM, LM Studio, Groq, Together, Mistral, DeepSeek, xAI and any
``--base-url``. Quirks are recorded as findings on the reply, never as crashes.
"""

from __future__ import annotations

import json
from typing import ClassVar

from conchcheck.core.jsontypes import JsonObject, JsonValue
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
    bearer_post,
    items,
    marker_findings,
    note_once,
    parse_json,
    string_arguments,
    tool_call,
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
    Usage,
)
from conchcheck.wire.providers import ApiFamily

_FINISH = {
    "stop": Finish.STOP,
    "tool_calls": Finish.TOOL_CALLS,
    "function_call": Finish.TOOL_CALLS,
    "length": Finish.LENGTH,
    "content_filter": Finish.CONTENT_FILTER,
    "error": Finish.ERROR,
}


class OpenAIAdapter(ChatAdapter):
    """The chat completions API, with tools as ``{"type": "function", "function": {…}}``."""

    api: ClassVar[ApiFamily] = ApiFamily.OPENAI
    framing: ClassVar[Framing] = Framing.SSE

    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """A POST to ``{base_url}/chat/completions``; the key as a bearer token."""
        body: JsonObject = {
            "model": request.model,
            "messages": [_message(m) for m in request.messages],
        }
        if request.tools:
            body["tools"] = [_tool(tool, request.strict) for tool in request.tools]
        if request.tool_choice is not None:
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "function": {"name": choice.name}}
                if choice.mode is ChoiceMode.TOOL
                else choice.mode.value
            )
        if request.parallel is not None:
            body["parallel_tool_calls"] = request.parallel
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if request.route is not None:
            # OpenRouter's provider routing: this upstream and no other, so a refusal is its
            # own and not a fallback's (openrouter.ai/docs, "Provider Routing").
            body["provider"] = {"only": [request.route], "allow_fallbacks": False}
        return bearer_post(
            base_url,
            "/chat/completions",
            body,
            key=key,
            stream=request.stream,
            accept="text/event-stream",
        )

    def parse(self, body: bytes) -> Reply:
        """A chat completion; ``choices[0].message`` holds the text and the calls."""
        data = parse_json(body)
        raw = trim(body.decode("utf-8", errors="replace"))
        if not isinstance(data, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, f"Expected a JSON object: {raw[:200]}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise WireShapeError(ShapeKind.EMPTY_CHOICES, f"The reply has no choices: {raw[:200]}")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, "choices[0] has no message object.")
        findings: list[Finding] = []
        text = _content(message.get("content"), findings)
        calls = []
        for index, item in enumerate(items(message.get("tool_calls"))):
            call = _call(item, index, findings)
            if call is not None:
                calls.append(call)
        reason = choices[0].get("finish_reason")
        usage = _usage(data.get("usage"))
        return _reply(text, _reasoning(message), calls, reason, usage, findings, raw)

    def reducer(self) -> StreamReducer:
        """Merges ``chat.completion.chunk`` deltas; tool calls by their ``index``."""
        return _Chunks()


def _tool(tool: Tool, strict: bool) -> JsonObject:
    function: JsonObject = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    if tool.parameters:
        function["parameters"] = dict(tool.parameters)
    if strict:
        # Sent only when asked: `strict: false` is the API's default, and some servers that
        # don't know the field refuse it.
        function["strict"] = True
    return {"type": "function", "function": function}


def _message(message: Message) -> JsonObject:
    if message.role is Role.TOOL:
        out: JsonObject = {"role": "tool", "content": message.content}
        if message.tool_call_id is not None:
            out["tool_call_id"] = message.tool_call_id
        return out
    out = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return out


def _content(content: JsonValue, findings: list[Finding]) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        # Some servers answer with content parts, as requests may send them.
        findings.append(Finding("content_as_parts", "message.content is a list of parts"))
        texts = [part.get("text", "") for part in content if isinstance(part, dict)]
        return "".join(text for text in texts if isinstance(text, str))
    findings.append(Finding("content_not_text", f"message.content is {type(content).__name__}"))
    return json.dumps(content)


def _reasoning(holder: JsonObject) -> str:
    """The reasoning a message or a stream delta carries, in either spelling.

    llama-server writes ``reasoning_content`` (tools/server/README.md, --reasoning-format
    deepseek, and auto, its default), as DeepSeek's API and SGLang do; OpenRouter writes
    ``reasoning``; vLLM writes ``reasoning`` and sends ``reasoning_content`` too, the same
    text, with ``reasoning`` the one that counts when they differ (vllm-project/vllm#27755,
    its test ``TestDeltaMessageReasoningCompat``).
    """
    reasoning, content = holder.get("reasoning"), holder.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        return reasoning
    return content if isinstance(content, str) else ""


def _call(item: JsonValue, index: int, findings: list[Finding]) -> ToolCall | None:
    return tool_call(item, index, findings, string_arguments)


def _usage(usage: JsonValue) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return Usage(
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
    )


def _reply(
    text: str,
    reasoning: str,
    calls: list[ToolCall],
    reason: JsonValue,
    usage: Usage,
    findings: list[Finding],
    raw: str,
    refusal: Refusal | None = None,
) -> Reply:
    word = reason if isinstance(reason, str) else None
    finish = _FINISH.get(word, Finish.OTHER) if word else Finish.UNKNOWN
    if calls and finish is Finish.STOP:
        findings.append(
            Finding("calls_with_finish_stop", "tool calls came with finish_reason stop")
        )
    if not calls:
        findings.extend(marker_findings(text))
    return Reply(text, tuple(calls), finish, word, usage, tuple(findings), raw, refusal, reasoning)


class _Slot:
    __slots__ = ("arguments", "id", "name", "noted")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.noted: set[str] = set()
        """Codes already found for this call: a quirk of every delta is named once."""


class _Chunks(EventReducer):
    unterminated = "The stream ended without its terminator (data: [DONE]); the reply may be cut."

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.slots: dict[int, _Slot] = {}
        self.reason: JsonValue = None
        self.usage = Usage()

    def take(self, body: JsonObject, data: str, event: str) -> None:
        if event == "error" or "error" in body:
            # LM Studio and Groq send an error event inside a 200 stream (provider-facts N10,
            # S36): it is classified like any refusal, and the reply does not pass.
            self.refusal = classify(200, data)
            return
        if isinstance(body.get("usage"), dict):
            self.usage = _usage(body["usage"])
        for choice in items(body.get("choices")):
            if isinstance(choice, dict):
                self.choice(choice)

    def choice(self, choice: JsonObject) -> None:
        if choice.get("finish_reason"):
            self.reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        content = delta.get("content")
        if isinstance(content, str):
            self.text.append(content)
        self.reasoning.append(_reasoning(delta))
        for piece in items(delta.get("tool_calls")):
            if isinstance(piece, dict):
                self.piece(piece)

    def piece(self, piece: JsonObject) -> None:
        """One call's delta. The documented shape (provider-facts 4.1): each call has an
        ``index``; its first delta carries ``id``, ``type`` and ``function.name``, later ones
        only argument pieces. Each departure is a finding; the first id and name are kept."""
        index, call_id = piece.get("index"), piece.get("id")
        if not isinstance(index, int):
            # Some servers omit `index` (provider-facts 4.1 says fragments are keyed by it):
            # a piece with a new id opens a call, one without continues the last.
            self.findings.append(Finding("delta_without_index", trim(json.dumps(piece), 200)))
            fresh = (
                isinstance(call_id, str)
                and bool(call_id)
                and all(slot.id != call_id for slot in self.slots.values())
            )
            index = len(self.slots) if fresh or not self.slots else max(self.slots)
        slot = self.slots.setdefault(index, _Slot())
        where = f"delta tool_calls[{index}]"
        if isinstance(call_id, str) and call_id:
            if slot.id is None:
                self.named_late(slot, where, "id")
                slot.id = call_id
            elif call_id != slot.id:
                # LM Studio (with Gemma 4) gives every delta of one call a new id
                # (NousResearch/hermes-agent#5254); the first delta's id is the call's.
                changed = f"{where}: {slot.id}, then {call_id}"
                note_once(self.findings, slot.noted, "call_id_changed", changed)
        function = piece.get("function")
        if not isinstance(function, dict):
            return
        name = function.get("name")
        if isinstance(name, str) and name:
            if not slot.name:
                self.named_late(slot, where, "name")
                slot.name = name
            elif name != slot.name:
                # The same name sent again is tolerated without a word (MiniMax through NVIDIA
                # NIM repeats it on every delta, NousResearch/hermes-agent#8259); another one
                # is not this call's, and the first stays.
                changed = f"{where}: {slot.name}, then {name}"
                note_once(self.findings, slot.noted, "call_name_changed", changed)
        if "arguments" in function:
            slot.arguments.append(string_arguments(function["arguments"], where, self.findings))

    def named_late(self, slot: _Slot, where: str, what: str) -> None:
        """A finding when a call gets its id or name after argument text came for it."""
        if any(slot.arguments):
            count = sum(len(piece) for piece in slot.arguments)
            detail = f"{where}: its {what} came after {count} characters of arguments"
            note_once(self.findings, slot.noted, "arguments_before_name", detail)

    def reply(self, raw: str) -> Reply:
        calls = []
        for index, slot in sorted(self.slots.items()):
            if not slot.name:
                # Argument pieces for an index that never got a name (Nebius and Cerebras
                # move later pieces to another index, dirac-run/dirac#215): no call to run.
                self.findings.append(Finding("call_without_name", f"tool_calls[{index}]"))
                continue
            if slot.id is None:
                # Without an id no tool result can answer the call on the next round.
                self.findings.append(Finding("call_without_id", f"tool_calls[{index}]"))
            calls.append(ToolCall(slot.id, slot.name, "".join(slot.arguments)))
        text, reasoning = "".join(self.text), "".join(self.reasoning)
        reason, usage = self.reason, self.usage
        return _reply(text, reasoning, calls, reason, usage, self.findings, raw, self.refusal)

    def reached_end(self, *, terminated: bool) -> bool:
        return terminated
