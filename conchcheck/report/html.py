"""``report.html``: the Markdown report's content plus every cell's evidence, one self-contained
page (inline CSS, no scripts, all text escaped).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from conchcheck.core.escaping import visible
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Para,
    Table,
)
from conchcheck.report.outline import outline
from conchcheck.results import Cell, Stage
from conchcheck.results.plain import to_plain
from conchcheck.results.writer import facts_data

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult, RunInfo

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:0}
main{max-width:72rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.4rem}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.ok{background:#dafbe1}td.bad{background:#ffebe9}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:#f6f8fa;padding:0 .2rem;border-radius:3px}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
p.warn{background:#fff8c5;border:1px solid #d4a72c;padding:.4rem .6rem}
details{border:1px solid #d0d7de;border-radius:4px;margin:.3rem 0;padding:.2rem .6rem}
summary{cursor:pointer}h4{margin:.6rem 0 .2rem}
""".strip()

EVIDENCE = ("request", "reply", "reading", "refusal")


def _escape(text: str) -> str:
    # Element content only: attribute values are all conchcheck's own fixed words.
    # Controls are shown as escapes, never sent to the browser.
    return html.escape(visible(text), quote=False)


def render(result: ProbeResult, info: RunInfo) -> str:
    """``report.html`` as text."""
    body = [f"<h1>conchcheck: {_escape(result.target)}</h1>"]
    body += [_block(block) for block in outline(result, info)]
    body += _cells(result.cells)
    return _page(f"conchcheck: {result.target}", body)


def _page(title: str, body: Iterable[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{_escape(block.text)}</h{block.level}>"
    if isinstance(block, Para):
        tone = f' class="{html.escape(block.tone)}"' if block.tone else ""
        return f"<p{tone}>{_spans(block.spans)}</p>"
    if isinstance(block, Bullets):
        items = "".join(f"<li>{_spans(item)}</li>\n" for item in block.items)
        return f"<ul>\n{items}</ul>"
    if isinstance(block, Table):
        head = "".join(f"<th>{_escape(cell)}</th>" for cell in block.head)
        rows = "".join(
            "<tr>" + "".join(_td(cell) for cell in row) + "</tr>\n" for row in block.rows
        )
        return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>"
    return f"<pre>{_escape(block.text)}</pre>"


def _td(text: str) -> str:
    tone = ' class="ok"' if text.startswith("✅") else ' class="bad"' if text[:1] == "❌" else ""
    return f"<td{tone}>{_escape(text)}</td>"


def _spans(spans: Inline) -> str:
    out = []
    for span in spans:
        if isinstance(span, Bold):
            out.append(f"<strong>{_escape(span.text)}</strong>")
        elif isinstance(span, Code):
            out.append(f"<code>{_escape(span.text)}</code>")
        else:
            out.append(_escape(span))
    return "".join(out)


def _cells(cells: Sequence[Cell]) -> list[str]:
    """Every cell as a folded block with the request, reply and reading as pretty JSON."""
    out = ["<h2>Cells</h2>"]
    for stage in Stage:
        mine = [c for c in cells if c.stage is stage]
        if not mine:
            continue
        out.append(f"<h3>{_escape(stage.value)}</h3>")
        for cell in mine:
            summary = f"<code>{_escape(cell.id)}</code> — <strong>{_escape(cell.label)}</strong>"
            if cell.detail:
                summary += f" — {_escape(cell.detail)}"
            parts = [f"<details>\n<summary>{summary}</summary>", f"<p>{_escape(_facts(cell))}</p>"]
            for name in EVIDENCE:
                value = getattr(cell, name)
                if value is not None:
                    parts.append(f"<h4>{name.capitalize()}</h4>\n<pre>{_pretty(value)}</pre>")
            facts = {
                "repairs": list(cell.repairs),
                "findings": to_plain(cell.findings),
                "cases": list(cell.cases),
                "extra": facts_data(cell.facts),
            }
            kept = {key: value for key, value in facts.items() if value}
            if kept:
                parts.append(f"<h4>More</h4>\n<pre>{_pretty(kept)}</pre>")
            out.append("\n".join([*parts, "</details>"]))
    return out


def _facts(cell: Cell) -> str:
    facts = [f"case {cell.case}"]
    mode = cell.mode.value if cell.mode else None
    facts += [f"{name} {value}" for name, value in (("dialect", cell.dialect), ("mode", mode))
              if value]  # fmt: skip
    facts.append(f"attempt {cell.attempt}")
    facts.append(f"{cell.requests} request" + ("" if cell.requests == 1 else "s"))
    facts.append(f"{cell.latency_ms:g} ms")
    if cell.prompt_tokens is not None or cell.completion_tokens is not None:
        facts.append(f"tokens {cell.prompt_tokens or 0} + {cell.completion_tokens or 0}")
    return " · ".join(facts)


def _pretty(value: Any) -> str:
    text = json.dumps(to_plain(value), indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return _escape(text)
