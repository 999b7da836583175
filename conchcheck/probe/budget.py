"""The probe's budget and its one concurrency limit, both hard.

Every HTTP attempt, retries included, is admitted here first and holds a slot while it is
in flight; a spent budget admits nothing more, so ``--max-requests N`` sends at most N.
Slots go to the most urgent waiter first: the requests on the critical path (reach, the
dialect rounds) before the ones nothing waits for (words prompts).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections import Counter
from collections.abc import AsyncIterator, Hashable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from conchcheck.probe.pressure import MAX_PAUSE, Pressure, Sleep, Throttle
from conchcheck.wire.exchange import RequestOutcome


class Urgency(IntEnum):
    """Who gets a free slot first, lower first: the longer the chain a request starts or
    continues, the sooner it goes (critical path first)."""

    REACH = 0
    DIALECT = 1
    CHAIN = 2
    """A prompt with a round trip after it, and the round trip itself."""
    NATIVE = 3
    WORDS = 4
    IDLE = 5
    """Work nothing waits for (the deliberately invalid cases)."""


URGENCY: contextvars.ContextVar[Urgency] = contextvars.ContextVar("urgency", default=Urgency.WORDS)
"""The urgency of the requests the current task sends; each stage sets its own."""
STAGE: contextvars.ContextVar[str] = contextvars.ContextVar("stage", default="other")
"""The stage the current task's requests are counted to."""


class StopProbe(Exception):
    """The budget is spent or the probe was interrupted: stop sending, keep what came."""


@dataclass(eq=False, slots=True)
class _Waiter:
    urgency: int
    order: int
    owner: Hashable
    future: asyncio.Future[None]


class Limit:
    """At most ``size`` holders at once. A freed place goes to the owner holding the fewest
    (a fleet's targets share a provider's places: a target whose server went silent holds
    its places for a whole timeout each, and must not starve the others, issue 26), then to
    the most urgent waiter, then to the first that came."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._waiting: list[_Waiter] = []
        self._held: Counter[Hashable] = Counter()
        self._order = itertools.count()

    @asynccontextmanager
    async def hold(self, urgency: int, owner: Hashable = None) -> AsyncIterator[None]:
        """Wait for a place (see the class), hold it for the block."""
        if self.free > 0 and not self._waiting:
            self.free -= 1
            self._held[owner] += 1
        else:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(_Waiter(urgency, next(self._order), owner, future))
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self._held[owner] -= 1  # handed a place just as it was cancelled
                    self._release()
                raise
        try:
            yield
        finally:
            self._held[owner] -= 1
            self._release()

    def _release(self) -> None:
        while self._waiting:
            # A scan, not a heap: who holds fewest changes as places are held and freed, and
            # the waiters are a probe's requests, a few hundred at most.
            waiter = min(self._waiting, key=lambda w: (self._held[w.owner], w.urgency, w.order))
            self._waiting.remove(waiter)
            if not waiter.future.done():
                self._held[waiter.owner] += 1
                waiter.future.set_result(None)
                return
        self.free += 1


class SharedLimit(Protocol):
    """Limits other probes share with this one (``conchcheck.probe.pacing.ProviderLimit``)."""

    throttle: Throttle
    """The provider's pace, which its ``hold`` waits on: every probe of it slows down."""

    def hold(self, urgency: int, owner: Hashable = None) -> AbstractAsyncContextManager[None]:
        """Held, after the probe's own place, while one attempt is in flight; ``owner`` is
        the probe, so places are shared fairly among the probes."""


class Budget:
    """Counts attempts and tokens; refuses the next attempt once either limit is reached."""

    def __init__(
        self,
        max_requests: int | None,
        max_tokens: int | None,
        concurrency: int,
        *,
        sleep: Sleep = asyncio.sleep,
        max_pause: float = MAX_PAUSE,
    ) -> None:
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.reserved = 0
        """Tokens requests in flight may still spend (their prompt estimate and output limit)."""
        self.stopped: str | None = None
        self.limit = Limit(concurrency)
        self.shared: SharedLimit | None = None
        """The provider's limits, shared with other probes of it (``conchcheck.run.fleet``)."""
        self.by_stage: dict[str, int] = {}
        """Attempts each stage spent, retries and catalogue look-ups included."""
        self.throttle = Throttle(concurrency, max_pause=max_pause, sleep=sleep)
        """The provider's pace, when no shared limit carries it."""
        self.pressure = Pressure()

    @property
    def tokens(self) -> int:
        """Tokens spent so far, prompt and completion."""
        return self.prompt_tokens + self.completion_tokens

    def admit(self, *, peek: bool = False) -> bool:
        """Count one more attempt (``peek``: only ask), or False once the budget is spent."""
        if self.stopped is None:
            if self.max_requests is not None and self.requests >= self.max_requests:
                self.stopped = f"the request budget ({self.max_requests}) is spent"
            elif self.max_tokens is not None and self.tokens + self.reserved >= self.max_tokens:
                self.stopped = f"the token budget ({self.max_tokens}) is spent"
        if self.stopped is not None:
            return False
        if not peek:
            self.requests += 1
            stage = STAGE.get()
            self.by_stage[stage] = self.by_stage.get(stage, 0) + 1
        return True

    def slot(self) -> AbstractAsyncContextManager[None]:
        """A place in the one concurrency limit, at the current task's urgency; then one in
        the provider's shared limits when the probe has them, else in its own pace."""
        return self._slot(URGENCY.get(), self.shared)

    @asynccontextmanager
    async def _slot(self, urgency: int, shared: SharedLimit | None) -> AsyncIterator[None]:
        async with self.limit.hold(urgency):
            if shared is None:
                async with self.throttle.hold():
                    yield
            else:
                async with shared.hold(urgency, self):
                    yield

    def ended(self, outcome: RequestOutcome) -> None:
        """How one request ended, its retries done: a rate limit that outlasted them, again
        and again, stops the probe (``Pressure.ended``)."""
        self._press(self.pressure.ended(outcome))

    def note(self, outcome: RequestOutcome, attempt: int = 1) -> None:
        """Tell the pace how an attempt ended; stop admitting once the endpoint's answers
        say nothing more will come (``conchcheck.probe.pressure``)."""
        throttle = self.throttle if self.shared is None else self.shared.throttle
        self._press(self.pressure.note(outcome, throttle, retry=attempt > 1))

    @property
    def pressed(self) -> str | None:
        """Why the endpoint's answers stopped the probe (a rate limit, silence), if they did."""
        return self.pressure.stopped

    def _press(self, reason: str | None) -> None:
        if reason is not None:
            self.stopped = self.stopped or reason

    def reserve(self, wanted: int, prompt_estimate: int) -> int | None:
        """Hold what a request may spend: ``wanted`` output tokens, cut to what the budget has
        left after what is spent and held; None when not one output token is left."""
        if self.max_tokens is None:
            return wanted
        left = self.max_tokens - self.tokens - self.reserved - prompt_estimate
        if left < 1:
            self.stopped = self.stopped or f"the token budget ({self.max_tokens}) is spent"
            return None
        limit = min(wanted, left)
        self.reserved += prompt_estimate + limit
        return limit

    def spend(self, prompt: int | None, completion: int | None, held: int = 0) -> None:
        """Count the tokens a reply reported, and release what its request held."""
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0
        self.reserved -= held
