"""A badge per row (a target in one API) for READMEs: ``tool calling | permissive · native ·
91%`` as plain SVG, self-contained (no fonts, links or scripts), every text escaped.
"""

from __future__ import annotations

import hashlib
import re
from html import escape

from conchcheck.core.escaping import one_line
from conchcheck.report.compatibility.table import Row
from conchcheck.report.markup import Status

LABEL = "tool calling"
COLOURS = {
    Status.PASS: "#2e7d32",
    Status.PARTIAL: "#9a6700",
    Status.FAIL: "#c62828",
    Status.NONE: "#6e7781",
}
CHAR_WIDTH = 7
"""Pixels a character of 11px DejaVu Sans takes, about; ``textLength`` makes it exact."""


def badge_text(row: Row) -> str:
    """``permissive · native · 91%``: the dialect, the mode and that mode's pass rate."""
    dialect, mode = row.marks["dialect"].text, row.marks["mode"].text.split(" ")[0]
    rate = row.marks.get(mode)
    shown = rate.text.split(" ")[-1] if rate is not None and rate.text != "—" else "—"
    return f"{dialect} · {mode} · {shown}"


MAX_SLUG = 100
"""The longest name a target's file or folder gets before the ``-2`` of a repeat: far inside
the 255 bytes a file name may take, beside whatever suffix it is given."""


def filename(target: str) -> str:
    """``openrouter-qwen-qwen3-8b.svg``: the target in letters, digits, ``.``, ``_`` and ``-``;
    past ``MAX_SLUG`` characters, cut with a hash of the whole target so two stay apart."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", target).strip("-.") or "target"
    if len(slug) > MAX_SLUG:
        digest = hashlib.sha256(target.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        slug = f"{slug[: MAX_SLUG - 9].rstrip('-.')}-{digest}"
    return f"{slug}.svg"


def distinct(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``… (before its extension), whichever no name in
    ``taken`` equals ignoring case (``Model`` and ``model`` are one file on macOS and
    Windows); the name chosen is added to ``taken``, in lower case."""
    stem, dot, extension = name.rpartition(".") if name.endswith(".svg") else (name, "", "")
    chosen, count = name, 1
    while chosen.lower() in taken:
        count += 1
        chosen = f"{stem}-{count}{dot}{extension}"
    taken.add(chosen.lower())
    return chosen


def render(row: Row) -> str:
    """The badge of one row as SVG text."""
    value = one_line(badge_text(row))
    colour = COLOURS[row.marks["mode"].status]
    left, right = _width(LABEL), _width(value)
    total = left + right
    title = escape(one_line(f"{row.shown}: {LABEL} {value}"), quote=True)
    label, text = escape(LABEL, quote=True), escape(value, quote=True)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{title}">\n'
        f"<title>{title}</title>\n"
        f'<rect width="{left}" height="20" fill="#555"/>\n'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>\n'
        '<g fill="#fff" font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">\n'
        f'<text x="{left // 2}" y="14" text-anchor="middle" textLength="{left - 10}">'
        f"{label}</text>\n"
        f'<text x="{left + right // 2}" y="14" text-anchor="middle" '
        f'textLength="{right - 10}">{text}</text>\n'
        "</g>\n</svg>\n"
    )


def _width(text: str) -> int:
    return len(text) * CHAR_WIDTH + 10
