"""The facts other stacks ask about tool calling, read from a capability entry: each one
``True`` or ``False`` only when the probe measured it, else ``None`` (unknown, never false).

This is the one owner of how conchcheck's measurements answer other vocabularies' questions
(LiteLLM's ``supports_*``, models.dev's ``tool_call``); ``exports`` only writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.capabilities.entry import Entry
from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.knobs import Fidelity, KnobState

TYPE_CHANGES = frozenset({FidelityChange.NUMBER_ROUNDED, FidelityChange.OTHER})
"""Argument changes that alter a value's type or number, what models.dev's proposed
``coerces_types`` names (anomalyco/models.dev#342: Bedrock turning integers into text and
dropping values of 2^31 and more). Text changes (newlines, escapes, non-ASCII) are not."""

_SETTLED = frozenset({KnobState.HONOURED, KnobState.IGNORED, KnobState.REFUSED})


@dataclass(frozen=True, slots=True)
class Measured:
    """What one entry's probe measured, in the questions stacks ask; None is unknown."""

    native: bool | None
    """Native tool calling passed the probe's threshold (mode ``native``); None when no
    native prompt got an answer."""
    mode: str | None
    """``native``, ``words`` or ``none``; None when the prompts weren't measured."""
    dialect: str | None
    """The most permissive dialect that carried every valid schema case; None when none did
    or the dialect stage didn't run."""
    tool_choice: bool | None
    """Every ``tool_choice`` (none, required, a named tool) measured was honoured; False when
    one was ignored, refused or can't be said in this API; None when none was measured."""
    parallel: bool | None
    """A native reply carried two calls or more. Never False: a model that didn't make two
    calls to the matrix's prompts may still make them."""
    streaming: bool | None
    """Streamed replies agreed with whole ones on every pair compared; None when none was."""
    coerces_types: bool | None
    """Exact arguments came back with a number or a type changed; False when they came back
    exact or only their text changed; None when fidelity wasn't measured."""


def measured(entry: Entry) -> Measured:
    """The facts of ``entry`` that other stacks' fields can hold."""
    answered = entry.tools_observed is not None  # some native prompt got an answer
    section = entry.knobs_and_losses
    tool_choice = parallel = streaming = coerces = None
    if section is not None:
        knobs = section.knobs
        states = [knobs.tool_choice_none, knobs.tool_choice_required, knobs.tool_choice_named]
        if KnobState.NOT_OFFERED in states:
            tool_choice = False
        elif any(state in _SETTLED for state in states):
            tool_choice = all(s in (KnobState.HONOURED, KnobState.UNTESTED) for s in states)
        if section.ids.unique_in_reply is not None:
            parallel = True
        if section.streaming.agree or section.streaming.disagree:
            streaming = section.streaming.disagree == 0
        if section.fidelity is not Fidelity.UNTESTED:
            coerces = bool(TYPE_CHANGES.intersection(section.fidelity_changes))
    return Measured(
        native=entry.mode == "native" if answered else None,
        mode=entry.mode if answered else None,
        dialect=entry.dialect,
        tool_choice=tool_choice,
        parallel=parallel,
        streaming=streaming,
        coerces_types=coerces,
    )
