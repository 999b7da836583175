"""The knobs-and-losses section in every report: the Markdown block, the HTML marks linking to
each knob's cell, JUnit's test case per knob cell, the terminal's line; "not measured" never
reads as fine; results written before the section render without it."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest

from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.knobs import (
    Agreement,
    Fidelity,
    Ids,
    Knob,
    Knobs,
    KnobsAndLosses,
    KnobState,
    Reasoning,
    Streaming,
)
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.report import ReportFormat, render
from conchcheck.report.cells import status_of, word
from conchcheck.report.knobs import ids_status, ids_summary, state_status, summary_line
from conchcheck.report.markup import Status
from conchcheck.results import (
    Cell,
    FidelityFacts,
    IdFacts,
    KnobFacts,
    Outcome,
    ProbeResult,
    RunInfo,
    Stage,
)
from conchcheck.results.status import CiStatus, judge
from conchcheck.wire.exchange import WireErrorKind

BLOCK = """\
## Knobs and losses

| knob | state | cell | why |
|---|---|---|---|
| tool_choice_none | ✅ honoured | knobs/tool_choice_none | tool_choice: none: no call came back to a prompt that asks for one. |
| tool_choice_required | ❌ ignored | knobs/tool_choice_required | tool_choice: required, but no call came back: it was ignored. |
| tool_choice_named | — not measured (refused: tools) | knobs/tool_choice_named | The endpoint takes no tools: no knob can be tried. |
| parallel_false | ❌ ignored | knobs/parallel_false | parallel_tool_calls: false, but 2 calls came back: it was ignored. |
| strict | ❌ fails open | knobs/strict | strict: true was taken, and a call breaks the schema: set_alarm: minutes: 'ten' is not of type 'integer'. |

- **ids**: broken (unique across rounds) — present yes · unique in reply yes · unique across rounds no · round trip yes · format `call_1`
- **finish_reason**: agrees
- **fidelity**: altered (newlines_stripped)
- **reasoning**: not seen, 0 swallowed
- **streaming**: not measured

### What an app must know

- tool_choice_required is ignored: an app can't rely on it.
- parallel_false is ignored: an app can't rely on it.
- strict fails open (a call broke the schema it was told to enforce): an app can't rely on it.
- A call id came back again in a later round: a multi-round chat mixes up results.
- Exact arguments came back altered: code (newlines_stripped).

