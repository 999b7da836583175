"""Nothing in a reply can break out of a report: each writer fuzzed with hostile text.

Reply texts, call arguments, refusal messages, details, findings and the model's name are
filled with arbitrary text and known payloads (controls, terminal escapes, pipes, closing
tags, CDATA ends, surrogates, bidi overrides). Whatever they hold: the Markdown keeps its
sections and every table row its column count, the HTML has only the writer's own elements
and attributes, junit.xml parses, results.json loads and fits its schema, and no writer lets
a control character through. ``FUZZ_EXAMPLES`` sets the cases a writer (default 500).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.escaping import encodable, json_text, one_line, visible
from conchcheck.report import ReportFormat, render
from conchcheck.results import Cell, ProbeResult, RunInfo
from conchcheck.results.reader import validator
from conchcheck.run import ExitCode, ProbeOutcome
from conchcheck.wire.chat import ToolCall
from tests.report.conftest import build_result

PAYLOADS = [
    "\x00", "\x07", "\x08", "\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\x1b]8;;http://x\x1b\\", "\x9b31m",
    "\x85", "\r", "\r\n", "\n", "\n\n## Forged heading\n", "\t", "|", "\\|", "\\", "`", "```",
    "~~~", "</td></tr><tr><td>", "</script><script>alert(1)</script>", "<img src=x onerror=a()>",
    '"><svg onload=a()>', "<a href='javascript:alert(1)'>x</a>", "[x](javascript:alert(1))",
    "![i](http://x/i.png)", "]]>", "<![CDATA[", "<!--", "-->", "&amp;", "&#0;", "&lt;", "\ud800",
    "\udfff", "\ufffe", "\uffff", "\u202e", "\u2066", "\u200b", "\u2028", "\u2029", "\ufeff",
    "# ", "- ", "+ ", "1. ", "> ", "---", "===", "    code", "*", "_", "**b**", "<details>",
    "</pre>", "</code>", "</main></body></html>", "<style>", "{{", "}}", "%s", "\u0000",
]  # fmt: skip
ANY_CHAR = st.characters(exclude_categories=())
HOSTILE = st.lists(
    st.one_of(st.sampled_from(PAYLOADS), st.text(ANY_CHAR, max_size=6)), min_size=1, max_size=6
).map("".join)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "500"))
INFO = RunInfo("0.1.0", "2026-03-01T09:00:00Z", "2026-03-01T09:01:13Z", "conchcheck probe x")

# No writer may let these through as they are: C0 (but tab, line feed), DEL, C1, bidi and
# other invisible format controls, separators, noncharacters, surrogates.
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]"
)


def hostile_result(texts: list[str]) -> ProbeResult:
    """The fixed result of the golden reports with provider text replaced by ``texts``."""

    def text(i: int) -> str:
        return texts[i % len(texts)]

    cells: list[Cell] = []
    for i, cell in enumerate(build_result().cells):
        changes: dict[str, object] = {"detail": text(i)}
        if cell.refusal is not None:
            changes["refusal"] = dataclasses.replace(
                cell.refusal, message=text(i + 1), path=text(i + 2), keyword=text(i + 3),
                failed_generation=text(i + 4),
            )  # fmt: skip
        if cell.reply is not None:
            calls = tuple(ToolCall(c.id, text(i + 5), text(i + 6)) for c in cell.reply.calls)
            changes["reply"] = dataclasses.replace(cell.reply, text=text(i + 7), calls=calls)
        if cell.findings:
            changes["findings"] = tuple(
                dataclasses.replace(f, detail=text(i)) for f in cell.findings
            )
        cells.append(dataclasses.replace(cell, **changes))
    model = "m" + text(len(cells))
    return build_result(cells=tuple(cells), model=model, target=f"openrouter:{model}")


# -- Markdown -----------------------------------------------------------------------------------

SECTIONS = [
    "Knobs and losses",
    "Dialect",
    "Prompts",
    "Refusals",
    "Repairs seen",
    "Findings",
    "Follow-ups",
    "What the tools cost",
    "Cost",
]
SUBSECTIONS = {
    "What an app must know",
    "Refused",
    "Limits",
    "Carriers",
    "Why the rest did not pass",
}


def outside_fences(markdown: str) -> list[str]:
    """The lines of ``markdown`` that are not inside a fenced block (its fences included)."""
    lines, fence = [], None
    for line in markdown.split("\n"):
        run = re.match(r"`{3,}", line)
        if fence is None and run:
            fence = run.group(0)
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            lines.append(line)
    assert fence is None, "a fence was left open"
    return lines


def cells_of(row: str) -> int:
    """Cells in a GFM table row: pipes split it, but not a backslash-escaped one."""
    count, escaped = 0, False
    for char in row.strip()[1:-1]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            count += 1
    return count + 1


def check_markdown(text: str, result: ProbeResult, texts: list[str]) -> None:
    lines = outside_fences(text)
    assert [line[3:] for line in lines if line.startswith("## ")] == SECTIONS
    others = {line for line in lines if line.startswith("#") and not line.startswith("## ")}
    assert others <= {f"### {name}" for name in SUBSECTIONS}
    for index, line in enumerate(lines):
        if re.fullmatch(r"\|(---\|)+", line):
            columns = line.count("---")
            table = [lines[index - 1]]
            for row in lines[index + 1 :]:
                if not row.startswith("|"):
                    break
                table.append(row)
            assert [cells_of(row) for row in table] == [columns] * len(table)
    assert HIDDEN.search(text) is None


# -- HTML -------------------------------------------------------------------------------------

ELEMENTS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "h4", "p", "ul",
    "li", "table", "thead", "tbody", "tr", "th", "td", "code", "strong", "pre", "details",
    "summary", "a", "span", "br",
}  # fmt: skip
ATTRIBUTES = {
    ("lang", "en"), ("charset", "utf-8"), ("name", "viewport"),
    ("content", "width=device-width, initial-scale=1"), ("class", "warn"), ("class", "stop"),
    ("class", "legend"), ("class", "facts"), ("class", "mark"), ("class", "shape"),
    ("class", "refusals"), ("class", "s-pass"), ("class", "s-partial"), ("class", "s-fail"),
    ("class", "s-none"), ("class", "mark s-pass"), ("class", "mark s-partial"),
    ("class", "mark s-fail"), ("class", "mark s-none"),
}  # fmt: skip
# The writer's own anchors: a cell's evidence (c0, c1, …) and a refused case's row (r0, …).
ANCHORS = {"id": re.compile(r"[cr]\d+"), "href": re.compile(r"#[cr]\d+")}


class Elements(HTMLParser):
    """Every element opened, with its attributes; comments and declarations noted."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: set[tuple[str, str | None]] = set()
        self.anchored: list[str] = []
        """Tags with an ``id``."""
        self.other: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ANCHORS and ANCHORS[name].fullmatch(value or ""):
                self.anchored += [tag] if name == "id" else []
            else:
                self.attributes.add((name, value))

    def handle_comment(self, data: str) -> None:
        self.other.append(f"comment {data!r}")

    def handle_pi(self, data: str) -> None:
        self.other.append(f"pi {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.other.append(f"declaration {data!r}")


def elements(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


def neutral(texts: list[str]) -> list[str]:
    """Harmless words in place of ``texts``: as many different ones, empty where they are."""
    words = {text: f"n{index}" if text else "" for index, text in enumerate(dict.fromkeys(texts))}
    return [words[text] for text in texts]


def check_html(text: str, result: ProbeResult, texts: list[str]) -> None:
    found = elements(text)
    # The same elements, in the same order, as with harmless text: none came from a payload.
    harmless = render(hostile_result(neutral(texts)), ReportFormat.HTML, INFO)
    assert found.tags == elements(harmless).tags
    assert set(found.tags) <= ELEMENTS
    assert found.attributes <= ATTRIBUTES
    assert found.other == []
    assert found.anchored.count("details") == len(result.cells)
    assert HIDDEN.search(text) is None


# -- JUnit and JSON ------------------------------------------------------------------------------


def check_junit(text: str, result: ProbeResult, texts: list[str]) -> None:
    root = ET.fromstring(text.encode("utf-8"))
    assert len(root.findall("./testsuite/testcase")) == len(result.cells)
    assert HIDDEN.search(text) is None


def check_json(text: str, result: ProbeResult, texts: list[str]) -> None:
    data = json.loads(text)
    assert list(validator().iter_errors(data)) == []
    # Surrogates become U+FFFD; every other character comes back exactly.
    assert [cell["detail"] for cell in data["cells"]] == [encodable(c.detail) for c in result.cells]
    assert data["model"] == encodable(result.model)
    assert HIDDEN.search(text) is None


CHECKS: dict[ReportFormat, Callable[[str, ProbeResult, list[str]], None]] = {
    ReportFormat.MARKDOWN: check_markdown,
    ReportFormat.HTML: check_html,
    ReportFormat.JUNIT: check_junit,
    ReportFormat.JSON: check_json,
}


@pytest.mark.parametrize("fmt", list(ReportFormat), ids=lambda f: f.value)
@settings(max_examples=EXAMPLES, deadline=None)
@given(texts=st.lists(HOSTILE, min_size=1, max_size=12))
def test_nothing_in_a_reply_breaks_out(fmt: ReportFormat, texts: list[str]) -> None:
    result = hostile_result(texts)
    text = render(result, fmt, INFO)
    text.encode("utf-8")  # every writer's text can be written
    CHECKS[fmt](text, result, texts)


# -- the escapes themselves -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("a\x1b[2Jb", "a\\x1b[2Jb", id="csi-clear-screen"),
        pytest.param("\x1b]0;owned\x07", "\\x1b]0;owned\\x07", id="osc-retitle-with-bel"),
        pytest.param("x\x9b31m", "x\\x9b31m", id="c1-csi"),
        pytest.param("over\rwrite", "over\\x0dwrite", id="lone-carriage-return"),
        pytest.param("line\r\nnext", "line\nnext", id="crlf-is-a-line-feed"),
        pytest.param("tab\tand\nline", "tab\tand\nline", id="tab-and-line-feed-kept"),
        pytest.param("abc\u202edcba", "abc\\u202edcba", id="bidi-override"),
        pytest.param("\x00\x7f", "\\x00\\x7f", id="nul-and-del"),
        pytest.param("lone \ud800", "lone \ufffd", id="lone-surrogate"),
        pytest.param("sep\u2028", "sep\\u2028", id="line-separator"),
        pytest.param("émoji 🦀", "émoji 🦀", id="printable-unicode-kept"),
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_one_line_and_json_text() -> None:
    assert one_line("a\nb\r\nc\u2028d\x1b") == "a b c d\\x1b"
    assert json_text(json.dumps({"k": "\x9b\u202e\ud800 é"}, ensure_ascii=False)) == (
        '{"k": "\\u009b\\u202e\ufffd é"}'
    )
    assert json.loads(json_text(json.dumps("\x85\u2066", ensure_ascii=False))) == "\x85\u2066"


# -- the terminal ---------------------------------------------------------------------------------

PAYLOAD = "ok\x1b[2J\x1b]0;owned\x07\x9b31m\rfake\u202e"
SHOWN = "ok\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\x0dfake\\u202e"


@pytest.mark.parametrize(
    ("show", "stream"),
    [
        pytest.param(lambda c: c.say(PAYLOAD), "out", id="say"),
        pytest.param(lambda c: c.complain(PAYLOAD), "err", id="complain"),
        pytest.param(
            lambda c: c.show_matrix_problems("m.yaml", [PAYLOAD]), "err", id="matrix-problems"
        ),
        pytest.param(
            lambda c: c.show_outcome(
                ProbeOutcome(None, None, None, (), ExitCode.UNUSABLE, PAYLOAD)
            ),
            "out",
            id="outcome-message-from-a-provider",
        ),
        pytest.param(lambda c: c.emit_json({"message": PAYLOAD}), "out", id="json-on-stdout"),
    ],
)
def test_the_terminal_gets_no_control_from_a_provider(
    capsys: pytest.CaptureFixture[str], show: Callable[[object], None], stream: str
) -> None:
    from conchcheck import console

    show(console)
    captured = capsys.readouterr()
    text = captured.out if stream == "out" else captured.err
    assert HIDDEN.search(text) is None
    if stream == "out" and text.startswith("{"):
        assert json.loads(text) == {"message": PAYLOAD}
    else:
        assert SHOWN in text


def test_the_terminal_never_shows_a_key_held() -> None:
    import io
    import sys

    from conchcheck import console
    from conchcheck.wire.keys import Secret

    key = "canary-c0n5013-7f3a9c2e41b04d5f8a6e"
    Secret(key)
    caught = io.StringIO()
    real, sys.stdout = sys.stdout, caught
    try:
        console.say(f"echoed: {key}, cut: {key[:20]}…")
        console.out.print(f"[bold]{key}[/]")  # straight to rich: the stream masks it
    finally:
        sys.stdout = real
    assert caught.getvalue() == "echoed: [redacted], cut: [redacted]…\n[redacted]\n"
