"""A handler that keeps when each chat request came and when each 429 went: the pressure
tier's (tests/test_pressure.py) and bench/fleet.py's clock on the server's side."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from tests.emulators.server import Handler, Received, Response


class Timeline:
    """Answers chat requests with ``answer(n, received)`` (n counts them from 0) and keeps
    when each came and when each 429 went; anything else (the catalogue) is answered by
    ``other``."""

    def __init__(self, answer: Callable[[int, Received], Response], other: Handler) -> None:
        self.answer, self.other = answer, other
        self.lock = threading.Lock()
        self.arrivals: list[float] = []
        self.limited: list[float] = []

    def __call__(self, received: Received) -> Response:
        if not received.path.endswith("/chat/completions"):
            return self.other(received)
        with self.lock:
            n = len(self.arrivals)
            self.arrivals.append(time.monotonic())
        response = self.answer(n, received)
        if response.status == 429:
            with self.lock:
                self.limited.append(time.monotonic())
        return response
