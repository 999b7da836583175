"""The compatibility report across many probes: a table of targets × features as Markdown
and as one self-contained HTML page, a badge per target, a diff against a baseline, and the
joining of CI shards. Renderers are pure; ``write_compatibility`` and ``merge`` write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from conchcheck.errors import InputError
from conchcheck.report.compatibility import badge, markdown, page
from conchcheck.report.compatibility.diff import Diff, MarkChange, compare
from conchcheck.report.compatibility.marks import Mark
from conchcheck.report.compatibility.shards import (
    load_all,
    merge,
    refuse_duplicates,
    results_files,
    write_folder,
)
from conchcheck.report.compatibility.table import CompatTable, Row, build_table
from conchcheck.report.markup import Status

__all__ = [
    "CompatTable",
    "Diff",
    "Mark",
    "MarkChange",
    "Row",
    "Status",
    "build_table",
    "compare",
    "load_table",
    "merge",
    "render_compatibility",
    "results_files",
    "write_compatibility",
]

MARKDOWN = "compatibility.md"
HTML = "compatibility.html"
BADGES = "badges"


def load_table(paths: Sequence[Path]) -> CompatTable:
    """The table of the results files (or folders of them) at ``paths``; each endpoint
    (target, base URL and API) once."""
    loaded = load_all(paths)
    if not loaded:
        raise InputError("No results were given.", hint="conchcheck report RESULTS… --out DIR")
    refuse_duplicates(loaded)
    return build_table([result for _, result in loaded])


def render_compatibility(
    table: CompatTable, *, generated: str, version: str, baseline: CompatTable | None = None
) -> dict[str, str]:
    """Every file of the report, by its path in the output folder, as text."""
    diff = compare(table, baseline) if baseline is not None else None
    texts = {
        MARKDOWN: markdown.render(table, generated, version, diff),
        HTML: page.render(table, generated, version, diff),
    }
    names: set[str] = set()
    shared = Counter(row.name for row in table.rows)
    for row in table.rows:
        # One server's APIs share a name; each badge file names its API then.
        name = badge.filename(row.name if shared[row.name] == 1 else f"{row.name} {row.api}")
        name = badge.distinct(name, names)
        texts[f"{BADGES}/{name}"] = badge.render(row)
    return texts


def write_compatibility(
    paths: Sequence[Path],
    out: Path,
    *,
    generated: str,
    version: str,
    baseline: Sequence[Path] = (),
) -> list[Path]:
    """Read, render, then write the report to ``out``; the files written, in order."""
    from conchcheck.redaction import held

    table = load_table(paths)
    before = load_table(baseline) if baseline else None
    mask = held()
    texts = render_compatibility(table, generated=generated, version=version, baseline=before)
    return write_folder(out, {out / name: mask.text(text) for name, text in texts.items()})
