"""The cells of a probe: each one request (or a few), what came back, how it was read, the outcome.

Cells carry typed evidence (the request with keys redacted, the reply trimmed, how its calls
were read, the classified refusal); ``results.json`` is the cells written out as data, and
``report.json.load_results`` reads them back as the same types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from conchcheck.core.refusals import Refusal
from conchcheck.core.usertools import OwnTool
from conchcheck.wire.chat import Finding as Finding
from conchcheck.wire.chat import Finish as Finish
from conchcheck.wire.chat import ToolCall as ToolCall
from conchcheck.wire.exchange import WireErrorKind as WireErrorKind

if TYPE_CHECKING:
    from conchcheck.wire.catalogue import ModelInfo


class Stage(str, Enum):
    """The stages of a probe, in the order they run."""

    REACH = "reach"
    CATALOGUE = "catalogue"
    DIALECT = "dialect"
    NATIVE = "native"
    WORDS = "words"
    FOLLOW_UP = "follow_up"


class Outcome(str, Enum):
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
    UNWANTED_CALL = "unwanted_call"
    CUT_OFF = "cut_off"
    REFUSED = "refused"
    ERROR = "error"
    SKIPPED = "skipped"


class CellMode(str, Enum):
    """How a prompt cell passed its tools, or which follow-up a follow-up cell is."""

    NATIVE = "native"
    WORDS = "words"
    ROUND_TRIP_NATIVE = "round_trip/native"
    ROUND_TRIP_WORDS = "round_trip/words"
    STREAMING = "streaming"


PASSING = frozenset({Outcome.PASS, Outcome.PASS_AFTER_REPAIR, Outcome.ACCEPTED})


@dataclass(frozen=True, slots=True)
class RequestEvidence:
    """What was sent: method, URL and headers with keys redacted, the body (trimmed when large)."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    """The JSON body as sent, or its text cut to a limit (saying how much was left out)."""


@dataclass(frozen=True, slots=True)
class ReplyEvidence:
    """What came back: the status, and the reply as read (or what a failed one carried)."""

    status: int | None
    attempts: int = 1
    text: str | None = None
    """None when no reply could be read at all."""
    calls: tuple[ToolCall, ...] = ()
    """Native calls exactly as the provider sent them."""
    finish: Finish | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    findings: tuple[Finding, ...] = ()
    body: str = ""
    """The body (or stream) as received, trimmed, keys scrubbed."""
    waits: tuple[float, ...] = ()
    """Seconds waited before each retry."""


@dataclass(frozen=True, slots=True)
class ReadCall:
    """One call as conchcheck read it: its form, the arguments after reading, what it took."""

    form: str
    """``native``, or the form a call in words was written in (``hermes``, ``xml``, …)."""
    name: str | None
    ok: bool
    arguments: Any = None
    repairs: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    message: str | None = None
    """What the model would be told when the call doesn't fit."""
    raw: str | None = None
    """A call in words: its text as written (trimmed)."""


@dataclass(frozen=True, slots=True)
class CallReading:
    """How a reply's calls were read; for words, also the words a user would see."""

    calls: tuple[ReadCall, ...] = ()
    text: str | None = None
    fake_responses: int = 0
    """``<tool_response>`` blocks the model wrote itself (dropped, never believed)."""
    list_level: str | None = None
    """Words: how much of each tool the list in the system prompt carried."""


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
    dialect: str | None = None
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
    extra: Mapping[str, Any] = field(default_factory=dict)
    calls: tuple[ToolCall, ...] = ()
    """The calls a follow-up answers: the provider's own (native) or those read (words)."""

    @property
    def refusal_kind(self) -> str | None:
        """The refusal's kind, when the provider refused."""
        return self.refusal.kind.value if self.refusal is not None else None

    @property
    def label(self) -> str:
        """``pass``, ``refused:schema``, ``error:timeout`` and the like."""
        if self.outcome is Outcome.REFUSED:
            return f"refused:{self.refusal_kind or 'other'}"
        if self.outcome is Outcome.ERROR:
            return f"error:{self.error_kind.value if self.error_kind else 'other'}"
        return str(self.outcome.value)


class Mode(str, Enum):
    """How the model calls tools."""

    NATIVE = "native"
    WORDS = "words"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Refused:
    """A schema case refused in one dialect, with the provider's words."""

    case: str
    dialect: str
    kind: str
    message: str
    keyword: str | None = None


@dataclass(frozen=True, slots=True)
class DialectVerdict:
    """The most permissive dialect in which every valid schema case was accepted."""

    dialect: str | None
    chain: tuple[str, ...]
    refused: tuple[Refused, ...]
    """Schema refusals, every dialect."""
    limits: tuple[Refused, ...]
    """Refusals for another reason (a window too small for 128 tools): the endpoint's limits."""
    carriers: Mapping[str, tuple[str, ...]]
    """For each case the chain's dialect could not carry: the dialects that accepted it."""
    invalid_accepted: tuple[str, ...]
    """Deliberately invalid cases the provider accepted anyway."""
    best: str | None = None
    """When no dialect carries every valid case: the one that carries the most."""
    unsettled: tuple[str, ...] = ()
    """Dialects more permissive than the verdict that no schema refusal ruled out (their
    requests failed): the verdict stands on what was settled."""


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


@dataclass(frozen=True, slots=True)
class StrictMode:
    """The strict-mode trial (the Responses API): the valid schema cases ``strict: true``
    took and refused. A case whose request failed is in neither."""

    accepted: tuple[str, ...]
    refused: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Leak:
    """Native cells whose calls the server left in the text, for one family's format."""

    family: str
    cells: tuple[str, ...]
    fix: str


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """Everything a probe found: the cells, the catalogue, the verdict, what it cost."""

    target: str
    provider: str
    model: str
    endpoint: str
    family: str
    matrix: str
    matrix_digest: str
    cells: tuple[Cell, ...]
    catalogue: ModelInfo | None
    verdict: Verdict | None
    requests: int
    prompt_tokens: int
    completion_tokens: int
    stage_ms: dict[str, float]
    stopped: str | None = None
    """Why the probe stopped early (budget, interrupt), or None."""
    unusable: str | None = None
    """Why the target can't be probed (unreachable, auth, unknown model), or None."""
    stage_requests: dict[str, int] = field(default_factory=dict)
    """Requests each stage spent (retries included)."""
    critical_path: int = 0
    """Requests in the longest chain that had to run one after another."""
    own_tools: tuple[OwnTool, ...] = ()
    """The user's own tools (``probe --tools``), each the schema case of its name."""
