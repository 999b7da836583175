"""Timing for the benchmarks: the best of several wall-clock runs."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], object], *, repeat: int = 5) -> float:
    """Best wall time of ``repeat`` runs of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
