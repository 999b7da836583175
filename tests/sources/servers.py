"""Real MCP servers for the tests: the SDK 2.x one in its own virtualenv, the SDK 1.30 one in
conchcheck's; over stdio (a command line) or streamable HTTP on a free loopback port.

The SDK 2.x virtualenv is ``scripts/mcp_sdk.py``'s (``scripts/test`` makes it before pytest).
Without it a test skips saying how to make it, unless ``$CONCHCHECK_REQUIRE_MCP_SDK`` is set
(CI sets it), when it fails.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

import pytest

from scripts import mcp_sdk

HERE = Path(__file__).parent
SDK_SERVER = HERE / "sdk_server.py"
LEGACY_SERVER = HERE / "legacy_http_server.py"
START_WITHIN = 30.0
"""Seconds a server has to start listening."""


def sdk_python() -> str:
    """The SDK 2.x virtualenv's interpreter; skips (fails in CI) when it is not made."""
    if not mcp_sdk.ready():
        why = (
            f"the MCP SDK {mcp_sdk.MCP_VERSION} virtualenv is not at {mcp_sdk.cache_dir()};"
            " make it with: python scripts/mcp_sdk.py (scripts/test does)"
        )
        if os.environ.get("CONCHCHECK_REQUIRE_MCP_SDK"):
            pytest.fail(f"CONCHCHECK_REQUIRE_MCP_SDK is set but {why}", pytrace=False)
        pytest.skip(why)
    return str(mcp_sdk.python())


def sdk_stdio(mode: str = "stdio") -> str:
    """The ``mcp:stdio:`` source of the SDK 2.x server."""
    return f"mcp:stdio:{shlex.quote(sdk_python())} {shlex.quote(str(SDK_SERVER))} {mode}"


@contextmanager
def sdk_http() -> Iterator[str]:
    """The URL of the SDK 2.x server over streamable HTTP, stopped afterwards."""
    with _listening([sdk_python(), str(SDK_SERVER), "http"]) as url:
        yield url


@contextmanager
def legacy_http(mode: str) -> Iterator[str]:
    """The URL of the SDK 1.30 server (``stateful`` or ``stateless``), stopped afterwards."""
    with _listening([sys.executable, str(LEGACY_SERVER)], mode) as url:
        yield url


@contextmanager
def _listening(argv: list[str], *extra: str) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Its log goes to a file: a pipe nobody reads would fill and stop the server.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [*argv, str(port), *extra],
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
        try:
            _wait_for(port, process, log)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _wait_for(port: int, process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    deadline = time.monotonic() + START_WITHIN
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-5:]
            pytest.fail(f"the MCP server exited ({process.returncode}): {' | '.join(tail)}")
        with socket.socket() as client:
            client.settimeout(0.5)
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the MCP server did not listen on port {port} within {START_WITHIN:.0f}s")
