"""The whole fault list of issue 10, each injected into one chosen request of a real probe
against an emulator on loopback, through the job as the CLI runs it.

For every fault: the probe finishes within a generous bound, the faulted cell records the
right kind, its retries stay within ``Policy.retries`` and count against the budget, every
other cell ends as in a clean run, the job's exit code is right, and ``results.json`` is
valid against its schema. Run with ``-s`` to print the table of faults survived (the
README's Reliability section keeps its latest output).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conchcheck.jsonschemas import validator
from conchcheck.matrix import load_matrix
from conchcheck.probe import Probe, ProbeOptions
from conchcheck.results import ProbeResult
from conchcheck.run import ProbeSpec, build, execute
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy
from tests.emulators import faults
from tests.emulators.faults import MB, Breaker, Injector
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Fault, Handler, Received, Response

MATRIX = load_matrix("default")
USER = {p.id: p.user for p in MATRIX.prompts}
# A 3 s deadline: with 1 s, a clean request in a loaded CI run could time out and be sent
# again, and the counts compared with the clean run's were one apart (51 for 50).
POLICY = Policy(
    read_timeout=3.0, connect_timeout=3.0, retries=1, backoff=0.05, max_wait=2.0,
    retry_budget=5.0,
)  # fmt: skip
BOUND = 30.0
"""Seconds a faulted probe may take: its slowest fault costs two 3 s deadlines."""
NATIVE = "integer-argument"
"""The prompt whose native request is faulted: no follow-up and no streaming twin."""
STREAMED = "remember-fact"
"""The prompt whose streamed request (the streaming check) is faulted."""


def asks(prompt: str, *, stream: bool) -> Callable[[Received], bool]:
    """Picks the request that sends ``prompt`` with tools passed natively."""

    def when(received: Received) -> bool:
        body = received.json() or {}
        users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
        return (
            bool(body.get("tools"))
            and bool(body.get("stream")) == stream
            and (users[-1:] == [USER[prompt]])
        )

    return when


@dataclass(frozen=True)
class Case:
    """One fault, where it goes, and what the probe must record for it."""

    breaker: Breaker
    label: str
    """The faulted cell's label: ``error:<kind>``, ``refused:<kind>`` or its clean label."""
    attempts: int
    stream: bool = False
    ollama: bool = False
    exit_code: int = 0
    waits: tuple[float, ...] | None = None
    """The waits before retries, when the provider named them."""


