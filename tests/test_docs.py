"""The documentation site builds with ``mkdocs build --strict``, offline, and says only what is
true: every page the README promises is in the navigation, every public name is on the Python
API page, and every command, option and repository path the pages name exists.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

import conchcheck
from conchcheck.cli import app
from conchcheck.matrix import load_matrix

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
# Pages written for the site, and the files it includes whole. docs/research/ (notes with
# their sources) and docs/example/ (a real run's report) are kept as they were written.
WRITTEN = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "CONTRIBUTING.md",
    *sorted(DOCS.glob("*.md")),
]
# The pages the README promises (and CONTRIBUTING.md names): each must be in the navigation.
PAGES = [
    "index.md",
    "probing.md",
    "matrices.md",
    "own-tools.md",
    "ci-gating.md",
    "compatibility-report.md",
    "local-model.md",
    "reading.md",
    "providers.md",
    "reference.md",
    "python-api.md",
    "reliability.md",
    "benchmarks.md",
    "changelog.md",
    "contributing.md",
]
# The build runs in a process whose every socket connection fails, so a plugin or theme that
# fetches anything at build time (social cards, the privacy plugin, web fonts) fails the test.
OFFLINE_BUILD = """
import socket, sys

def refuse(self, address):
    raise OSError(f"the documentation build tried to reach {address!r}")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = lambda *a, **k: refuse(None, a[0] if a else None)
from mkdocs.__main__ import cli

sys.argv = ["mkdocs", *sys.argv[1:]]
cli()
"""
# Options of other programs that the pages name (llama.cpp, vLLM and SGLang flags in the leak
# fixes, the benchmarks' and pytest's own).
FOREIGN_OPTIONS = {
    "--jinja",
    "--no-jinja",
    "--chat-template-file",
    "--enable-auto-tool-choice",
    "--tool-call-parser",
    "--reasoning-parser",
    "--reasoning",
    "--parallel",
    "--alias",
    "--quick",
    "--latency",
    "--update-golden",
    "--strict",
    # An MCP server's own options, on a `mcp:stdio:` command line (own-tools.md).
    "--token",
    "--api-key",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_BUILD, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    print(f"mkdocs build --strict took {took:.1f} s")
    yield out


def test_site_builds_strict_and_offline(site: Path) -> None:
    assert (site / "index.html").is_file()
    for page in PAGES:
        assert (site / page.removesuffix(".md") / "index.html").is_file() or page == "index.md"


def _nav_pages(nav: object) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    nav = list(_nav_pages(config["nav"]))
    assert [page for page in PAGES if page not in nav] == []
    assert [page for page in nav if not (DOCS / page).is_file()] == []
    # Every Markdown file under docs/ is in the navigation or deliberately left out of it.
    left_out = [line.strip().strip("/") for line in config["not_in_nav"].splitlines()]
    for path in DOCS.rglob("*.md"):
        relative = path.relative_to(DOCS).as_posix()
        assert relative in nav or relative.split("/")[0] in left_out, relative


def test_no_plugin_fetches_anything() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    names = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert names == {"search", "mkdocstrings"}
    assert config["theme"]["font"] is False


def test_the_python_api_page_documents_every_public_name(site: Path) -> None:
    page = (site / "python-api" / "index.html").read_text(encoding="utf-8")
    public = [name for name in conchcheck.__all__ if name != "__version__"]
    assert [name for name in public if f'id="conchcheck.{name}"' not in page] == []


def test_the_changelog_and_contributing_are_included_whole(site: Path) -> None:
    for name, first in (("changelog", "Changelog"), ("contributing", "Contributing")):
        html = (site / name / "index.html").read_text(encoding="utf-8")
        assert f">{first}<" in html or f">{first}</h1>" in html, name


def _code(text: str) -> Iterator[str]:
    """Every inline code span and every line of a fenced code block."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    for block in fenced.finditer(text):
        yield from block.group(1).splitlines()
    for span in re.finditer(r"`([^`\n]+)`", fenced.sub("", text)):
        yield span.group(1)


def _options(command: Any) -> set[str]:
    """The long options of a click command, and of every command under it."""
    found = {"--help"}
    for param in command.params:
        found.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    for sub in getattr(command, "commands", {}).values():
        found |= _options(sub)
    return found


def _check_command(words: list[str], root: Any) -> list[str]:
    """What in ``conchcheck …`` names no command or option: an option is checked against the
    command named, or against every command under a group named without one."""
    wrong = []
    command = root
    for word in words[1:]:
        if word in {"#", "|", "/", ";", "&&", ">", "2>&1"}:
            break
        if word.startswith("--"):
            option = word.split("=")[0].rstrip(".,:;)")
            if option not in _options(command):
                wrong.append(f"{' '.join(words)}: {option}")
        elif word in getattr(command, "commands", {}):
            command = command.commands[word]
    return wrong


def test_every_command_and_option_named_exists() -> None:
    root = typer.main.get_command(app)
    everywhere = _options(root)
    wrong = []
    for path in WRITTEN:
        for code in _code(path.read_text(encoding="utf-8")):
            words = code.split()
            if "conchcheck" in words:
                wrong += [
                    f"{path.name}: {w}"
                    for w in _check_command(words[words.index("conchcheck") :], root)
                ]
            for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", code):
                if option not in everywhere and option not in FOREIGN_OPTIONS:
                    wrong.append(f"{path.name}: {option} in `{code}`")
    assert wrong == []


def test_every_repository_path_named_exists() -> None:
    # A path with a placeholder (tests/wire/<provider>/) or a GitHub ref (owner/repo@v1) is
    # not a path in this repository.
    pattern = re.compile(
        r"(?<![\w./-])((?:conchcheck|tests|bench|scripts|docs|matrices|\.ci)/[\w./*-]*)(?![\w./*<@-])"
    )
    missing = []
    for path in WRITTEN:
        for code in _code(path.read_text(encoding="utf-8")):
            for named in pattern.findall(code):
                named = named.rstrip(".,:;)")
                if not glob.glob(str(ROOT / named)):
                    missing.append(f"{path.name}: {named}")
    assert missing == []


def test_the_matrices_page_lists_the_default_matrix() -> None:
    text = (DOCS / "matrices.md").read_text(encoding="utf-8")
    matrix = load_matrix("default")
    ids = [case.id for case in matrix.schema_cases] + [prompt.id for prompt in matrix.prompts]
    assert [i for i in ids if f"| `{i}` |" not in text] == []
    assert f"{len(matrix.schema_cases)} schema cases" in text
    assert f"{len(matrix.prompts)} prompts" in text


def _properties(schema: object) -> Iterator[str]:
    if isinstance(schema, dict):
        for name, value in schema.items():
            if name == "properties" and isinstance(value, dict):
                yield from value
            yield from _properties(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _properties(item)


@pytest.mark.parametrize("name", ["results", "capabilities", "recording", "export"])
def test_the_reference_names_every_field(name: str) -> None:
    text = (DOCS / "reference.md").read_text(encoding="utf-8")
    schema = json.loads((ROOT / "conchcheck" / "jsonschemas" / f"{name}.schema.json").read_text())
    assert sorted({p for p in _properties(schema) if f"`{p}`" not in text}) == []
