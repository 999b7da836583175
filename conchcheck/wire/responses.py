"""OpenAI's Responses API (``/responses``): input items in, output items out, typed events.

Spoken by OpenAI and by compatible servers (vLLM, Ollama, LM Studio, OpenRouter, gateways).
Function tools are flat (``{"type": "function", "name", …}``) and carry ``strict``; calls are
``function_call`` items answered by ``function_call_output`` items with the same ``call_id``.
A stream is typed SSE events ending in ``response.completed`` (or ``.incomplete``/``.failed``),
with no ``[DONE]``; events out of their documented order are findings, never crashes.
"""

from __future__ import annotations

import json
from typing import ClassVar

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.refusals import Refusal, classify
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
    trim,
)
from conchcheck.wire.chat import (
    ChatRequest,
    ChoiceMode,
    Finding,
    Finish,
    Reply,
    ToolCall,
    Usage,
)
from conchcheck.wire.providers import ApiFamily
from conchcheck.wire.responses_input import input_of, tool_of

_INCOMPLETE = {"max_output_tokens": Finish.LENGTH, "content_filter": Finish.CONTENT_FILTER}
_ENDS = ("response.completed", "response.incomplete", "response.failed")
_REASONING_DELTAS = ("response.reasoning_text.delta", "response.reasoning_summary_text.delta")
"""The events that stream a reasoning item's text and its summary (openai-python
``ResponseReasoningTextDeltaEvent``, ``ResponseReasoningSummaryTextDeltaEvent``)."""


class ResponsesAdapter(ChatAdapter):
    """The Responses API, with flat function tools and an explicit ``strict`` on each."""

    api: ClassVar[ApiFamily] = ApiFamily.RESPONSES
    framing: ClassVar[Framing] = Framing.SSE
    done_marker: ClassVar[str | None] = None
    """The stream ends with ``response.completed``, not ``data: [DONE]``."""

    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """A POST to ``{base_url}/responses``; the key as a bearer token."""
        body: JsonObject = {"model": request.model, "input": input_of(request.messages)}
        if request.tools:
            body["tools"] = [tool_of(tool, request.strict) for tool in request.tools]
        if request.tool_choice is not None:
            choice = request.tool_choice
            body["tool_choice"] = (
                {"type": "function", "name": choice.name}
                if choice.mode is ChoiceMode.TOOL
                else choice.mode.value
            )
        if request.parallel is not None:
            body["parallel_tool_calls"] = request.parallel
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.stream:
            body["stream"] = True
        return bearer_post(
            base_url,
            "/responses",
            body,
            key=key,
            stream=request.stream,
            accept="text/event-stream",
        )

    def parse(self, body: bytes) -> Reply:
        """A response object; its ``output`` items hold the text and the calls."""
        data = parse_json(body)
        raw = trim(body.decode("utf-8", errors="replace"))
        if not isinstance(data, dict):
            raise WireShapeError(ShapeKind.UNEXPECTED_SHAPE, f"Expected a JSON object: {raw[:200]}")
        output = data.get("output")
        if not isinstance(output, list):
            raise WireShapeError(
                ShapeKind.UNEXPECTED_SHAPE, f"The response has no output list: {raw[:200]}"
            )
        findings: list[Finding] = []
        text, reasoning, calls = _output(output, findings)
        return _reply(text, reasoning, calls, data, findings, raw)

    def reducer(self) -> StreamReducer:
        """Merges typed events; calls by their ``output_index``."""
        return _Events()


def _call(item: JsonObject, where: str, findings: list[Finding]) -> ToolCall | None:
    name = item.get("name")
    if not isinstance(name, str):
        findings.append(Finding("call_without_name", f"{where} has no name"))
        return None
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        # function_call_output answers by call_id: without it no round trip can follow.
        findings.append(Finding("call_without_call_id", f"{where} has no call_id"))
        call_id = None
    return ToolCall(call_id, name, string_arguments(item.get("arguments"), where, findings))


