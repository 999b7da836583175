"""``conchcheck probe --repeat auto`` end to end against an emulated provider: attempts per
prompt set by the confidence, the labels in results.json and on the terminal, and a recorded
adaptive probe replayed to the same cells."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
PROMPTS = len(MATRIX.prompts)
runner = CliRunner()


def probe(server: EmulatorServer, out: Path, *extra: str) -> tuple[int, str, dict[str, Any]]:
    args = ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(out)]
    result = runner.invoke(app, [*args, "--quiet", "--checks", "mode", *extra])
    path = out / "results.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return result.exit_code, result.stdout + result.stderr, data


def per_prompt(data: dict[str, Any], stage: str) -> set[int]:
    return set(Counter(c["case"] for c in data["cells"] if c["stage"] == stage).values())


@pytest.mark.parametrize(
    ("confidence", "attempts"),
    [
        # A model that always passes settles once n / (n + z²) >= 0.5, n >= z².
        pytest.param("0.8", 2, id="80-percent-two"),
        pytest.param("0.95", 4, id="95-percent-four"),
        pytest.param("0.99", 7, id="99-percent-seven"),
    ],
)
def test_auto_sends_what_the_confidence_needs(
    serve: Serve, tmp_path: Path, confidence: str, attempts: int
) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    code, shown, data = probe(server, tmp_path, "--repeat", "auto", "--confidence", confidence)
    assert code == 0, shown
    assert per_prompt(data, "native") == per_prompt(data, "words") == {attempts}
    labels = data["verdict"]["labels"]
    assert (labels["confidence"], labels["threshold"]) == (float(confidence), 0.5)
    assert {(p["attempts"], p["passes"], p["label"]) for p in labels["prompts"]} == {
        (attempts, attempts, "pass")
    }
    assert len(labels["prompts"]) == 2 * PROMPTS
    line = f"native {PROMPTS} pass · 0 intermittent · 0 fail; words {PROMPTS} pass"
    assert f"labels at {float(confidence):.0%}, threshold 0.5: {line}" in shown


def test_a_fixed_repeat_of_one_gives_no_labels(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    code, shown, data = probe(server, tmp_path)
    assert code == 0, shown
    assert {p["label"] for p in data["verdict"]["labels"]["prompts"]} == {None}
    assert "labels at" not in shown


def test_an_adaptive_probe_replays_to_the_same_cells(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    recording = tmp_path / "recording.json"
    code, shown, first = probe(
        server, tmp_path / "a", "--repeat", "auto", "--record", str(recording)
    )
    assert code == 0, shown
    server.close()
    code, shown, again = probe(
        server, tmp_path / "b", "--repeat", "auto", "--replay", str(recording)
    )
    assert code == 0, shown
    assert [(c["id"], c["outcome"]) for c in again["cells"]] == [
        (c["id"], c["outcome"]) for c in first["cells"]
    ]
    assert again["verdict"]["labels"] == first["verdict"]["labels"]
