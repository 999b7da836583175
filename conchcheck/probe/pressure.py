"""How an endpoint pushes back, and what a probe does about it.

A rate limit pauses every request to the provider, not only the one refused, and narrows
how many go at once: halved on a 429, widened by one after as many answers as it is wide
(``Throttle``; a fleet's targets at one provider share it). Refusals that only say "later"
and an endpoint that stopped answering end the probe (``Pressure``): neither is evidence of
anything, and sending on is how a user's key gets throttled or banned.

Issue 26 measured both: ten targets sent a server that asked for 1 s between requests 1,480
requests in 25 s (134 in one second), and a server that died after its 10th answer got 94
more requests over 66 s, each waiting out its timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from conchcheck.core.refusals import RefusalKind
from conchcheck.wire.exchange import Failed, Refused, RequestOutcome, WireErrorKind
from conchcheck.wire.policy import MAX_WAIT

Clock = Callable[[], float]
"""Seconds on a monotonic clock."""
Sleep = Callable[[float], Awaitable[None]]
"""How a wait is waited (a replay's waits nothing)."""

RATE_LIMITED_TO_STOP = 8
"""Requests in a row that a rate limit still refused after their retries, with none answered
between, that end the probe: with the waits the provider asked for, that is its answer."""
SILENT_TO_STOP = 4
"""Requests in a row whose first attempt timed out or found no server, with no answer between,
that end the probe: one slow prompt's request and its streamed copy time out together, four
with nothing answered between is a server that stopped answering."""
FIRST_PAUSE = 1.0
"""Seconds every request waits after a 429 that names no wait; doubled for each 429 in a
row, up to the throttle's ``max_pause``."""
MAX_PAUSE = MAX_WAIT
"""The default ``max_pause``: ``Policy.max_wait``'s default, the longest wait a retry takes."""
SILENT = (WireErrorKind.TIMEOUT, WireErrorKind.CONNECT)


class Throttle:
    """The provider's pace: a pause every request waits out, and how many may be in flight.

    ``ceiling`` is the most in flight at once (None: no limit of its own); the window starts
    there and narrows on a rate limit.
    """

    def __init__(
        self,
        ceiling: int | None = None,
        *,
        max_pause: float = MAX_PAUSE,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.ceiling = ceiling
        self.max_pause = max_pause
        """The longest pause taken, whatever a provider asks: past it, the request that was
        told to wait fails (``Policy.max_wait``) and the others go on."""
        self.window: int | None = ceiling
        self.in_flight = 0
        self.paused_until = 0.0
        self.pauses = 0
        """Pauses taken: each 429 that came when no pause was running."""
        self._answers = 0
        self._next_start = 0.0
        self._clock, self._sleep = clock, sleep
        self._changed = asyncio.Event()

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Wait out the pause and for room in the window; hold a place for the block."""
        while True:
            await self._pause()
            if self.window is None or self.in_flight < self.window:
                break
            self._changed.clear()
            await self._changed.wait()
        await self._space()
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            self._changed.set()

    async def _space(self) -> None:
        """While narrowed, requests start ``1 / window`` seconds apart: a window of two is two
        requests a second, however fast each is answered (a limit counted per second is met
        by spacing, not by concurrency alone)."""
        if not self.narrowed:
            return
        assert self.window is not None
        now = self._clock()
        turn = max(now, self._next_start)
        self._next_start = turn + 1 / self.window
        if turn > now:
            await self._sleep(turn - now)

    @property
    def narrowed(self) -> bool:
        """Whether a rate limit has narrowed the window below its ceiling."""
        return (
            self.pauses > 0
            and self.window is not None
            and (self.ceiling is None or self.window < self.ceiling)
        )

    async def _pause(self) -> None:
        """Wait out the pause, and any set while waiting."""
        while (left := self.paused_until - self._clock()) > 0:
            until = self.paused_until
            await self._sleep(left)
            if self.paused_until == until:
                return  # waited out: a replay's sleep waits nothing, and must not spin

    def rate_limited(self, wait: float | None, streak: int) -> None:
        """A 429: every request pauses ``wait`` seconds (or a backoff for the ``streak``-th in
        a row), and the window halves, once a pause: the 429s of requests already in flight
        when the first came are one signal, not several."""
        now = self._clock()
        pause = wait if wait is not None else FIRST_PAUSE * 2 ** (streak - 1)
        pause = min(pause, self.max_pause)
        if now >= self.paused_until:
            self.pauses += 1
            self.window = max(1, (self.window or self.in_flight) // 2)
            self._answers = 0
        self.paused_until = max(self.paused_until, now + pause)

    def answered(self) -> None:
        """An answer: after as many as the window is wide, it widens by one, to its ceiling."""
        if self.window is None:
            return
        self._answers += 1
        if self._answers >= self.window:
            self._answers = 0
            self.window += 1
            if self.ceiling is not None:
                self.window = min(self.window, self.ceiling)
            self._changed.set()


class Pressure:
    """One probe's endpoint: how its attempts were answered, and whether to stop sending."""

    def __init__(self) -> None:
        self.answered = 0
        """Attempts the endpoint answered (any HTTP status)."""
        self.rate_limited = 0
        self.last_wait: float | None = None
        """The wait the last 429 asked for, in seconds (None when it named none)."""
        self.limited_streak = 0
        """Attempts refused for a rate limit in a row: the pause's backoff."""
        self.given_up = 0
        """Requests in a row a rate limit still refused after their retries."""
        self.silent_streak = 0
        self.stopped: str | None = None
        """Why no more requests go, once they don't."""

    def note(
        self, outcome: RequestOutcome, throttle: Throttle | None = None, *, retry: bool = False
    ) -> str | None:
        """Count one attempt's outcome (and tell ``throttle``); the reason to stop, once there
        is one. A ``retry`` that goes unanswered adds no silence: one slow request and its
        retries are one request the endpoint was slow to answer, not several."""
        match outcome:
            case Refused(refusal) if refusal.kind is RefusalKind.RATE_LIMIT:
                self.answered += 1
                self.rate_limited += 1
                self.limited_streak += 1
                self.silent_streak = 0
                self.last_wait = refusal.retry_after
                if throttle is not None:
                    throttle.rate_limited(refusal.retry_after, self.limited_streak)
            case Failed(error) if error.kind in SILENT:
                if retry:
                    return self.stopped
                self.silent_streak += 1
                # One that never answered is the first request's to report, in its own words.
                if self.silent_streak >= SILENT_TO_STOP and self.answered:
                    self._stop(f"the endpoint stopped answering after request {self.answered}")
            case Failed():
                pass  # an answer too large or malformed: the endpoint is there
            case _:
                self.answered += 1
                self.limited_streak = self.silent_streak = 0
                if throttle is not None:
                    throttle.answered()
        return self.stopped

    def ended(self, outcome: RequestOutcome) -> str | None:
        """Count how one request ended, its retries done; the reason to stop, once there is
        one. Eight in a row that a rate limit still refused, none answered between, stop the
        probe; one refused on its first try and answered on its retry is an answer (an
        endpoint that limits every first try still gives its verdict, profile R01)."""
        match outcome:
            case Refused(refusal) if refusal.kind is RefusalKind.RATE_LIMIT:
                self.given_up += 1
                if self.given_up >= RATE_LIMITED_TO_STOP:
                    self._stop(self.rate_limit_reason())
            case Failed():
                pass
            case _:
                self.given_up = 0
        return self.stopped

    def _stop(self, reason: str) -> None:
        self.stopped = self.stopped or reason

    def rate_limit_reason(self) -> str:
        """Why a rate limit stops the probe, with what it counted."""
        said = "" if self.last_wait is None else f", last Retry-After {self.last_wait:g} s"
        return f"rate limited — {self.rate_limited} requests refused{said}"
