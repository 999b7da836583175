"""``build_fleet`` and ``execute_fleet`` from Python: a refused folder before any request,
each target's own exit code and message, an interrupt, and the index written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conchcheck.errors import ExitCode, InputError
from conchcheck.run import FleetSpec, build_fleet, execute_fleet
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import Received, Response
from tests.run.emulated import MATRIX, NOTHING_SENT, TINY, Interrupting, mock

TARGETS = f"""\
targets:
  - target: vllm:m
    base_url: http://127.0.0.1:9/v1
    matrix: {TINY}
  - target: openrouter:qwen/qwen3-8b
    matrix: {TINY}
"""
NO_KEY = (
    "The target can't be probed: No API key for provider 'openrouter': $OPENROUTER_API_KEY"
    " is not set. Set it, or give the entry an api_key_env."
)


def targets_file(tmp_path: Path) -> Path:
    path = tmp_path / "targets.yaml"
    path.write_text(TARGETS)
    return path


def test_build_fleet_refuses_a_folder_before_any_request(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    spec = FleetSpec(targets_file(tmp_path), out_dir=tmp_path / "taken")
    with pytest.raises(InputError) as caught:
        build_fleet(spec, NOTHING_SENT)
    assert f"{caught.value} {caught.value.hint}" == (
        f"--out: {tmp_path}/taken: is a file, not a folder. Choose another folder."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken", "targets.yaml"]


@pytest.mark.parametrize(
    ("handler", "first", "code"),
    [
        pytest.param(
            OpenAIEmulator(oracle(MATRIX)),
            (ExitCode.DONE, "Dialect permissive, mode native."),
            ExitCode.UNUSABLE,
            id="probed-and-a-missing-key",
        ),
        pytest.param(
            Interrupting(),
            (
                ExitCode.STOPPED,
                "Stopped early: interrupted (Ctrl-C). Partial results are written;"
                " --resume continues.",
            ),
            ExitCode.UNUSABLE,
            id="interrupted-and-a-missing-key",
        ),
    ],
)
def test_each_target_ends_on_its_own(
    tmp_path: Path,
    handler: Callable[[Received], Response],
    first: tuple[ExitCode, str],
    code: ExitCode,
) -> None:
    spec = FleetSpec(targets_file(tmp_path), out_dir=tmp_path / "out", write_entry=False)
    fleet = build_fleet(spec, mock(handler))
    done = execute_fleet(fleet)
    ends = [(t.outcome.exit_code, t.outcome.message) for t in done.targets]
    assert ends == [first, (ExitCode.UNUSABLE, NO_KEY)]
    assert done.exit_code is code
    index = json.loads(done.index.read_text())
    assert [t["exit_code"] for t in index["targets"]] == [first[0], 3]
    assert index["exit_code"] == 3
