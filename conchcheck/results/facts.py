"""What a cell of one stage knows beyond its outcome: typed, one class a stage.

``results.json`` writes a cell's facts flat in its ``extra`` object, under the keys each
class names (the file's shape since version 1); ``results.reader`` reads them back by stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.results.evidence import ReplyEvidence
from conchcheck.results.knobs import FidelityFacts, IdFacts, KnobFacts


@dataclass(frozen=True, slots=True)
class SchemaFacts:
    """A dialect cell: the schema case's feature, whether it is valid JSON Schema at all, and
    the cell whose byte-equal schema settled it without a request."""

    feature: str
    valid: bool
    same_as: str | None = None


@dataclass(frozen=True, slots=True)
class CatalogueFacts:
    """The catalogue cell: what the provider declared (None where it said nothing)."""

    listed: bool | None
    tools: bool | None
    context_window: int | None


@dataclass(frozen=True, slots=True)
class LeakFacts:
    """Native calls the server left in the reply's text: their format, how many, the fix."""

    family: str
    """The call format's family (``hermes``, ``llama``, …)."""
    calls: int
    fix: str
    """The server flag or template that makes the server parse them."""
    read_passes: bool | None = None
    """Whether the calls read from the text pass the prompt (None in files before it)."""


@dataclass(frozen=True, slots=True)
class NativeFacts:
    """A native prompt cell: the calls the server parsed, and the calls it left as text."""

    native_calls: int
    marker_leak: bool
    """Call markers were in the text: leaked calls, or a finding that saw their markers."""
    leak: LeakFacts | None = None


@dataclass(frozen=True, slots=True)
class StreamFacts:
    """A streaming cell: the streamed reply's native facts and the whole reply it was
    compared with."""

    native: NativeFacts | None
    whole: str | None
    """The whole reply's label (``pass``, ``no_call``, …); None in files of version 1,
    which kept only the streamed reply's facts."""
    whole_reply: ReplyEvidence | None = None


CellFacts = (
    SchemaFacts | CatalogueFacts | NativeFacts | StreamFacts | KnobFacts | IdFacts | FidelityFacts
)
"""The facts a cell may carry, by stage: dialect, catalogue, native, streaming, and the knob
cells' (``results.knobs``)."""
