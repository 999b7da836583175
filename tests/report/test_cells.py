"""The cells on report.html: each status a shape and a word, each cell's evidence trimmed with
its size named, and a text many cells share shown once."""

from __future__ import annotations

import dataclasses

import pytest

from conchcheck.core.places import Violation
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.report.cells import (
    EVIDENCE_LIMIT,
    Shown,
    anchors,
    cells_section,
    status_of,
    words,
)
from conchcheck.report.markup import Status
from conchcheck.results import Cell, Outcome, RequestEvidence, Stage
from tests.report.conftest import cells

SCHEMA = Refusal(RefusalKind.SCHEMA, 400, "no")
TOOLS = Refusal(RefusalKind.TOOLS, 404, "no tools")


@pytest.mark.parametrize(
    ("outcome", "refusal", "expected", "status"),
    [
        pytest.param(Outcome.ACCEPTED, None, False, Status.PASS, id="accepted"),
        pytest.param(Outcome.PASS_AFTER_REPAIR, None, False, Status.PASS, id="repaired"),
        pytest.param(Outcome.REFUSED, SCHEMA, False, Status.FAIL, id="refused"),
        pytest.param(Outcome.CUT_OFF, None, False, Status.FAIL, id="cut-off"),
        pytest.param(Outcome.LEAKED, None, False, Status.FAIL, id="leaked"),
        pytest.param(Outcome.ERROR, None, False, Status.NONE, id="failed-request-proves-nothing"),
        pytest.param(Outcome.SKIPPED, None, False, Status.NONE, id="skipped"),
        pytest.param(Outcome.REFUSED, SCHEMA, True, Status.PASS, id="invalid-refused"),
        pytest.param(Outcome.REFUSED, TOOLS, True, Status.FAIL, id="invalid-refused-for-tools"),
        pytest.param(Outcome.ACCEPTED, None, True, Status.PARTIAL, id="invalid-accepted"),
    ],
)
def test_status_of(outcome: Outcome, refusal: Refusal | None, expected: bool, status: Status):
    cell = Cell("dialect/permissive/x", Stage.DIALECT, "x", outcome, refusal=refusal)
    assert status_of(cell, expected) is status


@pytest.mark.parametrize(
    ("outcome", "refusal", "shown"),
    [
        (Outcome.PASS_AFTER_REPAIR, None, "pass after repair"),
        (
            Outcome.REFUSED,
            Refusal(RefusalKind.CONTEXT_LENGTH, 400, "long"),
            "refused: context length",
        ),
        (Outcome.ERROR, None, "error: other"),
    ],
)
def test_words(outcome: Outcome, refusal: Refusal | None, shown: str):
    assert words(Cell("c", Stage.NATIVE, "c", outcome, refusal=refusal).label) == shown


def test_shown_once_then_linked():
    shown = Shown()
    assert shown.once("<body>", "native/a/1", "c3") == "<pre>&lt;body&gt;</pre>"
    assert shown.once("<body>", "native/b/1", "c4") == (
        '<p>The same as for <a href="#c3">native/a/1</a>.</p>'
    )


def test_evidence_is_trimmed_and_says_where_the_rest_is():
    reach = cells()[0]
    assert reach.request is not None
    big = dataclasses.replace(reach.request, body={"messages": ["x" * 5000]})
    cell = dataclasses.replace(reach, request=big)
    html = "\n".join(cells_section([cell], anchors([cell]), Shown()))
    shown = html.split("<h4>Request</h4>\n<pre>")[1].split("</pre>")[0]
    more = len(shown.split("…")[0])
    assert more == EVIDENCE_LIMIT
    assert shown.endswith(" more characters in results.json]")


def test_a_request_of_many_cases_is_shown_once():
    request = RequestEvidence("POST", "https://x/v1/chat/completions", {}, {"tools": [1, 2]})
    batch = [
        Cell(
            f"dialect/gemini/{case}",
            Stage.DIALECT,
            case,
            Outcome.ACCEPTED,
            "Accepted.",
            dialect="gemini",
            request=request,
            cases=("a", "b"),
        )
        for case in ("a", "b")
    ]
    html = "\n".join(cells_section(batch, anchors(batch), Shown()))
    assert html.count('"tools": [') == 1
    assert '<p>The same as for <a href="#c0">dialect/gemini/a</a>.</p>' in html
    assert "<p>Sent in one request of 2 cases: a, b.</p>" in html
    same = '<a href="#c0">dialect/gemini/a</a>'
    assert f"<p>Sent in one request of 2 cases, the same ones as {same}.</p>" in html


def test_a_refused_case_reads_its_own_line():
    # Gemini refuses many tools in one message, a line each: the first may be another case's.
    message = (
        "Unknown name \"ref\" at 'tools[0].function_declarations[0]': Cannot find field.\n"
        "Unknown name \"oneOf\" at 'tools[0].function_declarations[1]': Cannot find field."
    )
    lines = message.splitlines()
    violations = (Violation(0, "$ref", None, lines[0]), Violation(1, "oneOf", None, lines[1]))
    refusal = Refusal(
        RefusalKind.SCHEMA, 400, message, tool_index=1, keyword="oneOf", violations=violations
    )
    cell = Cell(
        "dialect/anthropic/one-of",
        Stage.DIALECT,
        "one-of",
        Outcome.REFUSED,
        message,
        dialect="anthropic",
        refusal=refusal,
    )
    html = "\n".join(cells_section([cell], anchors([cell]), Shown()))
    summary = html.split("<summary>")[1].split("</summary>")[0]
    assert summary.endswith(f"<code>dialect/anthropic/one-of</code> — {lines[1]}")
