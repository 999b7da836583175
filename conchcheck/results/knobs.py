"""What the knob cells of a probe know (DESIGN stage 8): a knob's state and what it stands
on, the call-id conversation's ids, the fidelity prompt's altered arguments. The verdict's
section they add up to is ``conchcheck.core.knobs.KnobsAndLosses``."""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.core.fidelity import FieldChange
from conchcheck.core.knobs import Knob, KnobState


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
    read_from: str | None = None
    """The cell of another stage that sent this knob's request, the very same: the knob's
    request and reply are that cell's, read again rather than sent twice."""
    baseline_from: str | None = None
    """Parallel control: the cell of another stage that sent the request without the flag,
    the very same, whose reply is the baseline."""


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
