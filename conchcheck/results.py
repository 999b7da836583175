"""The cells of a probe: each one request (or a few), what came back, how it was read, the outcome.

Cells carry their evidence as plain data (the request with keys redacted, the reply trimmed,
the reading), so ``results.json`` is the cells as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


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
    UNWANTED_CALL = "unwanted_call"
    CUT_OFF = "cut_off"
    REFUSED = "refused"
    ERROR = "error"
    SKIPPED = "skipped"


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
    dialect: str | None = None
    mode: str | None = None
    """``native`` or ``words`` for prompt cells; the follow-up's check for follow-ups."""
    attempt: int = 1
    refusal_kind: str | None = None
    error_kind: str | None = None
    repairs: tuple[str, ...] = ()
    findings: tuple[Mapping[str, str], ...] = ()
    request: Mapping[str, Any] | None = None
    """Method, URL, headers (keys redacted) and body as sent (trimmed)."""
    reply: Mapping[str, Any] | None = None
    """Status, text, calls as received, finish, usage, the body trimmed."""
    reading: Mapping[str, Any] | None = None
    """How the reply was read: each call's form, normalised arguments, repairs, message."""
    refusal: Mapping[str, Any] | None = None
    cases: tuple[str, ...] = ()
    """For a dialect cell sent with several cases at once: every case in the request."""
    requests: int = 1
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``pass``, ``refused:schema``, ``error:timeout`` and the like."""
        if self.outcome is Outcome.REFUSED:
            return f"refused:{self.refusal_kind or 'other'}"
        if self.outcome is Outcome.ERROR:
            return f"error:{self.error_kind or 'other'}"
        return str(self.outcome.value)
