"""Many targets in one run (``conchcheck probe --targets``): one probe job a target, run at
once under each provider's shared limits, one results folder a target, and an index.

The run's exit code is the worst of its targets', in this order: 3 (a target unusable),
4 (stopped early), 1 (an expectation failed), 0. Bad input is exit 2 before any request:
the targets file, every matrix, every folder and every key variable's name are checked
when a ``Fleet`` is made. A key that is unset is that target's exit 3; the others run.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conchcheck.errors import InputError
from conchcheck.files import folder_problem
from conchcheck.job import (
    EXIT_DONE,
    EXIT_FAILED,
    EXIT_STOPPED,
    EXIT_UNUSABLE,
    Job,
    JobOutcome,
    JobSpec,
)
from conchcheck.probe import ProbeOptions
from conchcheck.probe.pacing import ProviderLimit
from conchcheck.redaction import held
from conchcheck.replacement import replace_file
from conchcheck.report import ReportFormat
from conchcheck.results import ProbeResult
from conchcheck.targets import Shard, TargetEntry, TargetsFile, load_targets, shard_of
from conchcheck.version import __version__
from conchcheck.wire.keys import CredentialsError
from conchcheck.wire.transport import Transport

WORST_FIRST = (EXIT_UNUSABLE, EXIT_STOPPED, EXIT_FAILED, EXIT_DONE)
"""A run's exit code is the first of these that any of its targets had."""
INDEX_VERSION = 1
INDEX = "index.json"


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """Everything a many-target run is asked to do; per-target values come from the file."""

    targets: Path
    out: Path | None = None
    shard: Shard | None = None
    matrix: str = "default"
    """The matrix of a target that names none."""
    formats: tuple[ReportFormat, ...] = tuple(ReportFormat)
    cache: Path | None = None
    write_cache: bool = True
    options: ProbeOptions = field(default_factory=ProbeOptions)
    """How each target is probed; ``policy.concurrency`` is also each provider's shared
    limit unless the file's ``providers`` section names one."""
    expect_mode: str | None = None
    expect_dialect: str | None = None
    command: str = "conchcheck probe"


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """One target's part of the run: where its reports are, and its own outcome."""

    entry: TargetEntry
    folder: Path
    outcome: JobOutcome


@dataclass(frozen=True, slots=True)
class FleetOutcome:
    """What a many-target run produced, the index it wrote, and its exit code."""

    source: str
    """The targets file."""
    targets: tuple[TargetOutcome, ...]
    index: Path
    shard: Shard | None
    exit_code: int


def fleet_for(
    target: str | None,
    targets: Path | None,
    shard: str | None,
    per_target: dict[str, object],
    **common: Any,
) -> Fleet | None:
    """The ``Fleet`` of a ``probe`` given ``--targets`` (a ``FleetSpec`` of ``common``),
    or None for one TARGET.

    ``per_target`` are the options a targets file sets for each target instead (by name,
    with their values): any of them given alongside ``--targets`` is refused.
    """
    help_ = "See `conchcheck probe --help`."
    if (target is None) == (targets is None):
        raise InputError("Give a TARGET or --targets, one of the two.", hint=help_)
    if targets is None:
        if shard is not None:
            raise InputError("--shard: only with --targets.", hint=help_)
        return None
    given = [name for name, value in per_target.items() if value]
    if given:
        raise InputError(
            f"{given[0]}: not with --targets; it is an option of a single target's probe.",
            hint="Probe that target on its own, or write base_url or api_key_env in its"
            " entry of the targets file.",
        )
    return Fleet(FleetSpec(targets, shard=None if shard is None else Shard.parse(shard), **common))


def worst(codes: list[int]) -> int:
    """The exit code of a run whose targets exited with ``codes`` (0 for none)."""
    return next((code for code in WORST_FIRST if code in codes), EXIT_DONE)


