"""Limits one provider shares across the probes of many targets: requests at once, and
requests a minute, spaced evenly.

A probe holds its own concurrency limit (``budget.Limit``); when several probes reach the
same provider, each attempt also holds a place in that provider's ``ProviderLimit`` and
waits its turn in the provider's ``RateLimit`` before it goes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

from conchcheck.probe.budget import Limit
from conchcheck.probe.pressure import MAX_PAUSE, Clock, Sleep, Throttle


class RateLimit:
    """At most ``per_minute`` requests a minute, spaced ``60 / per_minute`` seconds apart.

    Spacing rather than a window of N: a window lets N requests go at once at the start of
    each minute, and a provider that counts over a sliding minute refuses the burst.
    """

    def __init__(
        self, per_minute: int, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep
    ) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, not {per_minute}")
        self.interval = 60.0 / per_minute
        self._clock, self._sleep = clock, sleep
        self._next: float | None = None

    async def wait(self) -> None:
        """Return when the next request may go; its turn is taken before the wait, so
        waiters go in the order they came, each ``interval`` after the one before."""
        now = self._clock()
        turn = now if self._next is None else max(now, self._next)
        self._next = turn + self.interval
        if turn > now:
            await self._sleep(turn - now)


class ProviderLimit:
    """One provider's shared limits: ``concurrency`` requests at once (None: no shared
    limit), and ``requests_per_minute`` (None: no rate limit)."""

    def __init__(
        self,
        concurrency: int | None = None,
        requests_per_minute: int | None = None,
        *,
        max_pause: float = MAX_PAUSE,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self._limit = Limit(concurrency) if concurrency is not None else None
        self.throttle = Throttle(concurrency, max_pause=max_pause, clock=clock, sleep=sleep)
        """The provider's pace across every probe of it: one target's 429 slows them all."""
        self._rate = (
            RateLimit(requests_per_minute, clock=clock, sleep=sleep)
            if requests_per_minute is not None
            else None
        )

    @asynccontextmanager
    async def hold(self, urgency: int, owner: Hashable = None) -> AsyncIterator[None]:
        """A place among the provider's requests in flight, then its pace, then the rate's
        turn."""
        if self._limit is None:
            async with self.throttle.hold():
                if self._rate is not None:
                    await self._rate.wait()
                yield
            return
        async with self._limit.hold(urgency, owner), self.throttle.hold():
            # The turn is taken once a place is held, so a request never waits out its turn
            # and then waits again for a place while later turns pass unused.
            if self._rate is not None:
                await self._rate.wait()
            yield
