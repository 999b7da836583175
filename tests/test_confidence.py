"""The Wilson interval, the label rule and the adaptive stopping rule, as exact tables.

Expected intervals were computed apart, as the roots of (p̂ - p)² = z² p(1 - p) / n, and
agree with published values (1/10: 0.018-0.404; 50/100: 0.404-0.596).
"""

from __future__ import annotations

import pytest

from conchcheck.core.confidence import (
    Label,
    PromptLabel,
    label,
    label_prompts,
    wave,
    wilson,
    z_score,
)


@pytest.mark.parametrize(
    ("passes", "attempts", "confidence", "lo", "hi"),
    [
        pytest.param(0, 0, 0.95, 0.0, 1.0, id="no-attempts-say-nothing"),
        pytest.param(0, 1, 0.95, 0.0, 0.7935, id="one-miss"),
        pytest.param(1, 1, 0.95, 0.2065, 1.0, id="one-pass"),
        pytest.param(2, 2, 0.95, 0.3424, 1.0, id="two-of-two"),
        pytest.param(4, 4, 0.95, 0.5101, 1.0, id="four-of-four"),
        pytest.param(0, 4, 0.95, 0.0, 0.4899, id="none-of-four"),
        pytest.param(3, 4, 0.95, 0.3006, 0.9544, id="three-of-four"),
        pytest.param(5, 5, 0.95, 0.5655, 1.0, id="five-of-five"),
        pytest.param(4, 5, 0.95, 0.3755, 0.9638, id="four-of-five"),
        pytest.param(1, 10, 0.95, 0.0179, 0.4042, id="one-of-ten"),
        pytest.param(8, 10, 0.95, 0.4902, 0.9433, id="eight-of-ten"),
        pytest.param(9, 10, 0.95, 0.5958, 0.9821, id="nine-of-ten"),
        pytest.param(50, 100, 0.95, 0.4038, 0.5962, id="half-of-a-hundred"),
        pytest.param(3, 10, 0.9, 0.1269, 0.5583, id="confidence-0.9"),
        pytest.param(18, 20, 0.99, 0.6205, 0.9802, id="confidence-0.99"),
    ],
)
def test_wilson(passes: int, attempts: int, confidence: float, lo: float, hi: float) -> None:
    got = wilson(passes, attempts, confidence)
    assert (round(got[0], 4), round(got[1], 4)) == (lo, hi)


@pytest.mark.parametrize(
    ("confidence", "z"),
    [
        pytest.param(0.95, 1.9600, id="95"),
        pytest.param(0.9, 1.6449, id="90"),
        pytest.param(0.99, 2.5758, id="99"),
    ],
)
def test_z_is_two_sided(confidence: float, z: float) -> None:
    assert round(z_score(confidence), 4) == z


@pytest.mark.parametrize(
    ("passes", "attempts", "threshold", "confidence", "expected"),
    [
        pytest.param(1, 1, 0.5, 0.95, None, id="one-attempt-no-label"),
        pytest.param(0, 1, 0.0, 0.95, None, id="one-attempt-even-at-threshold-0"),
        pytest.param(2, 2, 0.5, 0.95, Label.INTERMITTENT, id="two-passes-not-enough"),
        pytest.param(4, 4, 0.5, 0.95, Label.PASS, id="four-passes-pass"),
        pytest.param(0, 4, 0.5, 0.95, Label.FAIL, id="four-misses-fail"),
        pytest.param(4, 5, 0.5, 0.95, Label.INTERMITTENT, id="four-of-five"),
        pytest.param(7, 8, 0.5, 0.95, Label.PASS, id="seven-of-eight"),
        pytest.param(8, 10, 0.5, 0.95, Label.INTERMITTENT, id="eight-of-ten-lo-just-under"),
        pytest.param(4, 5, 0.5, 0.8, Label.PASS, id="lower-confidence-settles-sooner"),
        pytest.param(9, 10, 1.0, 0.95, Label.FAIL, id="threshold-1-fails-after-one-miss"),
        pytest.param(10, 10, 1.0, 0.95, Label.INTERMITTENT, id="threshold-1-never-passes"),
        pytest.param(3, 3, 0.2, 0.95, Label.PASS, id="low-threshold"),
    ],
)
def test_label(
    passes: int, attempts: int, threshold: float, confidence: float, expected: Label | None
) -> None:
    assert label(passes, attempts, threshold, confidence) == expected


