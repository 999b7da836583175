"""What changed since a previous compatibility report: per row (a target in one API), the
marks that got better or worse, and the rows that came or went.
"""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.report.compatibility.table import CompatTable


@dataclass(frozen=True, slots=True)
class MarkChange:
    """One mark of one row that is not what it was."""

    target: str
    api: str
    feature: str
    before: str
    after: str
    better: bool


@dataclass(frozen=True, slots=True)
class Diff:
    """The changes against a baseline, worse first, and the rows only one side has (each
    ``name (api)``)."""

    changes: tuple[MarkChange, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def worse(self) -> tuple[MarkChange, ...]:
        """The regressions."""
        return tuple(c for c in self.changes if not c.better)

    @property
    def better(self) -> tuple[MarkChange, ...]:
        """The improvements."""
        return tuple(c for c in self.changes if c.better)


def compare(table: CompatTable, baseline: CompatTable) -> Diff:
    """``table`` against ``baseline``, target by target and feature by feature.

    A mark changed when its status or its value did; it is better when its status ranks
    higher, or the same status with a higher value (a rate that rose).
    """
    # Rows meet by the name the table shows and the API: the target alone unless two rows
    # of one API share it, so a baseline probed on another port (a local server's) still
    # meets its row, and one server's chat row never meets its Messages row.
    before = {row.shown: row for row in baseline.rows}
    now = {row.shown: row for row in table.rows}
    changes = []
    for row in table.rows:
        old = before.get(row.shown)
        if old is None:
            continue
        for column in table.columns:
            mark, was = row.marks.get(column.key), old.marks.get(column.key)
            if mark is None or was is None:
                continue
            if (mark.status, mark.text) == (was.status, was.text):
                continue
            better = (mark.status.rank, mark.sort) > (was.status.rank, was.sort)
            shown = (f"{was.status.shape} {was.text}", f"{mark.status.shape} {mark.text}")
            changes.append(MarkChange(row.name, row.api, column.title, *shown, better))
    changes.sort(key=lambda c: (c.better, c.target, c.api))
    added = tuple(sorted(set(now) - set(before)))
    removed = tuple(sorted(set(before) - set(now)))
    return Diff(tuple(changes), added, removed)
