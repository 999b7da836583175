"""``compatibility.html``: the table as one self-contained page (inline CSS and script, no
fonts, no external resource), sortable and filterable, each mark opening its evidence.

Every text a provider could have written is escaped twice over: HTML-escaped where it is
markup, and kept out of markup altogether where it is evidence (JSON in a data block whose
``<``, ``>`` and ``&`` are ``\\u`` escapes, shown by the script through ``textContent``).
"""

from __future__ import annotations

import html
import json
from typing import Any

from conchcheck.core.escaping import encodable, visible
from conchcheck.report.compatibility.diff import Diff
from conchcheck.report.compatibility.knobs import GROUP
from conchcheck.report.compatibility.markdown import LEGEND
from conchcheck.report.compatibility.marks import Evidence, Mark
from conchcheck.report.compatibility.table import CASES, Column, CompatTable, Row
from conchcheck.report.markup import MONO, SANS, STATUS

CSS = (
    """
body{font:14px/1.45 %(sans)s;color:#1f2328;margin:0}
main{padding:1rem 1.5rem}h1{font-size:1.35rem;margin:.2rem 0}
.meta,.legend{margin:.3rem 0}.controls{margin:.6rem 0;display:flex;gap:1rem;align-items:center}
.scroll{overflow:auto;max-height:80vh;border:1px solid #d0d7de}
table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:.15rem .4rem;text-align:left;white-space:nowrap}
thead th{position:sticky;top:0;background:#f6f8fa;z-index:1}
thead th button{font:inherit;font-weight:600;border:0;background:none;cursor:pointer;padding:0}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
tbody th{background:#fff;position:sticky;left:0;font-weight:600}
td button{font:inherit;border:0;background:none;cursor:pointer;padding:0;color:inherit}
#matrix th,#matrix td,#knobs th,#knobs td{white-space:normal}
#matrix tbody th,#knobs tbody th{min-width:9rem;max-width:16rem;overflow-wrap:anywhere}
td.wrap{min-width:12rem;max-width:20rem}h2{font-size:1.1rem;margin:1rem 0 .3rem}
%(status)s
dialog{max-width:70rem;width:90vw}dialog h3{margin:.6rem 0 .2rem}
pre{background:#f6f8fa;padding:.5rem;white-space:pre-wrap;word-break:break-word;
font:12px/1.4 %(mono)s}
.worse{color:#a40e26}.better{color:#116329}
@media print{
.controls,dialog,td button::after{display:none}
.scroll{overflow:visible;max-height:none;border:0}
thead th,tbody th{position:static}
.s-pass,.s-partial,.s-fail{background:none}
th,td{border-color:#000;font-size:9pt}
}
""".strip()
    % {"sans": SANS, "mono": MONO, "status": STATUS}
)

