"""Hostile text in every place a results file can put text, through every page conchcheck
writes, in headless Chromium: no script runs, nothing is fetched, no element or attribute
appears that conchcheck doesn't write, badges and junit.xml parse as XML, and the Markdown
renders no live tag or image.

The hostile file is a real one (``tests/golden/results.json``, filled out where it leaves a
place empty) with every string the schema leaves free replaced: each distinct string by one
payload and its number, the same string by the same text everywhere, so what refers to what
(a case to its cells, a cell to the cell it was read from) still holds. The same file with
each string replaced by its number alone is the page conchcheck writes for harmless words:
the hostile pages must have exactly its elements and attributes. ``test_escaping.py`` fuzzes
each writer's text without a browser; ``compatibility/test_page.py`` drives the page's
controls.
"""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from conchcheck.report import ReportFormat, write_reports
from conchcheck.report.compatibility import write_compatibility
from conchcheck.results.reader import read_results
from tests.browser.chromium import Page, browser

GOLDEN = Path(__file__).parent.parent / "golden" / "results.json"
SCHEMA = json.loads(files("conchcheck.jsonschemas").joinpath("results.schema.json").read_text())

PAYLOADS = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    '"><svg onload="window.__pwned=3">',
    '\'><a href="javascript:window.__pwned=4">x</a>',
    "</style><style>*{background:url(http://127.0.0.1:9/x.png)}</style>",
    "javascript:window.__pwned=6",
    "[x](javascript:window.__pwned=7) ![i](http://127.0.0.1:9/i.png) <http://127.0.0.1:9/>",
    "\u202eevil\u202c\u200b\u200d\u2066x\u2069\ufeff\u200e",
    "<svg><script>window.__pwned=9</script></svg>",
    '</dialog></details><details open ontoggle="window.__pwned=10">',
    "&lt;script&gt;window.__pwned=11&lt;/script&gt; &amp;lt;",
    '<iframe srcdoc="<script>parent.__pwned=12</script>"></iframe>',
    "<!-- --> <![CDATA[ ]]> \x1b[31m \x00\x07",
    '<base href="http://127.0.0.1:9/"><meta http-equiv="refresh" content="0;url=javascript:1">',
    "<math><mtext></p><img src=x onerror=window.__pwned=15></mtext></math>",
    "\n\n| a | b |\n|---|---|\n# forged\n<details>\n```\n",
    "\u2028\u2029</script><script>window.__pwned=17</script>",
    '<style>@import "http://127.0.0.1:9/x.css";</style><link rel=stylesheet href=//127.0.0.1:9>',
    '<?xml-stylesheet href="http://127.0.0.1:9/x.xsl"?><!DOCTYPE x [<!ENTITY e "pwned">]>&e;',
    '<a href="data:text/html,<script>alert(1)</script>">d</a><object data=x></object>',
    "`` ` **b** _i_ \\ <x onclick=window.__pwned=21>",
    "<form action=javascript:window.__pwned=22><button formaction=javascript:0>go</button>",
    '<div style="background:url(javascript:window.__pwned=23)">',
    '<noscript><p title="</noscript><img src=x onerror=window.__pwned=24>">',
]
"""Each an attempt to leave a text's context: closers of script, style, title, comment and
CDATA; event handlers; ``javascript:`` and ``data:`` URLs; SVG and MathML; a base, meta,
link or import that fetches; bidi overrides and zero-width characters; Markdown's own."""
VERSION_1_ONLY = {"source", "error", "usage"}
"""Fields of version 1 evidence that the reader upgrades and no page shows."""


# -- the file: every free place filled, then every free string replaced ----------------------


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _child(node: Any, key: str | int) -> Any:
    node = _resolve(node)
    if not isinstance(node, dict):
        return True  # any JSON (a body, arguments): all of it free
    if isinstance(key, int):
        return node.get("items", True)
    if key in node.get("properties", {}):
        return node["properties"][key]
    extra = node.get("additionalProperties", True)
    return True if extra is False else extra


def _fixed(node: Any) -> bool:
    """Whether the schema fixes the text at ``node`` (a named value, a pattern)."""
    node = _resolve(node)
    return isinstance(node, dict) and any(k in node for k in ("enum", "const", "pattern"))


