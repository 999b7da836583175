"""--deadline bounds a whole probe: requests in flight are dropped, what finished is kept."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from conchcheck.matrix import load_matrix
from conchcheck.probe import Probe, ProbeOptions
from conchcheck.results import Outcome
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Received, Response

MATRIX = load_matrix("default")


def slow(handler: Handler, seconds: float) -> Handler:
    def serve(received: Received) -> Response:
        time.sleep(seconds)
        return handler(received)

    return serve


def test_a_probe_past_its_deadline_stops_with_what_finished(
    serve: Callable[[Handler], EmulatorServer],
) -> None:
    server = serve(slow(OpenAIEmulator(oracle(MATRIX)), 0.25))
    target = parse_target("vllm:m", base_url=server.url + "/v1")
    options = ProbeOptions(policy=Policy(concurrency=2), deadline=1.0)
    started = time.perf_counter()
    result = asyncio.run(Probe(target, MATRIX, options=options).run())
    elapsed = time.perf_counter() - started
    assert result.stopped == "the deadline of 1 s passed"
    assert elapsed < 3.0  # the deadline, plus closing the client
    # Only requests that came back are cells: none was cut into a false "error".
    assert result.cells
    assert all(cell.outcome is not Outcome.ERROR for cell in result.cells)
    # The ones in flight were dropped: fewer cells than a whole probe has.
    whole = asyncio.run(Probe(target, MATRIX).run())
    assert whole.stopped is None and len(result.cells) < len(whole.cells)
