"""The README opens with exactly the two commands a fresh machine needs, and they exist."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_readme_opens_with_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert text.startswith("# conchcheck\n\n```sh\n")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["scripts/probe-local", "scripts/test"]
    for command in commands:
        assert os.access(ROOT / command, os.X_OK), command


def test_ci_runs_the_readme_test_command() -> None:
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()
