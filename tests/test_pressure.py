"""The pressure tier (issue 26): a provider that rate-limits, one that recovers, one that dies
mid-probe, and a fleet that shares a provider with a dying target, each a real HTTP server on
loopback that records when every request came, probed through the CLI.

A refusal for a rate limit is never evidence: a probe refused throughout can't be probed
(exit 3), one whose endpoint stops answering stops early (exit 4), and neither writes a
capability entry. A 429 holds back every request to the provider for the wait it names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Fault, Handler, Received, Response
from tests.emulators.timeline import Timeline

Serve = Callable[[Handler], EmulatorServer]
TINY = Path(__file__).parent / "data" / "targets" / "tiny.yaml"
MATRIX = load_matrix("default")
LIMITED = {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}  # fmt: skip
"""OpenAI's 429 body (its error shape; the words of platform.openai.com/docs/guides/error-codes)."""
runner = CliRunner()


def probe(tmp_path: Path, url: str, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(
        app,
        ["probe", "vllm:m", "--base-url", url + "/v1", "--out", str(tmp_path / "out"),
         "--quiet", *extra],
    )  # fmt: skip
    return result.exit_code, result.stdout, result.stderr


def written(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "out" / "results.json").read_text())


def limited(headers: Callable[[], dict[str, str]]) -> Callable[[int, Received], Response]:
    return lambda n, received: Response.json(LIMITED, 429, headers())


def in_a_second() -> dict[str, str]:
    # An HTTP-date has whole seconds: two seconds on, at least one second's wait.
    moment = datetime.now(timezone.utc) + timedelta(seconds=2)
    return {"retry-after": format_datetime(moment, usegmt=True)}


@pytest.mark.parametrize(
    ("headers", "said", "least"),
    [
        pytest.param(lambda: {"retry-after": "0.3"}, "0.3", 0.3, id="retry-after-seconds"),
        pytest.param(lambda: {"retry-after-ms": "300"}, "0.3", 0.3, id="retry-after-ms"),
        pytest.param(lambda: {"x-ratelimit-reset-requests": "300ms"}, "0.3", 0.3, id="openai-reset-duration"),
        pytest.param(in_a_second, None, 1.0, id="retry-after-http-date"),
    ],
)  # fmt: skip
def test_a_provider_that_refuses_everything_for_a_rate_limit_cant_be_probed(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    headers: Callable[[], dict[str, str]], said: str | None, least: float,
) -> None:  # fmt: skip
    """Before: 148 requests, "dialect none, mode none", exit 0 and a capability entry."""
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "cache.yaml"))
    timeline = Timeline(limited(headers), OpenAIEmulator(oracle(MATRIX)))
    server = serve(timeline)
    code, _, err = probe(tmp_path, server.url)
    assert code == 3
    [line] = [line for line in err.splitlines() if "can't be probed" in line]
    assert line.startswith("The target can't be probed: rate limited — 4 requests refused, ")
    if said is not None:
        assert line.endswith(f"last Retry-After {said} s")
    # The first request and its three retries, each after the wait the provider named.
    assert len(timeline.arrivals) == 4
    gaps = [b - a for a, b in zip(timeline.arrivals, timeline.arrivals[1:], strict=False)]
    assert min(gaps) >= least * 0.9
    data = written(tmp_path)
    assert data["unusable"] == line.removeprefix("The target can't be probed: ").rstrip(".")
    assert data["verdict"] is None
    assert not (tmp_path / "cache.yaml").exists()


def test_a_rate_limit_holds_back_every_request_then_the_probe_goes_on(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: a Retry-After held back only the request that got it."""
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "cache.yaml"))
    correct = OpenAIEmulator(oracle(MATRIX))

    def answer(n: int, received: Received) -> Response:
        # Requests 5 to 10 are refused: the probe is in full flight, four at once.
        if 5 <= n <= 10:
            return Response.json(LIMITED, 429, {"retry-after": "0.5"})
        return correct(received)

    timeline = Timeline(answer, correct)
    server = serve(timeline)
    code, _, err = probe(tmp_path, server.url, "--concurrency", "4")
    assert code == 0, err
    assert written(tmp_path)["verdict"]["mode"] == "native"
    assert (tmp_path / "cache.yaml").exists()
    for refused in timeline.limited:
        # A request sent before the 429 reached the probe may still arrive a moment after;
        # none sent after it does before its wait is out.
        held = [t for t in timeline.arrivals if refused + 0.1 < t < refused + 0.45]
        assert held == [], f"{len(held)} requests came during the pause"
        # The second after a 429 carries no more requests than the concurrency.
        assert sum(refused + 0.1 < t <= refused + 1.1 for t in timeline.arrivals) <= 4


def test_an_endpoint_that_stops_answering_stops_the_probe(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: 94 requests over 66 s, then a full verdict, exit 0 and a capability entry
    built from 10 answers and the rest timeouts."""
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "cache.yaml"))
    correct = OpenAIEmulator(oracle(MATRIX))

    def answer(n: int, received: Received) -> Response:
        return correct(received) if n < 10 else Response(fault=Fault.HANG)

    timeline = Timeline(answer, correct)
    server = serve(timeline)
    started = time.monotonic()
    code, out, _ = probe(tmp_path, server.url, "--timeout", "1", "--concurrency", "4")
    took = time.monotonic() - started
    assert code == 4
    assert (
        "Stopped early: the endpoint stopped answering after request 10. Partial results are"
        " written; --resume continues." in " ".join(out.split())
    )
    # The ten answered, the four in flight when it died, and no retry of them.
    assert len(timeline.arrivals) <= 10 + 4 + 4
    assert took < 10
    data = written(tmp_path)
    assert data["stopped"] == "the endpoint stopped answering after request 10"
    assert not (tmp_path / "cache.yaml").exists()


def test_a_dying_target_does_not_starve_the_others_at_its_provider(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before: the healthy targets got 210 of the 310 requests they needed."""
    monkeypatch.setenv("CONCHCHECK_CACHE", str(tmp_path / "cache.yaml"))
    matrix = load_matrix(str(TINY))
    healthy = [serve(OpenAIEmulator(oracle(matrix))) for _ in range(3)]
    correct = OpenAIEmulator(oracle(matrix))
    dying = serve(
        Timeline(lambda n, r: correct(r) if n < 2 else Response(fault=Fault.HANG), correct)
    )
    entries = "".join(
        f"  - target: vllm:m{i}\n    base_url: {s.url}/v1\n"
        for i, s in enumerate([dying, *healthy])
    )
    path = tmp_path / "targets.yaml"
    path.write_text(f"providers:\n  vllm: {{concurrency: 2}}\ntargets:\n{entries}")
    started = time.monotonic()
    result = runner.invoke(
        app, ["probe", "--targets", str(path), "--out", str(tmp_path / "out"), "--quiet",
              "--matrix", str(TINY), "--timeout", "1"],
    )  # fmt: skip
    took = time.monotonic() - started
    assert result.exit_code == 4, result.stderr
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    codes = {t["target"]: t["exit_code"] for t in index["targets"]}
    assert codes == {"vllm:m0": 4, "vllm:m1": 0, "vllm:m2": 0, "vllm:m3": 0}
    clean = [len(s.received) for s in healthy]
    assert len(set(clean)) == 1  # each healthy target sent all it needed
    assert took < 15
