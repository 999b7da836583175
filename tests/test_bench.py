"""The quick benchmarks still run and print every row they promise.

Speed is judged by reading their tables (README, Benchmarks), never here: these tests only
keep a benchmark from breaking unnoticed. The slow ones (hostile, compat, probe, fleet) are
left out.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize(
    ("script", "rows"),
    [
        pytest.param(
            "words.py",
            [
                r"'<tool_call>' .* 12x",
                r"worst .* 12x",
                r"one piece .* 1\.0x",
                r"deltas of 1-8 chars \(\d+ feeds\) .* 1\.5x",
                r"  the same, a process's first reply .* 1\.5x",
                r"one char at a time \(\d+ feeds\) .* 4\.0x",
                r"deltas, \d+ of \d+ distinct .* -",
                r"floor: one piece \+ a call per delta",
            ],
            id="words-linearity-and-streaming",
        ),
        pytest.param(
            "reader.py",
            [r"read_json valid 9 KB +json\.loads", r"WordsReader .* char by char"],
            id="reader",
        ),
        pytest.param(
            "adaptive.py",
            [
                r"the rule alone \(200 per p",
                r" +1 +5\.00 +100/0/0 +4\.00 +100/0/0 +0\.80",
                r" +0 +5\.00 +0/0/100 +4\.00 +0/0/100 +0\.80",
                r"all p: auto sent [\d.]+x the requests of fixed-5, [\d.]+x those of fixed-10",
                r"the engine over loopback, native and words \(4 per p",
            ],
            id="adaptive-repeats",
        ),
        pytest.param(
            "refusals.py",
            [r"\d+ real vectors: [\d.]+ µs each", r"open angles"],
            id="refusals",
        ),
    ],
)
def test_a_quick_benchmark_prints_its_rows(script: str, rows: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    missing = [row for row in rows if not any(re.fullmatch(row + r".*", line) for line in lines)]
    assert missing == []
