"""Peak memory and output size of a probe whose provider sends huge or hostile replies.

Each row runs `conchcheck probe` (the real CLI, in its own process) against an emulator in
another process that answers every chat request with one hostile reply, and prints the
probe's peak RSS (from the kernel, `ru_maxrss` of the finished child) and the size of all it
wrote, against the bounds of issue 10: under 200 MB of peak RSS and under 10 MB of outputs.
The baseline row is the same probe against a well-behaved emulator, measured in the same run.
The tool-source rows probe with ``--tools`` from a hostile MCP stdio server
(``tests/sources/hostile_servers.py``) and print its peak RSS and wall time; each ends in one
line and exit 2 before any request, except the endless stderr, which is read and thrown away.
The document rows do the same with hostile OpenAPI documents and tools files
(``tests/sources/documents.py``), beside a small well-formed document (the baseline).

Run: .venv/bin/python bench/hostile.py
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))

from tests.emulators.model import Answer, Asked, Call
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer
from tests.sources.documents import api, fan_out, operations, self_refs

RSS_BOUND_MB = 200
OUTPUT_BOUND_MB = 10
MB = 1 << 20


def hostile(kind: str) -> Any:
    """The behaviour of a model whose every answer is hostile in the way ``kind`` says."""

    def first_field(asked: Asked) -> tuple[str, str]:
        tool = asked.tools[0]
        fields = list((tool.get("parameters") or {}).get("properties") or {"x": {}})
        return tool["name"], fields[0]

    def behave(asked: Asked) -> Answer:
        if kind == "reply-50mb":
            return Answer(text="word " * (50 * MB // 5))
        if kind == "text-7mb":
            return Answer(text="word " * (7 * MB // 5))
        if kind == "control-1.3mb":
            return Answer(text="\x01\x02\x1b[31m\x07\x00" * (1300 * 1024 // 9))
        if kind == "openers-27k":
            return Answer(text="<tool_call>" * 27_000)  # 300 KB: MAX_CALLS read, the rest counted
        if not asked.tools:
            return Answer(text="No tools.")
        name, field = first_field(asked)
        size = 900 * 1024 if kind == "argument-900kb" else 7 * MB
        return Answer(calls=[Call(name, json.dumps({field: "A" * size}))], finish="tool_calls")

    return behave


def serve(kind: str) -> None:
    from conchcheck.matrix import load_matrix

    model = oracle(load_matrix("default")) if kind == "baseline" else hostile(kind)
    server = EmulatorServer(OpenAIEmulator(model))
    print(server.url, flush=True)
    sys.stdin.read()  # until the bench closes it
    server.close()


def probe(kind: str) -> tuple[float, float, float, int]:
    """Peak RSS (MB), outputs (MB), seconds and exit code of one probe against ``kind``."""
    emulator = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind], stdout=subprocess.PIPE,
        stdin=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert emulator.stdout is not None and emulator.stdin is not None
    url = emulator.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as folder:
        out, cache = Path(folder) / "out", Path(folder) / "cache.yaml"
        command = [
            sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url", url + "/v1",
            "--out", str(out), "--cache", str(cache), "--quiet", "--timeout", "60",
        ]  # fmt: skip
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        written = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
    emulator.stdin.close()
    emulator.wait(timeout=30)
    return usage.ru_maxrss / 1024, written / MB, seconds, os.waitstatus_to_exitcode(status)


SOURCE_KINDS = ("many-tools", "deep-line", "deep-schema", "nan", "notify-flood", "stderr-flood")
"""The hostile MCP servers measured, by their ``tests/sources/hostile_servers.py`` name."""
HOSTILE_SOURCE = Path(__file__).parent.parent / "tests" / "sources" / "hostile_servers.py"


DOCUMENTS = {
    "baseline": lambda: api(fan_out(3, 2)),
    "refs-10e8-nodes": lambda: api(fan_out(10, 8)),
    "refs-to-itself-6": lambda: api(self_refs(6)),
    "operations-100k": lambda: operations(100_000),
    "ops-100k-bodies": lambda: operations(100_000, body=True),
    "ops-20k-one-id": lambda: operations(20_000, same_id=True),
    "16mb-of-{},": lambda: "[" + "{}," * ((16 << 20) // 3 - 1) + "{}]",
}
"""Each hostile document measured (JSON text), by the name its row shows."""


def probe_document(text: str) -> tuple[float, float, int]:
    """Peak RSS (MB), seconds and exit code of a probe whose --tools is a file of ``text``."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tools.json"
        path.write_text(text)
        return probe_source(str(path))


def probe_server(kind: str) -> tuple[float, float, int]:
    """Peak RSS (MB), seconds and exit code of a probe whose --tools server is ``kind``."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HOSTILE_SOURCE))} {kind}"
    return probe_source(f"mcp:stdio:{command}")


def probe_source(source: str) -> tuple[float, float, int]:
    """Peak RSS (MB), seconds and exit code of a probe with ``--tools source``."""
    emulator = subprocess.Popen(
        [sys.executable, __file__, "--serve", "baseline"], stdout=subprocess.PIPE,
        stdin=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert emulator.stdout is not None and emulator.stdin is not None
    url = emulator.stdout.readline().strip()
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url", url + "/v1",
            "--out", str(Path(folder) / "out"), "--quiet", "--timeout", "10", "--checks",
            "dialect,mode", "--tools", source,
        ]  # fmt: skip
        env = {**os.environ, "CONCHCHECK_CACHE": str(Path(folder) / "cache.yaml")}
        started = time.perf_counter()
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    emulator.stdin.close()
    emulator.wait(timeout=30)
    return usage.ru_maxrss / 1024, seconds, os.waitstatus_to_exitcode(status)


def main() -> None:
    kinds = [
        "baseline",
        "reply-50mb",
        "argument-7mb",
        "argument-900kb",
        "text-7mb",
        "control-1.3mb",
        "openers-27k",
    ]
    print(f"{'provider sends':<16} {'exit':>4} {'seconds':>8} {'peak RSS':>9} {'bound':>6} "
          f"{'outputs':>8} {'bound':>6}")  # fmt: skip
    ok = True
    for kind in kinds:
        rss, written, seconds, code = probe(kind)
        ok &= rss < RSS_BOUND_MB and written < OUTPUT_BOUND_MB
        print(f"{kind:<16} {code:>4} {seconds:>8.1f} {rss:>6.0f} MB {RSS_BOUND_MB:>3} MB "
              f"{written:>5.2f} MB {OUTPUT_BOUND_MB:>3} MB")  # fmt: skip
    print(f"\n{'MCP server sends':<16} {'exit':>4} {'seconds':>8} {'peak RSS':>9} {'bound':>6}")
    for kind in SOURCE_KINDS:
        rss, seconds, code = probe_server(kind)
        ok &= rss < RSS_BOUND_MB
        print(f"{kind:<16} {code:>4} {seconds:>8.1f} {rss:>6.0f} MB {RSS_BOUND_MB:>3} MB")
    print(f"\n{'--tools file':<16} {'exit':>4} {'seconds':>8} {'peak RSS':>9} {'bound':>6}")
    for name, document in DOCUMENTS.items():
        rss, seconds, code = probe_document(document())
        ok &= rss < RSS_BOUND_MB
        print(f"{name:<16} {code:>4} {seconds:>8.1f} {rss:>6.0f} MB {RSS_BOUND_MB:>3} MB")
    print("all within bounds" if ok else "OUT OF BOUNDS")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        main()
