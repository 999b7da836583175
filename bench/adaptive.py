"""`--repeat auto` against a fixed `--repeat 5`: requests spent and labels given, on models
whose pass probability per prompt is known.

Each prompt passes each attempt with probability p (seeded draws), p in 1.0, 0.95, 0.9,
0.8, 0.6, 0.5, 0.3, 0.1 and 0.0; threshold 0.5, confidence 0.95, at most 10 attempts. The
two are paired: a trial draws ten outcomes, the fixed repeat takes the first five and auto
as many as it sends, so where their labels differ it is the rule, not the luck.

Two tables, the baseline (fixed 5) measured in the same run:

- the rule alone (``conchcheck.core.confidence.wave``), many trials per p;
- the real engine (``Probe`` over a loopback emulator, ``--checks mode``), the nine calling
  prompts of the default matrix one p each, native and words: requests the server got.

Columns: requests per prompt and the labels (pass/intermittent/fail, % of trials) of each,
auto's requests over fixed's, how often auto's label differs from fixed's, how often each
gave a settled label against the truth (pass when p < 0.5, fail when p >= 0.5), and (the
rule alone) how often auto's label differs from a fixed 10, its maximum.

Run: .venv/bin/python bench/adaptive.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))

from conchcheck.core.confidence import Label, label, wave
from conchcheck.matrix import load_matrix
from conchcheck.probe import Check, Probe, ProbeOptions
from conchcheck.results import ProbeResult
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy
from tests.emulators.model import Answer, Asked
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer

PS = (1.0, 0.95, 0.9, 0.8, 0.6, 0.5, 0.3, 0.1, 0.0)
THRESHOLD, CONFIDENCE, MOST, FIXED = 0.5, 0.95, 10, 5
SEED = 27
DEFAULT = load_matrix("default")
CALLING = [p for p in DEFAULT.prompts if p.expect.calls and p.follow_up is None]
MATRIX = dataclasses.replace(DEFAULT, prompts=tuple(CALLING[: len(PS)]))
P_OF = dict(zip((p.id for p in MATRIX.prompts), PS, strict=True))


@dataclasses.dataclass
class Tally:
    """One p's trials under one rule."""

    requests: int = 0
    labels: Counter[Label | None] = dataclasses.field(default_factory=Counter)
    wrong: int = 0

    def add(self, sent: int, got: Label | None, p: float) -> None:
        self.requests += sent
        self.labels[got] += 1
        self.wrong += got is (Label.FAIL if p >= THRESHOLD else Label.PASS)


def auto(outcomes: list[bool]) -> tuple[int, Label | None]:
    """Requests and label of the rule on one trial's outcomes."""
    passes = sent = 0
    while size := wave(passes, sent, sent, threshold=THRESHOLD, confidence=CONFIDENCE, most=MOST):
        passes += sum(outcomes[sent : sent + size])
        sent += size
    return sent, label(passes, sent, THRESHOLD, CONFIDENCE)


def fixed(outcomes: list[bool], n: int = FIXED) -> tuple[int, Label | None]:
    return n, label(sum(outcomes[:n]), n, THRESHOLD, CONFIDENCE)


Row = tuple[float, Tally, Tally, int, int | None]
"""p, fixed-5, auto, trials whose labels differ, and differ from fixed-10 (simulated only)."""


def simulated(trials: int) -> list[Row]:
    draw = random.Random(SEED)
    rows: list[Row] = []
    for p in PS:
        base, adaptive, differ, differ10 = Tally(), Tally(), 0, 0
        for _ in range(trials):
            outcomes = [draw.random() < p for _ in range(MOST)]
            (n5, l5), (na, la) = fixed(outcomes), auto(outcomes)
            base.add(n5, l5, p)
            adaptive.add(na, la, p)
            differ += l5 is not la
            differ10 += fixed(outcomes, MOST)[1] is not la
        rows.append((p, base, adaptive, differ, differ10))
    return rows


