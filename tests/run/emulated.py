"""Transports for driving a run in process: the emulators' handlers behind
httpx.MockTransport, one that fails on any request, and the tiny matrix."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import httpx

from conchcheck.matrix import load_matrix
from tests.emulators.server import Received, Response

TINY = Path(__file__).parent.parent / "data" / "targets" / "tiny.yaml"
MATRIX = load_matrix(TINY)


def mock(handler: Callable[[Received], Response]) -> httpx.MockTransport:
    """A transport answering each request as ``handler`` does over HTTP."""

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        received = Received(request.method, request.url.path, {}, headers, request.content)
        response = handler(received)
        body = b"".join(response.chunks) if response.chunks is not None else response.body
        return httpx.Response(response.status, headers=response.headers, content=body)

    return httpx.MockTransport(answer)


class Interrupting:
    """A handler that is a user's Ctrl-C: the first request sends the process SIGINT, and
    asyncio cancels the run as it does for a real one; every request gets a 503."""

    def __init__(self) -> None:
        self.sent = False

    def __call__(self, received: Received) -> Response:
        if not self.sent:
            self.sent = True
            signal.raise_signal(signal.SIGINT)
        return Response(503)


def _refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"a request was sent: {request.method} {request.url}")


NOTHING_SENT = httpx.MockTransport(_refuse)
"""For what must send nothing: any request fails the test."""
