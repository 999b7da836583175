"""The request knobs a client relies on beyond the call itself, what an endpoint did with each,
and the section of a verdict and a capability entry that says so: ``knobs``, ``ids``,
``finish_reason``, ``fidelity``, ``fidelity_changes``, ``reasoning``, ``streaming`` (DESIGN
stage 8). ``conchcheck.knobs`` computes it from a probe's cells. None and ``untested`` never
mean fine: they mean not measured."""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.names import Name
from conchcheck.core.refusals import RefusalKind


class Knob(Name):
    """A request parameter an app sets and trusts the endpoint to obey."""

    TOOL_CHOICE_NONE = "tool_choice_none"
    """No call may come back, whatever the prompt asks."""
    TOOL_CHOICE_REQUIRED = "tool_choice_required"
    """A call must come back, even to a prompt that needs none."""
    TOOL_CHOICE_NAMED = "tool_choice_named"
    """The named tool must be called, even when the prompt points at another."""
    PARALLEL_FALSE = "parallel_false"
    """At most one call a reply (``parallel_tool_calls: false``, Anthropic's
    ``disable_parallel_tool_use``)."""
    STRICT = "strict"
    """Calls conform to the schema (``strict: true``), and schemas strict mode can't enforce
    are refused."""


KNOB_REFUSALS = frozenset({RefusalKind.SCHEMA, RefusalKind.OTHER})
"""Refusals that speak of the request (a parameter or a schema it can't take). Auth, rate
limits, quota, the context and a model that takes no tools say nothing of a knob."""


class KnobState(Name):
    """What the endpoint did with a knob; only ``honoured`` means an app may rely on it."""

    HONOURED = "honoured"
    IGNORED = "ignored"
    """Taken, and the reply shows it had no effect."""
    REFUSED = "refused"
    """The request with the knob set was refused (a classified refusal, with its text)."""
    FAILS_OPEN = "fails_open"
    """Strict mode only: accepted, and a returned call breaks the schema."""
    NOT_OFFERED = "not_offered"
    """The API family has no way to say it (Ollama's own API has no ``tool_choice``)."""
    UNTESTED = "untested"
    """Not measured: not asked for, no usable reply, or nothing the knob could change. Never
    read as fine."""


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
class KnobsAndLosses:
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
