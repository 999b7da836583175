"""The compatibility table's knobs and losses: a mark for each knob and loss, in words, standing
on the knob cells; streaming parity in the streaming column; results from before the section
get no such marks (and a table of only such results has no knobs table)."""

from __future__ import annotations

import dataclasses

import pytest

from conchcheck.core.knobs import KnobsAndLosses, Streaming
from conchcheck.report.compatibility import build_table, compare, render_compatibility
from conchcheck.report.compatibility.knobs import GROUP, streaming_mark
from conchcheck.report.markup import Status
from conchcheck.results import Cell, CellMode, Outcome, ProbeResult, Stage
from tests.report.conftest import build_result

MARKS = {
    "knob:tool_choice_none": (Status.PASS, "honoured", ["knobs/tool_choice_none"]),
    "knob:tool_choice_required": (Status.FAIL, "ignored", ["knobs/tool_choice_required"]),
    "knob:tool_choice_named": (Status.NONE, "not measured", ["knobs/tool_choice_named"]),
    "knob:parallel_false": (
        Status.FAIL, "ignored", ["knobs/parallel_false", "knobs/parallel_false/baseline"]
    ),
    "knob:strict": (Status.FAIL, "fails open", ["knobs/strict", "knobs/strict/open"]),
    "ids": (Status.FAIL, "broken (unique across rounds)", ["knobs/ids/3"]),
    "finish": (Status.PASS, "agrees", []),
    "fidelity": (Status.FAIL, "altered (newlines_stripped)", ["knobs/fidelity"]),
    "reasoning": (Status.PASS, "not seen, 0 swallowed", []),
    "streaming": (Status.NONE, "not measured", []),
}  # fmt: skip


def test_a_mark_for_each_knob_and_loss() -> None:
    (row,) = build_table([build_result()]).rows
    got = {
        key: (mark.status, mark.text, [e.cell for e in mark.evidence])
        for key, mark in row.marks.items()
        if key in MARKS
    }
    assert got == MARKS
    named = row.marks["knob:tool_choice_named"]
    assert named.note == "Not measured: The endpoint takes no tools: no knob can be tried."
    assert named.evidence[0].label == "not measured (refused: tools)"
    assert row.marks["ids"].note == (
        "present: yes; unique in reply: yes; unique across rounds: no; round trip: yes; "
        "format: call_1."
    )
    assert row.marks["fidelity"].note == "Altered: code (newlines_stripped)."


def before_the_section(result: ProbeResult) -> ProbeResult:
    assert result.verdict is not None
    verdict = dataclasses.replace(result.verdict, knobs_and_losses=None)
    cells = tuple(c for c in result.cells if c.stage is not Stage.KNOBS)
    return dataclasses.replace(result, verdict=verdict, cells=cells)


def test_results_before_the_section_have_no_knobs_table() -> None:
    table = build_table([before_the_section(build_result())])
    assert [c for c in table.columns if c.group == GROUP] == []
    (row,) = table.rows
    assert not any(key.startswith("knob:") or key == "ids" for key in row.marks)
    # The streaming column reads the cells as before: the one streamed request failed.
    assert (row.marks["streaming"].status, row.marks["streaming"].text) == (Status.FAIL, "0/1")
    text = render_compatibility(table, generated="g", version="v")["compatibility.md"]
    assert "Knobs and losses" not in text


def test_beside_newer_results_an_old_row_shows_nothing_measured() -> None:
    new = build_result()
    old = before_the_section(build_result(target="openrouter:old"))
    table = build_table([new, old])
    text = render_compatibility(table, generated="g", version="v")["compatibility.md"]
    knobs = text.split("### Knobs and losses\n\n")[1].split("\n\n")[0].splitlines()
    assert knobs[2] == "| openrouter:old | openai | — | — | — | — | — | — | — | — | — |"
    # A baseline without the section compares no knob.
    assert not any(c.feature in ("strict", "call ids") for c in compare(table, table).changes)
    diff = compare(build_table([new]), build_table([before_the_section(build_result())]))
    # Only the features both have: streaming read another way (a knob's refusal is the knobs
    # table's, never the refusals column's).
    assert [c.feature for c in diff.changes] == ["streaming"]


def _streamed(outcome: Outcome) -> Cell:
    return Cell("follow_up/streaming/x", Stage.FOLLOW_UP, "x", outcome, mode=CellMode.STREAMING)


@pytest.mark.parametrize(
    ("agree", "disagree", "status", "text"),
    [
        pytest.param(0, 0, Status.NONE, "not measured", id="no-pair-is-not-measured"),
        pytest.param(4, 0, Status.PASS, "4/4 agree", id="all-agree"),
        pytest.param(3, 1, Status.PARTIAL, "3/4 agree", id="one-disagrees"),
        pytest.param(0, 2, Status.FAIL, "0/2 agree", id="none-agree"),
    ],
)
def test_streaming_parity(agree: int, disagree: int, status: Status, text: str) -> None:
    section = KnobsAndLosses(streaming=Streaming(agree, disagree))
    cells = [_streamed(Outcome.PASS), _streamed(Outcome.WRONG_ARGUMENTS)]
    mark = streaming_mark(section, cells)
    assert (mark.status, mark.text) == (status, text)
