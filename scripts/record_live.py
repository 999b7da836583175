"""Record the live llama.cpp probes into tests/data/recordings/ (dev only; needs the cache).

    python -m scripts.record_live [CONFIG ...]

Each configuration is started from the cache (scripts/local_model.py), probed through the
real CLI with ``--record`` (the default matrix; for qwen-coder also the without-need matrix
of tests/live/test_qwen_coder.py; for qwen-coder-native also the focus matrix on the
Responses and Anthropic Messages APIs, as tests/live/test_qwen_native.py probes it), then
stopped. The recordings replay offline in tests/test_recordings.py and
tests/test_native_recordings.py.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts import local_model, pinned_venv

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "tests" / "data" / "recordings"
FOCUS = str(FOLDER / "focus.yaml")
MATRICES: dict[str, dict[str, tuple[str, ...]]] = {
    "qwen-coder": {
        "default": ("--matrix", "default"),
        "without-need": ("--matrix", str(FOLDER / "without-need.yaml")),
    },
    "qwen-coder-native": {
        "default": ("--matrix", "default"),
        "responses": ("--matrix", FOCUS, "--api", "responses"),
        "anthropic": ("--matrix", FOCUS, "--api", "anthropic"),
    },
    "smollm2-own": {"default": ("--matrix", "default")},
}


def record(config: str) -> None:
    """Start ``config``, record a probe per matrix, stop it."""
    if config in PINNED:
        PINNED[config]()
        return
    server = local_model.start(config)
    target = f"llamacpp:{local_model.CONFIGS[config].target}"
    try:
        for name, args in MATRICES[config].items():
            _probe(target, server.url, args, f"{config}.{name}")
    finally:
        server.stop()


def _probe(
    target: str, url: str, args: tuple[str, ...], name: str, env: dict[str, str] | None = None
) -> None:
    """One probe through the real CLI, recorded as ``name``; no absolute path kept in it."""
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "conchcheck", "probe", target, "--base-url", url + "/v1",
             *args, "--out", out, "--quiet", "--cache", str(Path(out) / "capabilities.yaml"),
             "--record", str(FOLDER / f"{name}.json")],
            check=True, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=out,
        )  # fmt: skip
    unplace(FOLDER / f"{name}.json")


def _llama_cpp_python() -> None:
    """llama-cpp-python's own server (chatml-function-calling), as tests/live probes it."""
    server = pinned_venv.llama_cpp_python_server()
    try:
        _probe(
            "llamacpp:qwen2.5-coder-0.5b", server.url, ("--matrix", FOCUS), "llama-cpp-python.focus"
        )
    finally:
        server.stop()


def _litellm() -> None:
    """A LiteLLM proxy in front of qwen-coder-native, on its chat and Messages APIs. The master
    key is made for the run and held by the probe, so the recording keeps it masked."""
    key = "sk-" + secrets.token_urlsafe(24)
    upstream = local_model.start("qwen-coder-native")
    try:
        proxy = pinned_venv.litellm_proxy(upstream, MODEL, key)
        try:
            env = {KEY_ENV: key}
            for name, api in (("chat", ()), ("anthropic", ("--api", "anthropic"))):
                args = ("--matrix", FOCUS, "--api-key-env", KEY_ENV, *api)
                _probe(f"openai:{MODEL}", proxy.url, args, f"litellm.{name}", env)
        finally:
            proxy.stop()
    finally:
        upstream.stop()


MODEL = "qwen2.5-coder-0.5b"
KEY_ENV = "CONCHCHECK_LIVE_LITELLM_KEY"
PINNED = {"llama-cpp-python": _llama_cpp_python, "litellm": _litellm}
"""The pinned Python servers (scripts/pinned_venv.py), each recorded as tests/live probes it."""


def unplace(path: Path) -> None:
    """Replace this machine's model cache folder (llama-server names the model file by its
    path in /props and in each reply's ``model``) with ``<cache>``: no absolute paths."""
    text = path.read_text().replace(str(local_model.cache_dir()), "<cache>")
    # llama-cpp-python's 500 quotes its traceback's file, under the pinned venvs' folder.
    path.write_text(text.replace(str(pinned_venv.venv_root()), "<venvs>"))


if __name__ == "__main__":
    for name in sys.argv[1:] or [*MATRICES, *PINNED]:
        record(name)