def _free_keys(node: Any) -> bool:
    """Whether the keys of the object at ``node`` are text of the file's (not field names)."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return True
    return "properties" not in node and "propertyNames" not in node


def replaced(value: Any, word: Callable[[str], str], node: Any = None) -> Any:
    """``value`` with each free string (and free key) given to ``word``."""
    node = SCHEMA if node is None else node
    if isinstance(value, str):
        return value if not value or _fixed(node) else word(value)
    if isinstance(value, list):
        return [replaced(v, word, _child(node, i)) for i, v in enumerate(value)]
    if isinstance(value, dict):
        keys = _free_keys(node)
        return {
            (word(k) if keys else k): replaced(v, word, _child(node, k)) for k, v in value.items()
        }
    return value


def free_places(
    node: Any = None, path: tuple[str, ...] = (), depth: int = 0
) -> Iterator[tuple[str, ...]]:
    """Every place the schema lets a results file hold free text (``*`` any item, ``{}`` any
    key, ``=`` any value of a free key)."""
    node = _resolve(SCHEMA if node is None else node)
    if node is True:
        yield (*path, "=")
        return
    if not isinstance(node, dict) or _fixed(node) or depth > 12:
        return
    kinds = node.get("type")
    if "string" in (kinds if isinstance(kinds, list) else [kinds]):
        yield path
    for key, sub in node.get("properties", {}).items():
        if key not in VERSION_1_ONLY:
            yield from free_places(sub, (*path, key), depth + 1)
    if "items" in node:
        yield from free_places(node["items"], (*path, "*"), depth + 1)
    extra = node.get("additionalProperties")
    if "properties" not in node and "propertyNames" not in node and extra not in (None, False):
        yield (*path, "{}")
        yield from free_places(extra, (*path, "="), depth + 1)


def _holds(data: Any, path: tuple[str, ...]) -> bool:
    """Whether ``data`` holds non-empty text at the place ``path``."""
    if not path:
        return isinstance(data, str) and data != ""
    step, rest = path[0], path[1:]
    if step == "*":
        return isinstance(data, list) and any(_holds(x, rest) for x in data)
    if step == "{}":
        return isinstance(data, dict) and any(k for k in data)
    if step == "=":
        if isinstance(data, dict):
            return any(_holds(x, rest) for x in data.values())
        return data is not None and not rest
    return isinstance(data, dict) and step in data and _holds(data[step], rest)


def _cell(data: dict[str, Any], cell_id: str) -> dict[str, Any]:
    return next(c for c in data["cells"] if c["id"] == cell_id)


def filled() -> dict[str, Any]:
    """The golden results with text in every place it leaves empty, each where it belongs."""
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    data["stopped"] = "Stopped early: the budget of 40 requests was spent."
    data["catalogue"]["error"] = "The catalogue answered 503."
    data["own_tools"] = [{
        "name": "remember", "source": "tools.yaml", "description": "Remember one fact.",
        "parameters": {"type": "object", "properties": {"fact": {"type": "string"}}},
        "problem": "required[0]: ['fact'] is not of type 'string'", "protocol": "2026-07-28",
        "smoke": [{"name": "fact", "origin": "example", "value": "Ada likes tea"}],
    }]  # fmt: skip
    dialect = _cell(data, "dialect/gemini/ref-defs")
    dialect["extra"]["same_as"] = "dialect/gemini/baseline"
    refused = _cell(data, "dialect/permissive/ref-defs")["refusal"]
    refused.update(code="invalid_argument", failed_generation="<tool_call>{...}")
    refused["violations"] = [
        {"tool_index": 0, "keyword": "$ref", "path": "tools[0].parameters", "message": "No $ref."}
    ]
    native = _cell(data, "native/remember/1")
    native["reply"].update(body='{"choices": []}', reasoning="The user wants a fact kept.")
    finding = {"code": "arguments_as_object", "detail": "The arguments came as an object."}
    native["reply"]["findings"] = [finding]
    native["extra"].update(leaked_family="hermes", leaked_calls=1, leaked_fix="--jinja")
    words = _cell(data, "words/remember/1")
    words["reading"].update(text="Noted.", list_level="full")
    words["reading"]["calls"][0].update(
        raw="<tool_call>{'fact': 'Ada'}</tool_call>", message="The arguments don't fit.",
        repairs=["single_quotes"], dropped=["extra"],
    )  # fmt: skip
    streaming = _cell(data, "follow_up/streaming/weather-enum")
    whole = copy.deepcopy(native["reply"])
    whole["text"] = "It is 4 °C in Oslo."
    whole["calls"] = [{"id": "call_9", "name": "get_weather", "arguments": '{"city": "Oslo"}'}]
    streaming["extra"] = {"native_calls": 1, "marker_leak": False, "whole": "pass",
                          "whole_reply": whole}  # fmt: skip
    follow = _cell(data, "follow_up/round_trip/native/remember")
    follow["calls"] = [{"id": "call_1", "name": "remember", "arguments": '{"fact": "Ada"}'}]
    _cell(data, "knobs/tool_choice_none")["extra"]["read_from"] = "native/remember/1"
    _cell(data, "knobs/parallel_false")["extra"]["baseline_from"] = "knobs/parallel_false/baseline"
    verdict = data["verdict"]
    verdict["leaks"] = [{"family": "hermes", "cells": ["native/remember/1"], "fix": "--jinja"}]
    verdict["strict_mode"] = {"accepted": ["baseline"], "refused": ["ref-defs"]}
    chosen = verdict["dialect"]
    chosen["limits"][0].update(keyword="tools", path="tools")
    chosen["excepted"] = [{**chosen["refused"][0], "keyword": "type", "path": "parameters"}]
    chosen["invalid_accepted"] = ["not-object-root"]
    chosen["carriers"] = {"ref-defs": ["gemini"]}
    return data


def unusable() -> dict[str, Any]:
    """A target that could not be probed: its reason, and no verdict."""
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    data.update(target="openrouter:gone", model="gone", verdict=None, cells=data["cells"][:1])
    data["unusable"] = "The provider says: model 'gone' does not exist."
    return data


class Words:
    """Each distinct string, numbered in the order met: hostile or harmless text for it."""

    def __init__(self, hostile: bool) -> None:
        self.hostile = hostile
        self.numbers: dict[str, int] = {}

    def __call__(self, text: str) -> str:
        n = self.numbers.setdefault(text, len(self.numbers))
        return f"{PAYLOADS[n % len(PAYLOADS)]} n{n}" if self.hostile else f"n{n}"


def written(folder: Path, hostile: bool) -> Path:
    """Both results files with hostile (or harmless) words, every page written from them."""
    word = Words(hostile)
    sources = []
    for name, data in (("full", filled()), ("unusable", unusable())):
        path = folder / name / "results.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(replaced(data, word), ensure_ascii=False), encoding="utf-8")
        sources.append(path)
        result = read_results(path)
        assert result.run is not None
        write_reports(result, path.parent / "report", list(ReportFormat), result.run)
    write_compatibility(sources, folder / "compat", generated="2026-03-01T09:00:00Z",
                        version="0.1.0")  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The folders of every page, from hostile and from harmless words."""
    hostile = written(tmp_path_factory.mktemp("hostile"), hostile=True)
    harmless = written(tmp_path_factory.mktemp("harmless"), hostile=False)
    return hostile, harmless


