"""report.html: every status a shape and a word (no emoji), the findings first, refused schema
cases a table whose rows open the provider's words, one self-contained page of at most 300 KB
for a default probe; and in Debian's headless Chromium: nothing loaded, a clean console, each
status drawn from a font that has it, a row opening on a click. A screenshot is kept under
$CONCHCHECK_ARTIFACTS (default: the test's tmp_path)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conchcheck.report import ReportFormat, render
from conchcheck.report.markup import Status
from conchcheck.results import ProbeResult, RunInfo
from tests.browser.chromium import browser
from tests.browser.fonts import by_postscript_name, debian_sans, missing
from tests.test_recordings import replay

SIZE_LIMIT = 300 * 1024
"""Bytes of a default probe's report.html at most (it was 927 KB, every cell's evidence whole)."""
EMOJI = re.compile("[\u2600-\u27bf\ufe0f\U0001f000-\U0001faff]")
"""Emoji and the symbols drawn as emoji: a browser without an emoji font draws empty boxes."""


def own(text: str) -> str:
    """The page without the evidence's ``<pre>`` blocks: what conchcheck writes itself (a
    request or a reply is shown as it was, and the knob matrix's fidelity prompt holds 🍮)."""
    return re.sub(r"<pre>.*?</pre>", "", text, flags=re.S)


def page(result: ProbeResult, info: RunInfo) -> str:
    return render(result, ReportFormat.HTML, info)


def rows(text: str, table: int = 0) -> list[list[list[str]]]:
    """The ``table``-th refusals table: a list per row, of each cell's words."""
    body = text.split('<table class="refusals">')[table + 1].split("</table>")[0]
    return [
        [re.sub(r"<[^>]+>", " ", cell).split() for cell in re.findall(r"<td.*?</td>", row)]
        for row in re.findall(r"<tr id=.*?</tr>", body)
    ]


def test_status_is_a_shape_and_a_word(result: ProbeResult, info: RunInfo):
    text = page(result, info)
    assert EMOJI.search(own(text)) is None
    shapes = re.findall(r'<span class="shape">(.)</span> ([^<]+)<', text)
    assert ("■", "accepted") in shapes
    assert ("×", "refused: context length") in shapes
    assert ("○", "skipped") in shapes
    assert ("×", "wrong arguments") in shapes
    assert {shape for shape, _ in shapes} <= {s.shape for s in Status}
    # A deliberately invalid case refused for its schema is the right answer: a pass.
    assert (
        '<td class="s-pass"><a class="mark" href="#c7"><span class="shape">■</span> refused: '
        in (text)
    )


def test_tones_lead_with_a_shape(make_result, info: RunInfo):
    text = page(make_result(stopped="the request budget (22) is spent"), info)
    assert '<p class="warn"><span class="shape">▲</span> Stopped early: the request budget' in text
    unusable = make_result(cells=(), catalogue=None, verdict=None, unusable="auth: bad key.")
    assert '<p class="stop"><span class="shape">×</span> The target can' in page(unusable, info)


def test_findings_come_first(result: ProbeResult, info: RunInfo):
    headings = re.findall(r"<h2>(.*?)</h2>", page(result, info))
    assert headings[:3] == ["Findings", "Knobs and losses", "Dialect"]
    assert headings[3:] == [
        "Prompts", "Refusals", "Repairs seen", "Follow-ups", "What the tools cost", "Cost", "Cells"
    ]  # fmt: skip


def test_refused_cases_are_a_table(result: ProbeResult, info: RunInfo):
    text = page(result, info)
    refused = rows(text, 0)
    invalid = ["not-object-root", "invalid:", "refusal", "expected"]
    assert [row[:4] for row in refused] == [
        [invalid, ["permissive"], ["■", "schema"], ["type"]],
        [["ref-defs"], ["permissive"], ["×", "schema"], ["$ref"]],
    ]
    # The reason is one line; the path and the whole message open on a click.
    ref_defs = text.split('<tr id="r8">')[1].split("</tr>")[0]
    assert "<details><summary>Invalid JSON payload received." in ref_defs
    assert "| Use `parameters`…</summary>" in ref_defs
    path = "tools[0].function_declarations[0].parameters.properties[0].value"
    assert f"<p>At <code>{path}</code>.</p>" in ref_defs
    assert "<pre>Invalid JSON payload received." in ref_defs
    assert "with the OpenAPI subset.</pre>" in ref_defs
    # The same message twice: the second row links to the first.
    limits = rows(text, 1)
    assert [row[:3] for row in limits] == [
        [["many-tools"], ["permissive"], ["×", "context", "length"]],
        [["many-tools"], ["gemini"], ["×", "context", "length"]],
    ]
    assert '<p>The same as for <a href="#r6">many-tools in permissive</a>.</p>' in text


