"""One request and what came of it, as a value: the model replied, the provider refused, the
server couldn't parse the model's output, or the request failed. Every caller matches on
``Exchange.outcome``; nobody re-derives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TypeAlias

from conchcheck.core.jsontypes import JsonObject
from conchcheck.core.refusals import Refusal
from conchcheck.core.unparsed import ParseFailure, read_failed_generation
from conchcheck.wire.chat import Reply


class WireErrorKind(str, Enum):
    """Why a request got no usable answer."""

    TIMEOUT = "timeout"
    CONNECT = "connect"
    TOO_LARGE = "too_large"
    BAD_SHAPE = "bad_shape"
    REDIRECT = "redirect"
    INSECURE = "insecure"
    CATALOGUE = "catalogue"
    """A catalogue look-up got no usable answer (it says why in words)."""
    BUDGET = "budget"
    """Not sent: the probe's budget was spent."""


@dataclass(frozen=True, slots=True)
class WireError:
    """A request that got no usable answer; ``detail`` is a sentence, keys scrubbed."""

    kind: WireErrorKind
    detail: str
    shape: str | None = None
    """For ``bad_shape``: the ``ShapeKind`` value (html_page, stream_unterminated, …)."""
    partial: Reply | None = None
    """What could be read before the shape went wrong (a stream cut before its end)."""


@dataclass(frozen=True, slots=True)
class Replied:
    """The model replied: a 2xx of the shape its provider documents."""

    reply: Reply


@dataclass(frozen=True, slots=True)
class Refused:
    """The provider refused: a non-2xx, or an error event inside a 2xx stream."""

    refusal: Refusal
    partial: Reply | None = None
    """What a 2xx stream carried before its error event (LM Studio, Groq, Anthropic)."""


@dataclass(frozen=True, slots=True)
class Unparsed:
    """The model answered, but the server couldn't parse its output: a 5xx saying so
    (llama-server), or a refusal carrying the model's failed generation (Groq's
    ``tool_use_failed``).

    Not a refusal: the request and its tools were accepted, and the model generated. At
    temperature 0 the same request gets the same output, so it is never sent again.
    """

    failure: ParseFailure
    partial: Reply | None = None
    """What a 2xx stream carried before its error event: the output as the server streamed it."""
    refusal: Refusal | None = None
    """The refusal it came as, classified (Groq's is kind ``tools``: words are the cure), kept
    as the record."""


def refused(refusal: Refusal, partial: Reply | None = None) -> Refused | Unparsed:
    """The outcome of a refusal: ``Unparsed`` when it carries the model's failed generation
    (vectors groq-tool-use-failed-carries-failed-generation and
    groq-stream-error-event-with-status-200), so every stage reads it as output the server
    couldn't parse, the request accepted; else ``Refused``."""
    generated = read_failed_generation(refusal)
    if generated is None:
        return Refused(refusal, partial)
    return Unparsed(generated, partial, refusal)


@dataclass(frozen=True, slots=True)
class Failed:
    """No usable reply: connection, time-out, too large, a redirect, or a 2xx of another shape.

    A failed request is never evidence of anything about the model or the provider's rules.
    """

    error: WireError


RequestOutcome: TypeAlias = Replied | Refused | Unparsed | Failed


def carried(outcome: RequestOutcome) -> Reply | None:
    """The reply an outcome carries: whole, a refused stream's, or what a failure read first."""
    match outcome:
        case Replied(reply):
            return reply
        case Refused(_, partial):
            return partial
        case Unparsed(_, partial):
            return partial
        case Failed(error):
            return error.partial


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and what came of it, keys redacted."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: JsonObject | None
    outcome: RequestOutcome
    status: int | None = None
    attempts: int = 1
    latency_ms: float = 0.0
    body: str = ""
    """The reply body (or stream) as received, trimmed, keys scrubbed."""
    waits: tuple[float, ...] = field(default=())
    """Seconds waited before each retry."""

    # Views of ``outcome`` for tests and one-off callers; stages match on ``outcome``.
    @property
    def reply(self) -> Reply | None:
        """The reply read, or what a stream carried before its error event."""
        match self.outcome:
            case Replied(reply):
                return reply
            case Refused(_, partial) | Unparsed(_, partial):
                return partial
            case Failed():
                return None

    @property
    def refusal(self) -> Refusal | None:
        """The classified refusal, when the provider refused, or sent as a refusal the output
        it couldn't parse (Groq's tool_use_failed: ``Unparsed.refusal``)."""
        return self.outcome.refusal if isinstance(self.outcome, Refused | Unparsed) else None

    @property
    def unparsed(self) -> ParseFailure | None:
        """What the server said of the output it couldn't parse, when it said so."""
        return self.outcome.failure if isinstance(self.outcome, Unparsed) else None

    @property
    def error(self) -> WireError | None:
        """Why no usable reply came, when the request failed."""
        return self.outcome.error if isinstance(self.outcome, Failed) else None