class Fleet:
    """Resolves a ``FleetSpec`` (every input checked); ``run`` probes, ``stop`` after Ctrl-C."""

    def __init__(self, spec: FleetSpec, *, transport: Transport | None = None) -> None:
        self.spec = spec
        self.file: TargetsFile = load_targets(spec.targets)
        self.out = spec.out if spec.out is not None else Path("conchcheck-out")
        problem = folder_problem(self.out)
        if problem is not None:
            raise InputError(f"--out: {self.out}: {problem}.", hint="Choose another folder.")
        shard = spec.shard
        self.entries = tuple(e for e in self.file.entries if shard is None or shard.holds(e))
        self.jobs = tuple(Job(self._job_spec(entry), transport=transport) for entry in self.entries)
        self.missing_keys: dict[int, str] = {}
        """The targets whose key variable is unset, and why: each is exit 3, alone."""
        for index, job in enumerate(self.jobs):
            try:
                job.resolve_key()
            except CredentialsError as exc:
                # The CLI's hint names --api-key-env; here the file is where to say it.
                self.missing_keys[index] = f"{exc} Set it, or give the entry an api_key_env."
        self.finished: dict[int, JobOutcome] = {}

    def _job_spec(self, entry: TargetEntry) -> JobSpec:
        spec, options = self.spec, self.spec.options
        if entry.repeat is not None:
            options = replace(options, repeat=entry.repeat)
        return JobSpec(
            entry.target.label, entry.target.base_url, entry.matrix or spec.matrix,
            self.out / entry.folder, spec.formats, spec.cache, use_cache=False,
            write_cache=spec.write_cache, api_key_env=entry.api_key_env, options=options,
            expect_mode=spec.expect_mode, expect_dialect=spec.expect_dialect,
            command=spec.command,
        )  # fmt: skip

    def limits(self) -> dict[str, ProviderLimit]:
        """A fresh shared limit for each provider the run's targets use."""
        default = self.spec.options.policy.concurrency
        shared: dict[str, ProviderLimit] = {}
        for entry in self.entries:
            name = entry.target.provider.name
            given = self.file.providers.get(name)
            concurrency = given.concurrency if given and given.concurrency else default
            rate = given.requests_per_minute if given else None
            shared.setdefault(name, ProviderLimit(concurrency, rate))
        return shared

    def run(self) -> FleetOutcome:
        """Probe every target of the shard at once, within each provider's limits."""
        asyncio.run(self._all(self.limits()))
        return self._index()

    async def _all(self, shared: dict[str, ProviderLimit]) -> None:
        await asyncio.gather(
            *(
                self._one(index, job, shared[job.target.provider.name])
                for index, job in enumerate(self.jobs)
            )
        )

    async def _one(self, index: int, job: Job, shared: ProviderLimit) -> None:
        missing = self.missing_keys.get(index)
        if missing is not None:
            self.finished[index] = job.finish(_not_probed(job, unusable=missing))
            return
        result = await job.probing(shared=shared)
        self.finished[index] = job.finish(result)

    def stop(self, reason: str) -> FleetOutcome:
        """After an interrupt: finish every target not finished with the cells it has."""
        for index, job in enumerate(self.jobs):
            if index not in self.finished:
                result = job.partial(reason) or _not_probed(job, stopped=reason)
                self.finished[index] = job.finish(result)
        return self._index()

    def _index(self) -> FleetOutcome:
        done = tuple(
            TargetOutcome(entry, job.out_dir(), self.finished[index])
            for index, (entry, job) in enumerate(zip(self.entries, self.jobs, strict=True))
        )
        code = worst([t.outcome.exit_code for t in done])
        outcome = FleetOutcome(self.file.source, done, self.out / INDEX, self.spec.shard, code)
        self.out.mkdir(parents=True, exist_ok=True)
        replace_file(outcome.index, render_index(outcome))
        return outcome


def _not_probed(
    job: Job, *, unusable: str | None = None, stopped: str | None = None
) -> ProbeResult:
    """The result of a target no request was sent to."""
    target, matrix = job.target, job.matrix
    return ProbeResult(
        target.label, target.provider.name, target.model, target.base_url,
        target.dialect.value, matrix.name, matrix.digest, (), None, None, 0, 0, 0, {},
        stopped=stopped, unusable=unusable,
    )  # fmt: skip


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
        "exit_code": outcome.exit_code,
        "targets": [_entry(t, count) for t in outcome.targets],
    }


def _entry(done: TargetOutcome, count: int | None) -> dict[str, Any]:
    result, entry = done.outcome.result, done.entry
    verdict = result.verdict if result is not None else None
    return {
        "target": entry.target.label,
        "endpoint": entry.target.base_url,
        "folder": done.folder.name,
        "exit_code": done.outcome.exit_code,
        "message": done.outcome.message,
        "verdict": None if verdict is None else {
            "dialect": verdict.dialect.dialect,
            "mode": verdict.mode.value,
            "native_rate": round(verdict.native.rate, 4),
            "words_rate": round(verdict.words.rate, 4),
        },
        "matrix": result.matrix if result else None,
        "matrix_digest": result.matrix_digest if result else None,
        "shard": shard_of(entry.identity, count) if count is not None else None,
        "requests": result.requests if result else 0,
    }  # fmt: skip
