"""Servers that ship as Python packages, each pinned exactly in its own virtualenv.

llama-cpp-python's server and the LiteLLM proxy are what many people put in front of a
model; neither is a dependency of conchcheck. Each is installed once into a virtualenv in
the user cache (``$CONCHCHECK_VENV_CACHE``, else ``~/.cache/conchcheck/venvs``) and reused;
llama-cpp-python's wheel is compiled once from the sdist local_model.py already downloaded
and kept, so a new virtualenv does not compile again.

    python -m scripts.pinned_venv build             # build (or find) both; one line a step
    python -m scripts.pinned_venv build litellm-1.108.7   # just that one

The servers are started by ``llama_cpp_python_server`` and ``litellm_proxy`` on a free
loopback port, like llama-server (scripts/process.py), and never reach past loopback.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scripts import local_model
from scripts.process import Server, free_port, spawn

NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
"""The flags local_model.py builds llama-server with, for the same reason (SIGILL on AMX)."""


@dataclass(frozen=True)
class Pinned:
    """One package at an exact version in its own virtualenv."""

    name: str
    requirement: str
    check: str
    """Python that must run in the virtualenv once it is installed."""
    wheel_env: tuple[tuple[str, str], ...] = ()
    """When set, the package's wheel is built from local_model's sdist with this environment."""


LLAMA_CPP_PYTHON = Pinned(
    f"llama-cpp-python-{local_model.LLAMA_CPP_PYTHON}",
    f"llama-cpp-python[server]=={local_model.LLAMA_CPP_PYTHON}",
    "import llama_cpp.server.app",
    (
        # Only the libraries the server loads: no llava/mtmd (imported only for vision
        # handlers, llama_chat_format.py), Release, both cores.
        ("CMAKE_ARGS", "-DLLAVA_BUILD=OFF -DCMAKE_BUILD_TYPE=Release"),
        ("CFLAGS", NO_AMX if platform.machine().lower() in ("x86_64", "amd64") else ""),
        (
            "CXXFLAGS",
            NO_AMX if platform.machine().lower() in ("x86_64", "amd64") else "",
        ),
        ("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2)),
    ),
)
LITELLM = Pinned("litellm-1.108.7", "litellm[proxy]==1.108.7", "import litellm.proxy.proxy_server")
PINNED = (LLAMA_CPP_PYTHON, LITELLM)


def venv_root() -> Path:
    """``$CONCHCHECK_VENV_CACHE``, else ``~/.cache/conchcheck/venvs``."""
    base = os.environ.get("CONCHCHECK_VENV_CACHE")
    if base:
        return Path(base)
    return local_model.cache_root() / "venvs"


def say(text: str) -> None:
    print(f"local-model: {text}", file=sys.stderr, flush=True)


def _step(what: str, command: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    """Run one step with its output in ``log``; on failure stop with one line naming the log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        sink.write(f"\n$ {' '.join(command)}\n".encode())
        sink.flush()
        done = subprocess.run(
            command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
    if done.returncode != 0:
        lines = log.read_text(errors="replace").strip().splitlines() or [""]
        raise SystemExit(
            f"local-model: {what} failed (exit {done.returncode}): {lines[-1].strip()[:200]} "
            f"— the whole log: {log}"
        )


def _wheel(pinned: Pinned, log: Path) -> Path:
    """The package's wheel, compiled once from the sdist in local_model's cache."""
    wheels = venv_root() / "wheels"
    stamp = wheels / f"{pinned.name}.env"
    wanted = "".join(f"{k}={v}\n" for k, v in pinned.wheel_env)
    prefix = pinned.name.replace("-", "_", 1).replace("-", "_").rsplit("_", 1)[0]
    found = sorted(wheels.glob(f"{prefix}-{local_model.LLAMA_CPP_PYTHON}-*.whl"))
    if found and stamp.exists() and stamp.read_text() == wanted:
        return found[-1]
    sdist = local_model.sdist()
    start = time.monotonic()
    say(f"{pinned.name}: compiling its wheel from {sdist.name}, minutes (log: {log})…")
    staged = wheels.with_name("wheels.tmp")
    shutil.rmtree(staged, ignore_errors=True)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check"]
    _step(
        f"{pinned.name}: compiling its wheel",
        [*command, "-w", str(staged), str(sdist)],
        log,
        dict(pinned.wheel_env),
    )
    (built,) = staged.glob("*.whl")
    wheels.mkdir(parents=True, exist_ok=True)
    for old in found:
        old.unlink()
    os.replace(built, wheels / built.name)
    stamp.write_text(wanted)
    shutil.rmtree(staged, ignore_errors=True)
    say(f"{pinned.name}: wheel built in {local_model._took(start)}")
    return wheels / built.name


def _wanted(pinned: Pinned, wheel: Path | None) -> str:
    return f"{pinned.requirement}\n{wheel.name if wheel else ''}\n{sys.version_info[:2]}\n"


def ready(pinned: Pinned) -> bool:
    """Whether ``pinned``'s virtualenv is built (nothing is built or fetched to tell)."""
    stamp = venv_root() / pinned.name / ".conchcheck-installed"
    return stamp.exists() and stamp.read_text().startswith(pinned.requirement + "\n")


def python(pinned: Pinned) -> Path:
    """The virtualenv's python, the virtualenv built first when missing or out of date."""
    root = venv_root()
    venv = root / pinned.name
    stamp = venv / ".conchcheck-installed"
    log = root / "logs" / f"{pinned.name}-{time.strftime('%Y%m%d-%H%M%S')}.log"
    wheel = _wheel(pinned, log) if pinned.wheel_env else None
    wanted = _wanted(pinned, wheel)
    if stamp.exists() and stamp.read_text() == wanted:
        return venv / "bin" / "python"
    start = time.monotonic()
    say(f"{pinned.name}: installing {pinned.requirement} into its own virtualenv (log: {log})…")
    # Made where it stays (a virtualenv names its own folder in its scripts); the stamp,
    # written last, says it is whole, so a build that was killed is made again.
    shutil.rmtree(venv, ignore_errors=True)
    _step(f"{pinned.name}: creating its virtualenv", [sys.executable, "-m", "venv", str(venv)], log)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    if wheel is not None:
        # The compiled wheel, never the sdist again: only a binary is taken for this package.
        package = pinned.requirement.split("[")[0]
        install += ["--find-links", str(wheel.parent), "--only-binary", package]
    _step(f"{pinned.name}: installing {pinned.requirement}", [*install, pinned.requirement], log)
    _step(f"{pinned.name}: checking it", [str(venv / "bin" / "python"), "-c", pinned.check], log)
    stamp.write_text(wanted)
    say(f"{pinned.name}: installed in {local_model._took(start)}")
    return venv / "bin" / "python"


def llama_cpp_python_server(model: str = "qwen2.5-coder", *, context: int = 4096) -> Server:
    """llama-cpp-python's server with ``chatml-function-calling`` and ``model`` from the cache.

    Its model alias is the llama-server configuration's target name, so one target name
    means one model everywhere.
    """
    port = free_port()
    command = [
        str(python(LLAMA_CPP_PYTHON)), "-m", "llama_cpp.server",
        "--model", str(local_model.model_file(model)),
        "--model_alias", local_model.CONFIGS["qwen-coder"].target,
        "--chat_format", "chatml-function-calling",
        "--n_ctx", str(context),
        "--n_threads", str(os.cpu_count() or 2),
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    log = venv_root() / "logs" / f"llama-cpp-python-{port}.log"
    return spawn(
        "llama-cpp-python's server", "llama-cpp-python", command,
        port=port, health="/v1/models", log=log,
    )  # fmt: skip


LITELLM_CONFIG = """\
model_list:
  - model_name: {model}
    litellm_params:
      model: openai/{model}
      api_base: {upstream}/v1
      api_key: none
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
"""


def litellm_proxy(upstream: Server, model: str, master_key: str) -> Server:
    """A LiteLLM proxy in front of ``upstream`` (an OpenAI-compatible server), serving
    ``model``; it starts only with a master key, which every request must then carry."""
    port = free_port()
    config = venv_root() / "logs" / f"litellm-{port}.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(LITELLM_CONFIG.format(model=model, upstream=upstream.url))
    litellm = python(LITELLM).parent / "litellm"
    command = [str(litellm), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    env = {
        "LITELLM_MASTER_KEY": master_key,
        # Loopback only: the model cost map from the package, not fetched from GitHub.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
    }
    log = venv_root() / "logs" / f"litellm-{port}.log"
    return spawn(
        "the LiteLLM proxy", "litellm", command,
        port=port, health="/health/liveliness", log=log, env=env,
    )  # fmt: skip


def main(argv: list[str]) -> int:
    names = {pinned.name: pinned for pinned in PINNED}
    if argv[:1] != ["build"] or any(name not in names for name in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    for pinned in [names[name] for name in argv[1:]] or PINNED:
        say(f"{pinned.name}: ready ({local_model._shown(python(pinned).parent.parent)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