def test_the_hostile_file_fills_every_place_of_free_text() -> None:
    both = (filled(), unusable())
    assert [".".join(p) for p in free_places() if not any(_holds(d, p) for d in both)] == []


# -- in the browser ------------------------------------------------------------------------------

SHAPE = """(() => {
  const seen = {};
  for (const e of (ROOT).querySelectorAll('*')) {
    const key = e.localName + '[' + Array.from(e.attributes, a => a.name).sort().join(' ') + ']';
    seen[key] = (seen[key] || 0) + 1;
  }
  return seen;
})()"""
"""Each element with the names of its attributes, and how many there are of it."""
URLS = """Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes))
  .filter(a => /^(href|src|srcdoc|action|formaction|data|xlink:href|background|poster)$/.test(a.name))
  .map(a => a.name + '=' + a.value)"""
"""Every attribute that names something to fetch or run."""
SAFE_URL = ("href=#", "id=")


def _shape(page: Page, root: str = "document") -> Counter[str]:
    return Counter(page.evaluate(SHAPE.replace("ROOT", root)))


def _untouched(page: Page) -> None:
    """Nothing ran, nothing was fetched, nothing complained."""
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0
    assert page.evaluate("document.images.length") == 0
    assert [u for u in page.evaluate(URLS) if not u.startswith(SAFE_URL)] == []
    assert page.errors() == []


