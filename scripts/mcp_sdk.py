"""The MCP Python SDK 2.x in a virtualenv of its own, for the tests' real MCP servers.

conchcheck never imports the SDK: its tests start servers written with it (over stdio and
over streamable HTTP on loopback) and list their tools through conchcheck. The SDK lives in
``~/.cache/conchcheck/mcp-<version>`` (beside llama.cpp's build), created once from PyPI and
reused; ``scripts/test`` runs ``python -m scripts.mcp_sdk`` first (one line of output).

    python -m scripts.mcp_sdk        # create (or find) the virtualenv; prints where it is
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from scripts import local_model

MCP_VERSION = "2.3.0"
"""The SDK release the servers are written with; it speaks 2026-07-28 and the older revisions."""
STAMP = ".conchcheck-ready"
"""Written last, holding the pinned spec: a virtualenv without it is made again."""
LOG_TAIL = 20


def cache_dir() -> Path:
    """``$CONCHCHECK_MCP_SDK``, else ``~/.cache/conchcheck/mcp-<version>``."""
    base = os.environ.get("CONCHCHECK_MCP_SDK")
    if base:
        return Path(base)
    return local_model.cache_root() / f"mcp-{MCP_VERSION}"


def python() -> Path:
    """The virtualenv's interpreter (it may not exist yet)."""
    return cache_dir() / "bin" / "python"


def ready() -> bool:
    """Whether the virtualenv is complete, with the pinned SDK in it."""
    stamp = cache_dir() / STAMP
    return python().exists() and stamp.exists() and stamp.read_text().strip() == _spec()


def _spec() -> str:
    return f"mcp=={MCP_VERSION}"


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return "~/" + str(path.relative_to(Path.home()))
    return str(path)


def _fail(step: str, done: subprocess.CompletedProcess[str]) -> SystemExit:
    lines = (done.stdout + done.stderr).splitlines()
    tail = [line for line in lines if not line.startswith("WARNING: Location")][-LOG_TAIL:]
    return SystemExit(
        "\n".join(
            [
                f"mcp-sdk: {step} failed (exit {done.returncode}); its last lines:",
                *tail,
                "mcp-sdk: the MCP SDK tests will skip (and fail in CI) until this works.",
            ]
        )
    )


def create() -> str:
    """Make the virtualenv if it is not ready; the line to print."""
    where = cache_dir()
    if ready():
        return f"mcp-sdk: {_spec()} ready ({_shown(where)})"
    start = time.monotonic()
    # Whatever a broken earlier attempt left is made again from nothing.
    shutil.rmtree(where, ignore_errors=True)
    where.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    done = subprocess.run([base, "-m", "venv", str(where)], capture_output=True, text=True)
    if done.returncode != 0:
        raise _fail("creating the virtualenv (apt-get install python3-venv?)", done)
    done = subprocess.run(
        [str(python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", _spec()],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise _fail(f"pip install {_spec()}", done)
    check = "import mcp.server.mcpserver, mcp_types.version as v; assert '2026-07-28' in v.MODERN_PROTOCOL_VERSIONS"
    done = subprocess.run([str(python()), "-c", check], capture_output=True, text=True)
    if done.returncode != 0:
        raise _fail("importing the SDK", done)
    (where / STAMP).write_text(_spec() + "\n")
    seconds = round(time.monotonic() - start)
    return f"mcp-sdk: {_spec()} installed in {seconds}s ({_shown(where)})"


if __name__ == "__main__":
    print(create(), flush=True)
