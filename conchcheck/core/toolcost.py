"""What tools cost an endpoint: the prompt tokens each takes as the endpoint renders it, and
the number of tools at which calls start to fail (the capacity point). Pure: the probe's cost
stage sends the requests these plan and hands back the usage each reply reported.

A tool's cost is measured by prefixes: a request with no tools, then the first tool, the
first two, …, all of them; each tool costs what its prefix adds. That is one request more
than there are tools, where leaving each out in turn would send as many requests each as
long as the whole list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from conchcheck.core.tools import Tool

NEEDLE = Tool(
    name="get_ticket_status",
    description="Get the current status of a support ticket by its id.",
    parameters={
        "type": "object",
        "properties": {"ticket_id": {"type": "string", "description": "The id, like T-1000."}},
        "required": ["ticket_id"],
    },
)
"""The tool the capacity check asks for, always listed last: the one a window too small
loses first (Ollama cuts the prompt from the front only when it must; llama.cpp refuses)."""
NEEDLE_TICKET = "T-4821"
NEEDLE_PROMPT = f"What is the status of ticket {NEEDLE_TICKET}? Use the tool to look it up."
GROWTH = 0.8
"""The share of the expected growth a longer list must show: the filler tools differ by a
noun and a number, a few tokens of some sixty, so a tool cut shows as a fifth or more."""
MAX_CAPACITY = 512
"""Tools tried at most: past it an endpoint takes more tools than any app is likely to send."""


def filler(index: int) -> Tool:
    """The ``index``-th filler tool of the capacity check: plausible, distinct and of about
    the size of a real tool, so the list grows as an app's list of tools grows."""
    noun = _NOUNS[index % len(_NOUNS)]
    number = f"{index:03d}"
    return Tool(
        name=f"lookup_{noun}_{number}",
        description=f"Look up a {noun} record (catalogue {number}) by its id and return its"
        " fields.",
        parameters={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": f"The {noun}'s id."},
                "fields": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The fields to return; all when empty.",
                },
            },
            "required": ["id"],
        },
    )


_NOUNS = ("invoice", "shipment", "customer", "contract", "device", "meeting", "expense")


def capacity_tools(count: int) -> tuple[Tool, ...]:
    """``count`` tools: ``count - 1`` fillers, then the needle."""
    return (*(filler(i) for i in range(1, count)), NEEDLE)


def marginal(baseline: int | None, prefixes: Sequence[int | None]) -> list[int | None]:
    """Each tool's cost from the prompt tokens of its prefix and of the one before (the first
    after ``baseline``, the request with no tools); None where either is unknown."""
    costs: list[int | None] = []
    before: int | None = baseline
    for tokens in prefixes:
        costs.append(None if tokens is None or before is None else tokens - before)
        before = tokens
    return costs


@dataclass(frozen=True, slots=True)
class CapacityTrial:
    """One request of the capacity check: how many tools, and how it went."""

    tools: int
    called: bool
    """The needle was called with the ticket asked for."""
    prompt_tokens: int | None
    refused: bool = False
    """The request was refused (its context, most often): no call could come."""


class CapacitySearch:
    """Where to try next: the tool count doubles while calls succeed, then the gap between
    the last success and the first failure is halved until they are neighbours.

    A trial fails when the needle isn't called, the request is refused, or the prompt did not
    grow with the tools (tools dropped silently: the prompt tokens of a longer list no more
    than a shorter one's).
    """

    def __init__(self, most: int = MAX_CAPACITY) -> None:
        self.most = most
        self.passed: CapacityTrial | None = None
        self.failed: CapacityTrial | None = None
        self.trials: list[CapacityTrial] = []

    def next(self) -> int | None:
        """The tool count to try next; None when the point is found or ``most`` passed."""
        low = self.passed.tools if self.passed else 0
        if self.failed is None:
            if low >= self.most:
                return None
            return min(self.most, max(1, low * 2))
        if self.failed.tools - low <= 1:
            return None
        return (low + self.failed.tools) // 2

    def record(self, trial: CapacityTrial) -> None:
        """Take one trial's outcome."""
        grew = self._grew(trial)
        self.trials.append(trial)
        ok = trial.called and not trial.refused and grew
        if ok and (self.passed is None or trial.tools > self.passed.tools):
            self.passed = trial
        if not ok and (self.failed is None or trial.tools < self.failed.tools):
            self.failed = trial

    def _grew(self, trial: CapacityTrial) -> bool:
        """Whether the prompt grew with the tools added: by at least ``GROWTH`` of what each
        tool added between the two shortest lists measured (the fillers are alike within a
        few tokens), else at all."""
        measured = sorted(
            (t for t in self.trials if t.prompt_tokens is not None and not t.refused),
            key=lambda t: t.tools,
        )
        shorter = [t for t in measured if t.tools < trial.tools]
        if trial.prompt_tokens is None or not shorter:
            return True  # no usage to compare: only the call can tell
        last = shorter[-1]
        assert last.prompt_tokens is not None
        added = trial.prompt_tokens - last.prompt_tokens
        if len(measured) >= 2:
            first, second = measured[:2]
            assert first.prompt_tokens is not None and second.prompt_tokens is not None
            each = (second.prompt_tokens - first.prompt_tokens) / (second.tools - first.tools)
            return added >= each * (trial.tools - last.tools) * GROWTH
        return added > 0

    @property
    def capacity(self) -> int | None:
        """The most tools with which the needle was still called; None when even one failed."""
        return self.passed.tools if self.passed else None

    @property
    def point(self) -> CapacityTrial | None:
        """The first trial that failed past ``capacity``; None when none failed."""
        return self.failed


@dataclass(frozen=True, slots=True)
class ToolCost:
    """What one tool costs, in prompt tokens, in each dialect measured (None: unknown)."""

    tool: str
    tokens: Mapping[str, int | None]
    """By dialect: ``permissive``, ``anthropic``, ``gemini``, ``strict``."""


@dataclass(frozen=True, slots=True)
class ToolCosts:
    """The tool-cost section of a verdict (``--checks cost``): each tool's prompt tokens as
    the endpoint renders it, and the capacity point."""

    baseline: int | None
    """Prompt tokens of the request with no tools."""
    tools: tuple[ToolCost, ...]
    capacity: int | None
    """The most tools with which the asked-for tool was still called; None when not even
    one, or when the search measured nothing."""
    point: int | None
    """The fewest tools with which it no longer was (called, or the prompt stopped growing,
    or the request was refused); None when every count tried passed."""
    why: str
    """One sentence: what happened at the point, or why there is none."""
    dialect: str | None
    """The dialect the capacity search sent its tools in."""

    def in_dialect(self, dialect: str) -> dict[str, int]:
        """Each tool's measured cost in ``dialect`` (unknown ones left out)."""
        return {
            cost.tool: tokens
            for cost in self.tools
            if (tokens := cost.tokens.get(dialect)) is not None
        }