@pytest.mark.parametrize(
    ("passes", "attempts", "sent", "most", "expected"),
    [
        # With t = 0.5 and c = 0.95 nothing settles before four attempts: they go at once.
        pytest.param(0, 0, 0, 10, 4, id="first-wave-four"),
        pytest.param(4, 4, 4, 10, 0, id="settled-pass"),
        pytest.param(0, 4, 4, 10, 0, id="settled-fail"),
        pytest.param(1, 2, 2, 10, 2, id="after-failed-requests-to-four"),
        # 2/4: pass needs 8/10 (lo 0.490) and fail needs 2/10 (hi 0.510): neither can come.
        pytest.param(2, 4, 4, 10, 0, id="curtailed-two-of-four"),
        # 3/4: one more miss curtails it, one more pass leaves 8/8 possible: one at a time.
        pytest.param(3, 4, 4, 10, 1, id="three-of-four-one-at-a-time"),
        pytest.param(3, 5, 5, 10, 0, id="curtailed-three-of-five"),
        pytest.param(6, 7, 7, 10, 1, id="six-of-seven-one-more"),
        pytest.param(7, 8, 8, 10, 0, id="seven-of-eight-settled"),
        pytest.param(8, 9, 10, 10, 0, id="maximum-reached"),
        # A failed request took a slot: 3/4 with five sent can still reach 8/9 (lo 0.565).
        pytest.param(3, 4, 5, 10, 1, id="a-failed-request-counts-to-the-maximum"),
        # A maximum of 3 can settle nothing: still two attempts, for a label.
        pytest.param(0, 0, 0, 3, 2, id="small-maximum-still-two"),
        pytest.param(1, 2, 2, 3, 0, id="small-maximum-curtailed"),
        pytest.param(4, 4, 4, 4, 0, id="maximum-four"),
    ],
)
def test_wave(passes: int, attempts: int, sent: int, most: int, expected: int) -> None:
    got = wave(passes, attempts, sent, threshold=0.5, confidence=0.95, most=most)
    assert got == expected


def test_wave_never_sends_past_a_point_where_it_could_stop() -> None:
    # Played out one attempt at a time over every sequence of ten outcomes, the waves send
    # exactly what stopping after each attempt would: the rule costs nothing for its speed.
    def one_by_one(outcomes: tuple[bool, ...]) -> int:
        passes = attempts = 0
        while wave(passes, attempts, attempts, threshold=0.5, confidence=0.95, most=10):
            passes += outcomes[attempts]
            attempts += 1
        return attempts

    def in_waves(outcomes: tuple[bool, ...]) -> int:
        passes = attempts = 0
        while size := wave(passes, attempts, attempts, threshold=0.5, confidence=0.95, most=10):
            passes += sum(outcomes[attempts : attempts + size])
            attempts += size
        return attempts

    sequences = [tuple(bool(n >> i & 1) for i in range(10)) for n in range(1024)]
    assert [in_waves(s) for s in sequences] == [one_by_one(s) for s in sequences]
    # At t = 0.5, c = 0.95 a prompt stops by 8: 7/8 passes, and two misses curtail it.
    assert {one_by_one(s) for s in sequences} == {4, 5, 6, 7, 8}


def test_label_prompts_in_first_seen_order() -> None:
    results = [("b", True), ("a", False), ("b", True), ("a", False), ("b", True), ("b", True)]
    got = label_prompts("native", results, 0.5, 0.95)
    lo_b, hi_b = wilson(4, 4, 0.95)
    lo_a, hi_a = wilson(0, 2, 0.95)
    assert got == (
        PromptLabel("b", "native", 4, 4, lo_b, hi_b, Label.PASS),
        PromptLabel("a", "native", 2, 0, lo_a, hi_a, Label.INTERMITTENT),
    )
