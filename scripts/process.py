"""A server process of the live tests: started on a free loopback port, waited for, stopped.

A server gets SIGTERM when the process that started it dies (Linux), so no test failure or
kill leaves one behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    """A running server: its configuration's name, base URL (no ``/v1``), process and log."""

    config: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def spawn(
    what: str,
    config: str,
    command: list[str],
    *,
    port: int,
    health: str,
    log: Path,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> Server:
    """Start ``command`` (listening on ``port``), wait until GET ``health`` answers 200.

    ``what`` names the server in the one-line error when it exits or never becomes healthy.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            env={**os.environ, **(env or {})},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
    server = Server(config, f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"local-model: {what} exited ({process.returncode}); see {log}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{server.url}{health}", timeout=2) as reply,
        ):
            if reply.status == 200:
                return server
        time.sleep(0.25)
    server.stop()
    raise SystemExit(f"local-model: {what} did not become healthy in {timeout:.0f}s; see {log}")
