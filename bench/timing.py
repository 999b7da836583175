"""Timing for the benchmarks: the best of several wall-clock runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence


def best(fn: Callable[[], object], *, repeat: int = 5) -> float:
    """Best wall time of ``repeat`` runs of ``fn``, in seconds."""
    return best_of_each([fn], repeat=repeat)[0]


def best_of_each(fns: Sequence[Callable[[], object]], *, repeat: int = 5) -> list[float]:
    """Best wall time of each of ``fns``, in seconds, run in turn ``repeat`` times.

    Taking turns, not all the runs of one and then all of the next, means a slow stretch of
    the machine (another process, a clock change) falls on all of them alike, so a ratio
    between them is not decided by when each happened to run.
    """
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, kept in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            kept.append(time.perf_counter() - start)
    return [min(kept) for kept in times]
