"""Anthropic's Messages API (``POST /v1/messages``), streamed as named server-sent events.

Tool inputs travel as JSON objects both ways; quirks are findings on the reply, never crashes.
"""

from __future__ import annotations

import json
from typing import ClassVar

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.refusals import Refusal, classify
from conchcheck.core.tools import ToolChoice
from conchcheck.wire.adapter import (
    ChatAdapter,
    EventReducer,
    Framing,
    ShapeKind,
    StreamReducer,
    WireRequest,
    WireShapeError,
    items,
    marker_findings,
    parse_json,
    trim,
)
from conchcheck.wire.anthropic_turns import tool_of, turns_of
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finding,
    Finish,
    Reply,
    Role,
    ToolCall,
    Usage,
)
from conchcheck.wire.providers import ApiFamily

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the one stable version of the Messages API."""

DEFAULT_MAX_TOKENS = 1024
"""``max_tokens`` sent when the request sets none: Anthropic refuses a request without it."""

# model_context_window_exceeded is a newer word for a reply cut by the window rather than by
# max_tokens (anthropic-sdk-python v0.119.0; vercel/ai map-anthropic-stop-reason.ts): both
# are cut replies. pause_turn is a server tool pausing a long turn, to be resumed by the client.
_FINISH = {
    "end_turn": Finish.STOP,
    "stop_sequence": Finish.STOP,
    "tool_use": Finish.TOOL_CALLS,
    "max_tokens": Finish.LENGTH,
    "model_context_window_exceeded": Finish.LENGTH,
    "refusal": Finish.CONTENT_FILTER,
    "pause_turn": Finish.OTHER,
}

_CHOICE = {
    ChoiceMode.AUTO: "auto",
    ChoiceMode.REQUIRED: "any",
    ChoiceMode.NONE: "none",
    ChoiceMode.TOOL: "tool",
}


class AnthropicAdapter(ChatAdapter):
    """The Messages API, with tools as ``{"name", "description", "input_schema"}``."""

    api: ClassVar[ApiFamily] = ApiFamily.ANTHROPIC
    framing: ClassVar[Framing] = Framing.SSE
    done_marker: ClassVar[str | None] = None
    """The stream has no ``data: [DONE]``; its ``message_stop`` event is the documented end."""

    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """A POST to ``{base_url}/messages``; the key in ``x-api-key``."""
        # Anthropic requires max_tokens (the Messages reference; without it the request is a
        # 400) where other APIs default it; 1024 fits a tool call and a short answer.
        max_tokens = request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS
        body: JsonObject = {"model": request.model, "max_tokens": max_tokens}
        # The API has no system role in `messages` (provider-facts 4.2): the prompt is a
        # top-level field, and several system messages become one text.
        system = "\n\n".join(m.content for m in request.messages if m.role is Role.SYSTEM)
        if system:
            body["system"] = system
        body["messages"] = turns_of(request.messages)
        if request.tools:
            body["tools"] = [tool_of(tool, request.strict) for tool in request.tools]
        if request.tool_choice is not None or request.parallel is False:
            choice = request.tool_choice or ToolChoice(ChoiceMode.AUTO)
            tool_choice: JsonObject = {"type": _CHOICE[choice.mode]}
            if choice.mode is ChoiceMode.TOOL:
                tool_choice["name"] = choice.name
            if request.parallel is False and choice.mode is not ChoiceMode.NONE:
                # Parallel control lives inside tool_choice (the Messages reference:
                # `disable_parallel_tool_use` on auto, any and tool); `none` has no such field.
                tool_choice["disable_parallel_tool_use"] = True
            body["tool_choice"] = tool_choice
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stream:
            body["stream"] = True
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if request.stream:
            headers["accept"] = "text/event-stream"
        secret: frozenset[str] = frozenset()
        if key:
            headers["x-api-key"] = key
            secret = frozenset({"x-api-key"})
        url = base_url.rstrip("/") + "/messages"
        return WireRequest("POST", url, headers, body, request.stream, secret)

    def parse(self, body: bytes) -> Reply:
        """A message; its ``content`` blocks hold the text and the ``tool_use`` calls."""
        data = parse_json(body)
        whole = body.decode("utf-8", errors="replace")
        raw = trim(whole)
        if not isinstance(data, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, f"Expected a JSON object: {raw[:200]}")
        if data.get("type") == "error" or isinstance(data.get("error"), dict):
            # Anthropic's error envelope (provider-facts 2.4, A01, R04, R05, C04) from a proxy or
            # gateway that answered 2xx: the request was still refused.
            return Reply("", raw=raw, refusal=classify(200, whole))
        content = data.get("content")
        if not isinstance(content, list):
            raise WireShapeError(
                ShapeKind.UNEXPECTED_SHAPE, f"The reply's content is not a list: {raw[:200]}"
            )
        findings: list[Finding] = []
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in enumerate(content):
            where = f"content[{index}]"
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(block, dict):
                findings.append(Finding("block_not_object", f"{where} is {type(block).__name__}"))
            elif kind == "text" and isinstance(text := block.get("text"), str):
                texts.append(text)
            elif kind == "thinking" and isinstance(thought := block.get("thinking"), str):
                # Extended thinking: {"type": "thinking", "thinking", "signature"}, streamed as
                # thinking_delta events (Anthropic's docs, "Building with extended thinking").
                thoughts.append(thought)
            elif kind == "redacted_thinking":
                findings.append(_redacted(where))
            elif kind == "tool_use":
                name = _name(block.get("name"), where, findings)
                if name is not None:
                    arguments = _input(block.get("input"), where, findings)
                    calls.append(ToolCall(_id(block.get("id")), name, arguments))
            # Other blocks (server_tool_use and its results) are documented but are neither
            # the answer nor a call for the client to run.
        usage = _usage(data.get("usage"), Usage())
        reason = data.get("stop_reason")
        return _reply("".join(texts), "".join(thoughts), calls, reason, usage, findings, raw)

    def reducer(self) -> StreamReducer:
        """Merges the stream's events: content blocks by their ``index``, until message_stop."""
        return _Events()


