"""The interface every chat API adapter implements: neutral request in, wire data out, and back.

Adapters translate data only. They never see a client or a socket, so their tests are
dict-in, dict-out tables; ``conchcheck.wire.transport`` does the HTTP.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from conchcheck.core.excerpt import excerpt
from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.knobs import Knob
from conchcheck.core.reasoning import split_reasoning
from conchcheck.core.refusals import Refusal
from conchcheck.core.words.blocks import CALL_MARKERS
from conchcheck.errors import ConchcheckError
from conchcheck.wire.chat import ChatRequest, Finding, Reply, ToolCall
from conchcheck.wire.providers import ApiFamily

RAW_LIMIT = 4000
"""Characters of a body or stream kept in ``Reply.raw`` for the report."""


class Framing(str, Enum):
    """How a streamed reply is cut into events."""

    SSE = "sse"
    NDJSON = "ndjson"


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One HTTP request, ready to send. ``secret_headers`` name the headers holding a key."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: JsonObject | None = None
    stream: bool = False
    secret_headers: frozenset[str] = field(default_factory=frozenset)

    def redacted_headers(self) -> dict[str, str]:
        """The headers with every key replaced by ``[redacted]``."""
        secret = {name.lower() for name in self.secret_headers}
        return {k: "[redacted]" if k.lower() in secret else v for k, v in self.headers.items()}


def bearer_post(
    base_url: str,
    path: str,
    body: JsonObject,
    *,
    key: str | None,
    stream: bool,
    accept: str,
) -> WireRequest:
    """A JSON ``POST`` to ``base_url`` + ``path``, the key (if any) sent as a bearer token
    in a header marked secret; ``accept`` names the stream's media type."""
    headers = {"content-type": "application/json"}
    if stream:
        headers["accept"] = accept
    secret: frozenset[str] = frozenset()
    if key:
        headers["authorization"] = f"Bearer {key}"
        secret = frozenset({"authorization"})
    return WireRequest("POST", base_url.rstrip("/") + path, headers, body, stream, secret)


class ShapeKind(str, Enum):
    """How a 2xx reply failed to be the shape its provider documents."""

    NOT_JSON = "not_json"
    HTML_PAGE = "html_page"
    EMPTY_CHOICES = "empty_choices"
    UNEXPECTED_SHAPE = "unexpected_shape"
    STREAM_UNTERMINATED = "stream_unterminated"
    EMPTY_STREAM = "empty_stream"
    TOO_DEEP = "too_deep"
    """JSON nested deeper than ``core.nesting.MAX_DEPTH``: not parsed (no recursion limit)."""
    ENCODING = "encoding"
    """A content-encoding conchcheck can't read, or a corrupt compressed body."""


