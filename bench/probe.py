"""The probe engine against its bounds, measured in one run.

1. Wall time of a whole default probe against an emulated endpoint on loopback that answers
   every request after a fixed latency, at --concurrency 1, 4 and 16, against the
   critical-path bound: the larger of (longest dependent chain x latency) and the time the
   slots need for every request: the plain request goes alone (everything waits for it),
   then the rest in whole latencies, at most `concurrency` at once
   (latency x (1 + ceil((requests - 1) / concurrency))). Target: at most 1.2x.
2. Dialect discovery against a Gemini-like endpoint behind a generic URL and a strict-only
   one: requests spent, against one request per case per dialect (cases x 4). Target: at
   most 0.25x.
3. Start-up: `conchcheck --help` against `python -c "import typer"`. Target: at most 1.5x.
4. Cost of the knobs and losses: requests and tokens of a whole default probe against the
   same probe with `--checks dialect,mode`, on the oracle emulator. The probe before the
   knobs sent those cells plus a whole request of its own beside each of its two streamed
   prompts (which now share the native cell's): its requests are the measured ones plus
   those two. Targets: at most 1.6x the requests of the probe before, 1.5x the tokens.

Run: .venv/bin/python bench/probe.py [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))

from conchcheck.matrix import load_matrix
from conchcheck.probe import Check, Probe, ProbeOptions
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Received, Response

MATRIX = load_matrix("default")


class Served:
    """An emulator in its own process, so the probe measured shares no GIL with it."""

    def __init__(self, profile: str, latency: float = 0.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", profile, "--latency", str(latency)],
            stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def handler(profile: str) -> Any:
    if profile == "oracle":
        return OpenAIEmulator(oracle(MATRIX))
    from tests.emulators.profiles import gemini_gateway, strict_only

    if profile == "gemini-like":
        return gemini_gateway(oracle(MATRIX))
    return strict_only(oracle(MATRIX))


def serve(profile: str, latency: float) -> None:
    server = EmulatorServer(slow(handler(profile), latency))
    print(server.url, flush=True)
    sys.stdin.read()  # until the bench closes it
    server.close()


def slow(handler: Any, latency: float) -> Any:
    def serve(received: Received) -> Response:
        time.sleep(latency)
        return handler(received)

    return serve


def probe(
    url: str, concurrency: int, target: str = "vllm:m", checks: frozenset[Check] = frozenset(Check)
) -> Any:
    options = ProbeOptions(policy=Policy(concurrency=concurrency, backoff=0.01), checks=checks)
    parsed = parse_target(target, base_url=url + "/v1")
    return asyncio.run(Probe(parsed, MATRIX, options=options).run())


def row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))


def wall_times(latency: float) -> bool:
    server = Served("oracle", latency)
    head = ["concurrency", "wall s", "requests", "chain", "bound s", "ratio", "target"]
    print("(wall: the median of three probes)")
    widths = [11, 7, 8, 5, 7, 6, 6]
    print(row(head, widths))
    ok = True
    try:
        for concurrency in (1, 4, 16):
            walls = []
            for _ in range(3):  # the median of three runs: one slow scheduler tick is noise
                started = time.perf_counter()
                result = probe(server.url, concurrency)
                walls.append(time.perf_counter() - started)
            wall = statistics.median(walls)
            # Both are lower bounds: no schedule beats the chain, nor the slots' capacity.
            waves = 1 + math.ceil((result.requests - 1) / concurrency)
            bound = max(result.critical_path, waves) * latency
            ratio = wall / bound
            ok &= ratio <= 1.2
            print(row([str(concurrency), f"{wall:.2f}", str(result.requests),
                       str(result.critical_path), f"{bound:.2f}", f"{ratio:.2f}", "1.20"],
                      widths))  # fmt: skip
    finally:
        server.close()
    return ok


def economy() -> bool:
    cases = len(MATRIX.schema_cases)
    naive = cases * 4
    profiles = [
        ("gemini-like behind a generic URL", "gemini-like", "vllm:m"),
        ("strict-only", "strict-only", "vllm:m"),
    ]
    head = ["endpoint", "dialect", "requests", "naive", "ratio", "target"]
    widths = [34, 10, 8, 5, 6, 6]
    print(row(head, widths))
    ok = True
    for name, profile, target in profiles:
        server = Served(profile)
        try:
            result = probe(server.url, 4, target)
        finally:
            server.close()
        spent = result.stage_requests.get("dialect", 0)
        dialect = result.verdict.dialect.dialect if result.verdict else None
        ratio = spent / naive
        ok &= ratio <= 0.25
        print(row([name, str(dialect), str(spent), str(naive), f"{ratio:.2f}", "0.25"], widths))
    return ok


def cost() -> bool:
    server = Served("oracle")
    try:
        before = probe(server.url, 4, checks=frozenset({Check.DIALECT, Check.MODE}))
        now = probe(server.url, 4)
    finally:
        server.close()
    widths = [40, 8, 8, 6, 6]
    print(row(["", "before", "now", "ratio", "target"], widths))
    ok = True
    pairs = ProbeOptions().streaming_checks  # the whole requests the probe before also sent
    for name, old, new, target in (
        ("requests, against --checks dialect,mode", before.requests, now.requests, None),
        ("requests, against the probe before", before.requests + pairs, now.requests, 1.6),
        ("tokens (prompt+completion)", before.prompt_tokens + before.completion_tokens,
         now.prompt_tokens + now.completion_tokens, 1.5),
    ):  # fmt: skip
        ratio = new / old
        ok &= target is None or ratio <= target
        bound = "" if target is None else f"{target:.2f}"
        print(row([name, str(old), str(new), f"{ratio:.2f}", bound], widths))
    stages = ", ".join(f"{k} {v}" for k, v in sorted(now.stage_requests.items()))
    print(f"(now, requests by stage: {stages})")
    return ok


def startup() -> bool:
    cli = [str(Path(sys.executable).parent / "conchcheck"), "--help"]
    base = [sys.executable, "-c", "import typer"]

    times: dict[str, list[float]] = {"cli": [], "base": []}
    for _ in range(21):  # interleaved, so a busy moment costs both sides alike
        for name, command in (("cli", cli), ("base", base)):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    ours, theirs = statistics.median(times["cli"]), statistics.median(times["base"])
    ratio = ours / theirs
    widths = [34, 8, 6, 6]
    print(row(["command", "median s", "ratio", "target"], widths))
    print(row(['python -c "import typer"', f"{theirs:.3f}", "1.00", ""], widths))
    print(row(["conchcheck --help", f"{ours:.3f}", f"{ratio:.2f}", "1.50"], widths))
    return ratio <= 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return
    print(f"# Wall time against the critical-path bound ({args.latency * 1000:.0f} ms a request)")
    ok = wall_times(args.latency)
    print("\n# Dialect discovery against one request per case per dialect")
    ok &= economy()
    print("\n# Cost of the knobs and losses (the oracle emulator, concurrency 4)")
    ok &= cost()
    print("\n# Start-up")
    ok &= startup()
    print("\nall within target" if ok else "\nSOME OUTSIDE TARGET")


if __name__ == "__main__":
    main()
