"""A swallowed cell and its reasoning evidence through results.json and every report: the
reasoning is written, read back and trimmed like the text; an old file without it still reads;
``swallowed`` is a failed native cell everywhere (CI status, rates, Markdown, JUnit, HTML).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from conchcheck.core.excerpt import TEXT_LIMIT
from conchcheck.probe.evidence import bound
from conchcheck.report import ReportFormat, render
from conchcheck.report.cells import status_of
from conchcheck.report.compatibility.table import Status
from conchcheck.results import Cell, Outcome, ProbeResult, RunInfo, Stage
from conchcheck.results.reader import read_results
from conchcheck.results.status import CiStatus, judge
from conchcheck.verdict import decide
from conchcheck.wire.chat import Finding
from tests.report.conftest import build_result, cells

INFO = RunInfo("0.1.0", "2026-03-01T09:00:00Z", "2026-03-01T09:01:13Z", "conchcheck probe x")
THOUGHT = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
DETAIL = (
    "The call to get_weather was written in the reasoning channel and never emitted; read "
    "from it, it would be pass. The model wrote its call in its reasoning, and the server "
    "never emitted it: turn thinking off with --reasoning off."
)
CELL_ID = "native/weather-enum/2"


def swallowed_result() -> ProbeResult:
    """The fixed probe with its second weather-enum native cell swallowed."""
    changed = []
    for cell in cells():
        if cell.id == CELL_ID:
            assert cell.reply is not None
            cell = dataclasses.replace(
                cell,
                outcome=Outcome.SWALLOWED,
                detail=DETAIL,
                reply=dataclasses.replace(cell.reply, text="", calls=(), reasoning=THOUGHT),
                findings=(Finding("calls_in_reasoning", "get_weather in the reasoning channel"),),
                calls=(),
            )
        changed.append(cell)
    return build_result(cells=tuple(changed))


def write(result: ProbeResult, tmp_path: Path) -> Path:
    path = tmp_path / "results.json"
    path.write_text(render(result, ReportFormat.JSON, INFO), encoding="utf-8")
    return path


def the_cell(result: ProbeResult) -> Cell:
    return next(c for c in result.cells if c.id == CELL_ID)


def test_reasoning_is_written_and_reads_back(tmp_path: Path) -> None:
    result = swallowed_result()
    path = write(result, tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in data["cells"] if c["id"] == CELL_ID)
    assert (cell["outcome"], cell["reply"]["reasoning"]) == ("swallowed", THOUGHT)
    assert read_results(path) == dataclasses.replace(result, run=INFO)


def test_a_file_written_before_reasoning_still_reads(tmp_path: Path) -> None:
    path = write(build_result(), tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        if cell["reply"] is not None:
            del cell["reply"]["reasoning"]
    path.write_text(json.dumps(data), encoding="utf-8")
    read = read_results(path)
    assert all(c.reply.reasoning is None for c in read.cells if c.reply is not None)
    assert read == dataclasses.replace(build_result(), run=INFO)


def test_reasoning_is_trimmed_like_the_text() -> None:
    long = "x" * (3 * TEXT_LIMIT)
    cell = the_cell(swallowed_result())
    assert cell.reply is not None
    kept = bound(dataclasses.replace(cell, reply=dataclasses.replace(cell.reply, reasoning=long)))
    assert kept.reply is not None and kept.reply.reasoning is not None
    assert len(kept.reply.reasoning) <= TEXT_LIMIT
    assert f"[{len(long):,} characters in all; sha256 " in kept.reply.reasoning


def test_a_swallowed_cell_is_a_failed_native_cell() -> None:
    result = swallowed_result()
    assert judge(the_cell(result)) is CiStatus.FAILED
    native = decide(result.cells, family="gemini").native
    before = decide(cells(), family="gemini").native
    # One pass fewer, one more cell failed: not a refusal, not "no call".
    assert (native.total, native.passed) == (before.total, before.passed - 1)
    assert (native.no_call, native.refused_tools) == (before.no_call, before.refused_tools)


def test_every_report_shows_the_swallowed_cell_as_failed() -> None:
    result = swallowed_result()
    markdown = render(result, ReportFormat.MARKDOWN, INFO)
    assert f"| {CELL_ID} | swallowed | {DETAIL} |" in markdown
    assert "1 swallowed" in markdown
    junit = render(result, ReportFormat.JUNIT, INFO)
    case = junit[junit.index(f'name="{CELL_ID}"') :]
    assert case[: case.index("</testcase>")].count("<failure") == 1
    assert status_of(the_cell(result)) is Status.FAIL
    html = render(result, ReportFormat.HTML, INFO)
    assert f"{Status.FAIL.shape}</span> swallowed</a>" in html
    assert [c.stage for c in result.cells if c.outcome is Outcome.SWALLOWED] == [Stage.NATIVE]
