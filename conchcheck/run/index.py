"""The outcome of a many-target run and its ``index.json``: each target (and the API it
spoke), its folder, exit code, verdict, matrix and shard, with the run's worst exit code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conchcheck.errors import ExitCode
from conchcheck.redaction import held
from conchcheck.results import Verdict
from conchcheck.run.execution import ProbeOutcome
from conchcheck.run.targets import Shard, TargetEntry, shard_of
from conchcheck.version import __version__

INDEX = "index.json"
INDEX_VERSION = 1


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """One target's part of the run: where its reports are, and its own outcome."""

    entry: TargetEntry
    folder: Path
    outcome: ProbeOutcome


@dataclass(frozen=True, slots=True)
class FleetOutcome:
    """What a many-target run produced, the index it wrote, and its exit code."""

    source: str
    """The targets file."""
    targets: tuple[TargetOutcome, ...]
    index: Path
    shard: Shard | None
    exit_code: ExitCode


def render_index(outcome: FleetOutcome) -> str:
    """The text of ``index.json``."""
    data = index_data(outcome)
    # A provider's words in a message may carry a key back: masked as the reports are.
    return held().text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"


def index_data(outcome: FleetOutcome) -> dict[str, Any]:
    """The index: each target, its folder, exit code, verdict, matrix and shard."""
    shard = outcome.shard
    count = shard.count if shard is not None else None
    return {
        "schema_version": INDEX_VERSION,
        "conchcheck_version": __version__,
        "targets_file": outcome.source,
        "shard": {"index": shard.index, "count": shard.count} if shard else None,
        "exit_code": int(outcome.exit_code),
        "targets": [_entry(t, count) for t in outcome.targets],
    }


def _entry(done: TargetOutcome, count: int | None) -> dict[str, Any]:
    result, entry = done.outcome.result, done.entry
    verdict = result.verdict if result is not None else None
    return {
        "target": entry.target.label,
        "endpoint": entry.target.base_url,
        "api": entry.target.provider.api.value,
        "folder": done.folder.name,
        "exit_code": int(done.outcome.exit_code),
        "message": done.outcome.message,
        "verdict": None if verdict is None else _verdict(verdict),
        "matrix": result.matrix if result else None,
        "matrix_digest": result.matrix_digest if result else None,
        "shard": shard_of(entry.identity, count) if count is not None else None,
        "requests": result.requests if result else 0,
    }


def _verdict(verdict: Verdict) -> dict[str, Any]:
    return {
        "dialect": verdict.dialect.dialect,
        "mode": verdict.mode.value,
        "native_rate": round(verdict.native.rate, 4),
        "words_rate": round(verdict.words.rate, 4),
    }
