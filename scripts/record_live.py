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
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts import local_model

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
    server = local_model.start(config)
    target = f"llamacpp:{local_model.CONFIGS[config].target}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        for name, args in MATRICES[config].items():
            with tempfile.TemporaryDirectory() as out:
                subprocess.run(
                    [sys.executable, "-m", "conchcheck", "probe", target, "--base-url",
                     server.url + "/v1", *args, "--out", out, "--quiet",
                     "--cache", str(Path(out) / "capabilities.yaml"),
                     "--record", str(FOLDER / f"{config}.{name}.json")],
                    check=True, env=env, cwd=out,
                )  # fmt: skip
    finally:
        server.stop()
    for name in MATRICES[config]:
        unplace(FOLDER / f"{config}.{name}.json")


def unplace(path: Path) -> None:
    """Replace this machine's model cache folder (llama-server names the model file by its
    path in /props and in each reply's ``model``) with ``<cache>``: no absolute paths."""
    path.write_text(path.read_text().replace(str(local_model.cache_dir()), "<cache>"))


if __name__ == "__main__":
    for name in sys.argv[1:] or list(MATRICES):
        record(name)