def model(draws: dict[tuple[str, bool], list[bool]], asked_for: Counter[tuple[str, bool]]) -> Any:
    """The oracle's answer to a prompt's n-th request in a mode when its n-th draw passed,
    else a reply with no call (a miss)."""
    right = oracle(MATRIX)
    users = {p.user: p.id for p in MATRIX.prompts}

    def behave(asked: Asked) -> Answer:
        prompt = users.get(asked.messages[-1]["content"]) if asked.messages else None
        if prompt is None or asked.messages[-1]["role"] != "user":
            return right(asked)
        key = (prompt, bool(asked.tools))
        asked_for[key] += 1
        return right(asked) if draws[key][asked_for[key] - 1] else Answer(text="Not now.")

    return behave


def engine_probe(repeat: int | str, draws: dict[tuple[str, bool], list[bool]]) -> tuple[
    ProbeResult, Counter[tuple[str, bool]]
]:  # fmt: skip
    asked: Counter[tuple[str, bool]] = Counter()
    server = EmulatorServer(OpenAIEmulator(model(draws, asked)))
    try:
        options = ProbeOptions(
            repeat=repeat,  # type: ignore[arg-type]
            checks=frozenset({Check.MODE}),
            streaming_checks=0,
            policy=Policy(concurrency=8, backoff=0.01),
        )
        target = parse_target("vllm:m", base_url=server.url + "/v1")
        return asyncio.run(Probe(target, MATRIX, options=options).run()), asked
    finally:
        server.close()


def engine(probes: int) -> list[Row]:
    draw = random.Random(SEED + 1)
    tallies = {p: (Tally(), Tally(), [0]) for p in PS}
    for _ in range(probes):
        draws = {
            (prompt.id, native): [draw.random() < P_OF[prompt.id] for _ in range(MOST)]
            for prompt in MATRIX.prompts
            for native in (True, False)
        }
        got = {}
        for repeat in (FIXED, "auto"):
            result, asked = engine_probe(repeat, draws)
            assert result.verdict is not None and result.verdict.labels is not None
            labels = {
                (x.prompt, x.mode == "native"): x.label for x in result.verdict.labels.prompts
            }
            got[repeat] = {key: (asked[key], labels[key]) for key in draws}
        for key in draws:
            p = P_OF[key[0]]
            base, adaptive, differ = tallies[p]
            (n5, l5), (na, la) = got[FIXED][key], got["auto"][key]
            base.add(n5, l5, p)
            adaptive.add(na, la, p)
            differ[0] += l5 is not la
    return [(p, b, a, d[0], None) for p, (b, a, d) in tallies.items()]


def share(tally: Tally, trials: int) -> str:
    return "/".join(
        f"{100 * tally.labels[x] / trials:.0f}"
        for x in (Label.PASS, Label.INTERMITTENT, Label.FAIL)
    )


def table(title: str, rows: list[Row], trials: int) -> None:
    print(f"\n{title} ({trials} per p; labels: % pass/intermittent/fail)")
    head = ["p", "fixed-5 req", "fixed-5 labels", "auto req", "auto labels", "ratio",
            "auto≠fixed", "fixed wrong", "auto wrong", "auto≠fixed-10"]  # fmt: skip
    widths = [4, 11, 14, 8, 11, 5, 10, 11, 10, 13]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)))
    total_fixed = total_auto = 0
    for p, base, adaptive, differ, differ10 in rows:
        total_fixed += base.requests
        total_auto += adaptive.requests
        cells = [
            f"{p:g}",
            f"{base.requests / trials:.2f}",
            share(base, trials),
            f"{adaptive.requests / trials:.2f}",
            share(adaptive, trials),
            f"{adaptive.requests / base.requests:.2f}",
            f"{100 * differ / trials:.1f}%",
            f"{100 * base.wrong / trials:.1f}%",
            f"{100 * adaptive.wrong / trials:.1f}%",
            "-" if differ10 is None else f"{100 * differ10 / trials:.1f}%",
        ]
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    print(
        f"all p: auto sent {total_auto / total_fixed:.2f}x the requests of fixed-5, "
        f"{total_auto / (total_fixed * MOST / FIXED):.2f}x those of fixed-10"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="few trials: the rows, not figures")
    quick = parser.parse_args().quick
    trials, probes = (200, 2) if quick else (20_000, 50)
    table("the rule alone", simulated(trials), trials)
    table("the engine over loopback, native and words", engine(probes), 2 * probes)


if __name__ == "__main__":
    main()
