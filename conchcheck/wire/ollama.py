"""Ollama's native chat API (``POST /api/chat``), streamed as newline-delimited JSON.

Tool arguments travel as JSON objects both ways; quirks are findings on the reply, never crashes.
"""

from __future__ import annotations

import json
from typing import ClassVar

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
    bearer_post,
    items,
    marker_findings,
    parse_json,
    tool_call,
    trim,
)
from conchcheck.wire.chat import (
    ChatRequest,
    Finding,
    Finish,
    Message,
    Reply,
    Role,
    ToolCall,
    Usage,
)
from conchcheck.wire.providers import ApiFamily

TRUNCATION_RATIO = 0.8
"""``truncation_finding`` flags a prompt counted below this share of the expected size.

The expectation is an estimate (characters per token differ between tokenizers by tens of
percent), so a small shortfall proves nothing; a truncation to ``num_ctx`` removes far more
(provider-facts C07: ``limit=2048 prompt=3940`` kept 52%).
"""

# "load" and "unload" answer a request without messages (a model load, or an eviction with
# keep_alive 0): no generation happened. Some builds say "connection_closed" for a runner that
# went away (llm/server.go DoneReason); like any other word, it maps to OTHER.
_FINISH = {
    "stop": Finish.STOP,
    "length": Finish.LENGTH,
    "load": Finish.OTHER,
    "unload": Finish.OTHER,
}


class OllamaAdapter(ChatAdapter):
    """The native chat API, with tools as ``{"type": "function", "function": {…}}``."""

    api: ClassVar[ApiFamily] = ApiFamily.OLLAMA
    framing: ClassVar[Framing] = Framing.NDJSON
    done_marker: ClassVar[str | None] = None
    """NDJSON has no terminator line; the last line says ``"done": true`` instead."""
    knobs: ClassVar[frozenset[Knob]] = frozenset()
    """The native API's ChatRequest has no tool_choice, no parallel control and no strict flag:
    each is recorded as not offered, never sent."""

    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """A POST to ``{base_url}/api/chat``; a key, when given, as a bearer token."""
        body: JsonObject = {
            "model": request.model,
            "messages": [_message(m) for m in request.messages],
        }
        if request.tools:
            body["tools"] = [_tool(tool) for tool in request.tools]
        # request.tool_choice, parallel and strict are left out: the native API has no such
        # fields (api.ChatRequest), so the model always chooses freely. The probe records them
        # as not offered (``knobs``), never reads an unforced reply as the model ignoring them.
        # Ollama streams when `stream` is absent (api.ChatRequest: "true by default"), so the
        # flag is always written; a missing false would turn a plain parse into NDJSON.
        body["stream"] = request.stream
        options: JsonObject = {}
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if options:
            body["options"] = options
        # Ollama itself takes no key; one is only for Ollama behind an auth proxy.
        return bearer_post(
            base_url,
            "/api/chat",
            body,
            key=key,
            stream=request.stream,
            accept="application/x-ndjson",
        )

    def parse(self, body: bytes) -> Reply:
        """A chat response; ``message`` holds the text and the calls, the body the counts."""
        data = parse_json(body)
        whole = body.decode("utf-8", errors="replace")
        raw = trim(whole)
        if not isinstance(data, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, f"Expected a JSON object: {raw[:200]}")
        if data.get("error"):
            # Ollama's errors are {"error": "…"} (provider-facts 2.4); a proxy that answers 2xx
            # with one still refused the request, and N01's "does not support tools" is kind tools.
            return Reply("", raw=raw, refusal=classify(200, whole))
        message = data.get("message")
        if not isinstance(message, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, "The reply has no message object.")
        findings: list[Finding] = []
        if data.get("done") is not True:
            # With stream: false Ollama answers once, when done; anything else is a cut reply.
            done = json.dumps(data["done"]) if "done" in data else "missing"
            findings.append(
                Finding("not_done", f"done is {done} in a reply sent with stream false")
            )
        # `thinking` (reasoning models, `think`) is scratch work, not the answer: it stays out of
        # the text, where a call the model only considered would read as call markers
        # (docs.ollama.com/capabilities/thinking: /api/chat puts it in message.thinking).
        text = _content(message.get("content"), findings)
        thinking = message.get("thinking")
        reasoning = thinking if isinstance(thinking, str) else ""
        calls: list[ToolCall] = []
        for index, item in enumerate(items(message.get("tool_calls"))):
            call = _call(item, index, findings)
            if call is not None:
                calls.append(call)
        reason = data.get("done_reason")
        return _reply(text, reasoning, calls, reason, _usage(data), findings, raw)

    def reducer(self) -> StreamReducer:
        """Merges NDJSON chat responses: content pieces in order, calls whole per line."""
        return _Lines()


def truncation_finding(reply: Reply, expected_prompt_tokens: int) -> Finding | None:
    """A ``prompt_truncated`` finding when Ollama counted far fewer prompt tokens than expected.

    Ollama cuts an over-long prompt to ``num_ctx`` without an error, tools first; the only
    tell a client sees is ``prompt_eval_count`` (provider-facts C07; ollama/ollama#3839, #3427).
    None when the count is missing or at least ``TRUNCATION_RATIO`` of the expectation.
    Builds that counted only the tokens evaluated anew also read low on a cached prefix
    (ollama/ollama PR #16428 restored the full count): check a request with a fresh prefix.
    """
    counted = reply.usage.prompt_tokens
    # Ollama omits prompt_eval_count when it is 0, as on a fully cached prompt
    # (ollama/ollama#2068): a missing or zero count says nothing about truncation.
    if not counted or expected_prompt_tokens <= 0:
        return None
    if counted >= expected_prompt_tokens * TRUNCATION_RATIO:
        return None
    return Finding(
        "prompt_truncated",
        f"prompt_eval_count is {counted}, below {TRUNCATION_RATIO:.0%} of the about"
        f" {expected_prompt_tokens} tokens sent: Ollama may have cut the prompt to num_ctx",
    )


