"""Many targets in one run (``conchcheck probe --targets``): a plan a target, run at once
under each provider's shared limits, one results folder a target, and an index.

The run's exit code is the worst of its targets', in this order: 3 (a target unusable),
4 (stopped early), 1 (an expectation failed), 0. Bad input is exit 2 before any request:
the targets file, every matrix, every folder and every key variable's name are checked by
``build_fleet``. A key that is unset is that target's exit 3; the others run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from conchcheck.errors import ExitCode, InputError
from conchcheck.files import folder_problem, link_inside, linked
from conchcheck.probe import Probe
from conchcheck.probe.pacing import ProviderLimit
from conchcheck.replacement import replace_file
from conchcheck.results import ProbeResult
from conchcheck.run.building import build
from conchcheck.run.execution import ProbeOutcome, engine_for, finish, now, probing
from conchcheck.run.index import (
    INDEX,
    FleetOutcome,
    TargetOutcome,
    earlier_entries,
    render_index,
)
from conchcheck.run.plan import Plan
from conchcheck.run.spec import FleetSpec, ProbeSpec
from conchcheck.run.targets import TargetEntry, TargetsFile, load_targets
from conchcheck.wire.keys import CredentialsError
from conchcheck.wire.transport import Transport

WORST_FIRST = (ExitCode.UNUSABLE, ExitCode.STOPPED, ExitCode.FAILED, ExitCode.DONE)
"""A run's exit code is the first of these that any of its targets had."""


@dataclass(frozen=True, slots=True)
class FleetPlan:
    """A many-target run, ready: the checked targets file and a plan for each target."""

    spec: FleetSpec
    file: TargetsFile
    out_dir: Path
    """The folder of the targets' folders and the index, checked writable."""
    entries: tuple[TargetEntry, ...]
    """The file's targets in the spec's shard, in the file's order."""
    plans: tuple[Plan, ...]
    """The plan of each of ``entries``."""


def build_fleet(spec: FleetSpec, transport: Transport | None = None) -> FleetPlan:
    """Resolve ``spec``: the targets file, the folders, and each target's ``build``."""
    given = spec.targets_file
    file = given if isinstance(given, TargetsFile) else load_targets(given)
    out = spec.out_dir if spec.out_dir is not None else Path("conchcheck-out")
    problem = folder_problem(out)
    if problem is not None:
        raise InputError(f"--out: {out}: {problem}.", hint="Choose another folder.")
    shard = spec.shard
    entries = tuple(e for e in file.entries if shard is None or shard.holds(e))
    for entry in entries:
        # Every folder is settled before the first request: none may spend requests in vain.
        link = link_inside(out, out / entry.folder)
        if link is not None:
            raise linked(link, out)
        problem = folder_problem(out / entry.folder)
        if problem is not None:
            raise InputError(
                f"--out: {out / entry.folder}: {problem}.", hint="Choose another folder."
            )
    plans = tuple(build(_probe_spec(spec, out, entry), transport) for entry in entries)
    for plan in plans:
        # An unset key is that target's exit 3 (``execute_fleet``); any other is bad input.
        if plan.key_problem is not None and not isinstance(plan.key_problem, CredentialsError):
            raise plan.key_problem
    return FleetPlan(spec, file, out, entries, plans)


def _probe_spec(spec: FleetSpec, out: Path, entry: TargetEntry) -> ProbeSpec:
    options = spec.options
    if entry.repeat is not None:
        # A target's own number of repeats: the run's --max-repeat (for auto) is not its.
        options = replace(options, repeat=entry.repeat, max_repeat=None)
    target = entry.target
    return ProbeSpec(
        f"{target.provider.name}:{target.model}",
        base_url=target.base_url,
        route=target.route,
        api_family=entry.target.provider.api.value,
        matrix=entry.matrix or spec.matrix,
        out_dir=out / entry.folder,
        formats=spec.formats,
        capability_file=spec.capability_file,
        write_entry=spec.write_entry,
        key_variable=entry.api_key_env,
        options=options,
        expected_mode=spec.expected_mode,
        expected_dialect=spec.expected_dialect,
        command=spec.command,
    )


