"""Live fixtures: start a configuration from the cache, probe it through the CLI, stop it.

scripts/test builds llama-server, fetches the models, derives the template (scripts/local-model
build) and installs the pinned Python servers (python -m scripts.pinned_venv build) before
pytest runs, so a live test only starts a server from the cache, on loopback; it never
downloads.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.results import ProbeResult, Stage
from conchcheck.results.reader import read_results
from scripts import local_model, pinned_venv

StartServer = Callable[[str], local_model.Server]
ProbeServer = Callable[..., dict[str, Any]]


@pytest.fixture(scope="session")
def start_server() -> StartServer:
    """A function: start a configuration from the cache (``local_model.start``)."""

    def start(config: str) -> local_model.Server:
        cache = local_model.cache_dir()
        model = local_model.MODELS[local_model.CONFIGS[config].model]
        for path in (cache / "bin" / "llama-server", cache / "models" / model.name):
            if not path.exists():
                pytest.fail(f"{path} is missing: run scripts/local-model build (scripts/test does)")
        return local_model.start(config)

    return start


def need_venv(pinned: pinned_venv.Pinned) -> None:
    """Fail at once when ``pinned``'s virtualenv is not built (a live test never installs)."""
    if not pinned_venv.ready(pinned):
        pytest.fail(
            f"{pinned.name} is not installed: run python -m scripts.pinned_venv build "
            "(scripts/test does)"
        )


@pytest.fixture(scope="session")
def probe_server(tmp_path_factory: pytest.TempPathFactory) -> ProbeServer:
    """A function: probe a running server through the CLI with ``--json``.

    ``probe(server, matrix=None, *, target, extra, env, cache)`` returns the run: ``config``,
    ``target``, ``out`` (the reports), ``stdout`` and ``stderr``, ``outcome`` (the CLI's JSON),
    ``cells`` and ``result`` (``results.json`` read back, checked against its schema).
    ``matrix`` is a matrix file (the default matrix when None); ``target`` defaults to the
    configuration's ``llamacpp:`` target; ``extra`` are more CLI options; ``env`` more
    environment; ``cache`` the capability file (one in ``out`` when None).
    """

    def probe(
        server: local_model.Server,
        matrix: Path | None = None,
        *,
        target: str | None = None,
        extra: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        cache: Path | None = None,
    ) -> dict[str, Any]:
        target = target or f"llamacpp:{local_model.CONFIGS[server.config].target}"
        name = f"{server.config}-{matrix.stem if matrix else 'default'}-{'-'.join(extra)[:40]}"
        out = tmp_path_factory.mktemp(name.replace("/", "_"))
        if matrix is not None:
            extra = ("--matrix", str(matrix), *extra)
        # A reply may take minutes on a busy two-core machine (a native cell timed out at
        # the default 120 s there, 2026-12-04): a timeout is evidence of nothing.
        extra = ("--timeout", "600", *extra)
        result = CliRunner(env=env).invoke(
            app, ["probe", target, "--base-url", server.url + "/v1", "--out", str(out), "--json",
                  "--cache", str(cache or out / "capabilities.yaml"), *extra],
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        outcome = json.loads(result.stdout)
        probed = read_results(out / "results.json")  # validates against results.schema.json
        _record(server.config, probed)
        return {
            "config": server.config,
            "target": target,
            "out": out,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "outcome": outcome,
            "cells": probed.cells,
            "result": probed,
        }

    return probe


def _record(config: str, probed: ProbeResult) -> None:
    # What the model actually did, in the test output whatever the result.
    reason = probed.verdict.reason if probed.verdict else probed.unusable
    lines = [
        f"\n== {config} ({probed.matrix}): {reason} "
        f"requests {probed.requests}, stage ms {probed.stage_ms}"
    ]
    for cell in probed.cells:
        if cell.stage in (Stage.NATIVE, Stage.WORDS) and cell.reply is not None:
            calls = [(c.name, c.arguments[:60]) for c in cell.reply.calls]
            text = (cell.reply.text or "").replace("\n", " ")[:90]
            lines.append(f"  {cell.id:<34} {cell.label:<16} calls={calls} text={text!r}")
    (sys.__stderr__ or sys.stderr).write("\n".join(lines) + "\n")
