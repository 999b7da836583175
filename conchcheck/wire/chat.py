"""The neutral chat exchange every wire adapter translates to and from.

A ``ChatRequest`` says what to send (tools already in the provider's dialect); a ``Reply`` is
what came back, with the raw argument text of every call and the ``Finding`` values that
record where the reply strayed from its provider's documented shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from conchcheck.core.refusals import Refusal
from conchcheck.core.tools import ChoiceMode as ChoiceMode
from conchcheck.core.tools import Tool
from conchcheck.core.tools import ToolChoice as ToolChoice


class Role(str, Enum):
    """Who speaks a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as the provider sent it: ``arguments`` is the raw argument text."""

    id: str | None
    name: str
    arguments: str
    """JSON text as received; a provider that sends an object gets it re-encoded (a finding)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of the conversation."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    """The assistant's calls, when it made any."""
    tool_call_id: str | None = None
    """For a tool result: the call it answers."""
    name: str | None = None
    """For a tool result: the tool's name (Gemini and Ollama want it)."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What to send: the conversation, the tools (already in the dialect) and the limits."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice | None = None
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = 0.0
    strict: bool = False
    """``strict: true`` on every function tool (Chat Completions ``function.strict``, the
    Responses API's and Anthropic's tool ``strict``). The Responses API always gets it
    explicit, false included, because the endpoint's own default is true (strict schemas only);
    elsewhere it is sent only when true."""
    parallel: bool | None = None
    """``False`` asks for at most one call (``parallel_tool_calls: false``, Anthropic's
    ``disable_parallel_tool_use: true``); None sends nothing."""
    gemini_schema_field: str = "parameters"
    """Gemini only: send schemas as ``parameters`` (OpenAPI subset) or ``parametersJsonSchema``."""
    route: str | None = None
    """OpenRouter only: the one upstream provider allowed (``Target.route``)."""


class Finish(str, Enum):
    """Why the reply ended, normalised across providers."""

    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"
    OTHER = "other"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a reply strayed from its provider's documented shape, and the evidence."""

    code: str
    """A stable code such as ``arguments_as_object`` or ``stream_without_terminator``."""
    detail: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider reported them (None when it didn't)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back from one request that the provider accepted."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish: Finish = Finish.UNKNOWN
    finish_reason: str | None = None
    """The provider's own word for why it stopped."""
    usage: Usage = Usage()
    findings: tuple[Finding, ...] = ()
    raw: str = ""
    """The body (or the stream's events) as received, trimmed for the report."""
    refusal: Refusal | None = None
    """An error the provider sent inside a 2xx (an error event in a stream: LM Studio, Groq)."""
    reasoning: str = ""
    """What the reply carried in its reasoning channel (``reasoning_content``, thinking blocks,
    thought parts), never part of ``text``; reasoning written in the content stays in ``text``
    (``core.reasoning`` splits it)."""

    @property
    def cut_off(self) -> bool:
        """Whether the reply hit its token limit."""
        return self.finish is Finish.LENGTH
