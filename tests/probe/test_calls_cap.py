"""The calls read from one reply are capped (issue 23): a reply of 27,000 unclosed
``<tool_call>`` openers made 27,000 failed calls in each cell, 3.5 GB of peak memory and 95 s
for one probe. Past ``MAX_CALLS`` nothing is read; the excess is counted and reported once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from conchcheck.core.words import WordsReader, read_calls
from conchcheck.core.words.forms import MAX_CALLS
from tests.emulators.model import Answer, Asked
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler

ROOT = Path(__file__).parent.parent.parent
TOOLS = [{"name": "remember", "parameters": {"type": "object", "properties": {"fact": {}}}}]
CALL = '<tool_call>{"name": "remember", "arguments": {"fact": "a"}}</tool_call>'


@pytest.mark.parametrize(
    ("reply", "read", "over"),
    [
        pytest.param("<tool_call>" * 27_000, MAX_CALLS, 27_000 - MAX_CALLS, id="openers-27000"),
        pytest.param(CALL * 100, MAX_CALLS, 100 - MAX_CALLS, id="whole-calls-100"),
        pytest.param(CALL * MAX_CALLS, MAX_CALLS, 0, id="exactly-the-cap"),
        pytest.param(
            "<tool_call>[" + ", ".join(['{"name": "remember", "arguments": {}}'] * 200) + "]",
            MAX_CALLS, 200 - MAX_CALLS, id="one-list-of-200",
        ),
        pytest.param(
            "functools[" + '"' * 30_000, MAX_CALLS, 15_000 - MAX_CALLS,
            id="phi4-list-of-15000-empty-strings",
        ),
        pytest.param(
            "Sure: [" + ", ".join(["remember(fact='a')"] * 70) + "]", MAX_CALLS, 70 - MAX_CALLS,
            id="pythonic-list-of-70-after-words",
        ),
    ],
)  # fmt: skip
def test_calls_past_the_cap_are_counted_not_read(reply: str, read: int, over: int) -> None:
    whole = read_calls(reply, TOOLS)
    assert (len(whole.calls), whole.over_cap) == (read, over)
    reader = WordsReader(TOOLS)
    for i in range(0, len(reply), 7):
        reader.feed(reply[i : i + 7])
    streamed = reader.close()
    assert (len(streamed.calls), streamed.over_cap) == (read, over)


def openers(asked: Asked) -> Answer:
    return Answer(text="<tool_call>" * 27_000)  # 300 KB, to every request


def test_a_probe_of_a_model_that_writes_27000_openers_stays_small(
    tmp_path: Path, serve: Callable[[Handler], EmulatorServer]
) -> None:
    provider = serve(OpenAIEmulator(openers))
    out = tmp_path / "out"
    args = [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url",
            f"{provider.url}/v1", "--out", str(out), "--quiet", "--timeout", "30",
            "--checks", "dialect,mode", "--cache", str(tmp_path / "cache.yaml")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    # Measured from a launcher of its own (tests/peak.py): started from this test run, the
    # probe's peak would start at the test run's own.
    measured = tmp_path / "peak.json"
    launch = [sys.executable, str(ROOT / "tests" / "peak.py"), str(measured), *args]
    with tempfile.TemporaryFile() as err:
        subprocess.run(launch, stdout=subprocess.DEVNULL, stderr=err, env=env, timeout=300)
        err.seek(0)
        stderr = err.read().decode()
    peak = json.loads(measured.read_text())
    assert peak["code"] in (0, 1), stderr
    assert peak["rss_mb"] < 200  # MB: issue 10's bound
    written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert written < 10 << 20
    cells = json.loads((out / "results.json").read_text())["cells"]
    words = [c for c in cells if c.get("mode") == "words"]
    assert words
    for cell in words:
        assert len(cell["reading"]["calls"]) <= MAX_CALLS
        assert [f for f in cell["findings"] if f["code"] == "calls_over_cap"] == [
            {
                "code": "calls_over_cap",
                "detail": f"the reply held {27_000 - MAX_CALLS} more calls than the {MAX_CALLS} "
                "read from one reply; they were not read",
            }
        ]
