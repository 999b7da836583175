"""conchcheck: probe an LLM provider and model for tool calling, with evidence.

This module is the supported import surface; everything the CLI does is callable from here.
"""

from __future__ import annotations

from conchcheck.core.arguments import ArgumentsResult, read_arguments
from conchcheck.core.dialects import Dialect, to_dialect, unwrap_arguments
from conchcheck.core.problems import Problem
from conchcheck.core.refusals import Refusal, RefusalKind, classify
from conchcheck.core.repair import Reading, Repair, Unreadable, read_json
from conchcheck.core.tools import Tool, as_tool, signature
from conchcheck.core.words import (
    CallForm,
    ToolList,
    WordsCall,
    WordsReader,
    WordsReading,
    read_calls,
    render_tools,
    tool_response,
)
from conchcheck.errors import ConchcheckError, InputError, UnknownDialectError
from conchcheck.job import Job, JobSpec
from conchcheck.matrix import Matrix, MatrixError, load_matrix
from conchcheck.probe import Probe, ProbeOptions
from conchcheck.results import ProbeResult, Verdict
from conchcheck.verdict import decide
from conchcheck.version import __version__
from conchcheck.wire.providers import Target, parse_target

__all__ = [
    "ArgumentsResult",
    "CallForm",
    "ConchcheckError",
    "Dialect",
    "InputError",
    "Job",
    "JobSpec",
    "Matrix",
    "MatrixError",
    "Probe",
    "ProbeOptions",
    "ProbeResult",
    "Problem",
    "Reading",
    "Refusal",
    "RefusalKind",
    "Repair",
    "Target",
    "Tool",
    "ToolList",
    "UnknownDialectError",
    "Unreadable",
    "Verdict",
    "WordsCall",
    "WordsReader",
    "WordsReading",
    "__version__",
    "as_tool",
    "classify",
    "decide",
    "load_matrix",
    "parse_target",
    "read_arguments",
    "read_calls",
    "read_json",
    "render_tools",
    "signature",
    "to_dialect",
    "tool_response",
    "unwrap_arguments",
]
