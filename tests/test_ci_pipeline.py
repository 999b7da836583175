"""The nightly workflow's steps, run as docs/workflows/nightly-probe.yml runs them: each shard
probes its targets into its own folder, `report merge` joins them, `check` gates the whole and
`report` renders it. Real probes of loopback emulators, the real CLI in process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


def test_shards_merge_gate_and_report_as_the_workflow_does(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix("default")
    native = serve(OpenAIEmulator(oracle(matrix)))
    words = serve(OpenAIEmulator(oracle(matrix), flavour="llamacpp", template_tools=False))
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "targets:\n"
        f"  - target: vllm:a\n    base_url: {native.url}/v1\n"
        f"  - target: vllm:b\n    base_url: {native.url}/v1\n"
        f"  - target: llamacpp:local\n    base_url: {words.url}/v1\n"
    )
    expectations = tmp_path / "expectations.yaml"
    expectations.write_text(
        'targets:\n  "*":\n    mode: native\n  "llamacpp:local":\n    mode: words\n'
    )
    out = tmp_path / "out"
    for shard in (1, 2):  # the matrix of runners, each uploading out/shard-N as results-N
        code, said = cli(
            "probe", "--targets", str(targets), "--shard", f"{shard}/2",
            "--out", str(out / f"results-{shard}"), "--quiet",
            "--cache", str(tmp_path / f"cache-{shard}.yaml"),
        )  # fmt: skip
        assert code == 0, said
    shards = sorted(str(p) for p in out.glob("results-*"))
    code, said = cli("report", "merge", *shards, "--out", str(tmp_path / "all"))
    assert code == 0, said
    merged = sorted(p.parent.name for p in (tmp_path / "all").glob("*/results.json"))
    assert len(merged) == 3
    code, said = cli("check", str(tmp_path / "all"), "--expect", str(expectations))
    assert code == 0, said
    code, said = cli("report", str(tmp_path / "all"), "--out", str(tmp_path / "report"))
    assert code == 0, said
    page = (tmp_path / "report" / "compatibility.md").read_text()
    assert all(f"`{t}`" in page or t in page for t in ("vllm:a", "vllm:b", "llamacpp:local"))
    # Merging a shard twice is refused: every target would come twice.
    code, said = cli("report", "merge", shards[0], shards[0], "--out", str(tmp_path / "twice"))
    assert code == 2 and said.count("\n") == 1, said
    assert json.loads((tmp_path / "all" / "index.json").read_text())["targets"]