CASES = [
    pytest.param(Case(faults.on_socket(Fault.RESET_BEFORE), "error:connect", 2),
                 id="reset-before-the-request-is-read"),
    pytest.param(Case(faults.on_socket(Fault.RESET_AFTER), "error:connect", 2),
                 id="reset-after-the-request-is-read"),
    pytest.param(Case(faults.on_socket(Fault.HANG), "error:timeout", 2), id="hang"),
    pytest.param(Case(faults.on_socket(Fault.DRIP_STATUS), "error:timeout", 2),
                 id="drip-in-the-status-line"),
    pytest.param(Case(faults.on_socket(Fault.DRIP_HEADERS), "error:timeout", 2),
                 id="drip-in-the-headers"),
    pytest.param(Case(faults.on_socket(Fault.DRIP_BODY), "error:timeout", 2),
                 id="drip-in-the-body"),
    pytest.param(Case(faults.error(429, "Rate limit reached.", {"retry-after": "1"}),
                      "error:rate_limit", 2, waits=(1.0,)), id="429-with-retry-after"),
    pytest.param(Case(faults.error(429, "Rate limit reached."), "error:rate_limit", 2),
                 id="429-without-retry-after"),
    pytest.param(Case(faults.error(429, "Rate limit reached.", {"retry-after": "999999"}),
                      "error:rate_limit", 1, waits=()), id="429-with-an-absurd-retry-after"),
    pytest.param(Case(faults.error(500, "Internal server error"), "refused:other", 2), id="500"),
    pytest.param(Case(faults.instead(Response(502, faults.HTML_502, {"content-type": "text/html"})),
                      "refused:other", 2), id="502-html-page"),
    pytest.param(Case(faults.error(503, "Service unavailable"), "refused:other", 2), id="503"),
    pytest.param(Case(faults.instead(Response.json(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529)),
        "refused:other", 2), id="529-overloaded"),
    pytest.param(Case(faults.instead(Response(200, faults.HTML_502, {"content-type": "text/html"})),
                      "error:bad_shape", 1), id="200-html-page"),
    pytest.param(Case(faults.truncated, "error:bad_shape", 1), id="truncated-json"),
    pytest.param(Case(faults.on_socket(Fault.LENGTH_LONGER), "error:connect", 2),
                 id="content-length-longer-than-the-body"),
    pytest.param(Case(faults.on_socket(Fault.LENGTH_SHORTER), "error:bad_shape", 1),
                 id="content-length-shorter-than-the-body"),
    pytest.param(Case(faults.cut_mid_event, "error:connect", 2, stream=True),
                 id="sse-cut-mid-event"),
    pytest.param(Case(faults.without_last_event, "error:bad_shape", 1, stream=True),
                 id="sse-without-its-terminator"),
    pytest.param(Case(faults.on_socket(Fault.STALL_STREAM), "error:timeout", 2, stream=True),
                 id="sse-goes-quiet"),
    pytest.param(Case(faults.cut_mid_line, "error:bad_shape", 1, stream=True, ollama=True),
                 id="ndjson-cut-mid-line"),
    pytest.param(Case(faults.body_of(50 * MB), "error:too_large", 1), id="a-50-mb-body"),
    pytest.param(Case(faults.invalid_utf8, "pass", 1), id="invalid-utf-8"),
    pytest.param(Case(faults.gzip_bomb(), "error:too_large", 1), id="gzip-bomb"),
    pytest.param(Case(faults.redirect("http://elsewhere.invalid/v1/chat/completions"),
                      "error:redirect", 1), id="redirect-to-another-host"),
    pytest.param(Case(faults.deep_json(), "error:bad_shape", 1), id="deep-json"),
    pytest.param(Case(faults.huge_arguments(7 * MB), "error:too_large", 1),
                 id="huge-arguments"),
]  # fmt: skip

ROWS: list[list[str]] = []
"""The table of faults survived, one row per case run in this session."""


@pytest.fixture(scope="module", autouse=True)
def _table() -> Iterator[None]:
    yield
    if ROWS:
        print("\n" + table(ROWS))


def table(rows: list[list[str]]) -> str:
    """The rows under ``fault | kind recorded | attempts | seconds | survived``, aligned."""
    head = ["fault", "kind recorded", "attempts", "seconds", "survived"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), rule, *map(line, rows)])


def emulator(ollama: bool) -> Handler:
    if ollama:
        return OllamaEmulator({"m": (["completion", "tools"], 8192, oracle(MATRIX))})
    return OpenAIEmulator(oracle(MATRIX))


def target(ollama: bool, url: str) -> tuple[str, str]:
    return ("ollama:m", url) if ollama else ("vllm:m", url + "/v1")


@functools.cache
def clean(ollama: bool) -> ProbeResult:
    """A probe of the same emulator with no fault: what every other cell must match."""
    server = EmulatorServer(emulator(ollama))
    try:
        name, url = target(ollama, server.url)
        probe = Probe(parse_target(name, base_url=url), MATRIX,
                      options=ProbeOptions(policy=POLICY))  # fmt: skip
        return asyncio.run(probe.run())
    finally:
        server.close()


def verdict(result: ProbeResult) -> tuple[object, ...]:
    """The verdict's mode and dialect; which invalid cases were accepted, in any order (the
    order they were accepted in follows the schedule)."""
    assert result.verdict is not None
    dialect = result.verdict.dialect
    return (result.verdict.mode, dialect.dialect, dialect.chain,
            sorted(dialect.invalid_accepted), dialect.refused)  # fmt: skip


