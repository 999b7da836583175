"""A probe whose model writes values JSON cannot hold (issue 9, section 2): the calls fail with
a message, the probe finishes, and every output is written (before, such a reply crashed the
probe after all its requests, and nothing was written)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.emulators.model import Answer, Asked
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler
from tests.test_probe_profiles import probe

Serve = Callable[[Handler], EmulatorServer]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{1, 2}", id="set"),
        pytest.param('b"x"', id="bytes"),
        pytest.param("1j", id="complex"),
        pytest.param("...", id="ellipsis"),
        pytest.param("1e999", id="infinite"),
    ],
)
def test_values_json_cannot_hold_never_stop_a_probe(
    serve: Serve, tmp_path: Path, value: str
) -> None:
    def pythonic(asked: Asked) -> Answer:
        # Natively and in words alike, a pythonic call to the first tool offered, or to the
        # weather tool every prompt of the default matrix knows.
        name = asked.tools[0]["name"] if asked.tools else "get_weather"
        return Answer(text=f"[{name}(city={value})]")

    server = serve(OpenAIEmulator(pythonic))
    code, outcome, _, err = probe(server, "vllm:m", tmp_path)
    assert code == 0, err
    out = tmp_path / "out"
    for name in ("results.json", "report.md", "report.html", "junit.xml"):
        assert (out / name).stat().st_size > 0, name
    results = json.loads((out / "results.json").read_text())
    read = [
        call
        for cell in results["cells"]
        if cell["stage"] == "words" and cell["reading"]
        for call in cell["reading"]["calls"]
    ]
    assert read and all(not c["ok"] and "which JSON cannot carry" in c["message"] for c in read)
    assert outcome["result"]["verdict"]["mode"] == "none"
