"""The ``conchcheck`` command: options in, library calls, rendering, exit codes out.

Exit codes: 0 done and fits · 1 a check failed (a call that doesn't fit, an unreadable
text) · 2 bad usage or input · 3 target unusable · 4 stopped early.
"""

from __future__ import annotations

from conchcheck.cli import commands, exporting, probing, reports, tooling
from conchcheck.cli.app import FAMILIES, app, main

__all__ = ["FAMILIES", "app", "commands", "exporting", "main", "probing", "reports", "tooling"]
