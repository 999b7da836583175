"""The outcome of a many-target run and its ``index.json``: each target (and the API it
spoke), its folder, exit code, verdict, matrix and shard, with the run's worst exit code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conchcheck.core.trials import PERMISSIVENESS
from conchcheck.errors import ExitCode
from conchcheck.redaction import held
from conchcheck.results import Mode, Verdict
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
    earlier: tuple[dict[str, Any], ...] = ()
    """The entries of an earlier run's index in the same folder whose results this run did
    not write over (a shard before this one): kept, marked ``earlier``."""


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
        "targets": [_entry(t, count) for t in outcome.targets] + list(outcome.earlier),
        **_pinned(outcome),
    }


def pin(outcome: FleetOutcome) -> TargetOutcome | None:
    """Of a run of one model's upstreams, the one to pin: the best mode (native, then
    words), then the higher pass rate of that mode, then the more permissive dialect; the
    first of equals. None when no upstream got a verdict."""
    best: tuple[tuple[int, float, int], TargetOutcome] | None = None
    for done in outcome.targets:
        result = done.outcome.result
        verdict = result.verdict if result is not None else None
        if verdict is None or result is None or result.stopped is not None:
            continue
        rate = verdict.native.rate if verdict.mode is Mode.NATIVE else verdict.words.rate
        dialect = verdict.dialect.dialect
        rank = (_MODE_RANK[verdict.mode], rate, -PERMISSIVENESS.index(dialect) if dialect else -9)
        if best is None or rank > best[0]:
            best = (rank, done)
    return None if best is None else best[1]


_MODE_RANK = {Mode.NATIVE: 2, Mode.WORDS: 1, Mode.NONE: 0}


def _pinned(outcome: FleetOutcome) -> dict[str, Any]:
    if not any(t.entry.target.route for t in outcome.targets):
        return {}
    best = pin(outcome)
    return {"pin": None if best is None else best.entry.target.route}


def earlier_entries(index: Path, folders: set[str]) -> tuple[dict[str, Any], ...]:
    """The entries of the index at ``index`` whose folders are not in ``folders`` and still
    hold results, each marked ``earlier``: replaced whole, the index forgot another run's
    targets while ``report`` still rendered their folders (issue 26)."""
    try:
        listed = json.loads(index.read_text(encoding="utf-8")).get("targets")
    except (OSError, ValueError, AttributeError):
        return ()  # none yet, or not an index: nothing to keep
    kept = []
    for entry in listed if isinstance(listed, list) else ():
        folder = entry.get("folder") if isinstance(entry, dict) else None
        # A bare name only: an index is a file anyone may edit, and its folder a path.
        ours = isinstance(folder, str) and folder not in folders and folder == Path(folder).name
        if ours and (index.parent / str(folder) / "results.json").is_file():
            kept.append({**entry, "earlier": True})
    return tuple(kept)


def _entry(done: TargetOutcome, count: int | None) -> dict[str, Any]:
    result, entry = done.outcome.result, done.entry
    verdict = result.verdict if result is not None else None
    return {
        "target": entry.target.label,
        **({"upstream": entry.target.route} if entry.target.route else {}),
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