def _name(name: JsonValue, where: str, findings: list[Finding]) -> str | None:
    if isinstance(name, str) and name:
        return name
    findings.append(Finding("call_without_name", f"{where}: tool_use has no name"))
    return None


def _id(call_id: JsonValue) -> str | None:
    return call_id if isinstance(call_id, str) else None


def _input(value: JsonValue, where: str, findings: list[Finding]) -> str:
    if isinstance(value, dict):
        # Documented: input is an object on this API (provider-facts 4.2), not a finding.
        return json.dumps(value, ensure_ascii=False)
    findings.append(Finding("input_not_object", f"{where}: input sent as {type(value).__name__}"))
    if isinstance(value, str):
        # The OpenAI form, as a translating proxy might send it: the text is kept as it came.
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _count(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(usage: JsonValue, before: Usage) -> Usage:
    # A count the event leaves out keeps the one seen before: message_delta's usage carries
    # output_tokens, and only sometimes input_tokens (vercel/ai
    # anthropic-message-delta-input-tokens.chunks.txt).
    if not isinstance(usage, dict):
        return before
    prompt, completion = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    return Usage(
        prompt if prompt is not None else before.prompt_tokens,
        completion if completion is not None else before.completion_tokens,
    )


def _redacted(where: str) -> Finding:
    """A ``redacted_thinking`` block: reasoning the model did whose text is encrypted
    (Anthropic's extended thinking docs): reasoning seen, with no text to read."""
    return Finding("reasoning_redacted", f"{where}: a redacted_thinking block")


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
    word = reason if isinstance(reason, str) and reason else None
    finish = _FINISH.get(word, Finish.OTHER) if word else Finish.UNKNOWN
    if calls and finish is Finish.STOP:
        # Anthropic ends a turn of calls with stop_reason tool_use (provider-facts 4.2).
        findings.append(Finding("calls_with_finish_stop", f"tool_use came with stop_reason {word}"))
    if not calls:
        findings.extend(marker_findings(text))
    return Reply(text, tuple(calls), finish, word, usage, tuple(findings), raw, refusal, reasoning)


_IMPLIED = {"input_json_delta": "tool_use", "thinking_delta": "thinking"}
"""The block a delta implies when its block never started (text for any other delta)."""


class _Block:
    __slots__ = ("id", "input", "kind", "name", "pieces")

    def __init__(self, block: JsonObject) -> None:
        self.kind = block.get("type")
        self.id = block.get("id")
        self.name = block.get("name")
        self.input = block.get("input")
        # A thinking block starts with its text under "thinking", as its deltas carry it.
        text = block.get("thinking" if self.kind == "thinking" else "text")
        self.pieces: list[str] = [text] if isinstance(text, str) else []
        """Text deltas for a text block, thinking deltas for a thinking block, partial_json
        for a tool_use block."""


class _Events(EventReducer):
    unterminated = "The stream ended without its message_stop event; the reply may be cut."

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, _Block] = {}
        self.reason: JsonValue = None
        self.usage = Usage()
        self.stopped = False

    def take(self, body: JsonObject, data: str, event: str) -> None:
        kind = body.get("type")
        if event == "error" or kind == "error":
            # Once the 200 is out, Anthropic reports a failure (overloaded_error, provider-facts
            # R05) as an `error` event and ends the stream: it is classified like any refusal.
            self.refusal = classify(200, data)
        elif kind == "message_start":
            message = body.get("message")
            if isinstance(message, dict):
                self.start(message)
        elif kind == "content_block_start":
            block = body.get("content_block")
            index = self.index(body, fresh=True)
            self.open(index, _Block(block if isinstance(block, dict) else {}))
        elif kind == "content_block_delta":
            delta = body.get("delta")
            if isinstance(delta, dict):
                self.delta(self.index(body, fresh=False), delta)
        elif kind == "message_delta":
            delta = body.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.reason = delta["stop_reason"]
            # The counts in message_delta are cumulative (Anthropic's streaming docs).
            self.usage = _usage(body.get("usage"), self.usage)
        elif kind == "message_stop":
            self.stopped = True
        # ping, content_block_stop and event types added later carry nothing to keep: the
        # streaming docs ask clients to pass over unknown events.

    def start(self, message: JsonObject) -> None:
        self.usage = _usage(message.get("usage"), self.usage)
        if message.get("stop_reason"):
            self.reason = message["stop_reason"]
        # A turn resumed after server tools may open with blocks already whole (vercel/ai
        # anthropic-message-start-prepopulated-content.chunks.txt).
        for index, block in enumerate(items(message.get("content"))):
            if isinstance(block, dict):
                self.blocks[index] = _Block(block)

    def index(self, payload: JsonObject, *, fresh: bool) -> int:
        index = payload.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        # Blocks are keyed by `index` (provider-facts 4.2); without one, a start opens the next
        # block and a delta continues the last.
        self.findings.append(Finding("event_without_index", trim(json.dumps(payload), 200)))
        if fresh or not self.blocks:
            return max(self.blocks, default=-1) + 1
        return max(self.blocks)

    def open(self, index: int, block: _Block) -> None:
        """A block starts. A tool_use block's start carries its id and name before any
        ``input_json_delta`` (provider-facts 4.2); a start for a tool_use block already there
        keeps the argument text so far and the first id and name, each departure a finding."""
        before = self.blocks.get(index)
        if before is None or not before.kind == block.kind == "tool_use":
            self.blocks[index] = block
            return
        where = f"content[{index}]"
        if before.id is None and before.name is None:  # made up for deltas before any start
            if before.pieces:
                self.findings.append(Finding("arguments_before_name", where))
            before.id, before.name, before.input = block.id, block.name, block.input
            return
        if block.id != before.id:
            changed = f"{where}: {before.id}, then {block.id}"
            self.findings.append(Finding("call_id_changed", changed))
        if block.name != before.name:
            changed = f"{where}: {before.name}, then {block.name}"
            self.findings.append(Finding("call_name_changed", changed))

    def delta(self, index: int, delta: JsonObject) -> None:
        block = self.blocks.get(index)
        kind = delta.get("type")
        if block is None:
            # A delta for a block never started: kept, as the block its kind implies.
            self.findings.append(Finding("delta_without_start", f"{kind} for content[{index}]"))
            implied = _IMPLIED.get(kind, "text") if isinstance(kind, str) else "text"
            block = self.blocks[index] = _Block({"type": implied})
        text, partial = delta.get("text"), delta.get("partial_json")
        thought = delta.get("thinking")
        if kind == "text_delta" and isinstance(text, str):
            block.pieces.append(text)
        elif kind == "input_json_delta" and isinstance(partial, str):
            block.pieces.append(partial)
        elif kind == "thinking_delta" and isinstance(thought, str):
            block.pieces.append(thought)
        # signature_delta and citations_delta are neither the answer nor its reasoning.

    def reply(self, raw: str) -> Reply:
        findings = list(self.findings)
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in sorted(self.blocks.items()):
            if block.kind == "text":
                texts.append("".join(block.pieces))
            elif block.kind == "thinking":
                thoughts.append("".join(block.pieces))
            elif block.kind == "redacted_thinking":
                findings.append(_redacted(f"content[{index}]"))
            elif block.kind == "tool_use":
                call = self.call(index, block, findings)
                if call is not None:
                    calls.append(call)
        text, reasoning = "".join(texts), "".join(thoughts)
        reason, usage = self.reason, self.usage
        return _reply(text, reasoning, calls, reason, usage, findings, raw, self.refusal)

    def reached_end(self, *, terminated: bool) -> bool:
        # `terminated` is ignored: the stream has no [DONE] (done_marker is None), so the
        # transport cannot know; message_stop is this stream's documented end.
        return self.stopped

    @staticmethod
    def call(index: int, block: _Block, findings: list[Finding]) -> ToolCall | None:
        where = f"content[{index}]"
        name = _name(block.name, where, findings)
        if name is None:
            return None
        if not _id(block.id):
            # tool_result answers by tool_use_id: without it no round trip can follow.
            findings.append(Finding("call_without_id", f"{where}: tool_use has no id"))
        # content_block_start carries `input: {}` and the deltas the JSON text; a call without
        # arguments sends only an empty delta (vercel/ai anthropic-tool-no-args.chunks.txt), so
        # its input is the one the start gave.
        arguments = "".join(block.pieces)
        if not arguments:
            return ToolCall(_id(block.id), name, _input(block.input, where, findings))
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError):
            value = {}  # a cut or broken input is the argument reader's to judge
        if not isinstance(value, dict):
            findings.append(
                Finding("input_not_object", f"{where}: input streamed as {type(value).__name__}")
            )
        return ToolCall(_id(block.id), name, arguments)
