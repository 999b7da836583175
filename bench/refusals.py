"""Benchmark the refusal classifier on real vectors and on hostile bodies.

Run: .venv/bin/python bench/refusals.py

Each hostile body is timed against json.loads of a plain error envelope of the same size,
measured in the same run, so a quadratic regex shows as a ratio that grows with the size.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from timing import best

from conchcheck.core.refusals import classify

VECTORS = yaml.safe_load(
    (Path(__file__).parent.parent / "tests" / "data" / "refusals.yaml").read_text()
)


def hostile(size: int) -> dict[str, str]:
    return {
        "open angles": "<" * size,
        "unclosed scripts": "<html>" + "<script>" * (size // 8),
        "unknown-name storm": ('Unknown name "' + "a" * 150 + "\" at '") * (size // 170),
        "digit run after 'try again in'": "try again in " + "1" * size,
        "sse data storm": "data: " * (size // 6),
        "endless key": "sk-" + "a" * size,
        "tools-dot storm": "tools." * (size // 6),
        # The keyword finders (issue 8) run on schema refusals only: these are schema words.
        "quoted-word storm": "invalid schema: " + "'a" * (size // 2),
        "unclosed-brace storm": "invalid tool schema: " + "{a" * (size // 2),
        "jinja member storm": "unable to generate parser for this template. While executing "
        + "a.b" * (size // 3),
    }


def main() -> None:
    entries = [(v["status"], v["body"], v.get("headers")) for v in VECTORS]
    per_vector = best(lambda: [classify(s, b, h) for s, b, h in entries]) / len(entries)
    print(f"{len(entries)} real vectors: {per_vector * 1e6:.1f} µs each\n")
    print(f"{'hostile body':<32} {'size':>8} {'time':>10} {'vs json.loads':>14}")
    for size in (100_000, 1_000_000):
        baseline_body = json.dumps({"error": {"message": "x" * size}})
        baseline = best(lambda: json.loads(baseline_body))
        for name, body in hostile(size).items():
            seconds = best(lambda: classify(400, body), repeat=3)
            print(f"{name:<32} {len(body):>8} {seconds * 1e3:>8.2f}ms {seconds / baseline:>13.1f}x")


if __name__ == "__main__":
    main()
