"""The pace a provider sets (``Throttle``), when its answers stop a probe (``Pressure``), and
the waits a 429 names, as durations (the core) or moments (the wire)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import pytest

from conchcheck.core.refusals import Refusal, RefusalKind, classify
from conchcheck.probe.pressure import Pressure, Throttle
from conchcheck.wire.chat import Reply
from conchcheck.wire.exchange import (
    Failed,
    Refused,
    Replied,
    RequestOutcome,
    WireError,
    WireErrorKind,
)
from conchcheck.wire.waits import wait_until


def limited(wait: float | None = 1.0) -> RequestOutcome:
    return Refused(Refusal(RefusalKind.RATE_LIMIT, 429, "Rate limit reached", retry_after=wait))


ANSWER = Replied(Reply(text="ok"))
SILENT = Failed(WireError(WireErrorKind.TIMEOUT, "No complete reply within the 1 s deadline."))
REFUSED = Failed(WireError(WireErrorKind.CONNECT, "The request failed: connection refused."))
TOO_LARGE = Failed(WireError(WireErrorKind.TOO_LARGE, "The reply passed 8 MB."))
SCHEMA = Refused(Refusal(RefusalKind.SCHEMA, 400, "Invalid schema"))
RETRY = "retry"
"""In a sequence: the next outcome is a retry's."""


@pytest.mark.parametrize(
    ("outcomes", "reason"),
    [
        pytest.param([limited()] * 8, "rate limited — 8 requests refused, last Retry-After 1 s", id="eight-429s-in-a-row"),
        pytest.param([limited(None)] * 8, "rate limited — 8 requests refused", id="eight-429s-naming-no-wait"),
        pytest.param([limited()] * 7 + [ANSWER] + [limited()] * 7, None, id="429s-broken-by-an-answer"),
        pytest.param([limited(0.0), RETRY, ANSWER] * 12, None, id="every-first-try-limited-every-retry-answered"),
        pytest.param([limited(), RETRY, limited()] * 8, "rate limited — 16 requests refused, last Retry-After 1 s", id="eight-requests-limited-through-their-retries"),
        pytest.param([ANSWER] * 10 + [SILENT] * 4, "the endpoint stopped answering after request 10", id="silent-after-10-answers"),
        pytest.param([ANSWER] * 3 + [SILENT, REFUSED, SILENT, REFUSED], "the endpoint stopped answering after request 3", id="timeouts-and-refused-connections"),
        pytest.param([SILENT] * 6, None, id="never-answered-is-the-first-requests-to-say"),
        pytest.param([ANSWER, SILENT, RETRY, SILENT, RETRY, SILENT, SILENT], None, id="retries-add-no-silence"),
        pytest.param([ANSWER] + [SILENT] * 3 + [SCHEMA] + [SILENT] * 3, None, id="a-refusal-is-an-answer"),
        pytest.param([ANSWER] + [SILENT] * 3 + [TOO_LARGE, SILENT], "the endpoint stopped answering after request 1", id="a-reply-too-large-breaks-nothing"),
    ],
)  # fmt: skip
def test_when_an_endpoints_answers_stop_the_probe(
    outcomes: list[RequestOutcome | str], reason: str | None
) -> None:
    pressure, said, retry = Pressure(), None, False
    for index, outcome in enumerate(outcomes):
        if outcome == RETRY:
            retry = True
            continue
        assert not isinstance(outcome, str)
        said = pressure.note(outcome, retry=retry)
        retry = False
        if outcomes[index + 1 : index + 2] != [RETRY]:
            said = pressure.ended(outcome)  # the request's last attempt
    assert said == reason


class Clock:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_a_429_pauses_every_request_and_halves_the_window_once_a_pause() -> None:
    clock = Clock()
    throttle = Throttle(8, clock=clock, sleep=clock.sleep)
    throttle.in_flight = 8
    throttle.rate_limited(2.0, 1)
    throttle.rate_limited(0.5, 2)  # in flight when the first came: the same signal
    assert (throttle.window, throttle.pauses, throttle.paused_until) == (4, 1, 102.0)
    throttle.in_flight = 0

    async def go() -> None:
        async with throttle.hold():
            pass

    asyncio.run(go())
    # Waited out the pause, then started 1 / 4 s after the last start (none yet).
    assert clock.slept == [2.0]
    assert clock.now == 102.0


