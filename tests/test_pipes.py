"""Output through a pipe, through the real CLI in a subprocess: full width, plain, JSON.

When stdout is no terminal, tables are plain text whole (nothing cut to ``openrou…`` or
wrapped at 80 columns), no escape sequence is written, progress is not shown, and every
command's ``--json`` puts JSON on stdout and nothing else. ``NO_COLOR`` is honoured on a
terminal (a pseudo-terminal here).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from conchcheck.matrix import load_matrix

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "tests" / "data" / "recordings" / "qwen-coder.default.json"


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "NO_COLOR", "FORCE_COLOR"}}
    return base | {"PYTHONPATH": str(ROOT)} | extra


def cli(*args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conchcheck", *args], input=stdin, capture_output=True,
        text=True, env=env(), cwd=cwd, timeout=120,
    )  # fmt: skip


def test_a_grep_finds_the_whole_provider_line() -> None:
    done = cli("providers")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("openrouter "))
    assert line.split() == [
        "openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
        "permissive", "openrouter", "google/*", "models", "get", "the", "gemini", "dialect",
    ]  # fmt: skip
    assert "…" not in done.stdout and "\x1b" not in done.stdout
    assert done.stdout.splitlines()[0].split() == [
        "provider", "API", "base", "URL", "key", "from", "dialect", "catalogue", "note",
    ]  # fmt: skip


def test_a_wide_table_is_not_wrapped() -> None:
    done = cli("matrix", "show")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) > 80  # wide, and still one line a row
    for prompt in load_matrix("default").prompts:
        row = next(line for line in lines if line.startswith(prompt.id + " "))
        assert " ".join(prompt.user.split()) in " ".join(row.split())
    assert "\x1b" not in done.stdout and "─" not in done.stdout


def json_commands(tmp: Path) -> list[tuple[str, list[str], str]]:
    cache = str(tmp / "capabilities.yaml")
    return [
        ("read", ["read", "--json"], '{"a": 1,}'),
        ("dialect", ["dialect", "-", "--to", "strict", "--json"],
         '{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}'),
        ("providers", ["providers", "--json"], ""),
        ("matrix validate", ["matrix", "validate", str(ROOT / "tests/data/recordings/without-need.yaml"),
                             "--json"], ""),
        ("matrix show", ["matrix", "show", "--json"], ""),
        ("probe", ["probe", "llamacpp:qwen2.5-coder-0.5b", "--replay", str(RECORDING), "--out",
                   str(tmp / "out"), "--cache", cache, "--json"], ""),
        ("cache path", ["cache", "path", "--cache", cache, "--json"], ""),
        ("cache list", ["cache", "list", "--cache", cache, "--json"], ""),
        ("cache show", ["cache", "show", "llamacpp:qwen2.5-coder-0.5b", "--base-url",
                        "@BASE", "--cache", cache, "--json"], ""),
        ("cache clear", ["cache", "clear", "llamacpp:qwen2.5-coder-0.5b", "--cache", cache,
                         "--json"], ""),
    ]  # fmt: skip


def test_every_command_gives_json_and_nothing_else(tmp_path: Path) -> None:
    base = json.loads(RECORDING.read_text())["base_url"]
    seen = {}
    for name, args, stdin in json_commands(tmp_path):  # in order: probe fills the cache
        done = cli(*[base if a == "@BASE" else a for a in args], stdin=stdin, cwd=tmp_path)
        assert done.returncode == 0, (name, done.stderr)
        assert done.stderr == "", name  # no progress, no commentary: stderr is no terminal
        assert "\x1b" not in done.stdout, name
        seen[name] = json.loads(done.stdout)
    assert seen["read"] == {"repairs": ["trailing_comma"], "value": {"a": 1}}
    assert seen["dialect"] == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert seen["probe"]["result"]["verdict"]["mode"] == "none"
    assert seen["cache path"] == {"path": str(tmp_path / "capabilities.yaml")}
    assert [e["mode"] for e in seen["cache list"]] == ["none"]
    assert seen["cache show"]["model"] == "qwen2.5-coder-0.5b"
    assert seen["cache clear"] == {
        "target": "llamacpp:qwen2.5-coder-0.5b",
        "api": None,
        "removed": 1,
    }
    assert seen["matrix validate"]["valid"] is True and seen["matrix show"]["name"] == "default"
    assert any(p["name"] == "openrouter" for p in seen["providers"])


def on_a_terminal(*args: str, **extra: str) -> str:
    """What the CLI writes to a pseudo-terminal (stdout and stderr both)."""
    main, other = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "conchcheck", *args], stdin=subprocess.DEVNULL, stdout=other,
        stderr=other, env=env(COLUMNS="200", TERM="xterm-256color", **extra), close_fds=True,
    )  # fmt: skip
    os.close(other)
    chunks = []
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("extra", "escapes"),
    [
        pytest.param({}, True, id="colour-on-a-terminal"),
        pytest.param({"NO_COLOR": "1"}, False, id="no-color-honoured"),
    ],
)
def test_no_color_on_a_terminal(extra: dict[str, str], escapes: bool) -> None:
    shown = on_a_terminal("read", str(ROOT / "tests/data/recordings/qwen-coder.default.json"),
                          **extra)  # fmt: skip
    assert "Read as JSON" in shown
    assert ("\x1b[" in shown) is escapes
