"""conchcheck: probe an LLM provider and model for tool calling, with evidence.

This module is the supported import surface; everything the CLI does is callable from here.
"""

from __future__ import annotations

from conchcheck.arguments import ArgumentsResult, read_arguments
from conchcheck.dialects import Dialect, to_dialect, unwrap_arguments
from conchcheck.errors import ConchcheckError, InputError, UnknownDialectError
from conchcheck.problems import Problem
from conchcheck.refusals import Refusal, RefusalKind, classify
from conchcheck.repair import Reading, Repair, Unreadable, read_json
from conchcheck.tools import Tool, as_tool, signature
from conchcheck.words import (
    CallForm,
    ToolList,
    WordsCall,
    WordsReader,
    WordsReading,
    read_calls,
    render_tools,
    tool_response,
)

__version__ = "0.1.0"

__all__ = [
    "ArgumentsResult",
    "CallForm",
    "ConchcheckError",
    "Dialect",
    "InputError",
    "Problem",
    "Reading",
    "Refusal",
    "RefusalKind",
    "Repair",
    "Tool",
    "ToolList",
    "UnknownDialectError",
    "Unreadable",
    "WordsCall",
    "WordsReader",
    "WordsReading",
    "__version__",
    "as_tool",
    "classify",
    "read_arguments",
    "read_calls",
    "read_json",
    "render_tools",
    "signature",
    "to_dialect",
    "tool_response",
    "unwrap_arguments",
]
