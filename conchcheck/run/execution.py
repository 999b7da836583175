"""``execute``: run a ``Plan``. Probe the target, then ``finish``: write the reports, the
recording and the capability entry, and pick the exit code.

A stopped probe (budget, deadline, Ctrl-C) still finishes: its partial results are written
and ``--resume`` continues them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from conchcheck.capabilities import Entry, expires, timestamp
from conchcheck.core.dialects import Dialect
from conchcheck.core.toolcost import ToolCosts
from conchcheck.errors import ExitCode, InputError
from conchcheck.probe import Probe, ProbeObserver
from conchcheck.probe.pacing import ProviderLimit
from conchcheck.report import write_reports
from conchcheck.results import ProbeResult, RunInfo
from conchcheck.run.plan import Plan
from conchcheck.run.recording import write_recording
from conchcheck.version import __version__
from conchcheck.wire.recording import Recording


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """What executing a plan produced, and the exit code it maps to."""

    result: ProbeResult | None
    """None when a fresh capability entry answered instead of a probe."""
    cached: Entry | None
    """The capability entry that answered, when one did."""
    entry: Entry | None
    """The capability entry written."""
    written: tuple[Path, ...]
    exit_code: ExitCode
    message: str


def execute(
    plan: Plan,
    observer: ProbeObserver | None = None,
    *,
    interrupted_by: Callable[[], str] | None = None,
) -> ProbeOutcome:
    """Probe the plan's target and finish; a fresh capability entry answers instead.

    A ``KeyboardInterrupt`` while probing stops the probe: the cells so far are finished as
    a result stopped "interrupted (…)", naming what ``interrupted_by`` says came (Ctrl-C).
    """
    if plan.cached is not None:
        return _answered(plan.cached)
    started = now()
    engine = engine_for(plan, observer)
    try:
        result = asyncio.run(probing(plan, engine))
    except KeyboardInterrupt:
        came = interrupted_by() if interrupted_by is not None else "Ctrl-C"
        result = engine.partial(f"interrupted ({came})")
    return finish(plan, result, started=started)


async def execute_async(
    plan: Plan, observer: ProbeObserver | None = None, *, shared: ProviderLimit | None = None
) -> ProbeOutcome:
    """``execute`` in the running loop; ``shared`` holds the provider's limits when other
    probes of it run at the same time. A cancelled probe raises, as any task does."""
    if plan.cached is not None:
        return _answered(plan.cached)
    started = now()
    result = await probing(plan, engine_for(plan, observer, shared=shared))
    return finish(plan, result, started=started)


def engine_for(
    plan: Plan, observer: ProbeObserver | None = None, *, shared: ProviderLimit | None = None
) -> Probe:
    """The engine that probes ``plan``, not yet started; raises the key's problem (an unset
    variable is ``CredentialsError``, exit 3)."""
    if plan.key_problem is not None:
        raise plan.key_problem
    return Probe(
        plan.target,
        plan.matrix,
        key=plan.key,
        options=plan.spec.options,
        transport=plan.transport,
        observer=observer,
        resume=plan.prior,
        shared=shared,
    )


async def probing(plan: Plan, engine: Probe) -> ProbeResult:
    """Run ``engine`` (made by ``engine_for(plan)``) to its result."""
    try:
        return await engine.run()
    except Exception:
        # The engine may wrap the replay's error in its own; the replay's is the news.
        missing = getattr(plan.transport, "missing", None)
        if missing is not None:
            raise missing from None
        raise


def finish(plan: Plan, result: ProbeResult, *, started: datetime) -> ProbeOutcome:
    """Write the reports, the recording, and the capability entry of a finished probe;
    pick the exit code. ``started`` is when the probe began."""
    spec, target = plan.spec, plan.target
    info = RunInfo(__version__, timestamp(started), timestamp(now()), spec.command)
    written = tuple(write_reports(result, plan.out_dir, spec.formats, info))
    if plan.recorder is not None and spec.record is not None:
        recording = Recording(
            f"{target.provider.name}:{target.model}",
            target.base_url,
            result.matrix,
            result.matrix_digest,
            spec.options.policy.concurrency,
            __version__,
            plan.recorder.exchanges,
        )
        written += (write_recording(recording, spec.record),)
    if result.unusable is not None:
        message = f"The target can't be probed: {result.unusable}"
        return ProbeOutcome(result, None, None, written, ExitCode.UNUSABLE, message)
    if result.stopped is not None:
        message = (
            f"Stopped early: {result.stopped}. Partial results are written; --resume continues."
        )
        return ProbeOutcome(result, None, None, written, ExitCode.STOPPED, message)
    entry = None
    if result.verdict is not None and spec.writes_entry:
        entry = capability_entry(result, started)
        plan.capabilities.put(entry)
    code, message = _expectations(plan, result)
    return ProbeOutcome(result, None, entry, written, code, message)


def _expectations(plan: Plan, result: ProbeResult) -> tuple[ExitCode, str]:
    """``FAILED`` when the verdict's mode or dialect isn't the one expected."""
    verdict, spec = result.verdict, plan.spec
    assert verdict is not None
    misses = []
    if spec.expected_mode and verdict.mode.value != spec.expected_mode:
        misses.append(f"mode {verdict.mode.value}, expected {spec.expected_mode}")
    if spec.expected_dialect and verdict.dialect.dialect != spec.expected_dialect:
        misses.append(f"dialect {verdict.dialect.dialect}, expected {spec.expected_dialect}")
    if misses:
        return ExitCode.FAILED, "The verdict missed its expectation: " + "; ".join(misses) + "."
    return ExitCode.DONE, f"Dialect {verdict.dialect.dialect or 'none'}, mode {verdict.mode.value}."


def _answered(entry: Entry) -> ProbeOutcome:
    message = f"Dialect {entry.dialect or 'none'}, mode {entry.mode}, from the capability file."
    return ProbeOutcome(None, entry, None, (), ExitCode.DONE, message)


def capability_entry(result: ProbeResult, probed: datetime) -> Entry:
    """The capability file's entry for a finished probe."""
    verdict = result.verdict
    if verdict is None:
        raise InputError("A probe without a verdict has no capability entry.")
    catalogue = result.catalogue
    trial = verdict.strict_mode
    return Entry(
        provider=result.provider,
        model=result.model,
        endpoint=result.endpoint,
        api=result.api,
        # The capability file is YAML written by safe_dump, which takes plain strings only.
        dialect=None if verdict.dialect.dialect is None else verdict.dialect.dialect.value,
        mode=verdict.mode.value,
        rates={
            "native": round(verdict.native.rate, 4),
            "native_clean": round(verdict.native.clean_rate, 4),
            "words": round(verdict.words.rate, 4),
            "words_clean": round(verdict.words.clean_rate, 4),
        },
        repairs_seen=verdict.repairs_seen,
        refused_keywords=verdict.refused_keywords,
        context_window=catalogue.context_window if catalogue else None,
        tools_declared=verdict.tools_declared,
        tools_observed=verdict.tools_observed,
        conchcheck_version=__version__,
        matrix=result.matrix,
        matrix_digest=result.matrix_digest.removeprefix("sha256:"),
        probed_at=timestamp(probed),
        expires_at=timestamp(expires(probed)),
        leaked_as_text=tuple(leak.family for leak in verdict.leaks),
        strict_mode=None
        if trial is None
        else {"accepted": trial.accepted, "refused": trial.refused},
        # The section's findings are sentences for the report; the entry keeps the facts.
        knobs_and_losses=None
        if verdict.knobs_and_losses is None
        else dataclasses.replace(verdict.knobs_and_losses, findings=()),
        **_costs(verdict.tool_costs, verdict.dialect.dialect),
    )


def _costs(costs: ToolCosts | None, dialect: Dialect | None) -> dict[str, Any]:
    """The entry's cost fields: each tool's tokens in the verdict's dialect (else the one the
    capacity was searched in), and the capacity; nothing when cost wasn't measured."""
    if costs is None:
        return {}
    shown = dialect.value if dialect is not None else costs.dialect
    tokens = costs.in_dialect(shown) if shown is not None else {}
    return {"tokens_per_tool": tokens or None, "capacity": costs.capacity}


def now() -> datetime:
    """The time to the second, in UTC: when a probe starts and ends."""
    return datetime.now(timezone.utc).replace(microsecond=0)
