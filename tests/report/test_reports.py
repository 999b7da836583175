"""Reports against golden files, results.json against its schema and back, atomic writes."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import conchcheck.report.html
import conchcheck.report.outline
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.errors import InputError
from conchcheck.report import ReportFormat, RunInfo, render, write_reports
from conchcheck.report.html import render_matrix
from conchcheck.report.json import load_results, to_data, validator
from conchcheck.results import Cell, Mode, Outcome, ProbeResult, Stage

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


# -- results.json ------------------------------------------------------------------------------


def test_json_fits_its_schema(result: ProbeResult, info: RunInfo):
    data = json.loads(render(result, ReportFormat.JSON, info))
    assert list(validator().iter_errors(data)) == []
    assert data["schema_version"] == 2
    assert data["verdict"]["native"]["rate"] == 0.5
    assert data["cells"][0]["label"] == "pass"


def test_json_of_an_unusable_target_fits_its_schema(info: RunInfo, make_result):
    result = make_result(
        cells=(), catalogue=None, verdict=None, unusable="auth: Invalid API key.", stage_ms={}
    )
    assert list(validator().iter_errors(to_data(result, info))) == []


def test_schema_names_every_stage_and_outcome():
    schema = validator().schema
    assert schema["$defs"]["stage"]["enum"] == [s.value for s in Stage]
    assert schema["$defs"]["cell"]["properties"]["outcome"]["enum"] == [o.value for o in Outcome]
    fields = {f.name for f in dataclasses.fields(Cell)}
    # Fields added after version 1 was first written are optional, so older files still load;
    # refusal_kind is derived from the refusal and written for readers' convenience.
    added, derived = {"calls"}, {"refusal_kind"}
    assert set(schema["$defs"]["cell"]["required"]) == fields - added | derived
    assert added <= set(schema["$defs"]["cell"]["properties"])


def test_load_results_round_trips_the_cells(result: ProbeResult, info: RunInfo, tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text(render(result, ReportFormat.JSON, info), encoding="utf-8")
    cells, data = load_results(path)
    assert cells == result.cells
    assert data["target"] == result.target


def test_load_results_names_the_line_and_path(result: ProbeResult, info: RunInfo, tmp_path: Path):
    text = render(result, ReportFormat.JSON, info)
    bad = text.replace('"outcome": "wrong_arguments"', '"outcome": "wrong"', 1)
    path = tmp_path / "results.json"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_results(path)
    line = bad.splitlines().index('      "outcome": "wrong",') + 1
    assert line == 914
    assert str(caught.value) == (
        f"{path}:914: $.cells[13].outcome: 'wrong' is not one of ['accepted', 'pass', "
        "'pass_after_repair', 'wrong_arguments', 'wrong_tool', 'no_call', 'leaked', 'unwanted_call', "
        "'cut_off', 'refused', 'error', 'skipped']."
    )


def test_load_results_missing_field(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "schema_version": 1,\n  "cells": []\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_results(path)
    assert str(caught.value) == f"{path}:1: $: 'run' is a required property."


def test_load_results_newer_version(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "cells": [],\n  "schema_version": 3\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_results(path)
    assert str(caught.value) == (
        f"{path}:3: $.schema_version: version 3 is not one this conchcheck reads (it reads 1 and 2)."
    )


def test_load_results_not_json(tmp_path: Path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "cells": [,]\n}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"results\.json:2: not JSON"):
        load_results(path)


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


def test_render_matrix(result, info, make_result):
    other = to_data(make_result(target="ollama:qwen3:0.6b", verdict=None,
                                 unusable="not_found: model not found"), info)  # fmt: skip
    text = render_matrix([to_data(result, info), other])
    rows = text.split("<tbody>")[1]
    assert rows.index("ollama:qwen3:0.6b") < rows.index("openrouter:qwen/qwen3-8b")
    assert "<td>3/6 (50%), 2 clean</td>" in rows
    assert "unusable: not_found: model not found" in rows
    assert "<td>$ref</td>" in rows


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
