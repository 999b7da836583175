"""The report's "What the tools cost" section: each tool's prompt tokens in each dialect
measured, and the capacity point (``--checks cost``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conchcheck.core.trials import PERMISSIVENESS
from conchcheck.report.blocks import Block, Bold, Heading, Para, Table

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult

UNKNOWN = "—"
"""A cost the endpoint's usage didn't tell."""


def tool_costs_section(result: ProbeResult) -> list[Block]:
    """The section; nothing when the probe did not measure what the tools cost."""
    costs = result.verdict.tool_costs if result.verdict else None
    if costs is None:
        return []
    dialects = [
        d.value for d in PERMISSIVENESS if any(d.value in cost.tokens for cost in costs.tools)
    ]
    baseline = UNKNOWN if costs.baseline is None else str(costs.baseline)
    blocks: list[Block] = [
        Heading(2, "What the tools cost"),
        Para(
            (
                "The prompt tokens each tool adds as this endpoint renders it, from the usage it"
                f" reports (a request with no tools took {baseline}); {UNKNOWN} where it told"
                " nothing. The first tool also carries what the chat template adds for any"
                " tools at all.",
            )
        ),
    ]
    rows: list[tuple[str, ...]] = []
    for cost in costs.tools:
        rows.append((cost.tool, *(_tokens(cost.tokens.get(d)) for d in dialects)))
    totals = [[cost.tokens.get(d) for cost in costs.tools] for d in dialects]
    rows.append(
        (
            f"all {len(costs.tools)}",
            *(
                _tokens(sum(v for v in values if v is not None))
                if all(v is not None for v in values)
                else UNKNOWN
                for values in totals
            ),
        )
    )
    if dialects:
        blocks.append(Table(("tool", *dialects), tuple(rows)))
    capacity = "none measured" if costs.capacity is None else f"{costs.capacity} tools"
    sent = f" (tools in the {costs.dialect} dialect)" if costs.dialect else ""
    blocks.append(Para((Bold("Capacity"), f": {capacity}{sent}. {costs.why}")))
    return blocks


def _tokens(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)
