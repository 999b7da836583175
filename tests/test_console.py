"""The terminal's closing summary: the knobs-and-losses section in one line (none for results
written before it), and a table drawn on a terminal as well as in a pipe."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from conchcheck import console
from conchcheck.errors import ExitCode
from conchcheck.results import ProbeResult
from conchcheck.run import ProbeOutcome
from tests.report.conftest import build_result

LINE = (
    "knobs: none honoured · required ignored · named not measured · parallel ignored · strict "
    "fails open; ids broken (unique across rounds); finish_reason agrees; fidelity altered "
    "(newlines_stripped); reasoning not seen, 0 swallowed; streaming not measured"
)

LABELS = (
    "labels at 95%, threshold 0.5: native 0 pass · 3 intermittent · 0 fail; words 0 pass · 3 "
    "intermittent · 0 fail"
)


def outcome(result: ProbeResult) -> ProbeOutcome:
    return ProbeOutcome(result, None, None, (), ExitCode.DONE, "Probed.")


def test_one_line_for_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    console.show_outcome(outcome(build_result()))
    lines = capsys.readouterr().out.splitlines()
    assert LINE in lines
    # The fixed result repeats each prompt twice: every prompt has a label, none settled.
    assert lines[lines.index(LINE) + 1 :][:2] == [LABELS, "Probed."]


def test_no_line_for_results_before_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    result = build_result()
    assert result.verdict is not None
    verdict = dataclasses.replace(result.verdict, knobs_and_losses=None)
    console.show_outcome(outcome(dataclasses.replace(result, verdict=verdict)))
    assert "knobs:" not in capsys.readouterr().out


def test_a_table_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # It called itself once for ever on a terminal (RecursionError) instead of drawing.
    screen = io.StringIO()
    monkeypatch.setattr(console.screen, "out", Console(file=screen, force_terminal=True, width=120))
    console.show_outcome(outcome(build_result()))
    drawn = screen.getvalue()
    assert "openrouter:qwen/qwen3-8b" in drawn and "┃" in drawn