def _output(output: list[JsonValue], findings: list[Finding]) -> tuple[str, str, list[ToolCall]]:
    """The text, the reasoning and the calls of a response's output items."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            findings.append(Finding("item_not_object", f"output[{index}]"))
        elif item.get("type") == "function_call":
            call = _call(item, f"output[{index}]", findings)
            if call is not None:
                calls.append(call)
        elif item.get("type") == "message":
            text.append(_message_text(item.get("content"), findings))
        elif item.get("type") == "reasoning":
            reasoning.append(_reasoning_text(item))
        # Other items (web search, file search) carry nothing this probe reads.
    return "".join(text), "".join(reasoning), calls


def _reasoning_text(item: JsonObject) -> str:
    """A ``reasoning`` item's text: its ``reasoning_text`` content parts (vLLM, gpt-oss) and its
    ``summary_text`` summary parts (OpenAI), as openai-python's ``ResponseReasoningItem`` types
    them (src/openai/types/responses/response_reasoning_item.py)."""
    parts = [
        part.get("text")
        for key, kind in (("content", "reasoning_text"), ("summary", "summary_text"))
        for part in items(item.get(key))
        if isinstance(part, dict) and part.get("type") == kind
    ]
    return "".join(text for text in parts if isinstance(text, str))


def _message_text(content: JsonValue, findings: list[Finding]) -> str:
    if isinstance(content, str):
        findings.append(Finding("content_as_text", "a message item's content is a string"))
        return content
    parts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "output_text":
            parts.append(str(part.get("text") or ""))
        elif isinstance(part, dict) and part.get("type") == "refusal":
            findings.append(Finding("model_refusal", trim(str(part.get("refusal")), 200)))
    return "".join(parts)


def _usage(usage: JsonValue) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    return Usage(
        prompt if isinstance(prompt, int) else None,
        completion if isinstance(completion, int) else None,
    )


def _strict_echo(tools: JsonValue) -> list[Finding]:
    """What the endpoint says it applied: the response echoes each tool with its ``strict``.

    OpenAI defaults ``strict`` to true here; a server that ignores the flag sent shows it.
    """
    found = (
        [
            f"{tool['name']}={json.dumps(tool.get('strict'))}"
            for tool in tools
            if isinstance(tool, dict) and isinstance(tool.get("name"), str)
        ]
        if isinstance(tools, list)
        else []
    )
    return [Finding("tools_strict_echoed", ", ".join(found))] if found else []


def _reply(
    text: str,
    reasoning: str,
    calls: list[ToolCall],
    response: JsonObject,
    findings: list[Finding],
    raw: str,
    refusal: Refusal | None = None,
) -> Reply:
    status = response.get("status")
    word = status if isinstance(status, str) else None
    details = response.get("incomplete_details")
    if status == "incomplete" and isinstance(details, dict) and details.get("reason"):
        word = str(details["reason"])
        finish = _INCOMPLETE.get(word, Finish.OTHER)
    elif status == "completed":
        finish = Finish.TOOL_CALLS if calls else Finish.STOP
    elif status == "failed":
        finish = Finish.ERROR
    else:
        finish = Finish.OTHER if word else Finish.UNKNOWN
    error = response.get("error")
    if refusal is None and isinstance(error, dict):
        refusal = classify(200, json.dumps({"error": error}))
    findings.extend(_strict_echo(response.get("tools")))
    if not calls:
        findings.extend(marker_findings(text))
    usage = _usage(response.get("usage"))
    return Reply(text, tuple(calls), finish, word, usage, tuple(findings), raw, refusal, reasoning)


class _Slot:
    __slots__ = ("arguments", "done", "id", "name", "noted")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.done: str | None = None
        """The whole arguments from ``.done`` or ``output_item.done``, when they came."""
        self.noted: set[str] = set()
        """Codes already found for this call."""


class _Events(EventReducer):
    """Typed events in the documented order: created, output_item.added, deltas, the done
    events, output_item.done, completed. Each departure is named; the reply is what came."""

    unterminated = "The stream ended without response.completed; the reply may be cut."

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.slots: dict[int, _Slot] = {}
        self.items: dict[str, int] = {}
        """Each item's id and the slot it fills: a server that sends no ``output_index``
        (llama-server) names the item of every event by ``item_id`` instead."""
        self.unindexed: dict[str, int] = {}
        """Events of each kind that came without ``output_index``: one finding at the end."""
        self.response: JsonObject = {}
        self.created = False
        self.ended = False
        self.sequence = -1

    def take(self, body: JsonObject, data: str, event: str) -> None:
        named = body.get("type")
        kind = named if isinstance(named, str) else event
        self.order(kind, body)
        if kind == "error" or (kind == "message" and "error" in body):
            # An error event inside a 200 stream: classified like any refusal.
            self.refusal = classify(200, data)
        elif kind == "response.created":
            self.created = True
        elif kind in _ENDS:
            self.ended = True
            response = body.get("response")
            if isinstance(response, dict):
                self.response = response
        elif kind == "response.output_text.delta":
            delta = body.get("delta")
            if isinstance(delta, str):
                self.text.append(delta)
        elif kind in _REASONING_DELTAS:
            delta = body.get("delta")
            if isinstance(delta, str):
                self.reasoning.append(delta)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self.item(kind, body)
        elif kind == "response.function_call_arguments.delta":
            slot, delta = self.slot(body, kind), body.get("delta")
            if slot is not None and isinstance(delta, str):
                slot.arguments.append(delta)
        elif kind == "response.function_call_arguments.done":
            slot, arguments = self.slot(body, kind), body.get("arguments")
            if slot is not None and isinstance(arguments, str):
                slot.done = arguments

    def order(self, kind: str, body: JsonObject) -> None:
        number = body.get("sequence_number")
        if isinstance(number, int):
            if number <= self.sequence:
                self.findings.append(
                    Finding("sequence_out_of_order", f"{kind} #{number} after #{self.sequence}")
                )
            self.sequence = max(self.sequence, number)
        if kind != "response.created" and not self.created and kind != "error":
            self.created = True  # named once: every later event would repeat it
            self.findings.append(Finding("event_before_created", kind))
        if self.ended:
            self.findings.append(Finding("event_after_completed", kind))

    def slot(self, body: JsonObject, kind: str) -> _Slot | None:
        index = self.index(body, kind, body.get("item_id"))
        if index is None:
            return None
        if index not in self.slots:
            # A delta for an item never announced: kept, so no argument text is lost.
            self.findings.append(Finding("event_before_item_added", f"{kind} at {index}"))
            self.slots[index] = _Slot()
        return self.slots[index]

    def index(self, body: JsonObject, kind: str, item_id: JsonValue) -> int | None:
        """The slot an event fills: its ``output_index``, else the slot of its item's id (a
        new one for an id not seen yet); None when it names neither."""
        index = body.get("output_index")
        if isinstance(index, int):
            if isinstance(item_id, str):
                self.items.setdefault(item_id, index)
            return index
        # llama-server's Responses events carry item_id and never output_index (server-task.cpp
        # in llama.cpp as vendored by llama-cpp-python 0.3.36, to_json_oaicompat_resp*).
        self.unindexed[kind] = self.unindexed.get(kind, 0) + 1
        if not isinstance(item_id, str):
            return None
        if item_id not in self.items:
            self.items[item_id] = max(self.slots, default=-1) + 1
        return self.items[item_id]

    def item(self, kind: str, body: JsonObject) -> None:
        item = body.get("item")
        if not isinstance(item, dict) or item.get("type") != "function_call":
            return
        index = self.index(body, kind, item.get("id"))
        if index is None:  # neither an index nor an id: a call of its own
            index = max(self.slots, default=-1) + 1
        added = kind == "response.output_item.added"
        if not added and index not in self.slots:
            self.findings.append(Finding("item_done_without_added", f"output_index {index}"))
        slot = self.slots.setdefault(index, _Slot())
        self.identify(slot, item, f"output_index {index}")
        arguments = item.get("arguments")
        if added and isinstance(arguments, str) and arguments:
            slot.arguments.append(arguments)
        elif not added and arguments is not None:
            slot.done = string_arguments(arguments, f"output[{index}]", self.findings)

    def identify(self, slot: _Slot, item: JsonObject, where: str) -> None:
        """The call's id and name from its item: the documented order gives them in
        ``output_item.added``, before any argument piece; the first ones are kept."""
        given_id, given_name = item.get("call_id"), item.get("name")
        call_id = given_id if isinstance(given_id, str) and given_id else None
        name = given_name if isinstance(given_name, str) and given_name else None
        pieces = any(slot.arguments) or slot.done is not None
        if (call_id or name) and slot.id is None and not slot.name and pieces:
            note_once(self.findings, slot.noted, "arguments_before_name", where)
        if call_id and slot.id is not None and call_id != slot.id:
            changed = f"{where}: {slot.id}, then {call_id}"
            note_once(self.findings, slot.noted, "call_id_changed", changed)
        if name and slot.name and name != slot.name:
            changed = f"{where}: {slot.name}, then {name}"
            note_once(self.findings, slot.noted, "call_name_changed", changed)
        slot.id = slot.id or call_id
        slot.name = slot.name or name or ""

    def calls(self) -> list[ToolCall]:
        calls = []
        for index, slot in sorted(self.slots.items()):
            streamed = "".join(slot.arguments)
            if slot.done is not None and streamed and slot.done != streamed:
                # The done event's arguments are the call's: they are the server's own whole
                # value, the one its output_item.done and response.completed repeat and SDKs
                # hand to the app; the deltas are progress on the way to it.
                found = Finding("arguments_disagree_with_done", f"output_index {index}")
                self.findings.append(found)
            if not slot.name:
                self.findings.append(Finding("call_without_name", f"output_index {index}"))
                continue
            if slot.id is None:
                # function_call_output answers by call_id: without it no round trip can follow.
                self.findings.append(Finding("call_without_id", f"output_index {index}"))
            calls.append(ToolCall(slot.id, slot.name, slot.done or streamed))
        return calls

    def reply(self, raw: str) -> Reply:
        calls = self.calls()
        if self.unindexed:
            counts = ", ".join(f"{kind} {n}" for kind, n in self.unindexed.items())
            self.findings.append(Finding("event_without_output_index", counts))
        output = self.response.get("output")
        if isinstance(output, list) and output:
            # The end event holds the server's own answer: where it differs from what the
            # events added up to, it is the answer, and a finding says the stream disagreed.
            said: list[Finding] = []
            text, reasoning, completed = _output(output, said)
            if not calls and completed:
                self.findings += said
                self.findings.append(Finding("calls_only_in_completed", f"{len(completed)} calls"))
                calls = completed
            elif _shown(calls) != _shown(completed):
                self.findings += said
                shown = f"streamed {len(calls)} calls, completed holds {len(completed)}"
                self.findings.append(Finding("stream_differs_from_completed", shown))
                calls = completed
            self.text = self.text or [text]
            self.reasoning = self.reasoning or [reasoning]
        text, reasoning = "".join(self.text), "".join(self.reasoning)
        return _reply(text, reasoning, calls, self.response, self.findings, raw, self.refusal)

    def reached_end(self, *, terminated: bool) -> bool:
        # `terminated` is ignored: there is no [DONE]; the stream ends with an end event. (The
        # reply's refusal may also be the end event's `error`, but only once the end came.)
        return self.ended


def _shown(calls: list[ToolCall]) -> list[tuple[str, str]]:
    """What a call is to the reader: its name and arguments (ids may differ in form)."""
    return [(call.name, call.arguments) for call in calls]
