"""Knobs and losses (DESIGN stage 8), typed: what each knob cell found, and the section of the
verdict apps and CI read (``knobs``, ``ids``, ``finish_reason``, ``fidelity``, ``reasoning``,
``streaming``).

``conchcheck.knobs`` computes the section from the cells; this module only says what it is.
None and ``untested`` never mean fine: they mean not measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.core.fidelity import FidelityChange, FieldChange
from conchcheck.core.knobs import Knob, KnobState
from conchcheck.core.names import Name


@dataclass(frozen=True, slots=True)
class KnobFacts:
    """A knob cell: the knob, what the endpoint did with it, and what that stands on."""

    knob: Knob
    state: KnobState
    calls: int | None = None
    """Native calls in the reply with the knob set; None when no reply came."""
    baseline: int | None = None
    """Parallel control: the calls the same prompt got without the flag."""
    breaking: tuple[str, ...] = ()
    """Strict mode: why a returned call breaks the closed schema, one sentence each."""


@dataclass(frozen=True, slots=True)
class IdFacts:
    """The last round of the call-id conversation: the ids each round's reply carried, and
    whether a follow-up carrying them back was accepted."""

    rounds: tuple[tuple[str | None, ...], ...]
    round_trip: bool | None


@dataclass(frozen=True, slots=True)
class FidelityFacts:
    """The fidelity cell: each argument that did not come back byte for byte."""

    changed: tuple[FieldChange, ...]


class Agreement(Name):
    """Whether the provider's finish reason agrees with the reply."""

    AGREES = "agrees"
    WRONG = "wrong"


class Fidelity(Name):
    """Whether exact arguments came back exactly."""

    EXACT = "exact"
    ALTERED = "altered"
    UNTESTED = "untested"


@dataclass(frozen=True, slots=True)
class Ids:
    """Call ids: each None when nothing measured it."""

    present: bool | None = None
    """Every native call carried an id."""
    unique_in_reply: bool | None = None
    """The calls of one reply had different ids (measured on replies of two calls or more)."""
    unique_across_rounds: bool | None = None
    """No id came back twice over the rounds of one conversation (two rounds with calls or more)."""
    round_trip: bool | None = None
    """A follow-up carrying the server's own ids back (calls and results) was accepted."""
    format: str | None = None
    """What the ids look like (``call_<24 alphanumerics>``), from the first one seen."""


@dataclass(frozen=True, slots=True)
class Reasoning:
    """The reasoning channel: whether any reply carried one, and how many lost their call in it."""

    seen: bool = False
    swallowed: int = 0


@dataclass(frozen=True, slots=True)
class Streaming:
    """Streaming parity: prompt pairs whose streamed and whole replies agreed, or did not (a
    stream that agreed only after its deltas were repaired counts as a disagreement)."""

    agree: int = 0
    disagree: int = 0


@dataclass(frozen=True, slots=True)
class Knobs:
    """What the endpoint did with each knob, under the knob's own name."""

    tool_choice_none: KnobState = KnobState.UNTESTED
    tool_choice_required: KnobState = KnobState.UNTESTED
    tool_choice_named: KnobState = KnobState.UNTESTED
    parallel_false: KnobState = KnobState.UNTESTED
    strict: KnobState = KnobState.UNTESTED

    def of(self, knob: Knob) -> KnobState:
        """The state of ``knob``."""
        state: KnobState = getattr(self, knob.value)
        return state


@dataclass(frozen=True, slots=True)
class KnobsVerdict:
    """The knobs-and-losses section of a verdict, with the names a capability entry uses."""

    knobs: Knobs = Knobs()
    ids: Ids = Ids()
    finish_reason: Agreement | None = None
    fidelity: Fidelity = Fidelity.UNTESTED
    fidelity_changes: tuple[FidelityChange, ...] = ()
    reasoning: Reasoning = Reasoning()
    streaming: Streaming = Streaming()
    findings: tuple[str, ...] = ()
    """What an app must know, a sentence each: every knob not honoured, every loss."""
