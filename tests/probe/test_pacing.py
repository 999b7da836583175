"""Limits a provider shares across probes: requests a minute spaced evenly (on a fake clock),
and requests at once."""

from __future__ import annotations

import asyncio

import pytest

from conchcheck.probe.pacing import ProviderLimit, RateLimit


class FakeTime:
    """A clock that moves only when told, and a sleep that records its waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))


RATES = [
    pytest.param(60, [0.0, 0.0, 0.0], [1.0, 2.0], id="three-at-once-wait-their-turns"),
    pytest.param(60, [0.0, 5.0, 5.5], [0.5], id="a-late-request-goes-at-once"),
    pytest.param(120, [0.0, 0.1, 0.2, 0.3], [0.4, 0.8, 1.2], id="two-a-second"),
    pytest.param(1, [0.0, 30.0], [30.0], id="once-a-minute"),
]


@pytest.mark.parametrize(("per_minute", "arrivals", "waits"), RATES)
def test_rate_limit_spaces_requests(
    per_minute: int, arrivals: list[float], waits: list[float]
) -> None:
    time = FakeTime()
    limit = RateLimit(per_minute, clock=time.clock, sleep=time.sleep)

    async def arrive() -> None:
        for at in arrivals:
            time.now = at
            await limit.wait()

    asyncio.run(arrive())
    assert time.slept == waits


def test_rate_limit_refuses_zero() -> None:
    with pytest.raises(ValueError, match="per_minute must be at least 1, not 0"):
        RateLimit(0)


@pytest.mark.parametrize("concurrency", [1, 2, 3])
def test_provider_limit_holds_requests_at_once(concurrency: int) -> None:
    limit = ProviderLimit(concurrency)
    in_flight, most = 0, 0

    async def request() -> None:
        nonlocal in_flight, most
        async with limit.hold(0):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1

    async def many() -> None:
        await asyncio.gather(*(request() for _ in range(8)))

    asyncio.run(many())
    assert most == concurrency


def test_provider_limit_takes_the_turn_once_a_place_is_held() -> None:
    time = FakeTime()
    limit = ProviderLimit(1, 60, clock=time.clock, sleep=time.sleep)

    async def request() -> None:
        async with limit.hold(0):
            pass

    async def many() -> None:
        await asyncio.gather(*(request() for _ in range(3)))

    asyncio.run(many())
    # One at a time, and each waits a second after the one before on a clock that stands.
    assert time.slept == [1.0, 2.0]
