"""SIGTERM, SIGHUP and Ctrl-C while an MCP server is silent about its tools: the real
``conchcheck probe`` stops the server, says so in one line and exits 4, with nothing sent to
the target and nothing written (there are no results yet)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.emulators.server import EmulatorServer, Fault, Handler, Response
from tests.sources.test_hostile_sources import ROOT, gone, running, stdio

Serve = Callable[[Handler], EmulatorServer]


def _listing_started(kind: str, marker: Path, server: EmulatorServer) -> bool:
    if kind == "stdio":
        # The server's own process, not conchcheck's, whose command line names it too.
        return any("-m conchcheck" not in line for line in running(marker))
    return bool(server.received)


@pytest.mark.parametrize(
    ("signal_name", "said"),
    [
        pytest.param("SIGTERM", "SIGTERM", id="sigterm"),
        pytest.param("SIGHUP", "SIGHUP", id="sighup"),
        pytest.param("SIGINT", "Ctrl-C", id="ctrl-c"),
    ],
)
@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_a_signal_while_the_tools_are_listed(
    serve: Serve, tmp_path: Path, kind: str, signal_name: str, said: str
) -> None:
    provider = serve(lambda received: Response(500))
    silent = serve(lambda received: Response(fault=Fault.HANG))
    marker = tmp_path / "child.pid"
    source = f"mcp:stdio:{stdio('silent', marker)}" if kind == "stdio" else f"mcp:{silent.url}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONCHCHECK_CACHE": str(tmp_path / "c.yaml")}
    process = subprocess.Popen(
        [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url", provider.url,
         "--out", str(tmp_path / "out"), "--quiet", "--timeout", "60", "--tools", source],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    until = time.monotonic() + 30
    while not _listing_started(kind, marker, silent) and time.monotonic() < until:
        time.sleep(0.05)
    started = time.monotonic()
    process.send_signal(getattr(signal, signal_name))
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert (process.returncode, out, err) == (
        4,
        "",
        f"conchcheck: Stopped early: interrupted ({said}) while the tools of --tools were"
        " read; the MCP servers started are stopped, nothing was sent to the target and no"
        " results are written.\n",
    )
    assert gone(tmp_path) == []
    assert provider.received == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []
