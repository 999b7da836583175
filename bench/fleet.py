"""A fleet that shares a provider with a dying target, and a provider that rate-limits.

Rows, each a real `conchcheck probe --targets` run in-process against loopback emulators
(the tiny matrix, `--timeout 1`), measured in the same run:

- the wall time of four healthy targets sharing one provider (concurrency 2), the baseline;
- the same fleet with a fifth target whose server stops answering after its second request:
  the ratio against the baseline (bound 3x; before the breaker, each of its requests waited
  its timeout and was retried, issue 26);
- a provider that answers every request with 429 and `Retry-After: 1` for ten targets:
  requests it got, and the most it got in any one second (bound: the provider's
  concurrency; before, 134 in one second and 1,480 in 25 s).

Run: .venv/bin/python bench/fleet.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent.parent))

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Fault, Handler, Response
from tests.emulators.timeline import Timeline

TINY = Path(__file__).parent.parent / "tests" / "data" / "targets" / "tiny.yaml"
RATIO_BOUND = 3.0
CONCURRENCY = 2
LIMITED = {"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}


def fleet(handlers: list[Handler]) -> tuple[float, int]:
    """Wall seconds and exit code of one `probe --targets` over a server for each handler."""
    servers = [EmulatorServer(h) for h in handlers]
    try:
        entries = "".join(
            f"  - target: vllm:m{i}\n    base_url: {s.url}/v1\n" for i, s in enumerate(servers)
        )
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "targets.yaml"
            path.write_text(
                f"providers:\n  vllm: {{concurrency: {CONCURRENCY}}}\ntargets:\n{entries}"
            )
            started = time.perf_counter()
            result = CliRunner().invoke(
                app,
                ["probe", "--targets", str(path), "--out", str(Path(folder) / "out"), "--quiet",
                 "--matrix", str(TINY), "--timeout", "1"],
                env={"CONCHCHECK_CACHE": str(Path(folder) / "cache.yaml")},
            )  # fmt: skip
            return time.perf_counter() - started, result.exit_code
    finally:
        for server in servers:
            server.close()


def main() -> None:
    matrix = load_matrix(str(TINY))

    def healthy() -> Handler:
        return OpenAIEmulator(oracle(matrix))

    def dying() -> Handler:
        answer = healthy()
        return Timeline(lambda n, r: answer(r) if n < 2 else Response(fault=Fault.HANG), answer)

    base, base_code = fleet([healthy() for _ in range(4)])
    with_dead, dead_code = fleet([dying(), *(healthy() for _ in range(4))])
    ratio = with_dead / base
    limited = Timeline(lambda n, r: Response.json(LIMITED, 429, {"retry-after": "1"}), healthy())
    seconds, limited_code = fleet([limited] * 10)
    buckets: dict[int, int] = {}
    for t in limited.arrivals:
        second = int(t - limited.arrivals[0])
        buckets[second] = buckets.get(second, 0) + 1
    busiest = max(buckets.values(), default=0)
    print(f"{'fleet':<44} {'exit':>4} {'seconds':>8} {'ratio':>6} {'bound':>6}")
    print(
        f"{'4 healthy targets, one provider (baseline)':<44} {base_code:>4} {base:>8.2f} {1:>6.2f}"
    )
    print(f"{'the same and one that stops answering':<44} {dead_code:>4} {with_dead:>8.2f} "
          f"{ratio:>6.2f} {RATIO_BOUND:>5.1f}x")  # fmt: skip
    print(f"\n{'rate-limited provider, 10 targets':<44} {'exit':>4} {'seconds':>8} "
          f"{'requests':>9} {'most/s':>7} {'bound':>6}")  # fmt: skip
    print(f"{'429 and Retry-After: 1 to every request':<44} {limited_code:>4} {seconds:>8.2f} "
          f"{len(limited.arrivals):>9} {busiest:>7} {CONCURRENCY:>6}")  # fmt: skip
    ok = ratio <= RATIO_BOUND and busiest <= CONCURRENCY
    print("all within bounds" if ok else "OUT OF BOUNDS")


if __name__ == "__main__":
    main()