SCRIPT = """
(function(){
var data=JSON.parse(document.getElementById('evidence').textContent);
var tables=Array.prototype.slice.call(document.querySelectorAll('table.marks'));
var all=[];
tables.forEach(function(table){var body=table.tBodies[0];
var rows=Array.prototype.slice.call(body.rows);all=all.concat(rows);
var heads=table.tHead.rows[0].cells;
function key(row,i){var c=row.cells[i];var v=c.getAttribute('data-sort');
return v===null?c.textContent.toLowerCase():parseFloat(v);}
Array.prototype.forEach.call(heads,function(th,i){
th.querySelector('button').addEventListener('click',function(){
var up=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',up?'ascending':'descending');
rows.sort(function(a,b){var x=key(a,i),y=key(b,i);
var r=x<y?-1:x>y?1:0;return up?r:-r;});
rows.forEach(function(r){body.appendChild(r);});});});});
var filter=document.getElementById('filter');var mode=document.getElementById('mode');
var shown=document.getElementById('shown');var count=tables[0].tBodies[0].rows.length;
function apply(){var q=filter.value.toLowerCase();var m=mode.value;var n=0;
var keep={};tables[0].querySelectorAll('tbody tr').forEach(function(r){
var ok=r.textContent.toLowerCase().indexOf(q)>=0&&(!m||r.getAttribute('data-mode')===m);
keep[r.getAttribute('data-row')]=ok;if(ok){n++;}});
all.forEach(function(r){r.hidden=!keep[r.getAttribute('data-row')];});
shown.textContent=n+' of '+count+' targets';}
filter.addEventListener('input',apply);mode.addEventListener('change',apply);
var dialog=document.getElementById('details');var out=document.getElementById('details-body');
function add(tag,text,cls){var e=document.createElement(tag);e.textContent=text;
if(cls){e.className=cls;}out.appendChild(e);}
tables.forEach(function(table){table.tBodies[0].addEventListener('click',function(ev){
var b=ev.target.closest('button[data-mark]');if(!b){return;}
var m=data.marks[+b.getAttribute('data-mark')];var s=data.strings;
out.textContent='';add('h2',s[m[0]]+' \\u2014 '+s[m[1]]);add('p',s[m[2]],'status');
add('p',s[m[3]]);
m[4].forEach(function(e){add('h3',s[e[0]]+' \\u2014 '+s[e[1]]);add('p',s[e[2]]);
['Request','Reply','Reading'].forEach(function(t,j){if(s[e[3+j]]){add('h4',t);
add('pre',s[e[3+j]]);}});});
dialog.showModal();});});
document.getElementById('close').addEventListener('click',function(){dialog.close();});
apply();
})();
""".strip()


WRAP = {"schemas": " wrap"}
"""Columns whose text wraps (a sentence, not a value), so the features fit 1400 px (the
knobs' table wraps wherever it must, as the features do)."""


def render(table: CompatTable, generated: str, version: str, diff: Diff | None = None) -> str:
    """``compatibility.html`` as text."""
    pool = _Pool()
    marks: list[list[Any]] = []
    first, last = table.dates
    when = first if first == last else f"{first} to {last}"
    features = tuple(c for c in table.columns if c.group not in (CASES, GROUP))
    knobs = tuple(c for c in table.columns if c.group == GROUP)
    cases = tuple(c for c in table.columns if c.group == CASES)
    # Rendered before the evidence is written: each mark adds its entry.
    tables = _table("matrix", features, table, pool, marks)
    if knobs:
        tables += ["<h2>Knobs and losses</h2>", *_table("knobs", knobs, table, pool, marks)]
    if cases:
        tables += ["<h2>Dialect per schema case</h2>", *_table("cases", cases, table, pool, marks)]
    modes = sorted({r.marks["mode"].text.split(" ")[0] for r in table.rows if "mode" in r.marks})
    options = "".join(f'<option value="{_e(m)}">{_e(m)}</option>' for m in modes)
    evidence = json.dumps({"strings": pool.strings, "marks": marks}, ensure_ascii=True)
    evidence = evidence.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    parts = [
        "<h1>conchcheck compatibility</h1>",
        f'<p class="meta">{len(table.rows)} targets · probed {_e(when)} · matrix '
        f"{_e(', '.join(table.matrices))} · made {_e(generated)} by conchcheck {_e(version)}</p>",
        f'<p class="legend">Legend: {_e(LEGEND)}. Click a heading to sort, a mark for its '
        "evidence.</p>",
        '<div class="controls"><label>Filter <input id="filter" type="search" '
        'placeholder="target, dialect, value"></label><label>Mode <select id="mode">'
        f'<option value="">any</option>{options}</select></label>'
        f'<span id="shown">{len(table.rows)} of {len(table.rows)} targets</span></div>',
        *tables,
    ]
    if diff is not None:
        parts += _diff(diff)
    parts += [
        '<dialog id="details"><div id="details-body"></div>'
        '<form method="dialog"><button id="close" type="submit">Close</button></form></dialog>',
        f'<script type="application/json" id="evidence">{evidence}</script>',
        f"<script>\n{SCRIPT}\n</script>",
    ]
    return encodable(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>conchcheck compatibility</title>\n"
        f"<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(parts)
        + "\n</main>\n</body>\n</html>\n"
    )


