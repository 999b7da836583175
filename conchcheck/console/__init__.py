"""Everything conchcheck shows a person: rich on the terminal, the product on stdout.

Errors and commentary go to stderr; results to stdout. ``NO_COLOR`` is honoured by rich.
When stdout is not a terminal (a pipe, a file), tables and panels are printed as plain text
at full width, never cut or wrapped to 80 columns, and progress is not shown. ``screen``
owns the streams; the other modules draw one kind of thing each.
"""

from __future__ import annotations

from conchcheck.console.listings import (
    show_gate,
    show_matrix,
    show_matrix_problems,
    show_providers,
    show_tools_export,
)
from conchcheck.console.probes import progress, show_cached, show_entries, show_fleet, show_outcome
from conchcheck.console.readings import show_arguments, show_calls, show_reading, show_unreadable
from conchcheck.console.screen import (
    complain,
    emit,
    emit_json,
    emit_text,
    err,
    error,
    out,
    say,
    show_json,
    show_schema,
)

__all__ = [
    "complain",
    "emit",
    "emit_json",
    "emit_text",
    "err",
    "error",
    "out",
    "progress",
    "say",
    "show_arguments",
    "show_cached",
    "show_calls",
    "show_entries",
    "show_fleet",
    "show_gate",
    "show_json",
    "show_matrix",
    "show_matrix_problems",
    "show_outcome",
    "show_providers",
    "show_reading",
    "show_schema",
    "show_tools_export",
    "show_unreadable",
]
