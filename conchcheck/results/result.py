"""A probe's whole result, and the facts of the run that produced it."""

from __future__ import annotations

from dataclasses import dataclass, field

from conchcheck.core.dialects import Dialect
from conchcheck.core.usertools import OwnTool
from conchcheck.results.cells import Cell
from conchcheck.results.verdict import Verdict
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.providers import ApiFamily


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the caller knows about the run and the renderers must not look up themselves."""

    conchcheck_version: str
    started_at: str
    """UTC, to the second: ``2026-12-02T10:00:00Z``."""
    finished_at: str
    command: str
    """The command line as run (keys never appear on it)."""


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """Everything a probe found: the cells, the catalogue, the verdict, what it cost."""

    target: str
    provider: str
    model: str
    endpoint: str
    """The base URL probed."""
    api: ApiFamily
    """The API family spoken there: with provider, model and endpoint, what the result is
    of (one server often speaks several APIs at one base URL)."""
    family_dialect: Dialect
    """The dialect of the provider's family, tried first (written as ``family``)."""
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
    run: RunInfo | None = None
    """The run that wrote it, for a result read back from ``results.json``; a probe that
    just finished has none until its reports are written with one."""
