"""How sure a prompt's pass rate is: the Wilson score interval, a label from it, and when an
adaptive probe (``--repeat auto``) has asked a prompt often enough.

A prompt passes at a rate of at least the threshold ``t`` (with confidence ``c``) when the
interval's low end is at least ``t``; it fails when the high end is below ``t``; anything
between is intermittent. One attempt establishes nothing, so a label needs two.

Adaptive repeats stop a prompt as soon as its label can't change: it is settled (pass or
fail), or no outcome of the attempts left before the maximum could settle it (curtailed),
or the maximum is reached.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from conchcheck.core.names import Name

CONFIDENCE = 0.95
"""The default confidence of an interval (``--confidence``)."""
CONFIDENCE_RANGE = (0.5, 0.999)
"""Confidences a probe takes: below a half the interval says less than a coin; at 1 it is
every rate, since z is infinite."""
MAX_REPEAT = 10
"""Attempts of one prompt at most under ``--repeat auto`` (``--max-repeat``)."""
MIN_ATTEMPTS = 2
"""Attempts a label needs: one establishes nothing."""


class Label(Name):
    """What a prompt's attempts say of its pass rate against the threshold."""

    PASS = "pass"
    """The rate is at least the threshold, at the confidence."""
    INTERMITTENT = "intermittent"
    """The interval holds the threshold: neither is shown."""
    FAIL = "fail"
    """The rate is below the threshold, at the confidence."""


@lru_cache(maxsize=64)
def z_score(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence``: 1.95996… for 0.95."""
    return NormalDist().inv_cdf((1 + confidence) / 2)


def wilson(passes: int, attempts: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval (Wilson 1927) of ``passes`` in ``attempts``, as (lo, hi).

    Brown, Cai & DasGupta, "Interval Estimation for a Binomial Proportion" (Statistical
    Science, 2001), recommend it over the Wald interval for small ``attempts``. No attempts
    say nothing: (0, 1).
    """
    if attempts == 0:
        return 0.0, 1.0
    z = z_score(confidence)
    z2 = z * z
    rate = passes / attempts
    scale = 1 + z2 / attempts
    centre = (rate + z2 / (2 * attempts)) / scale
    half = z * math.sqrt(rate * (1 - rate) / attempts + z2 / (4 * attempts * attempts)) / scale
    # Clamped: at 0 or n passes the bound is 0 or 1 exactly, not a rounding away from it.
    return max(0.0, centre - half), min(1.0, centre + half)


def label(passes: int, attempts: int, threshold: float, confidence: float) -> Label | None:
    """Pass when lo >= ``threshold``, fail when hi < ``threshold``, else intermittent; None
    with fewer than two attempts."""
    if attempts < MIN_ATTEMPTS:
        return None
    lo, hi = wilson(passes, attempts, confidence)
    if lo >= threshold:
        return Label.PASS
    if hi < threshold:
        return Label.FAIL
    return Label.INTERMITTENT


@lru_cache(maxsize=65_536)
def _stops(passes: int, attempts: int, left: int, threshold: float, confidence: float) -> bool:
    """Whether a prompt with ``passes`` in ``attempts`` and ``left`` more allowed is done."""
    if left <= 0:
        return True
    if attempts < MIN_ATTEMPTS:
        return False
    if label(passes, attempts, threshold, confidence) is not Label.INTERMITTENT:
        return True
    # Another pass raises lo and another miss lowers hi, so the likeliest way to settle is
    # all passes or all misses to the end: when neither settles there, nothing does.
    end = attempts + left
    can_pass = wilson(passes + left, end, confidence)[0] >= threshold
    can_fail = wilson(passes, end, confidence)[1] < threshold
    return not (can_pass or can_fail)


def wave(
    passes: int, attempts: int, sent: int, *, threshold: float, confidence: float, most: int
) -> int:
    """Attempts to send now, at once; 0 when the prompt is done.

    ``attempts`` are the answered ones (a failed request is evidence of nothing), ``sent``
    all sent, ``most`` the maximum. The wave is as long as no outcome of it could stop the
    prompt before its end, so it costs no request that sending one at a time would save
    (unless a request in it fails: that can curtail a prompt sooner than any answer could).
    """
    left = most - sent
    if _stops(passes, attempts, left, threshold, confidence):
        return 0
    for size in range(1, left + 1):
        if any(
            _stops(passes + won, attempts + size, left - size, threshold, confidence)
            for won in range(size + 1)
        ):
            return size
    return left


@dataclass(frozen=True, slots=True)
class PromptLabel:
    """One prompt in one mode: its attempts, its interval and its label."""

    prompt: str
    mode: str
    """``native`` or ``words``."""
    attempts: int
    """Attempts with an answer (a failed request is not one)."""
    passes: int
    lo: float
    hi: float
    label: Label | None
    """None with fewer than two attempts."""


@dataclass(frozen=True, slots=True)
class Labels:
    """Every prompt's label in both modes, with the confidence and threshold they used."""

    confidence: float
    threshold: float
    prompts: tuple[PromptLabel, ...]

    def count(self, mode: str, which: Label) -> int:
        """Prompts of ``mode`` labelled ``which``."""
        return sum(p.mode == mode and p.label is which for p in self.prompts)


def label_prompts(
    mode: str, results: Iterable[tuple[str, bool]], threshold: float, confidence: float
) -> tuple[PromptLabel, ...]:
    """The label of each prompt of ``mode`` from its (prompt, passed) attempts, in the
    order prompts first appear."""
    tally: dict[str, list[int]] = {}
    for prompt, passed in results:
        seen = tally.setdefault(prompt, [0, 0])
        seen[0] += passed
        seen[1] += 1
    return tuple(
        PromptLabel(
            prompt,
            mode,
            attempts,
            passes,
            *wilson(passes, attempts, confidence),
            label(passes, attempts, threshold, confidence),
        )
        for prompt, (passes, attempts) in tally.items()
    )
