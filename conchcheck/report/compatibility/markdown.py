"""``compatibility.md``: the table as GitHub-flavoured Markdown, written through the shared
outline blocks so its escaping is the single-probe report's.
"""

from __future__ import annotations

from conchcheck.report.blocks import Block, Bullets, Code, Heading, Para, Table
from conchcheck.report.compatibility.diff import Diff
from conchcheck.report.compatibility.knobs import GROUP
from conchcheck.report.compatibility.marks import Mark
from conchcheck.report.compatibility.table import CASES, CompatTable
from conchcheck.report.markdown import to_markdown
from conchcheck.report.markup import Status

LEGEND = " · ".join(f"{s.shape} {s.value}" for s in Status)


def cell_text(mark: Mark | None) -> str:
    """``■ permissive``: the shape first, so the value reads without colour."""
    return "—" if mark is None else f"{mark.status.shape} {mark.text}"


def render(table: CompatTable, generated: str, version: str, diff: Diff | None = None) -> str:
    """``compatibility.md`` as text."""
    first, last = table.dates
    when = first if first == last else f"{first} to {last}"
    blocks: list[Block] = [
        Heading(2, "Compatibility"),
        Para(
            (
                f"{len(table.rows)} targets, probed {when}; matrix ",
                *_codes(table.matrices),
                f". Made {generated} by conchcheck {version}. Legend: {LEGEND}.",
            )
        ),
    ]
    features = [c for c in table.columns if c.group not in (CASES, GROUP)]
    knobs = [c for c in table.columns if c.group == GROUP]
    cases = [c for c in table.columns if c.group == CASES]
    for title, columns in (
        ("Features", features),
        ("Knobs and losses", knobs),
        ("Dialect per schema case", cases),
    ):
        if not columns:
            continue
        rows = tuple(
            (row.name, row.api, *(cell_text(row.marks.get(c.key)) for c in columns))
            for row in table.rows
        )
        blocks += [Heading(3, title), Table(("target", "api", *(c.title for c in columns)), rows)]
    if diff is not None:
        blocks += _diff(diff)
    return to_markdown(blocks)


def _codes(names: tuple[str, ...]) -> tuple[Code | str, ...]:
    out: list[Code | str] = []
    for index, name in enumerate(names):
        out += [", " if index else "", Code(name)]
    return tuple(out)


def _diff(diff: Diff) -> list[Block]:
    blocks: list[Block] = [Heading(3, "Changes since the baseline")]
    if not (diff.changes or diff.added or diff.removed):
        return [*blocks, Para(("No change.",))]
    for title, changes in (("Worse", diff.worse), ("Better", diff.better)):
        if changes:
            rows = tuple((c.target, c.api, c.feature, c.before, c.after) for c in changes)
            blocks += [
                Para((f"{title}: {len(changes)}.",)),
                Table(("target", "api", "feature", "before", "after"), rows),
            ]
    items = [("New: ", *_codes(diff.added))] if diff.added else []
    items += [("Gone: ", *_codes(diff.removed))] if diff.removed else []
    if items:
        blocks.append(Bullets(tuple(items)))
    return blocks