def test_markdown_keeps_its_paragraph_of_refusals(result: ProbeResult, info: RunInfo):
    text = render(result, ReportFormat.MARKDOWN, info)
    assert (
        "**schema** — `not-object-root` in permissive (invalid: refusal expected), keyword "
        "`type`, at `tools[0].function.parameters`\n"
    ) in text
    assert "| not-object-root (invalid: refusal expected) | ❌ schema | — |" in text


def test_self_contained(result: ProbeResult, info: RunInfo):
    text = page(result, info)
    for found in ("<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "http-equiv"):
        assert found not in text
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    links = re.findall(r' href="([^"]*)"', text)
    assert links and all(link.startswith("#") for link in links)
    assert {link[1:] for link in links} <= set(ids)


def test_each_cell_folds_under_its_mark(result: ProbeResult, info: RunInfo):
    text = page(result, info)
    assert text.count('<details id="c') == len(result.cells)
    assert (
        '<details id="c18">\n<summary><span class="mark s-fail"><span class="shape">×</span> no '
        "call</span> <code>words/three-args/1</code> — The model answered without a call."
        "</summary>"
    ) in text


def test_status_characters_are_in_debian_fonts(result: ProbeResult, info: RunInfo, make_result):
    texts = [page(result, info), page(make_result(stopped="x", unusable="y"), info)]
    own = {
        char
        for text in texts
        for part in re.findall(r'class="(?:shape|legend|mark[^"]*)">(.*?)</', text)
        for char in part
        if ord(char) > 0x7F
    }
    assert {s.shape for s in Status} <= own
    for font in debian_sans():
        assert missing(sorted(own), font) == [], font


def test_a_default_probe_fits(default_probes: dict[str, Path]):
    for target, folder in default_probes.items():
        text = (folder / "report.html").read_text(encoding="utf-8")
        assert len(text.encode("utf-8")) <= SIZE_LIMIT, target
        assert EMOJI.search(own(text)) is None
        # The evidence is trimmed, saying so, and a request of many cases is shown once.
        assert "more characters in results.json]" in text
        assert "<p>The same as for <a href=" in text


def test_a_replayed_local_model_probe_fits(tmp_path: Path):
    # A real llama.cpp run, replayed (it was 390 KB): replies are longer than an emulator's.
    out = replay("qwen-coder.default", tmp_path)["out"]
    assert (out / "report.html").stat().st_size <= SIZE_LIMIT


def test_a_default_probe_in_chromium(default_probes: dict[str, Path], tmp_path: Path):
    report = default_probes["gemini-openai:gemini-x"] / "report.html"
    with browser() as tab:
        tab.open(report.as_uri())
        assert tab.evaluate("document.title") == "conchcheck: gemini-openai:gemini-x"
        assert tab.evaluate("performance.getEntriesByType('resource').length") == 0
        assert tab.evaluate("document.images.length") == 0
        # A refused case's words open on a click on its reason.
        row = "document.querySelector('table.refusals tr[id]')"
        assert tab.evaluate(f"{row}.querySelector('details').open") is False
        tab.evaluate(f"{row}.querySelector('summary').click()")
        assert tab.evaluate(f"{row}.querySelector('details').open") is True
        opened = tab.evaluate(f"{row}.querySelector('details').innerText")
        assert "At tools[0].function_declarations[" in opened
        # A mark leads to its cell's evidence.
        target = tab.evaluate(f"{row}.querySelector('a.mark').getAttribute('href')")
        tab.evaluate(f"{row}.querySelector('a.mark').click()")
        assert tab.evaluate("location.hash") == target
        assert tab.evaluate(f"document.querySelector('{target}').tagName") == "DETAILS"
        tab.screenshot(Path(os.environ.get("CONCHCHECK_ARTIFACTS", tmp_path)) / "report.png")
        assert tab.errors() == []
        # Every status is drawn: a shape with a width, from a font whose map has it (last:
        # DevTools' CSS domain logs an error of its own on a file: page).
        widths = tab.evaluate(
            "Array.from(document.querySelectorAll('.shape'), e => e.getBoundingClientRect().width)"
        )
        assert len(widths) > 100 and min(widths) > 0
        files = by_postscript_name()
        drawn = tab.fonts(".shape, .legend, .mark, p.warn, p.stop")
        for text, fonts in drawn:
            own = [c for c in text if ord(c) > 0x7F]
            assert fonts, text
            assert all(name in files for name in fonts), (text, fonts)
            for char in own:
                assert any(not missing(char, files[name]) for name in fonts), (char, fonts)
