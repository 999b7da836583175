"""Reports against golden files, results.json against its schema and back, atomic writes."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import conchcheck.report.html
import conchcheck.report.outline
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.errors import InputError
from conchcheck.report import ReportFormat, render, write_reports
from conchcheck.results import Mode, Outcome, ProbeResult, RunInfo, Stage

GOLDEN = Path(__file__).parent.parent / "golden"


@pytest.mark.parametrize("fmt", list(ReportFormat), ids=lambda f: f.value)
def test_golden(fmt: ReportFormat, result: ProbeResult, info: RunInfo, update_golden: bool):
    text = render(result, fmt, info)
    path = GOLDEN / fmt.filename
    if update_golden:
        path.write_text(text, encoding="utf-8", newline="\n")
    assert text == path.read_text(encoding="utf-8"), "run pytest tests/report --update-golden"


@pytest.mark.parametrize("fmt", list(ReportFormat), ids=lambda f: f.value)
def test_deterministic(fmt: ReportFormat, info: RunInfo, make_result):
    assert render(make_result(), fmt, info) == render(make_result(), fmt, info)


def test_fixture_is_what_the_goldens_claim(result: ProbeResult):
    verdict = result.verdict
    assert verdict is not None
    assert (verdict.dialect.dialect, verdict.mode) == ("gemini", Mode.NATIVE)
    assert (verdict.native.passed, verdict.native.total, verdict.native.clean) == (3, 6, 2)
    assert (verdict.words.passed, verdict.words.total, verdict.words.clean) == (4, 6, 3)
    labels = {c.label for c in result.cells}
    assert {"pass", "pass_after_repair", "wrong_arguments", "refused:tools", "cut_off"} <= labels


# -- Markdown, HTML, JUnit -----------------------------------------------------------------


def test_markdown_escapes_table_cells_and_keeps_refusals_verbatim(result, info):
    text = render(result, ReportFormat.MARKDOWN, info)
    refused = next(c for c in result.cells if c.id == "dialect/permissive/ref-defs")
    assert refused.refusal is not None
    message = refused.refusal.message
    assert "| Use `parameters`" in message
    assert 'expected one of "c"\\|"f"' in text
    assert f"```text\n{message}\n```" in text
    assert text.startswith(
        "**openrouter:qwen/qwen3-8b** — dialect **gemini**, mode **native** "
        "(native 3/6, 2 clean; words 4/6, 3 clean)\n"
    )


def test_markdown_fences_outlast_backticks_in_a_message(info, make_result):
    cells = list(make_result().cells)
    index = next(i for i, c in enumerate(cells) if c.label == "refused:tools")
    message = "bad ```json\n{}\n``` here"
    refusal = Refusal(RefusalKind.TOOLS, 404, message)
    cells[index] = dataclasses.replace(cells[index], refusal=refusal)
    text = render(make_result(cells=tuple(cells)), ReportFormat.MARKDOWN, info)
    assert f"````text\n{message}\n````" in text


def test_markdown_warns_when_stopped_early(info, make_result):
    stopped = make_result(stopped="the request budget (22) is spent")
    text = render(stopped, ReportFormat.MARKDOWN, info)
    assert (
        "⚠️ Stopped early: the request budget (22) is spent. The results are partial; "
        "`--resume` continues the probe." in text.splitlines()
    )


def test_markdown_of_an_unusable_target(info, make_result):
    result = make_result(
        cells=(), catalogue=None, verdict=None, unusable="auth: Invalid API key.", stage_ms={}
    )
    text = render(result, ReportFormat.MARKDOWN, info)
    assert text.startswith("**openrouter:qwen/qwen3-8b** — unusable: auth: Invalid API key.\n")
    assert "No dialect cells ran." in text


def test_markdown_names_carriers(info, make_result):
    cells = [
        c for c in make_result().cells if not (c.stage is Stage.DIALECT and c.case != "ref-defs")
    ]
    gemini = next(i for i, c in enumerate(cells) if c.id == "dialect/gemini/ref-defs")
    refusal = Refusal(RefusalKind.SCHEMA, 400, "no $ref here", keyword="$ref")
    cells[gemini] = dataclasses.replace(cells[gemini], outcome=Outcome.REFUSED, refusal=refusal)
    cells.append(
        dataclasses.replace(cells[gemini], id="dialect/json_schema/ref-defs", dialect="json_schema",
                            outcome=Outcome.ACCEPTED, refusal=None)
    )  # fmt: skip
    text = render(make_result(cells=tuple(cells)), ReportFormat.MARKDOWN, info)
    assert "dialect **none fits**" in text
    assert "### Carriers\n\n- `ref-defs`: accepted in json_schema\n" in text


def test_html_escapes_and_has_no_script(result, info):
    text = render(result, ReportFormat.HTML, info)
    assert "<script" not in text
    assert "&lt;tool_call&gt;" in text
    assert "<tool_call>" not in text
    assert text.count('<details id="c') == len(result.cells)


def test_junit_counts_and_verdicts(result, info):
    root = ET.fromstring(render(result, ReportFormat.JUNIT, info))
    assert root.attrib["tests"] == str(len(result.cells))
    cases = {case.attrib["name"]: case for case in root.iter("testcase")}
    assert cases["dialect/permissive/not-object-root"].find("failure") is None
    # Refused in permissive, carried by the chosen gemini dialect: the chain working, not a failure.
    assert cases["dialect/permissive/ref-defs"].find("failure") is None
    assert cases["dialect/permissive/many-tools"].find("failure").attrib["message"] == (
        "refused:context_length"
    )
    assert cases["words/pick-tool/1"].find("skipped") is not None
    assert cases["follow_up/streaming/weather-enum"].find("error").attrib["type"] == "timeout"
    assert cases["native/remember/2"].find("failure") is None
    suites = [suite.attrib["name"] for suite in root.iter("testsuite")]
    assert suites == [s.value for s in Stage]


def test_junit_shows_characters_xml_cannot_hold(info, make_result):
    cells = list(make_result().cells)
    cells[0] = dataclasses.replace(cells[0], outcome=Outcome.NO_CALL, detail="bell \x07 here")
    text = render(make_result(cells=tuple(cells)), ReportFormat.JUNIT, info)
    assert ET.fromstring(text) is not None
    assert "bell \\x07 here" in text


# -- writing -------------------------------------------------------------------------------


def test_write_reports_writes_every_format(result, info, tmp_path: Path):
    out = tmp_path / "out" / "openrouter"
    paths = write_reports(result, out, list(ReportFormat), info)
    assert [p.name for p in paths] == ["results.json", "report.md", "report.html", "junit.xml"]
    for path, fmt in zip(paths, ReportFormat, strict=True):
        assert path.read_text(encoding="utf-8") == render(result, fmt, info)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)


def test_write_reports_writes_nothing_when_a_render_fails(result, info, tmp_path, monkeypatch):
    (tmp_path / "report.md").write_text("the last report\n", encoding="utf-8")

    def broken(*args: object) -> str:
        raise RuntimeError("renderer broke")

    monkeypatch.setattr(conchcheck.report.html, "render", broken)
    with pytest.raises(RuntimeError, match="renderer broke"):
        write_reports(result, tmp_path, list(ReportFormat), info)
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "the last report\n"


def test_write_reports_into_a_file_says_so(result, info, tmp_path: Path):
    blocker = tmp_path / "taken"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="taken: cannot be written"):
        write_reports(result, blocker, [ReportFormat.MARKDOWN], info)


def test_markdown_lists_at_most_so_many_misses(info, make_result, monkeypatch):
    monkeypatch.setattr(conchcheck.report.outline, "MISSED_LIMIT", 2)
    text = render(make_result(), ReportFormat.MARKDOWN, info)
    assert "| native/weather-enum/1 |" in text
    assert "| words/pick-tool/1 |" not in text
    assert "… and 3 more: report.html and results.json have all." in text


def test_each_modes_line_names_every_outcome(result: ProbeResult, info: RunInfo):
    # Every answered cell of a mode is in its line: 6 native cells, 6 words cells.
    text = render(result, ReportFormat.MARKDOWN, info)
    assert (
        "- **native**: 3/6 passed (50%): 2 clean (33%), 1 after repair; "
        "1 wrong arguments, 1 cut off, 1 refused: tools\n"
    ) in text
    assert (
        "- **words**: 4/6 passed (67%): 3 clean (50%), 1 after repair; 1 no call, 1 cut off\n"
        in text
    )


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("wrong_arguments", "wrong arguments"),
        ("refused:tools", "refused: tools"),
        ("refused:rate_limit", "refused: rate limit"),
        ("error:timeout", "error: timeout"),
        ("leaked", "leaked"),
    ],
    ids=["wrong-arguments", "refused-tools", "refused-rate-limit", "failed-request", "leaked"],
)
def test_outcomes_are_worded(label: str, shown: str):
    assert conchcheck.report.blocks.words(label) == shown
