"""Results of real probes against loopback emulators, one a typical provider, for the
compatibility report's tests: probed once a module, each into its own folder.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.conftest import _loopback_only
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer

MATRIX = load_matrix("default")
PROFILES: dict[str, Callable[[], OpenAIEmulator]] = {
    "vllm:m": lambda: OpenAIEmulator(oracle(MATRIX)),
    "gemini-openai:gemini-x": lambda: OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"),
    "openrouter:m": lambda: OpenAIEmulator(
        oracle(MATRIX),
        flavour="openrouter",
        catalogue=[{"id": "m", "supported_parameters": ["max_tokens"]}],
    ),
}


def probe_into(target: str, emulator: OpenAIEmulator, out: Path) -> Path:
    server = EmulatorServer(emulator)
    try:
        result = CliRunner().invoke(
            app,
            ["probe", target, "--base-url", server.url + "/v1", "--out", str(out), "--quiet",
             "--format", "json"],
        )  # fmt: skip
    finally:
        server.close()
    assert result.exit_code == 0, result.output
    return out / "results.json"


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``{target: results.json}`` of the three profiles (the suite's guards held throughout)."""
    root = tmp_path_factory.mktemp("probed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _loopback_only)
        # Keys a probe holds stay masked for the whole process: none shares text with goldens.
        patch.setenv("CONCHCHECK_CACHE", str(root / "capabilities.yaml"))
        patch.setenv("GEMINI_API_KEY", "AIzaCompatReportKeyQwertyuiopZx")
        patch.setenv("OPENROUTER_API_KEY", "sk-or-compat-report-qwertyuiopzx")
        yield {
            target: probe_into(target, make(), root / target.replace(":", "-"))
            for target, make in PROFILES.items()
        }
