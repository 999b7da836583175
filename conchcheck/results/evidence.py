"""The evidence of one cell: what was sent, what came back, and how its calls were read.

A request failed, refused or answered, every cell keeps what it can of all three, so a
verdict traces to the bytes it stands on (keys redacted, long text trimmed with its size).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from conchcheck.core.jsontypes import JsonValue
from conchcheck.wire.chat import Finding, Finish, ToolCall


@dataclass(frozen=True, slots=True)
class RequestEvidence:
    """What was sent: method, URL and headers with keys redacted, the body (trimmed when large)."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: JsonValue = None
    """The JSON body as sent, or its text cut to a limit (saying how much was left out)."""


@dataclass(frozen=True, slots=True)
class ReplyEvidence:
    """What came back: the status, and the reply as read (or what a failed one carried)."""

    status: int | None
    attempts: int = 1
    text: str | None = None
    """None when no reply could be read at all."""
    calls: tuple[ToolCall, ...] = ()
    """Native calls exactly as the provider sent them."""
    finish: Finish | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    findings: tuple[Finding, ...] = ()
    body: str = ""
    """The body (or stream) as received, trimmed, keys scrubbed."""
    waits: tuple[float, ...] = ()
    """Seconds waited before each retry."""
    reasoning: str | None = None
    """What the reply carried in its reasoning channel (``reasoning_content``, thinking);
    None when it carried none, or no reply could be read. Absent in older files."""


@dataclass(frozen=True, slots=True)
class ReadCall:
    """One call as conchcheck read it: its form, the arguments after reading, what it took."""

    form: str
    """``native``, or the form a call in words was written in (``hermes``, ``xml``, …)."""
    name: str | None
    ok: bool
    arguments: JsonValue = None
    repairs: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    message: str | None = None
    """What the model would be told when the call doesn't fit."""
    raw: str | None = None
    """A call in words: its text as written (trimmed)."""


@dataclass(frozen=True, slots=True)
class CallReading:
    """How a reply's calls were read; for words, also the words a user would see."""

    calls: tuple[ReadCall, ...] = ()
    text: str | None = None
    fake_responses: int = 0
    """``<tool_response>`` blocks the model wrote itself (dropped, never believed)."""
    list_level: str | None = None
    """Words: how much of each tool the list in the system prompt carried."""
