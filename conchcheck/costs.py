"""Cells -> the tool-cost section of a verdict (pure): each tool's prompt tokens in each
dialect measured, from the prefix cells, and the capacity point, from the capacity cells
replayed through the same search that chose them.
"""

from __future__ import annotations

from collections.abc import Sequence

from conchcheck.core.toolcost import (
    CapacitySearch,
    CapacityTrial,
    ToolCost,
    ToolCosts,
    marginal,
)
from conchcheck.results.cells import Cell, Outcome, Stage

BASELINE = "cost/none"
"""The cell of the request with no tools, which every first tool's cost is counted from."""


def tool_costs(cells: Sequence[Cell]) -> ToolCosts | None:
    """The section, or None when the probe measured no cost (``--checks`` without cost)."""
    measured = [c for c in cells if c.stage is Stage.COST]
    if not measured:
        return None
    base = next((c for c in measured if c.id == BASELINE), None)
    baseline = _tokens(base)
    prefixes: dict[str, dict[int, Cell]] = {}
    for cell in measured:
        parts = cell.id.split("/")
        if parts[0] == "cost" and len(parts) == 3 and parts[2].isdigit():
            prefixes.setdefault(parts[1], {})[int(parts[2])] = cell
    names: list[str] = []
    tokens: dict[str, dict[str, int | None]] = {}
    for dialect, by_count in prefixes.items():
        counts = range(1, max(by_count) + 1)
        costs = marginal(baseline, [_tokens(by_count.get(k)) for k in counts])
        for k in counts:
            prefix = by_count.get(k)
            name = prefix.cases[-1] if prefix is not None and prefix.cases else None
            if name is None:
                continue
            if name not in names:
                names.append(name)
            cost = costs[k - 1]
            tokens.setdefault(name, {})[dialect] = cost
    capacity, point, why, sent_in = _capacity(measured)
    return ToolCosts(
        baseline=baseline,
        tools=tuple(ToolCost(name, tokens.get(name, {})) for name in names),
        capacity=capacity,
        point=point,
        why=why,
        dialect=sent_in,
    )


def trial_of(cell: Cell) -> CapacityTrial:
    """What a capacity cell (``capacity/<tools>``) tells the search."""
    return CapacityTrial(
        int(cell.id.removeprefix("capacity/")),
        called=cell.outcome is Outcome.PASS,
        prompt_tokens=cell.prompt_tokens,
        refused=cell.outcome is Outcome.REFUSED,
    )


def _tokens(cell: Cell | None) -> int | None:
    return cell.prompt_tokens if cell is not None and cell.outcome is Outcome.PASS else None


def _capacity(cells: Sequence[Cell]) -> tuple[int | None, int | None, str, str | None]:
    trials = [c for c in cells if c.id.startswith("capacity/")]
    if not trials:
        return None, None, "The capacity search sent nothing.", None
    search = CapacitySearch()
    by_count: dict[int, Cell] = {}
    for cell in trials:
        if cell.outcome is Outcome.ERROR:
            break  # the search stopped here: a failure proves nothing
        trial = trial_of(cell)
        by_count[trial.tools] = cell
        search.record(trial)
    dialect = str(trials[0].dialect) if trials[0].dialect is not None else None
    failed = search.point
    if failed is None:
        if search.capacity is None:
            return None, None, "The capacity search measured nothing: its requests failed.", dialect
        said = f"Every count tried passed, up to {search.capacity} tools."
        return search.capacity, None, said, dialect
    cell = by_count[failed.tools]
    tools = f"{failed.tools} tool{'s' * (failed.tools != 1)}"
    if cell.outcome is Outcome.REFUSED:
        why = f"With {tools} the request was refused: {cell.detail}"
    elif cell.outcome is Outcome.PASS:
        why = (
            f"With {tools} the prompt grew less than the tools added: the"
            " endpoint dropped tools without a word."
        )
    else:
        why = f"With {tools} the tool asked for was not called."
    return search.capacity, failed.tools, why, dialect