def _tool(tool: Tool) -> JsonObject:
    # api.ToolFunction has `description` omitempty but always writes `parameters`, so Ollama's
    # own client sends a tool without arguments as `"parameters": {}`; the body does the same.
    function: JsonObject = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = dict(tool.parameters)
    return {"type": "function", "function": function}


def _message(message: Message) -> JsonObject:
    if message.role is Role.TOOL:
        # A tool result names its tool (api.Message `tool_name`); the call id is newer and
        # optional (provider-facts 4.3).
        out: JsonObject = {"role": "tool", "content": message.content}
        if message.name is not None:
            out["tool_name"] = message.name
        if message.tool_call_id is not None:
            out["tool_call_id"] = message.tool_call_id
        return out
    out = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [_outgoing_call(call) for call in message.tool_calls]
    return out


def _outgoing_call(call: ToolCall) -> JsonObject:
    # api.ToolCallFunctionArguments is a JSON object: argument text would be refused when the
    # server decodes the request, so it is read back; text that is not an object replays as {}
    # so the conversation still has the call its tool result answers.
    try:
        arguments = json.loads(call.arguments)
    except (ValueError, RecursionError):
        arguments = {}
    out: JsonObject = {
        "function": {
            "name": call.name,
            "arguments": arguments if isinstance(arguments, dict) else {},
        }
    }
    if call.id is not None:
        out["id"] = call.id
    return out


def _content(content: JsonValue, findings: list[Finding]) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    findings.append(Finding("content_not_text", f"message.content is {type(content).__name__}"))
    return json.dumps(content, ensure_ascii=False)


def _arguments(value: JsonValue, where: str, findings: list[Finding]) -> str:
    if isinstance(value, dict):
        # Documented: arguments are an object on this API (api.ToolCallFunction), not a finding.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        # Not this API's form but the OpenAI one, as a proxy in front of Ollama might send it;
        # the text is kept as it came.
        findings.append(Finding("arguments_as_string", f"{where}: arguments sent as a string"))
        return value
    if value is None:
        # Go writes a nil arguments map as null (api.ToolCallFunctionArguments is a map).
        findings.append(Finding("arguments_null", f"{where}: arguments is null"))
        return ""
    findings.append(
        Finding("arguments_not_object", f"{where}: arguments sent as {type(value).__name__}")
    )
    return json.dumps(value, ensure_ascii=False)


def _call(item: JsonValue, index: int, findings: list[Finding]) -> ToolCall | None:
    return tool_call(item, index, findings, _arguments)


def _count(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(data: JsonObject) -> Usage:
    return Usage(_count(data.get("prompt_eval_count")), _count(data.get("eval_count")))


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
    # Ollama says "stop" after tool calls too (ollama/ollama#12557): that is its documented
    # word, so unlike the OpenAI adapter it is no finding and the finish stays STOP.
    word = reason if isinstance(reason, str) and reason else None
    finish = _FINISH.get(word, Finish.OTHER) if word else Finish.UNKNOWN
    if not calls:
        findings.extend(marker_findings(text))
    return Reply(text, tuple(calls), finish, word, usage, tuple(findings), raw, refusal, reasoning)


class _Lines(EventReducer):
    empty = "The stream ended without a line."
    unterminated = 'The stream ended without its "done": true line; the reply may be cut.'

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[ToolCall] = []
        self.items = 0  # calls seen on all lines, named or not: `where` in findings
        self.reason: JsonValue = None
        self.usage = Usage()
        self.done = False

    def take(self, body: JsonObject, data: str, event: str) -> None:
        if body.get("error"):
            # Once the 200 and the first lines are out, Ollama reports a failure as one
            # {"error": "…"} line and ends the stream (docs/api/errors.mdx; server/routes.go
            # streamResponse): it is classified like any refusal, and the reply does not pass.
            self.refusal = classify(200, data)
            return
        message = body.get("message")
        if isinstance(message, dict):
            # `thinking` pieces stay out of the text, as in `parse`.
            content, thinking = message.get("content"), message.get("thinking")
            if isinstance(content, str):
                self.text.append(content)
            if isinstance(thinking, str):
                self.thinking.append(thinking)
            for item in items(message.get("tool_calls")):
                # Ollama's parser sends each call whole, on the line where it closed
                # (ollama.com/blog/streaming-tool); several lines may carry calls, in order.
                call = _call(item, self.items, self.findings)
                self.items += 1
                if call is not None:
                    self.calls.append(call)
        if body.get("done") is True:
            self.done = True
            self.reason = body.get("done_reason")
            self.usage = _usage(body)

    def reply(self, raw: str) -> Reply:
        text, reasoning, reason = "".join(self.text), "".join(self.thinking), self.reason
        calls, usage = self.calls, self.usage
        return _reply(text, reasoning, calls, reason, usage, self.findings, raw, self.refusal)

    def reached_end(self, *, terminated: bool) -> bool:
        # `terminated` is ignored: NDJSON has no terminator of its own, so the transport cannot
        # know; the line with "done": true is this stream's only documented end.
        return self.done
