"""The pure core of what tools cost: marginal costs from prefixes, and the search for the
number of tools at which calls start to fail (``conchcheck.core.toolcost``)."""

from __future__ import annotations

import pytest

from conchcheck.core.toolcost import (
    NEEDLE,
    CapacitySearch,
    CapacityTrial,
    capacity_tools,
    filler,
    marginal,
)


@pytest.mark.parametrize(
    ("baseline", "prefixes", "costs"),
    [
        pytest.param(20, [85, 160, 190], [65, 75, 30], id="each-tool-what-its-prefix-adds"),
        pytest.param(20, [85, None, 190], [65, None, None], id="an-unknown-prefix-hides-two"),
        pytest.param(20, [], [], id="no-tools"),
    ],
)
def test_marginal_costs(baseline: int, prefixes: list[int | None], costs: list[int | None]) -> None:
    assert marginal(baseline, prefixes) == costs


def endpoint(capacity: int, drops_after: int | None = None, refuses_after: int | None = None):
    """An endpoint whose calls succeed up to ``capacity`` tools; past ``drops_after`` the
    prompt stops growing (tools cut silently); past ``refuses_after`` it refuses."""

    def trial(tools: int) -> CapacityTrial:
        if refuses_after is not None and tools > refuses_after:
            return CapacityTrial(tools, called=False, prompt_tokens=None, refused=True)
        shown = tools if drops_after is None else min(tools, drops_after)
        return CapacityTrial(tools, called=tools <= capacity, prompt_tokens=30 + 60 * shown)

    return trial


@pytest.mark.parametrize(
    ("answers", "tried", "capacity", "point"),
    [
        pytest.param(
            endpoint(37), [1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37], 37, 38,
            id="doubles-then-halves-the-gap",
        ),
        pytest.param(
            endpoint(1000), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], 512, None,
            id="takes-every-count-tried",
        ),
        pytest.param(endpoint(0), [1], None, 1, id="no-call-even-with-one-tool"),
        pytest.param(
            # Ollama's small default window cuts the tools and the model calls another (or
            # none): the prompt stops growing at 20 tools, which gives the cut away.
            endpoint(1000, drops_after=20), [1, 2, 4, 8, 16, 32, 24, 20, 22, 21], 20, 21,
            id="tools-dropped-silently-the-prompt-stops-growing",
        ),
        pytest.param(
            endpoint(1000, refuses_after=40), [1, 2, 4, 8, 16, 32, 64, 48, 40, 44, 42, 41],
            40, 41, id="llama-cpp-refuses-a-prompt-past-its-window",
        ),
    ],
)  # fmt: skip
def test_the_capacity_search(
    answers: object, tried: list[int], capacity: int | None, point: int | None
) -> None:
    search = CapacitySearch()
    sent = []
    while (count := search.next()) is not None:
        sent.append(count)
        search.record(answers(count))  # type: ignore[operator]
    assert sent == tried
    assert search.capacity == capacity
    assert (search.point.tools if search.point else None) == point


def test_the_capacity_tools_end_with_the_needle() -> None:
    tools = capacity_tools(4)
    assert [t.name for t in tools] == [
        "lookup_shipment_001", "lookup_customer_002", "lookup_contract_003", "get_ticket_status",
    ]  # fmt: skip
    assert tools[-1] == NEEDLE
    assert len({filler(i).name for i in range(1, 600)}) == 599
