"""The README opens with exactly the two commands a fresh machine needs, and they exist; it
stays a front door (everything else is in docs/), and its links lead somewhere."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"


def test_readme_opens_with_two_commands() -> None:
    text = README.read_text()
    assert text.startswith("# conchcheck\n\n```sh\n")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["scripts/probe-local", "scripts/test"]
    for command in commands:
        assert os.access(ROOT / command, os.X_OK), command


def test_ci_runs_the_readme_test_command() -> None:
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_at_most_200_lines() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_readme_links_lead_to_files() -> None:
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    local = [link.split("#")[0] for link in links if "://" not in link]
    assert [link for link in local if not (ROOT / link).exists()] == []
