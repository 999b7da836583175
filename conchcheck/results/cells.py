"""The cells of a probe: each one request (or a few), what came back, how it was read, the outcome.

Cells carry typed evidence (``results.evidence``) and typed facts of their stage
(``results.facts``); ``results.writer`` writes them out and ``results.reader`` reads them back
as the same types.
"""

from __future__ import annotations

from dataclasses import dataclass

from conchcheck.core.names import Name
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.core.trials import Trial
from conchcheck.results.evidence import CallReading, ReplyEvidence, RequestEvidence
from conchcheck.results.facts import CellFacts, SchemaFacts
from conchcheck.wire.chat import Finding, ToolCall
from conchcheck.wire.exchange import WireErrorKind


class Stage(Name):
    """The stages of a probe, in the order they run."""

    REACH = "reach"
    CATALOGUE = "catalogue"
    DIALECT = "dialect"
    NATIVE = "native"
    WORDS = "words"
    FOLLOW_UP = "follow_up"
    KNOBS = "knobs"
    """Knobs and losses: tool_choice, parallel control, strict mode, call ids, fidelity."""
    COST = "cost"
    """What the tools cost: each tool's prompt tokens, and the capacity point."""


class Outcome(Name):
    """What one cell came to."""

    ACCEPTED = "accepted"
    """A dialect cell: the provider took the schema."""
    PASS = "pass"
    PASS_AFTER_REPAIR = "pass_after_repair"
    WRONG_ARGUMENTS = "wrong_arguments"
    WRONG_TOOL = "wrong_tool"
    NO_CALL = "no_call"
    LEAKED = "leaked"
    """A native prompt whose call came back in the reply's text: the server didn't parse it."""
    SWALLOWED = "swallowed"
    """A native prompt whose only call was written in the reasoning channel and never emitted:
    no native call, none in the visible text, one to an offered tool in the reasoning."""
    UNWANTED_CALL = "unwanted_call"
    CUT_OFF = "cut_off"
    UNPARSED_BY_SERVER = "unparsed_by_server"
    """The model answered, and the server couldn't parse its output (a 5xx saying so, or a
    refusal carrying the failed generation, Groq's tool_use_failed, kept as the record): the
    model's answer; a dialect cell so answered was accepted."""
    NOT_HONOURED = "not_honoured"
    """A knob cell: the endpoint took the knob and did not do what it says (ignored, or strict
    mode failing open), or call ids or exact arguments came back broken."""
    REFUSED = "refused"
    ERROR = "error"
    SKIPPED = "skipped"


class CellMode(Name):
    """How a prompt cell passed its tools, or which follow-up a follow-up cell is."""

    NATIVE = "native"
    WORDS = "words"
    ROUND_TRIP_NATIVE = "round_trip/native"
    ROUND_TRIP_WORDS = "round_trip/words"
    STREAMING = "streaming"


PASSING = frozenset({Outcome.PASS, Outcome.PASS_AFTER_REPAIR, Outcome.ACCEPTED})


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of a probe and its evidence."""

    id: str
    """Unique in a run: ``dialect/gemini/ref-defs``, ``native/weather-enum/1``."""
    stage: Stage
    case: str
    """The schema case or prompt id."""
    outcome: Outcome
    detail: str = ""
    """One sentence: why this outcome."""
    dialect: Trial | None = None
    mode: CellMode | None = None
    """``native`` or ``words`` for prompt cells; the follow-up's check for follow-ups."""
    attempt: int = 1
    error_kind: WireErrorKind | None = None
    """Why the request failed."""
    repairs: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    request: RequestEvidence | None = None
    reply: ReplyEvidence | None = None
    reading: CallReading | None = None
    refusal: Refusal | None = None
    cases: tuple[str, ...] = ()
    """For a dialect cell sent with several cases at once: every case in the request."""
    requests: int = 1
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    facts: CellFacts | None = None
    """What the cell knows beyond its outcome, typed by its stage (``results.facts``)."""
    calls: tuple[ToolCall, ...] = ()
    """The calls a follow-up answers: the provider's own (native) or those read (words)."""

    @property
    def invalid_case(self) -> bool:
        """A dialect cell of a schema case that is deliberately not valid JSON Schema."""
        return isinstance(self.facts, SchemaFacts) and not self.facts.valid

    @property
    def refusal_kind(self) -> RefusalKind | None:
        """The refusal's kind, when the provider refused."""
        return self.refusal.kind if self.refusal is not None else None

    @property
    def label(self) -> str:
        """``pass``, ``refused:schema``, ``error:timeout`` and the like."""
        if self.outcome is Outcome.REFUSED:
            return f"refused:{self.refusal_kind or 'other'}"
        if self.outcome is Outcome.ERROR:
            # A refusal that proves nothing (a rate limit, a quota) is a failure of its kind.
            kind = self.error_kind.value if self.error_kind else self.refusal_kind
            return f"error:{kind or 'other'}"
        return str(self.outcome.value)