## Dialect
"""


def test_markdown_block_after_the_verdict(result: ProbeResult, info: RunInfo) -> None:
    text = render(result, ReportFormat.MARKDOWN, info)
    start = text.index("## Knobs and losses")
    assert text[start : text.index("## Dialect") + len("## Dialect\n")] == BLOCK
    assert text.index("Command: ") < start


def old(result: ProbeResult) -> ProbeResult:
    """``result`` as a results file written before the section reads."""
    assert result.verdict is not None
    verdict = dataclasses.replace(result.verdict, knobs_and_losses=None)
    cells = tuple(c for c in result.cells if c.stage is not Stage.KNOBS)
    spent = {k: v for k, v in result.stage_ms.items() if k != Stage.KNOBS.value}
    return dataclasses.replace(result, verdict=verdict, cells=cells, stage_ms=spent)


@pytest.mark.parametrize("fmt", list(ReportFormat), ids=lambda f: f.value)
def test_results_before_the_section_render_without_it(
    fmt: ReportFormat, result: ProbeResult, info: RunInfo
) -> None:
    text = render(old(result), fmt, info)
    assert "Knobs and losses" not in text
    assert "knobs" not in text.replace("knobs_and_losses", "")


def test_html_marks_link_to_each_knobs_cell(result: ProbeResult, info: RunInfo) -> None:
    text = render(result, ReportFormat.HTML, info)
    block = text.split("<h2>Knobs and losses</h2>")[1].split("</table>")[0]
    anchors = {c.id: f"c{i}" for i, c in enumerate(result.cells)}
    marks = re.findall(
        r'<td class="s-(\w+)"><a class="mark" href="#(c\d+)"><span class="shape">(.)</span> '
        r"([^<]+)</a></td><td>([^<]+)</td>",
        block,
    )
    assert marks == [
        ("pass", anchors["knobs/tool_choice_none"], "■", "honoured", "knobs/tool_choice_none"),
        ("fail", anchors["knobs/tool_choice_required"], "×", "ignored", "knobs/tool_choice_required"),
        ("none", anchors["knobs/tool_choice_named"], "○", "not measured (refused: tools)",
         "knobs/tool_choice_named"),
        ("fail", anchors["knobs/parallel_false"], "×", "ignored", "knobs/parallel_false"),
        ("fail", anchors["knobs/strict"], "×", "fails open", "knobs/strict"),
    ]  # fmt: skip
    # Each knob cell's evidence folds under the knobs stage of the Cells section.
    cells = text.split("<h3>knobs</h3>")[1]
    for cell in result.cells:
        if cell.stage is Stage.KNOBS:
            assert f'<details id="{anchors[cell.id]}">' in cells
    assert "<h4>Request</h4>" in cells.split(f'id="{anchors["knobs/strict"]}"')[1]


def test_nothing_measured_is_never_a_pass(make_result, info: RunInfo) -> None:
    result = make_result()
    cells = tuple(c for c in result.cells if c.stage is not Stage.KNOBS)
    verdict = dataclasses.replace(result.verdict, knobs_and_losses=KnobsAndLosses())
    bare = dataclasses.replace(result, cells=cells, verdict=verdict)
    text = render(bare, ReportFormat.MARKDOWN, info)
    block = text[text.index("## Knobs") : text.index("## Dialect")]
    assert "✅" not in block and " yes" not in block
    assert block.count("| — not measured | — | No knob cell ran. |") == 5
    assert "No knob cell ran: every knob is not measured." in block
    page = render(bare, ReportFormat.HTML, info)
    html_block = page.split("<h2>Knobs and losses</h2>")[1].split("<h2>")[0]
    assert "s-pass" not in html_block and "■" not in html_block


STATES = [
    pytest.param(KnobState.HONOURED, Outcome.PASS, None, Status.PASS, "honoured", CiStatus.PASSED,
                 id="honoured-passes"),
    pytest.param(KnobState.IGNORED, Outcome.NOT_HONOURED, None, Status.FAIL, "ignored",
                 CiStatus.FAILED, id="ignored-fails"),
    pytest.param(KnobState.FAILS_OPEN, Outcome.NOT_HONOURED, None, Status.FAIL, "fails open",
                 CiStatus.FAILED, id="strict-failing-open-fails"),
    pytest.param(KnobState.REFUSED, Outcome.REFUSED, RefusalKind.OTHER, Status.PARTIAL,
                 "refused: other", CiStatus.FAILED, id="refused-is-loud-and-fails-in-ci"),
    pytest.param(KnobState.NOT_OFFERED, Outcome.SKIPPED, None, Status.NONE, "not offered",
                 CiStatus.SKIPPED, id="not-offered-is-skipped"),
    pytest.param(KnobState.UNTESTED, Outcome.SKIPPED, None, Status.NONE, "not measured",
                 CiStatus.SKIPPED, id="untested-is-skipped"),
    pytest.param(KnobState.UNTESTED, Outcome.REFUSED, RefusalKind.RATE_LIMIT, Status.NONE,
                 "not measured (refused: rate limit)", CiStatus.SKIPPED,
                 id="a-rate-limit-says-nothing-of-the-knob"),
    pytest.param(KnobState.UNTESTED, Outcome.ERROR, None, Status.NONE,
                 "not measured (error: timeout)", CiStatus.ERROR, id="a-failed-request-is-an-error"),
]  # fmt: skip


@pytest.mark.parametrize(("state", "outcome", "kind", "status", "shown", "ci"), STATES)
def test_a_knob_cell_reads_as_its_state(
    state: KnobState,
    outcome: Outcome,
    kind: RefusalKind | None,
    status: Status,
    shown: str,
    ci: CiStatus,
) -> None:
    refusal = Refusal(kind, 400, "no") if kind is not None else None
    error = WireErrorKind.TIMEOUT if outcome is Outcome.ERROR else None
    cell = Cell(
        "knobs/strict", Stage.KNOBS, "strict-closed", outcome, "why", refusal=refusal,
        error_kind=error, facts=KnobFacts(Knob.STRICT, state),
    )  # fmt: skip
    assert (status_of(cell), word(cell), judge(cell)) == (status, shown, ci)
    assert state_status(state) is (Status.NONE if state is KnobState.UNTESTED else status)


OTHERS = [
    pytest.param("knobs/parallel_false/baseline", Outcome.PASS, None, CiStatus.PASSED,
                 id="baseline-with-two-calls-passes"),
    pytest.param("knobs/parallel_false/baseline", Outcome.NO_CALL, None, CiStatus.SKIPPED,
                 id="baseline-without-a-call-is-evidence-only"),
    pytest.param("knobs/strict/open", Outcome.REFUSED, None, CiStatus.SKIPPED,
                 id="open-schema-refused-is-what-strict-should-do"),
    pytest.param("knobs/fidelity", Outcome.NOT_HONOURED,
                 FidelityFacts(()), CiStatus.FAILED, id="fidelity-altered-fails"),
    pytest.param("knobs/fidelity", Outcome.PASS, FidelityFacts(()), CiStatus.PASSED,
                 id="fidelity-exact-passes"),
    pytest.param("knobs/fidelity", Outcome.WRONG_TOOL, None, CiStatus.SKIPPED,
                 id="fidelity-without-its-call-is-not-measured"),
    pytest.param("knobs/ids/2", Outcome.REFUSED, IdFacts((("call_1",),), False),
                 CiStatus.FAILED, id="ids-sent-back-refused-fails"),
    pytest.param("knobs/ids/1", Outcome.REFUSED, IdFacts((), None), CiStatus.SKIPPED,
                 id="ids-first-round-refused-measures-nothing"),
    pytest.param("knobs/ids/3", Outcome.ERROR, None, CiStatus.ERROR,
                 id="ids-round-failed-is-an-error"),
]  # fmt: skip


@pytest.mark.parametrize(("cell_id", "outcome", "facts", "ci"), OTHERS)
def test_the_stages_other_cells_in_ci(
    cell_id: str, outcome: Outcome, facts: FidelityFacts | IdFacts | None, ci: CiStatus
) -> None:
    cell = Cell(cell_id, Stage.KNOBS, "case", outcome, "why", facts=facts)
    assert judge(cell) is ci


def test_junit_a_test_case_per_knob_cell(result: ProbeResult, info: RunInfo) -> None:
    root = ET.fromstring(render(result, ReportFormat.JUNIT, info))
    suite = next(s for s in root.iter("testsuite") if s.attrib["name"] == "knobs")
    got = {}
    for case in suite.iter("testcase"):
        verdict = next((c for c in case if c.tag != "system-out"), None)
        got[case.attrib["name"]] = (
            (verdict.tag, verdict.attrib["message"]) if verdict is not None else ("passed", "")
        )
    assert got == {
        "knobs/tool_choice_none": ("passed", ""),
        "knobs/tool_choice_required": ("failure", "not_honoured (ignored)"),
        "knobs/tool_choice_named": (
            "skipped", "The endpoint takes no tools: no knob can be tried."
        ),
        "knobs/parallel_false/baseline": ("passed", ""),
        "knobs/parallel_false": ("failure", "not_honoured (ignored)"),
        "knobs/strict": ("failure", "not_honoured (fails_open)"),
        "knobs/strict/open": ("passed", ""),
        "knobs/ids/1": ("passed", ""),
        "knobs/ids/2": ("passed", ""),
        "knobs/ids/3": ("passed", ""),
        "knobs/fidelity": ("failure", "not_honoured"),
    }  # fmt: skip
    assert (suite.attrib["failures"], suite.attrib["skipped"]) == ("4", "1")
    out = suite.find("testcase[@name='knobs/strict']/system-out")
    assert out is not None and out.text is not None
    assert (
        "knob: strict\nstate: fails_open\ncalls: 1\n"
        "breaks the schema: set_alarm: minutes: 'ten' is not of type 'integer'.\n"
    ) in out.text


IDS = [
    pytest.param(Ids(), "not measured", Status.NONE, id="nothing-measured"),
    pytest.param(Ids(True, True, True, True), "ok", Status.PASS, id="all-true"),
    pytest.param(Ids(True, None, True, None), "ok, not measured: unique in reply, round trip",
                 Status.PARTIAL, id="true-where-measured-is-not-a-pass"),
    pytest.param(Ids(True, True, False, None), "broken (unique across rounds)", Status.FAIL,
                 id="ids-restart-each-round"),
    pytest.param(Ids(False, False, None, False), "broken (present, unique in reply, round trip)",
                 Status.FAIL, id="every-broken-fact-named"),
]  # fmt: skip


@pytest.mark.parametrize(("ids", "shown", "status"), IDS)
def test_ids_in_a_few_words(ids: Ids, shown: str, status: Status) -> None:
    assert (ids_summary(ids), ids_status(ids)) == (shown, status)


LINES = [
    pytest.param(
        KnobsAndLosses(),
        "knobs: none not measured · required not measured · named not measured · parallel not "
        "measured · strict not measured; ids not measured; finish_reason not measured; fidelity "
        "not measured; reasoning not seen, 0 swallowed; streaming not measured",
        id="nothing-measured",
    ),
    pytest.param(
        KnobsAndLosses(
            Knobs(KnobState.HONOURED, KnobState.IGNORED, KnobState.REFUSED,
                  KnobState.NOT_OFFERED, KnobState.FAILS_OPEN),
            Ids(True, True, True, True, "call_<24 alphanumerics>"),
            Agreement.WRONG,
            Fidelity.ALTERED,
            (FidelityChange.NEWLINES_STRIPPED, FidelityChange.NUMBER_ROUNDED),
            Reasoning(True, 2),
            Streaming(4, 1),
        ),
        "knobs: none honoured · required ignored · named refused · parallel not offered · "
        "strict fails open; ids ok; finish_reason wrong; fidelity altered (newlines_stripped, "
        "number_rounded); reasoning seen, 2 swallowed; streaming 4 agree, 1 disagrees",
        id="each-state-and-loss",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("section", "line"), LINES)
def test_the_terminals_line(section: KnobsAndLosses, line: str) -> None:
    assert summary_line(section) == line
