"""A ``Plan``: a ``ProbeSpec`` with everything resolved, so executing it reads no input.

``build`` makes one; ``execute`` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conchcheck.capabilities import CapabilityFile, Entry
from conchcheck.errors import ConchcheckError
from conchcheck.matrix import Matrix
from conchcheck.results import Cell
from conchcheck.run.spec import ProbeSpec
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import Target
from conchcheck.wire.recording import RecordingTransport
from conchcheck.wire.transport import Transport


@dataclass(frozen=True, slots=True)
class Plan:
    """One probe, ready to run: the target, matrix, key, places and transport it uses."""

    spec: ProbeSpec
    """What was asked: the formats, expectations, options and command come from here."""
    target: Target
    matrix: Matrix
    """The matrix asked for, or the one made from the user's own tools."""
    capabilities: CapabilityFile
    """The capability file: checked readable, and writable when the probe will write it."""
    out_dir: Path
    """The report folder, checked writable."""
    transport: Transport | None
    """What requests go through: the caller's, a replay, a recorder around the caller's, or
    None for the network."""
    recorder: RecordingTransport | None
    """The recorder, when the exchanges are to be written to ``spec.record``."""
    prior: tuple[Cell, ...]
    """The finished cells of ``spec.resume_from``, not asked again."""
    key: Secret | None
    """The target's key; None when it needs none, or when ``key_problem`` says why not."""
    key_problem: ConchcheckError | None
    """Why the key can't be read. Raised when the probe starts, not before: a fresh
    capability entry answers without a key."""
    cached: Entry | None
    """A fresh capability entry for the target, when ``spec.reuse_cached`` asked for one."""
