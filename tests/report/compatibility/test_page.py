"""compatibility.html in Debian's headless Chromium: it renders, sorting and filtering work, a
mark's details open, hostile text stays text, and the console stays clean; a screenshot is
kept under $CONCHCHECK_ARTIFACTS (default: the test's tmp_path)."""

from __future__ import annotations

import os
from pathlib import Path

from conchcheck.report.compatibility import write_compatibility
from tests.browser.chromium import browser
from tests.emulators.one_server import APIS, ThreeApis
from tests.report.compatibility.test_compatibility import HOSTILE, edited

ROWS = (
    "Array.from(document.querySelectorAll('#matrix tbody tr')).filter(r => !r.hidden)"
    ".map(r => r.querySelector('th').textContent)"
)


CASE_ROWS = ROWS.replace("#matrix", "#cases")
KNOB_ROWS = ROWS.replace("#matrix", "#knobs")
FITS = (
    "[document.getElementById('matrix').parentElement.scrollWidth,"
    " document.getElementById('matrix').parentElement.clientWidth, window.innerWidth]"
)
KNOBS_FIT = FITS.replace("'matrix'", "'knobs'")


def test_page_in_chromium(probed: dict[str, Path], tmp_path: Path) -> None:
    hostile = edited(probed["vllm:m"], tmp_path / "h", target=HOSTILE, reply_text=HOSTILE)
    out = tmp_path / "report"
    write_compatibility([*probed.values(), hostile], out, generated="2026-12-03T10:00:00Z",
                        version="0.1.0")  # fmt: skip
    shown_hostile = "</script><img src=x onerror=\"document.title='pwned'\">\\x1b[31m\\u202eevil"
    with browser() as page:
        page.open((out / "compatibility.html").as_uri())
        assert page.evaluate("document.title") == "conchcheck compatibility"
        assert page.evaluate("document.images.length") == 0
        assert page.evaluate(ROWS) == [
            shown_hostile, "gemini-openai:gemini-x", "openrouter:m", "vllm:m",
        ]  # fmt: skip
        # The schema cases are a table of their own: the features fit a 1400 px window.
        assert page.evaluate(CASE_ROWS) == page.evaluate(ROWS)
        assert "schema cases" in page.evaluate("document.querySelector('#matrix thead').innerText")
        assert "dangling-ref" not in page.evaluate(
            "document.querySelector('#matrix thead').innerText"
        )
        scroll, client, window = page.evaluate(FITS)
        assert window == 1400 and scroll <= client, (scroll, client)
        # Knobs and losses are a table of their own too, and fit as well.
        assert page.evaluate(KNOB_ROWS) == page.evaluate(ROWS)
        scroll, client, window = page.evaluate(KNOBS_FIT)
        assert window == 1400 and scroll <= client, (scroll, client)
        assert "tool_choice none" not in page.evaluate(
            "document.querySelector('#matrix thead').innerText"
        )
        # Sort by "native" (rank, then rate), ascending then descending.
        native = (
            "Array.from(document.querySelectorAll('#matrix thead th')).find("
            "t => t.textContent.startsWith('native'))"
        )
        page.evaluate(f"{native}.querySelector('button').click()")
        assert page.evaluate(f"{native}.getAttribute('aria-sort')") == "ascending"
        assert page.evaluate(ROWS)[0] == "openrouter:m"
        page.evaluate(f"{native}.querySelector('button').click()")
        assert page.evaluate(ROWS)[-1] == "openrouter:m"
        # Filter by text, then by mode.
        page.evaluate("{const f = document.getElementById('filter'); f.value = 'GEMINI';"
                      "f.dispatchEvent(new Event('input'))}")  # fmt: skip
        assert page.evaluate(ROWS) == ["gemini-openai:gemini-x"]
        assert page.evaluate(CASE_ROWS) == ["gemini-openai:gemini-x"]
        assert page.evaluate(KNOB_ROWS) == ["gemini-openai:gemini-x"]
        assert page.evaluate("document.getElementById('shown').textContent") == "1 of 4 targets"
        # A knob's mark opens the knob cell it stands on: the request with the knob set.
        page.evaluate("document.querySelector('#knobs tbody tr:not([hidden]) td:nth-of-type(2) "
                      "button').click()")  # fmt: skip
        knob = page.evaluate("document.getElementById('details-body').innerText")
        assert knob.startswith("gemini-openai:gemini-x (openai) — tool_choice none\n"), knob
        assert "knobs/tool_choice_none — honoured\n" in knob, knob
        assert '"tool_choice": "none"' in knob, knob
        page.evaluate("document.getElementById('close').click()")
        page.evaluate("{const f = document.getElementById('filter'); f.value = '';"
                      "f.dispatchEvent(new Event('input')); const m = document.getElementById('mode');"
                      "m.value = 'words'; m.dispatchEvent(new Event('change'))}")  # fmt: skip
        assert page.evaluate(ROWS) == ["openrouter:m"]
        # A mark's details: openrouter's "native" mark, with a refused request as evidence.
        page.evaluate("document.querySelector('tbody tr:not([hidden]) td:nth-of-type(4) button')"
                      ".click()")  # fmt: skip
        assert page.evaluate("document.getElementById('details').open") is True
        details = page.evaluate("document.getElementById('details-body').innerText")
        assert details.startswith("openrouter:m (openai) — native\n")
        assert "× fail: 0/11 0%" in details and "Request\nPOST http://127.0.0.1:" in details, (
            details
        )
        assert "refused:tools" in details
        page.screenshot(
            Path(os.environ.get("CONCHCHECK_ARTIFACTS", tmp_path)) / "compatibility.png"
        )
        page.evaluate("document.getElementById('close').click()")
        assert page.evaluate("document.getElementById('details').open") is False
        # The hostile row's reply, opened: text, never markup.
        page.evaluate("{const m = document.getElementById('mode'); m.value = '';"
                      "m.dispatchEvent(new Event('change'));"
                      "document.querySelector('tbody tr td:nth-of-type(4) button').click()}")  # fmt: skip
        assert page.evaluate("document.images.length") == 0
        assert page.evaluate("document.title") == "conchcheck compatibility"
        assert page.errors() == []
    assert (out / "compatibility.html").read_text().count("<script") == 2