def _report(page: Page, path: Path) -> tuple[Counter[str], str]:
    """report.html with every evidence opened: its shape, and its text."""
    page.open(path.as_uri())
    _untouched(page)
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    _untouched(page)
    return _shape(page), page.evaluate("document.body.innerText")


def _compatibility(page: Page, path: Path) -> tuple[Counter[str], Counter[str], str]:
    """compatibility.html with each mark's evidence opened in turn: the page's shape, the
    dialog's shapes added up, and every text the dialog showed."""
    page.open(path.as_uri())
    _untouched(page)
    shape = _shape(page)
    marks = page.evaluate("Array.from(document.querySelectorAll('button[data-mark]'), "
                          "b => b.getAttribute('data-mark'))")  # fmt: skip
    assert len(marks) > 30
    dialogs: Counter[str] = Counter()
    shown = []
    for mark in marks:
        page.evaluate(f"document.querySelector('button[data-mark=\"{mark}\"]').click()")
        assert page.evaluate("document.getElementById('details').open") is True
        dialogs += _shape(page, "document.getElementById('details-body')")
        shown.append(page.evaluate("document.getElementById('details-body').innerText"))
        _untouched(page)
        page.evaluate("document.getElementById('close').click()")
    return shape, dialogs, "\n".join(shown)


def _badges(page: Page, folder: Path) -> Counter[str]:
    shapes: Counter[str] = Counter()
    for badge in sorted((folder / "compat" / "badges").iterdir()):
        root = ET.fromstring(badge.read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        page.open(badge.as_uri())
        _untouched(page)
        shapes += _shape(page)
    return shapes


def test_no_page_runs_or_fetches_or_grows_anything_from_hostile_text(
    pages: tuple[Path, Path],
) -> None:
    hostile, harmless = pages
    with browser() as page:
        for name in ("full", "unusable"):
            shape, text = _report(page, hostile / name / "report" / "report.html")
            assert shape == _report(page, harmless / name / "report" / "report.html")[0]
            # The payloads are there, as text.
            assert '<img src=x onerror="window.__pwned=2">' in text or name == "unusable"
        shape, dialogs, text = _compatibility(page, hostile / "compat" / "compatibility.html")
        calm, calm_dialogs, _ = _compatibility(page, harmless / "compat" / "compatibility.html")
        assert (shape, dialogs) == (calm, calm_dialogs)
        assert "</script><script>window.__pwned=1</script>" in text
        assert _badges(page, hostile) == _badges(page, harmless)


# -- the XML and the Markdown --------------------------------------------------------------------


def test_badges_and_junit_parse_as_xml_with_only_their_own_elements(
    pages: tuple[Path, Path],
) -> None:
    hostile, harmless = pages

    def elements(path: Path) -> Counter[str]:
        text = path.read_text(encoding="utf-8")
        assert "<!DOCTYPE" not in text and "<!ENTITY" not in text and "<?xml-" not in text
        return Counter(e.tag for e in ET.fromstring(text.encode()).iter())

    for name in ("full", "unusable"):
        junit = Path(name) / "report" / "junit.xml"
        assert elements(hostile / junit) == elements(harmless / junit)
    badges = [sorted((f / "compat" / "badges").iterdir()) for f in pages]
    assert len(badges[0]) == len(badges[1]) == 2
    for bad, calm in zip(*badges, strict=True):
        assert elements(bad) == elements(calm)


def _tokens(path: Path) -> Counter[str]:
    """The kinds of token GitHub's Markdown makes of a file, raw HTML allowed, every level."""
    found: Counter[str] = Counter()
    pending = MarkdownIt("commonmark", {"html": True}).enable("table").parse(path.read_text())
    while pending:
        token = pending.pop()
        found[token.type] += 1
        pending.extend(token.children or ())
        assert token.type not in ("html_block", "html_inline", "image"), token
        assert not str(token.attrGet("href") or "#").lower().startswith(("javascript", "data")), (
            token
        )
    return found


@pytest.mark.parametrize(
    "file",
    [
        pytest.param("full/report/report.md", id="report-md"),
        pytest.param("unusable/report/report.md", id="unusable-report-md"),
        pytest.param("compat/compatibility.md", id="compatibility-md"),
    ],
)
def test_the_markdown_renders_no_live_tag_or_image(pages: tuple[Path, Path], file: str) -> None:
    hostile, harmless = pages
    assert _tokens(hostile / file) == _tokens(harmless / file)
