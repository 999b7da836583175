"""The verdict a probe reaches, with what it stands on: typed, as ``results.json`` holds it.

``conchcheck.verdict`` computes it from the cells; this module only says what it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from conchcheck.core.confidence import Labels
from conchcheck.core.dialects import Dialect
from conchcheck.core.knobs import KnobsAndLosses
from conchcheck.core.names import Name
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.toolcost import ToolCosts
from conchcheck.core.trials import Trial


class Mode(Name):
    """How the model calls tools."""

    NATIVE = "native"
    WORDS = "words"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class CaseRefusal:
    """A schema case refused in one dialect, with the provider's words."""

    case: str
    dialect: Trial
    """A dialect, or a schema as written (the Responses API's ``strict_mode``)."""
    kind: RefusalKind
    message: str
    keyword: str | None = None
    path: str | None = None
    """The place the refusal names (``tools[19].function.parameters``), when it names one."""

    @property
    def reason(self) -> str:
        """``schema: function.parameters``: the kind and what it names, the tool's position left
        out (it is the position in one request, not the case's)."""
        named = self.keyword or (re.sub(r"^tools(?:\[\d+\]|\.\d+)\.?", "", self.path or "") or None)
        return f"{self.kind.value}: {named}" if named else self.kind.value


@dataclass(frozen=True, slots=True)
class DialectVerdict:
    """The most permissive dialect in which every valid schema case was accepted."""

    dialect: Dialect | None
    chain: tuple[Dialect, ...]
    refused: tuple[CaseRefusal, ...]
    """Schema refusals, every dialect."""
    limits: tuple[CaseRefusal, ...]
    """Refusals for another reason (a window too small for 128 tools): the endpoint's limits."""
    carriers: Mapping[str, tuple[Trial, ...]]
    """For each case the chain's dialect could not carry: the dialects that accepted it."""
    invalid_accepted: tuple[str, ...]
    """Deliberately invalid cases the provider accepted anyway."""
    best: Dialect | None = None
    """When no dialect carries every valid case: the one that carries the most."""
    unsettled: tuple[Dialect, ...] = ()
    """Dialects more permissive than the verdict that no schema refusal ruled out (their
    requests failed): the verdict stands on what was settled."""
    excepted: tuple[CaseRefusal, ...] = ()
    """The verdict "``dialect``, except: …": the valid cases no dialect carried, each refused in
    every dialect tried for one reason (its refusal in ``dialect``); ``dialect`` carried every
    other valid case."""

    @property
    def short(self) -> str:
        """``permissive``, ``permissive except no-parameters``, or ``none``: for a table cell."""
        chosen = self.dialect.value if self.dialect else "none"
        excepted = ", ".join(r.case for r in self.excepted)
        return f"{chosen} except {excepted}" if excepted else chosen

    @property
    def exceptions(self) -> str:
        """``no-parameters (schema: function.parameters)``, each excepted case with its reason;
        empty when there are none."""
        return "; ".join(f"{r.case} ({r.reason})" for r in self.excepted)


@dataclass(frozen=True, slots=True)
class Rates:
    """How the prompt cells of one mode went."""

    total: int
    passed: int
    clean: int
    refused_tools: int
    no_call: int
    failed: int = 0
    """Cells whose request failed: not in ``total``, since a failure proves nothing."""
    leaked: int = 0
    """Native cells whose calls came back as text the server didn't parse."""

    @property
    def rate(self) -> float:
        """Passed (clean or after repair) over all cells with an answer."""
        return self.passed / self.total if self.total else 0.0

    @property
    def clean_rate(self) -> float:
        """Passed with no repair over all cells."""
        return self.clean / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer conchcheck gives, with what it stands on."""

    dialect: DialectVerdict
    mode: Mode
    reason: str
    native: Rates
    words: Rates
    repairs_seen: tuple[str, ...]
    refused_keywords: tuple[str, ...]
    tools_declared: bool | None
    tools_observed: bool | None
    findings: tuple[str, ...]
    leaks: tuple[Leak, ...] = ()
    """Native calls left in the text, by family, with what fixes the server."""
    strict_mode: StrictMode | None = None
    """What ``strict: true`` did to the valid schema cases; None when it was not tried."""
    options: tuple[Option, ...] = ()
    """The ways an app can use this model's tools, each with its measured rate, best first."""
    knobs_and_losses: KnobsAndLosses | None = None
    """Knobs and losses: what the endpoint did with each knob, and the calls it lost (None in
    files before it)."""
    labels: Labels | None = None
    """Each prompt's attempts, interval and label in each mode, with the confidence and
    threshold used (None in files before it)."""
    tool_costs: ToolCosts | None = None
    """What each tool costs in prompt tokens, and the capacity point; None when the probe
    did not measure it (``--checks`` without ``cost``, and files before it)."""


@dataclass(frozen=True, slots=True)
class StrictMode:
    """The strict-mode trial (the Responses API): the valid schema cases ``strict: true``
    took and refused. A case whose request failed is in neither."""

    accepted: tuple[str, ...]
    refused: tuple[str, ...]


class Route(Name):
    """A way an app can get this model's calls."""

    NATIVE = "native"
    """The tools passed natively, the server's calls used as they come."""
    NATIVE_AFTER_FIX = "native_after_fix"
    """Natively, once the server is set up to parse the format the model writes."""
    FROM_TEXT = "from_text"
    """Natively, the client reading calls from the reply's text when the server parsed none."""
    WORDS = "words"
    """The tools listed in the prompt, the calls read from the reply's text."""

    @property
    def phrase(self) -> str:
        """The route in a sentence: ``native after a server fix``."""
        return _PHRASES[self]


_PHRASES = {
    Route.NATIVE: "native as is",
    Route.NATIVE_AFTER_FIX: "native after a server fix",
    Route.FROM_TEXT: "native, reading calls from the reply text",
    Route.WORDS: "tools in words",
}


@dataclass(frozen=True, slots=True)
class Option:
    """One route with what the probe measured for it."""

    route: Route
    passed: int
    total: int
    how: str
    """What to do, in one sentence."""
    bound: bool = False
    """The rate is an upper bound: measured from what the model wrote, not what a fixed server
    returned (a template fix is not tried by the probe)."""

    @property
    def rate(self) -> float:
        """Passed over the cells that got an answer."""
        return self.passed / self.total if self.total else 0.0

    @property
    def share(self) -> str:
        """``8/11 (73%)``, or ``up to 8/11 (73%)`` for a bound."""
        return f"{'up to ' * self.bound}{self.passed}/{self.total} ({self.rate:.0%})"


@dataclass(frozen=True, slots=True)
class Leak:
    """Native cells whose calls the server left in the text, for one family's format."""

    family: str
    cells: tuple[str, ...]
    fix: str