APIS_SHOWN = (
    "Array.from(document.querySelectorAll('#matrix tbody tr')).filter(r => !r.hidden)"
    ".map(r => r.cells[1].textContent)"
)


def test_one_servers_three_apis_in_chromium(three_apis: ThreeApis, tmp_path: Path) -> None:
    out = tmp_path / "report"
    write_compatibility([three_apis.results[api] for api in APIS], out,
                        generated="2026-12-03T10:00:00Z", version="0.1.0")  # fmt: skip
    with browser() as page:
        page.open((out / "compatibility.html").as_uri())
        assert page.evaluate(ROWS) == ["llamacpp:local"] * 3
        assert page.evaluate(APIS_SHOWN) == ["anthropic", "openai", "responses"]
        api = "Array.from(document.querySelectorAll('thead th')).find(t => t.textContent === 'api')"
        page.evaluate(f"{api}.querySelector('button').click()")
        page.evaluate(f"{api}.querySelector('button').click()")
        assert page.evaluate(f"{api}.getAttribute('aria-sort')") == "descending"
        assert page.evaluate(APIS_SHOWN) == ["responses", "openai", "anthropic"]
        page.evaluate("{const f = document.getElementById('filter'); f.value = 'Responses';"
                      "f.dispatchEvent(new Event('input'))}")  # fmt: skip
        assert page.evaluate(APIS_SHOWN) == ["responses"]
        assert page.evaluate("document.getElementById('shown').textContent") == "1 of 3 targets"
        # Its native mark's evidence is a request to the Responses API of that server.
        page.evaluate("document.querySelector('tbody tr:not([hidden]) td:nth-of-type(4) button')"
                      ".click()")  # fmt: skip
        details = page.evaluate("document.getElementById('details-body').innerText")
        assert details.startswith("llamacpp:local (responses) — native\n"), details
        assert f"Request\nPOST {three_apis.url}/responses\n" in details, details
        assert page.errors() == []
