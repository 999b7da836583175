"""The probe: a matrix run against one target as a graph of stages, within a budget."""

from __future__ import annotations

from conchcheck.probe.context import AUTO, DEFAULT_CHECKS, Check
from conchcheck.probe.engine import Probe, ProbeObserver, ProbeOptions
from conchcheck.results import ProbeResult

__all__ = [
    "AUTO",
    "DEFAULT_CHECKS",
    "Check",
    "Probe",
    "ProbeObserver",
    "ProbeOptions",
    "ProbeResult",
]
