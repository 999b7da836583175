"""A probe run in named steps: a spec (what was asked) -> ``build`` (every input read and
checked, nothing sent) -> a plan -> ``execute`` (probe, write, pick the exit code); and the
fleet, many plans at once under each provider's limits.

    plan = build(ProbeSpec("ollama:qwen3:8b"))
    outcome = execute(plan)
    raise SystemExit(outcome.exit_code)
"""

from __future__ import annotations

from conchcheck.errors import ExitCode
from conchcheck.run.building import build
from conchcheck.run.execution import ProbeOutcome, execute, execute_async, finish
from conchcheck.run.fleet import FleetPlan, build_fleet, execute_fleet
from conchcheck.run.index import FleetOutcome, TargetOutcome, index_data
from conchcheck.run.plan import Plan
from conchcheck.run.spec import FleetSpec, ProbeSpec, parse_checks, parse_repeat
from conchcheck.run.targets import Shard, TargetEntry, TargetsError, TargetsFile, load_targets

__all__ = [
    "ExitCode",
    "FleetOutcome",
    "FleetPlan",
    "FleetSpec",
    "Plan",
    "ProbeOutcome",
    "ProbeSpec",
    "Shard",
    "TargetEntry",
    "TargetOutcome",
    "TargetsError",
    "TargetsFile",
    "build",
    "build_fleet",
    "execute",
    "execute_async",
    "execute_fleet",
    "finish",
    "index_data",
    "load_targets",
    "parse_checks",
    "parse_repeat",
]
