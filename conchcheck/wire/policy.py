"""The limits on one request (time, retries, size) and the gate that admits each attempt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from conchcheck.core.repair import MAX_SIZE
from conchcheck.wire.chat import ToolCall
from conchcheck.wire.exchange import RequestOutcome

Sleep = Callable[[float], Awaitable[None]]
"""How a wire waits before a retry (tests pass one that only records the wait)."""


MAX_BODY = 8 << 20
"""The default ``Policy.max_body``: 8 MB."""
MAX_WAIT = 30.0
"""The default ``Policy.max_wait``: 30 s."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Limits on one request: timeouts, retries, body size."""

    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    """Seconds one attempt may take in all (``--timeout``): connect, send, status, headers
    and the whole body or stream. A server that drips a byte at a time is cut here; named
    for the single socket read it once bounded (no one read waits longer either)."""
    retries: int = 3
    """Retries after the first attempt, for rate limits, 5xx and connection failures."""
    backoff: float = 0.5
    """The first wait; each retry doubles it, with jitter, up to ``max_wait``."""
    max_wait: float = MAX_WAIT
    """The longest single wait; a provider asking for longer is not retried."""
    retry_budget: float = 90.0
    """Total seconds of waiting allowed across one request's retries."""
    max_body: int = MAX_BODY
    """Bytes of a reply, decoded, before it is abandoned as too large."""
    max_arguments: int = MAX_SIZE
    """Characters of one tool call's arguments; past the reader's own limit a reply is not
    kept (a 7 MB argument would otherwise travel into every report)."""
    allow_insecure: bool = False
    """Send keys over plain http to a host that is not this machine."""
    concurrency: int | None = 4
    """Requests in flight at once to one provider, when no gate holds them (a probe's does)."""

    def oversized(self, calls: Iterable[ToolCall]) -> str | None:
        """Why a reply with ``calls`` is not kept (arguments past ``max_arguments``), or None."""
        largest = max((len(c.arguments) for c in calls), default=0)
        if largest <= self.max_arguments:
            return None
        return (
            f"A tool call's arguments are {largest} characters long, over the limit of "
            f"{self.max_arguments}; the reply was not kept."
        )


class Gate(Protocol):
    """What holds up each attempt of a request: a budget that may refuse it, and a slot."""

    def admit(self, *, peek: bool = False) -> bool:
        """Count one more attempt, or say False when the budget can't take it.

        ``peek`` only asks: nothing is counted.
        """

    def slot(self) -> AbstractAsyncContextManager[object]:
        """Held while one attempt is in flight (the probe's one concurrency limit)."""

    def note(self, outcome: RequestOutcome, attempt: int) -> None:
        """How the ``attempt``-th attempt of a request ended, told while its slot is still
        held: a rate limit or an endpoint gone silent holds up, or stops, the ones after."""
