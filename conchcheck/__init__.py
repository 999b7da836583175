"""conchcheck: probe an LLM provider and model for tool calling, with evidence.

This module is the supported import surface; everything the CLI does is callable from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conchcheck.version import __version__

if TYPE_CHECKING:
    from conchcheck.capabilities.formats import ExportFormat
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
    from conchcheck.errors import ConchcheckError, ExitCode, InputError, UnknownDialectError
    from conchcheck.matrix import Matrix, MatrixError, load_matrix
    from conchcheck.probe import Probe, ProbeOptions
    from conchcheck.results import Cell, Mode, ProbeResult, RunInfo, Verdict
    from conchcheck.results.reader import read_results
    from conchcheck.run import (
        FleetSpec,
        Plan,
        ProbeOutcome,
        ProbeSpec,
        build,
        build_fleet,
        execute,
        execute_fleet,
    )
    from conchcheck.run.exporting import Exported, ExportSpec, export
    from conchcheck.run.toolsfile import ToolsExportResult, ToolsExportSpec, export_tools
    from conchcheck.verdict import decide
    from conchcheck.wire.providers import Target, parse_target

# Each public name is imported on first use, so `conchcheck --help` and `import conchcheck`
# don't pay for httpx, jsonschema and the engine (bench/probe.py measures start-up).
_HOME = {
    "ArgumentsResult": "conchcheck.core.arguments",
    "CallForm": "conchcheck.core.words",
    "Cell": "conchcheck.results",
    "ConchcheckError": "conchcheck.errors",
    "Dialect": "conchcheck.core.dialects",
    "ExitCode": "conchcheck.errors",
    "ExportFormat": "conchcheck.capabilities.formats",
    "ExportSpec": "conchcheck.run.exporting",
    "Exported": "conchcheck.run.exporting",
    "FleetSpec": "conchcheck.run",
    "InputError": "conchcheck.errors",
    "Matrix": "conchcheck.matrix",
    "MatrixError": "conchcheck.matrix",
    "Mode": "conchcheck.results",
    "Plan": "conchcheck.run",
    "Probe": "conchcheck.probe",
    "ProbeOptions": "conchcheck.probe",
    "ProbeOutcome": "conchcheck.run",
    "ProbeResult": "conchcheck.results",
    "ProbeSpec": "conchcheck.run",
    "Problem": "conchcheck.core.problems",
    "Reading": "conchcheck.core.repair",
    "Refusal": "conchcheck.core.refusals",
    "RefusalKind": "conchcheck.core.refusals",
    "Repair": "conchcheck.core.repair",
    "RunInfo": "conchcheck.results",
    "Target": "conchcheck.wire.providers",
    "Tool": "conchcheck.core.tools",
    "ToolList": "conchcheck.core.words",
    "ToolsExportResult": "conchcheck.run.toolsfile",
    "ToolsExportSpec": "conchcheck.run.toolsfile",
    "UnknownDialectError": "conchcheck.errors",
    "Unreadable": "conchcheck.core.repair",
    "Verdict": "conchcheck.results",
    "WordsCall": "conchcheck.core.words",
    "WordsReader": "conchcheck.core.words",
    "WordsReading": "conchcheck.core.words",
    "as_tool": "conchcheck.core.tools",
    "build": "conchcheck.run",
    "build_fleet": "conchcheck.run",
    "classify": "conchcheck.core.refusals",
    "decide": "conchcheck.verdict",
    "execute": "conchcheck.run",
    "execute_fleet": "conchcheck.run",
    "export": "conchcheck.run.exporting",
    "export_tools": "conchcheck.run.toolsfile",
    "load_matrix": "conchcheck.matrix",
    "parse_target": "conchcheck.wire.providers",
    "read_arguments": "conchcheck.core.arguments",
    "read_calls": "conchcheck.core.words",
    "read_json": "conchcheck.core.repair",
    "read_results": "conchcheck.results.reader",
    "render_tools": "conchcheck.core.words",
    "signature": "conchcheck.core.tools",
    "to_dialect": "conchcheck.core.dialects",
    "tool_response": "conchcheck.core.words",
    "unwrap_arguments": "conchcheck.core.dialects",
}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'conchcheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "ArgumentsResult",
    "CallForm",
    "Cell",
    "ConchcheckError",
    "Dialect",
    "ExitCode",
    "ExportFormat",
    "ExportSpec",
    "Exported",
    "FleetSpec",
    "InputError",
    "Matrix",
    "MatrixError",
    "Mode",
    "Plan",
    "Probe",
    "ProbeOptions",
    "ProbeOutcome",
    "ProbeResult",
    "ProbeSpec",
    "Problem",
    "Reading",
    "Refusal",
    "RefusalKind",
    "Repair",
    "RunInfo",
    "Target",
    "Tool",
    "ToolList",
    "ToolsExportResult",
    "ToolsExportSpec",
    "UnknownDialectError",
    "Unreadable",
    "Verdict",
    "WordsCall",
    "WordsReader",
    "WordsReading",
    "__version__",
    "as_tool",
    "build",
    "build_fleet",
    "classify",
    "decide",
    "execute",
    "execute_fleet",
    "export",
    "export_tools",
    "load_matrix",
    "parse_target",
    "read_arguments",
    "read_calls",
    "read_json",
    "read_results",
    "render_tools",
    "signature",
    "to_dialect",
    "tool_response",
    "unwrap_arguments",
]