class _Pool:
    """Each text once: a report of many targets repeats the same requests and replies."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        text = visible(text)
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.strings)
            self.strings.append(text)
        return found


def _table(
    ident: str,
    columns: tuple[Column, ...],
    table: CompatTable,
    pool: _Pool,
    marks: list[list[Any]],
) -> list[str]:
    """One table of marks: the features, or the schema cases (kept apart, so the features
    fit a screen and the cases scroll on their own)."""
    head = "".join(
        f'<th scope="col" title="{_e(c.group)}"><button type="button">{_e(c.title)}</button></th>'
        for c in columns
    )
    return [
        f'<div class="scroll"><table class="marks" id="{ident}">',
        '<thead><tr><th scope="col"><button type="button">target</button></th>'
        f'<th scope="col" title="endpoint"><button type="button">api</button></th>{head}'
        "</tr></thead>",
        "<tbody>",
        *(_row(index, row, columns, pool, marks) for index, row in enumerate(table.rows)),
        "</tbody></table></div>",
    ]


def _row(
    index: int, row: Row, columns: tuple[Column, ...], pool: _Pool, marks: list[list[Any]]
) -> str:
    mode = row.marks["mode"].text.split(" ")[0] if "mode" in row.marks else ""
    cells = [
        f'<tr data-row="{index}" data-mode="{_e(mode)}"><th scope="row">{_e(row.name)}</th>'
        f'<td title="{_e(row.endpoint)}">{_e(row.api)}</td>'
    ]
    for column in columns:
        mark = row.marks.get(column.key)
        if mark is None:
            cells.append('<td class="s-none" data-sort="-99">—</td>')
            continue
        index = len(marks)
        marks.append(_mark(row.shown, column.title, mark, pool))
        cells.append(
            f'<td class="s-{mark.status.value}{WRAP.get(column.key, "")}" '
            f'data-sort="{mark.status.rank * 10 + mark.sort:g}">'
            f'<button type="button" data-mark="{index}" title="{mark.status.value}">'
            f"{_e(mark.status.shape)} {_e(mark.text)}</button></td>"
        )
    return "".join(cells) + "</tr>"


def _mark(target: str, feature: str, mark: Mark, pool: _Pool) -> list[Any]:
    status = f"{mark.status.shape} {mark.status.value}: {mark.text}"
    return [
        pool(target),
        pool(feature),
        pool(status),
        pool(mark.note),
        [_evidence(e, pool) for e in mark.evidence],
    ]


def _evidence(item: Evidence, pool: _Pool) -> list[int]:
    fields = (item.cell, item.label, item.detail, item.request, item.reply, item.reading)
    return [pool(text) for text in fields]


def _diff(diff: Diff) -> list[str]:
    out = ['<section id="changes"><h2>Changes since the baseline</h2>']
    if not (diff.changes or diff.added or diff.removed):
        out.append("<p>No change.</p>")
    for title, changes, tone in (("Worse", diff.worse, "worse"), ("Better", diff.better, "better")):
        if not changes:
            continue
        out.append(f'<h3 class="{tone}">{title}: {len(changes)}</h3>')
        out.append(
            "<table><thead><tr><th>target</th><th>api</th><th>feature</th><th>before</th>"
            "<th>after</th></tr></thead><tbody>"
        )
        out += [
            f"<tr><td>{_e(c.target)}</td><td>{_e(c.api)}</td><td>{_e(c.feature)}</td>"
            f"<td>{_e(c.before)}</td><td>{_e(c.after)}</td></tr>"
            for c in changes
        ]
        out.append("</tbody></table>")
    for title, names in (("New", diff.added), ("Gone", diff.removed)):
        if names:
            out.append(f"<p>{title}: {_e(', '.join(names))}</p>")
    return [*out, "</section>"]


def _e(text: str) -> str:
    # Attribute values too: quotes escaped. Controls are shown as escapes, never sent.
    return html.escape(visible(text), quote=True)