def labels(result: ProbeResult, *leave_out: str) -> dict[str, str]:
    return {c.id: c.label for c in result.cells if c.id not in leave_out}


def check_results_file(out: Path, result: ProbeResult) -> None:
    data = json.loads((out / "results.json").read_text())
    errors = sorted(validator("results").iter_errors(data), key=str)
    assert errors == []
    assert [c["id"] for c in data["cells"]] == [c.id for c in result.cells]


@pytest.mark.parametrize("case", CASES)
def test_the_probe_survives_the_fault(
    request: pytest.FixtureRequest, tmp_path: Path, case: Case
) -> None:
    row = [request.node.callspec.id, "?", "?", "?", "no"]
    ROWS.append(row)
    baseline = clean(case.ollama)
    prompt = STREAMED if case.stream else NATIVE
    injector = Injector(emulator(case.ollama), asks(prompt, stream=case.stream), case.breaker)
    server = EmulatorServer(injector)
    try:
        name, url = target(case.ollama, server.url)
        spec = ProbeSpec(
            name,
            base_url=url,
            out_dir=tmp_path / "out",
            capability_file=tmp_path / "cache.yaml",
            options=ProbeOptions(policy=POLICY),
        )
        plan = build(spec)
        started = time.monotonic()
        outcome = execute(plan)
        took = time.monotonic() - started
        result = outcome.result
        assert result is not None
        received = len(server.received)
    finally:
        server.close()
    cell_id = f"follow_up/streaming/{prompt}" if case.stream else f"native/{prompt}/1"
    (cell,) = [c for c in result.cells if c.id == cell_id]
    # The streamed copy goes beside the whole native request and counts only its own.
    attempts = cell.requests
    row[1:4] = [cell.label, str(attempts), f"{took:.1f}"]
    assert took < BOUND
    assert (cell.label, attempts, len(injector.hits)) == (case.label, case.attempts, case.attempts)
    if case.waits is not None:
        assert cell.reply is not None and cell.reply.waits == case.waits
    # Every attempt went through the budget: none was sent that it didn't count.
    assert result.requests == received == baseline.requests + case.attempts - 1
    # A native cell's fault also leaves its streamed twin nothing to compare with.
    twin = f"follow_up/streaming/{prompt}"
    assert labels(result, cell_id, twin) == labels(baseline, cell_id, twin)
    assert result.verdict is not None and baseline.verdict is not None
    assert verdict(result) == verdict(baseline)
    assert outcome.exit_code == case.exit_code, outcome.message
    check_results_file(tmp_path / "out", result)
    row[4] = "yes"


def test_the_probe_survives_a_refused_connection(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    row = ["connection-refused", "?", "?", "?", "no"]
    ROWS.append(row)
    closed = EmulatorServer(lambda r: Response())
    url = closed.url
    closed.close()  # nothing listens on the port now: every connect is refused
    spec = ProbeSpec(
        "vllm:m",
        base_url=url + "/v1",
        out_dir=tmp_path / "out",
        capability_file=tmp_path / "cache.yaml",
        options=ProbeOptions(policy=POLICY),
    )
    plan = build(spec)
    started = time.monotonic()
    outcome = execute(plan)
    took = time.monotonic() - started
    result = outcome.result
    assert result is not None
    (cell,) = result.cells
    row[1:4] = [cell.label, str(cell.requests), f"{took:.1f}"]
    assert took < BOUND
    assert (cell.id, cell.label, cell.requests, result.requests) == ("reach", "error:connect", 2, 2)
    assert result.unusable is not None and result.unusable.startswith("connect: ")
    assert outcome.exit_code == 3
    check_results_file(tmp_path / "out", result)
    row[4] = "yes"
