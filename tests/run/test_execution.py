"""``execute``: a plan probed in process (the emulators' handlers behind httpx.MockTransport)
and finished: the files written, the capability entry, the exit code and its message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conchcheck.capabilities import CapabilityFile
from conchcheck.errors import ExitCode
from conchcheck.probe import ProbeOptions
from conchcheck.run import ProbeSpec, build, execute
from conchcheck.wire.transport import Policy
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import Received, Response
from tests.run.emulated import MATRIX, TINY, Interrupting, mock

REPORTS = ["junit.xml", "report.html", "report.md", "results.json"]


def signed_out(received: Received) -> Response:
    return OpenAIEmulator(oracle(MATRIX), key="sk-right-0123456789abcdef")(received)


RUNS = [
    pytest.param(
        OpenAIEmulator(oracle(MATRIX)),
        {},
        ExitCode.DONE,
        "Dialect permissive, mode native.",
        True,
        id="done",
    ),
    pytest.param(
        OpenAIEmulator(oracle(MATRIX)),
        {"expected_mode": "words", "expected_dialect": "strict"},
        ExitCode.FAILED,
        "The verdict missed its expectation: mode native, expected words;"
        " dialect permissive, expected strict.",
        True,
        id="expectations-missed",
    ),
    pytest.param(
        OpenAIEmulator(oracle(MATRIX)),
        {"write_entry": False},
        ExitCode.DONE,
        "Dialect permissive, mode native.",
        False,
        id="asked-not-to-write-the-entry",
    ),
    pytest.param(
        signed_out,
        {},
        ExitCode.UNUSABLE,
        "The target can't be probed: auth: Incorrect API key provided: [redacted]."
        " You can find your API key at https://platform.openai.com/account/api-keys.",
        False,
        id="unusable",
    ),
    pytest.param(
        Interrupting(),
        {},
        ExitCode.STOPPED,
        "Stopped early: interrupted (SIGTERM). Partial results are written; --resume continues.",
        False,
        id="interrupted",
    ),
]


@pytest.mark.parametrize(("handler", "values", "code", "message", "entry"), RUNS)
def test_execute_finishes_with_its_exit_code(
    tmp_path: Path,
    handler: Callable[[Received], Response],
    values: dict[str, Any],
    code: ExitCode,
    message: str,
    entry: bool,
) -> None:
    caps = tmp_path / "caps.yaml"
    spec = ProbeSpec(
        "vllm:m",
        base_url="http://127.0.0.1:9/v1",
        matrix=str(TINY),
        out_dir=tmp_path / "out",
        capability_file=caps,
        options=ProbeOptions(policy=Policy(backoff=0.0, max_wait=0.0)),
        **values,
    )
    outcome = execute(build(spec, mock(handler)), interrupted_by=lambda: "SIGTERM")
    assert (outcome.exit_code, outcome.message) == (code, message)
    assert sorted(p.name for p in outcome.written) == REPORTS
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == REPORTS
    assert outcome.result is not None and outcome.cached is None
    entries = CapabilityFile(caps).entries()
    assert (outcome.entry is not None, len(entries)) == (entry, int(entry))
    if entry:
        assert entries == [outcome.entry]