@pytest.mark.parametrize(
    ("wait", "streak", "pause"),
    [
        pytest.param(None, 1, 1.0, id="no-wait-named-one-second"),
        pytest.param(None, 3, 4.0, id="doubled-for-each-in-a-row"),
        pytest.param(None, 9, 30.0, id="never-past-the-longest-pause"),
        pytest.param(999_999.0, 1, 30.0, id="an-absurd-wait-is-cut"),
    ],
)
def test_the_pause_a_429_brings(wait: float | None, streak: int, pause: float) -> None:
    clock = Clock()
    throttle = Throttle(4, clock=clock, sleep=clock.sleep)
    throttle.rate_limited(wait, streak)
    assert throttle.paused_until - clock.now == pause


def test_the_window_widens_by_one_after_as_many_answers_as_it_is_wide() -> None:
    throttle = Throttle(4)
    throttle.in_flight = 4
    throttle.rate_limited(0.0, 1)
    widths = [throttle.window]
    for _ in range(2 + 3 + 4):
        throttle.answered()
        widths.append(throttle.window)
    assert widths == [2, 2, 3, 3, 3, 4, 4, 4, 4, 4]
    assert not throttle.narrowed


def test_narrowed_requests_start_a_window_apart() -> None:
    clock = Clock()
    throttle = Throttle(4, clock=clock, sleep=clock.sleep)
    throttle.in_flight = 4
    throttle.rate_limited(0.0, 1)  # a window of two: two a second
    throttle.in_flight = 0

    async def three() -> None:
        for _ in range(3):
            async with throttle.hold():
                pass

    asyncio.run(three())
    assert clock.slept == [0.5, 0.5]


NOW = datetime(2026, 12, 5, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        pytest.param({"retry-after": "Sat, 05 Dec 2026 12:00:30 GMT"}, 30.0, id="http-date"),
        pytest.param({"retry-after": "Sat, 05 Dec 2026 11:59:30 GMT"}, None, id="http-date-past"),
        pytest.param({"retry-after": "30"}, None, id="seconds-are-the-cores"),
        pytest.param({"anthropic-ratelimit-requests-reset": "2026-12-05T12:00:02.5Z"}, 2.5, id="anthropic-rfc-3339"),
        pytest.param({"x-ratelimit-reset": str(int(NOW.timestamp()) + 7)}, 7.0, id="unix-time"),
        pytest.param({"x-ratelimit-reset": "12"}, 12.0, id="small-number-is-seconds"),
        pytest.param({"retry-after": "Sun, 05 Dec 2027 12:00:00 GMT"}, None, id="a-year-away"),
        pytest.param({"retry-after": "soon"}, None, id="not-a-date"),
        pytest.param({}, None, id="nothing-named"),
    ],
)  # fmt: skip
def test_waits_named_as_moments(headers: dict[str, str], wait: float | None) -> None:
    assert wait_until(headers, NOW) == wait


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        pytest.param({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 1.0, id="openai-the-sooner-of-two"),
        pytest.param({"x-ratelimit-reset-tokens": "20ms"}, 0.02, id="openai-milliseconds"),
        pytest.param({"x-ratelimit-reset-requests": "2m59.56s"}, 179.56, id="groq-minutes-and-seconds"),
        pytest.param({"retry-after": "2", "x-ratelimit-reset-requests": "1s"}, 2.0, id="retry-after-first"),
        pytest.param({"x-ratelimit-reset-requests": "soon"}, None, id="not-a-duration"),
    ],
)  # fmt: skip
def test_waits_named_as_durations(headers: dict[str, str], wait: float | None) -> None:
    body = (
        '{"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}'
    )
    assert classify(429, body, headers).retry_after == wait