class WireShapeError(ConchcheckError):
    """A 2xx reply that is not the shape its provider documents (kept as a value in results).

    ``partial`` holds what could be read, as evidence (a stream cut before its terminator).
    """

    def __init__(self, kind: ShapeKind, message: str, partial: Reply | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.partial = partial


class StreamReducer(ABC):
    """Merges the events of one streamed reply into a ``Reply``."""

    @abstractmethod
    def feed(self, data: str, event: str = "message") -> None:
        """Take one event: its data (an SSE ``data:`` payload or an NDJSON line) and name."""

    @abstractmethod
    def finish(self, *, terminated: bool) -> Reply:
        """The whole reply; ``terminated`` says the stream ended the documented way."""


class EventReducer(StreamReducer):
    """A reducer for a stream whose every event is one JSON object.

    It counts and logs each event and reads it as an object (a finding when it is not one);
    at the end it raises ``empty_stream`` when no event came and ``stream_unterminated``,
    carrying the reply so far, when the stream's documented end did not come and no error
    event explains why. A subclass reads each object in ``take``, builds the reply in
    ``reply`` and says in ``reached_end`` whether the end came.
    """

    empty: ClassVar[str] = "The stream ended without an event."
    unterminated: ClassVar[str]
    """What a stream without its documented end lacks, and that the reply may be cut."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.log = RawLog()
        self.refusal: Refusal | None = None
        """An error event inside the 2xx stream, classified like any refusal."""
        self.events = 0

    def feed(self, data: str, event: str = "message") -> None:
        """Count and log the event, and hand its object to ``take``."""
        self.events += 1
        self.log.add(data)
        body = event_object(data, self.findings)
        if body is not None:
            self.take(body, data, event)

    def finish(self, *, terminated: bool) -> Reply:
        """The reply; ``WireShapeError`` for an empty stream or one cut before its end."""
        if not self.events:
            raise WireShapeError(ShapeKind.EMPTY_STREAM, self.empty)
        reply = self.reply(self.log.text())
        if not self.reached_end(terminated=terminated) and self.refusal is None:
            raise WireShapeError(ShapeKind.STREAM_UNTERMINATED, self.unterminated, reply)
        return reply

    @abstractmethod
    def take(self, body: JsonObject, data: str, event: str) -> None:
        """Read one event: its object, its text (an error event is classified from it) and
        its SSE name (``message`` when it has none)."""

    @abstractmethod
    def reply(self, raw: str) -> Reply:
        """The reply the events so far make; ``raw`` is their log."""

    @abstractmethod
    def reached_end(self, *, terminated: bool) -> bool:
        """Whether the stream came to its documented end; ``terminated`` says the framing's
        terminator (``data: [DONE]``) was seen."""


class ChatAdapter(ABC):
    """Translates between conchcheck's neutral chat exchange and one chat API's wire format."""

    api: ClassVar[ApiFamily]
    framing: ClassVar[Framing]
    knobs: ClassVar[frozenset[Knob]] = frozenset(Knob)
    """The knobs the API has a way to say; ``build`` sends only these."""

    @abstractmethod
    def build(self, base_url: str, request: ChatRequest, key: str | None) -> WireRequest:
        """The HTTP request for ``request``; ``key`` goes only into the auth header."""

    @abstractmethod
    def parse(self, body: bytes) -> Reply:
        """A non-streamed 2xx body as a ``Reply``; raises ``WireShapeError`` on a wrong shape."""

    @abstractmethod
    def reducer(self) -> StreamReducer:
        """A fresh reducer for one streamed reply."""


def marker_findings(text: str) -> tuple[Finding, ...]:
    """A finding when a native reply's text holds tool-call markers (a call left as text);
    markers inside reasoning written in the text are its reasoning's, not a call's.

    vLLM's parsers leave an unparsed call in ``content`` with ``finish_reason: stop``
    (provider-facts N09; vllm-project/vllm#21571): the call never reaches the client.
    """
    text = split_reasoning(text).text
    found = [marker for marker in CALL_MARKERS if marker in text]
    escaped = [e for m in CALL_MARKERS if (e := _escaped(m)) != m and e in text]
    out = []
    if found:
        out.append(Finding("call_markers_in_text", f"the text holds {', '.join(found)}"))
    if escaped:
        # llama-cpp-python's chatml-function-calling handler renders its prompt with Jinja
        # autoescape on, so the model sees and writes back "&lt;tool_call&gt;" (provider-facts,
        # real servers measured by hand 2026-12-04): a call no parser reads.
        detail = f"the text holds {', '.join(escaped)}: the prompt was rendered HTML-escaped"
        out.append(Finding("html_escaped_call_markers", detail))
    return tuple(out)


def _escaped(marker: str) -> str:
    """``marker`` as HTML escaping writes it (``<tool_call>`` -> ``&lt;tool_call&gt;``)."""
    return marker.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


REPAIRED_DELTAS: frozenset[str] = frozenset(
    {
        # chat completions: the call each delta belongs to, by index
        "delta_without_index",
        # Anthropic Messages: the block each event belongs to, by index
        "event_without_index",
        "delta_without_start",
        # Responses: the item each event belongs to
        "event_without_output_index",
        "event_before_item_added",
        "item_done_without_added",
        "calls_only_in_completed",
        "stream_differs_from_completed",
        # every API: the id and name before the arguments, and both steady
        "arguments_before_name",
        "call_id_changed",
        "call_name_changed",
        "call_without_id",
        # Responses: the argument pieces against the done event's whole arguments
        "arguments_disagree_with_done",
    }
)
"""Finding codes that say conchcheck repaired or tolerated how a stream's tool calls were
assembled from its deltas: a streamed reply with one of them does not agree with the whole
reply, however alike the calls came out, since a client that reads the deltas the documented
way gets something else."""


def note_once(findings: list[Finding], noted: set[str], code: str, detail: str) -> None:
    """Add a finding about one call unless ``noted`` (that call's codes so far) has its code:
    a quirk repeated on every delta of a call is named once."""
    if code not in noted:
        noted.add(code)
        findings.append(Finding(code, detail))


def parse_json(body: bytes) -> JsonValue:
    """A 2xx body as JSON, or ``WireShapeError`` saying what it was instead."""
    text = body.decode("utf-8", errors="replace")
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        head = text.lstrip()[:200].lower()
        if head.startswith(("<!doctype", "<html")) or "<body" in head:
            raise WireShapeError(
                ShapeKind.HTML_PAGE,
                f"The provider answered 2xx with an HTML page: {trim(text, 200)}",
            ) from None
        raise WireShapeError(
            ShapeKind.NOT_JSON,
            f"The provider answered 2xx with a body that is not JSON: {trim(text, 200)}",
        ) from None
    return value


class RawLog:
    """The first ``RAW_LIMIT`` characters of a stream's events, kept for the report."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def add(self, data: str) -> None:
        """Keep ``data`` while the log is under its limit."""
        if self.size < RAW_LIMIT:
            self.parts.append(data)
            self.size += len(data)

    def text(self) -> str:
        """The events, one a line, trimmed."""
        return trim("\n".join(self.parts))


def event_object(data: str, findings: list[Finding]) -> JsonObject | None:
    """An event's data as a JSON object, or None with a finding saying what it was instead."""
    try:
        value: JsonValue = json.loads(data)
    except (ValueError, RecursionError):
        findings.append(Finding("event_not_json", trim(data, 200)))
        return None
    if not isinstance(value, dict):
        findings.append(Finding("event_not_object", trim(data, 200)))
        return None
    return value


def tool_call(
    item: JsonValue,
    index: int,
    findings: list[Finding],
    arguments: Callable[[JsonValue, str, list[Finding]], str],
) -> ToolCall | None:
    """A ``{"id", "function": {"name", "arguments"}}`` call; ``arguments`` reads its arguments."""
    where = f"tool_calls[{index}]"
    fields: JsonObject = item if isinstance(item, dict) else {}
    function = fields.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(function, dict) or not isinstance(name, str):
        findings.append(Finding("call_without_name", f"{where} has no function name"))
        return None
    text = arguments(function.get("arguments"), where, findings)
    call_id = fields.get("id")
    return ToolCall(call_id if isinstance(call_id, str) else None, name, text)


def items(value: JsonValue) -> list[JsonValue]:
    """``value`` when it is a JSON list; no items when a field that should be one is not."""
    return value if isinstance(value, list) else []


def string_arguments(value: JsonValue, where: str, findings: list[Finding]) -> str:
    """Arguments an API documents as JSON text, as that text: null is an empty text and an
    object is re-encoded, each with a finding."""
    if isinstance(value, str):
        return value
    if value is None:
        # Seen from OpenAI-compatible servers for calls without arguments (provider-facts 4.1).
        findings.append(Finding("arguments_null", f"{where}: arguments is null"))
        return ""
    # Ollama's /v1 and some compatible servers send an object where the API says a JSON
    # string (provider-facts 4.3), in chat completions and in Responses items built from a
    # parsed call; the text is rebuilt so the reader sees one form.
    findings.append(
        Finding("arguments_as_object", f"{where}: arguments sent as {type(value).__name__}")
    )
    return json.dumps(value, ensure_ascii=False)


def trim(text: str, limit: int = RAW_LIMIT) -> str:
    """``text`` cut to ``limit`` characters: its head and tail, and how long the whole was."""
    return excerpt(text, limit)
