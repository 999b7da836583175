"""``report.html``: the report's content as one self-contained page (inline CSS, no script,
all text escaped). Findings come first; every status is a shape and a word (no emoji: a
browser without an emoji font draws empty boxes); refused schema cases are a table whose rows
open the provider's words; each cell's evidence follows, folded and trimmed (``cells``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from conchcheck.core.trials import rank
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Marks,
    Para,
    Refusals,
    RefusedCase,
    Table,
    words,
)
from conchcheck.report.cells import (
    Shown,
    anchors,
    cells_section,
    mark,
    shape,
    status_of,
)
from conchcheck.report.compatibility.markdown import LEGEND
from conchcheck.report.markup import MONO, SANS, STATUS, Status, escape
from conchcheck.report.outline import outline

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult, RunInfo

CSS = (
    """
body{font:15px/1.5 %(sans)s;color:#1f2328;margin:0}
main{max-width:72rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.4rem}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}
%(status)s
a.mark{color:inherit;text-decoration:none}a.mark:hover{text-decoration:underline}
.shape{display:inline-block;min-width:1em;text-align:center}
code,pre{font:13px/1.4 %(mono)s}
code{background:#f6f8fa;padding:0 .2rem;border-radius:3px}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
p.warn,p.stop{border:1px solid #d4a72c;padding:.4rem .6rem}p.stop{border-color:#cf222e}
.legend,.facts{color:#656d76}
details{border:1px solid #d0d7de;border-radius:4px;margin:.3rem 0;padding:.2rem .6rem}
td details{border:0;margin:0;padding:0}
.refusals td:not(:last-child){white-space:nowrap}.refusals td:last-child{overflow-wrap:anywhere}
summary{cursor:pointer}h4{margin:.6rem 0 .2rem}
:target{outline:2px solid #0969da}
""".strip()
    % {"sans": SANS, "mono": MONO, "status": STATUS}
)

TONES = {"warn": Status.PARTIAL, "stop": Status.FAIL}
"""A paragraph's tone as a status: its shape leads the paragraph."""


def render(result: ProbeResult, info: RunInfo) -> str:
    """``report.html`` as text."""
    links = anchors(result.cells)
    shown = Shown()
    blocks = outline(result, info, findings_first=True)
    # The legend goes between the verdict's lines and the first section.
    first = next((i for i, b in enumerate(blocks) if isinstance(b, Heading)), len(blocks))
    body = [f"<h1>conchcheck: {escape(result.target)}</h1>"]
    body += [_block(block, links, shown) for block in blocks[:first]]
    body.append(
        f'<p class="legend">Legend: {escape(LEGEND)}. Each mark links to its cell\'s evidence '
        "under Cells.</p>"
    )
    body += [_block(block, links, shown) for block in blocks[first:]]
    body += cells_section(result.cells, links, shown)
    return _page(f"conchcheck: {result.target}", body)


def _page(title: str, body: Iterable[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def _block(block: Block, links: Mapping[str, str], shown: Shown) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{escape(block.text)}</h{block.level}>"
    if isinstance(block, Para):
        if block.tone:
            sign = shape(TONES.get(block.tone, Status.PARTIAL))
            return f'<p class="{html.escape(block.tone)}">{sign} {_spans(block.spans)}</p>'
        return f"<p>{_spans(block.spans)}</p>"
    if isinstance(block, Bullets):
        items = "".join(f"<li>{_spans(item)}</li>\n" for item in block.items)
        return f"<ul>\n{items}</ul>"
    if isinstance(block, Table):
        head = "".join(f"<th>{escape(cell)}</th>" for cell in block.head)
        rows = "".join(
            "<tr>" + "".join(_td(cell, links) for cell in row) + "</tr>\n" for row in block.rows
        )
        return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>"
    if isinstance(block, Refusals):
        return _refusals(block.items, links, shown)
    return f"<pre>{escape(block.text)}</pre>"


def _td(cell: str | Marks, links: Mapping[str, str]) -> str:
    if isinstance(cell, str):
        return f"<td>{escape(cell)}</td>"
    if not cell.cells:
        return f'<td class="s-none">{escape(cell.text)}</td>'
    statuses = {status_of(c, cell.expected_refusal) for c in cell.cells}
    overall = statuses.pop() if len(statuses) == 1 else Status.PARTIAL
    marks = " · ".join(mark(c, links, cell.expected_refusal) for c in cell.cells)
    return f'<td class="s-{overall.value}">{marks}</td>'


def _spans(spans: Inline) -> str:
    out = []
    for span in spans:
        if isinstance(span, Bold):
            out.append(f"<strong>{escape(span.text)}</strong>")
        elif isinstance(span, Code):
            out.append(f"<code>{escape(span.text)}</code>")
        else:
            out.append(escape(span))
    return "".join(out)


def _refusals(items: Sequence[RefusedCase], links: Mapping[str, str], shown: Shown) -> str:
    """Refused schema cases, a row for each case and dialect: the kind as a mark, the keyword,
    the provider's one line about the case; the whole message and the path on a click."""
    order = {case: index for index, case in enumerate(dict.fromkeys(i.case for i in items))}
    rows = []
    for item in sorted(items, key=lambda i: (order[i.case], rank(i.dialect))):
        anchor = links[item.cell.id]
        row = f"r{anchor.removeprefix('c')}"
        case = escape(item.case)
        if item.expected:
            case += '<br><span class="facts">invalid: refusal expected</span>'
        status = status_of(item.cell, item.expected)
        kind = f'<a class="mark" href="#{anchor}">{shape(status)} {escape(words(item.kind))}</a>'
        keyword = f"<code>{escape(item.keyword)}</code>" if item.keyword else "—"
        where = f"<p>At <code>{escape(item.path)}</code>.</p>" if item.path else ""
        said = shown.once(item.message, f"{item.case} in {item.dialect}", row)
        rows.append(
            f'<tr id="{row}"><td>{case}</td><td>{escape(item.dialect)}</td>'
            f'<td class="s-{status.value}">{kind}</td><td>{keyword}</td>'
            f"<td><details><summary>{escape(item.reason)}</summary>{where}{said}</details></td>"
            "</tr>\n"
        )
    head = "<th>case</th><th>dialect</th><th>kind</th><th>keyword</th><th>reason</th>"
    return (
        f'<table class="refusals">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{"".join(rows)}'
        "</tbody>\n</table>"
    )