def execute_fleet(
    fleet: FleetPlan, *, interrupted_by: Callable[[], str] | None = None
) -> FleetOutcome:
    """Probe every target of the fleet at once, within each provider's limits; write the
    index. A ``KeyboardInterrupt`` finishes every target not finished with the cells it
    has, stopped "interrupted (…)", naming what ``interrupted_by`` says came (Ctrl-C)."""
    run = _Run(fleet)
    try:
        asyncio.run(run.all())
    except KeyboardInterrupt:
        came = interrupted_by() if interrupted_by is not None else "Ctrl-C"
        run.stop(f"interrupted ({came})")
    return _index(fleet, run.finished)


def worst(codes: Iterable[int]) -> ExitCode:
    """The exit code of a run whose targets exited with ``codes`` (``DONE`` for none)."""
    seen = set(codes)
    return next((code for code in WORST_FIRST if code in seen), ExitCode.DONE)


def limits(fleet: FleetPlan) -> dict[str, ProviderLimit]:
    """A fresh shared limit for each provider the fleet's targets use."""
    default = fleet.spec.options.policy.concurrency
    shared: dict[str, ProviderLimit] = {}
    for entry in fleet.entries:
        name = entry.target.provider.name
        given = fleet.file.providers.get(name)
        concurrency = given.concurrency if given and given.concurrency else default
        rate = given.requests_per_minute if given else None
        wait = fleet.spec.options.policy.max_wait
        shared.setdefault(name, ProviderLimit(concurrency, rate, max_pause=wait))
    return shared


class _Run:
    """One execution of a fleet: its engines, and the outcome of each target finished."""

    def __init__(self, fleet: FleetPlan) -> None:
        self.plans = fleet.plans
        self.started = now()
        shared = limits(fleet)
        self.engines: dict[int, Probe] = {
            index: engine_for(plan, shared=shared[plan.target.provider.name])
            for index, plan in enumerate(self.plans)
            if plan.key_problem is None
        }
        self.finished: dict[int, ProbeOutcome] = {}

    async def all(self) -> None:
        await asyncio.gather(*(self._one(index) for index in range(len(self.plans))))

    async def _one(self, index: int) -> None:
        plan = self.plans[index]
        engine = self.engines.get(index)
        result = await probing(plan, engine) if engine is not None else _unkeyed(plan)
        self.done(index, result)

    def stop(self, reason: str) -> None:
        """After an interrupt: finish every target not finished with the cells it has; a
        target without its key is unusable however soon the interrupt came."""
        for index, plan in enumerate(self.plans):
            if index not in self.finished:
                engine = self.engines.get(index)
                result = engine.partial(reason) if engine is not None else _unkeyed(plan)
                self.done(index, result)

    def done(self, index: int, result: ProbeResult) -> None:
        self.finished[index] = finish(self.plans[index], result, started=self.started)


def _index(fleet: FleetPlan, finished: dict[int, ProbeOutcome]) -> FleetOutcome:
    done = tuple(
        TargetOutcome(entry, plan.out_dir, finished[index])
        for index, (entry, plan) in enumerate(zip(fleet.entries, fleet.plans, strict=True))
    )
    code = worst(t.outcome.exit_code for t in done)
    index = fleet.out_dir / INDEX
    earlier = earlier_entries(index, {t.folder.name for t in done})
    outcome = FleetOutcome(fleet.file.source, done, index, fleet.spec.shard, code, earlier)
    fleet.out_dir.mkdir(parents=True, exist_ok=True)
    replace_file(outcome.index, render_index(outcome))
    return outcome


def _unkeyed(plan: Plan) -> ProbeResult:
    """The result of a target whose key is unset: no request was sent to it."""
    target, matrix = plan.target, plan.matrix
    # The CLI's hint names --api-key-env; here the file is where to say it.
    missing = f"{plan.key_problem} Set it, or give the entry an api_key_env."
    return ProbeResult(
        target=target.label,
        provider=target.provider.name,
        model=target.model,
        endpoint=target.base_url,
        api=target.provider.api,
        family_dialect=target.dialect,
        matrix=matrix.name,
        matrix_digest=matrix.digest,
        cells=(),
        catalogue=None,
        verdict=None,
        requests=0,
        prompt_tokens=0,
        completion_tokens=0,
        stage_ms={},
        unusable=missing,
    )
