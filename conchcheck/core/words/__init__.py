"""Tools in words (DESIGN.md rules 6 and 7): the list for the system prompt (``listing``), the
reader of replies (``reader``) and the call forms it knows (``forms``).
"""

from __future__ import annotations

from conchcheck.core.words.forms import CallForm, WordsCall, WordsReading
from conchcheck.core.words.listing import (
    ListLevel,
    ToolList,
    estimate_tokens,
    render_tools,
    tool_response,
)
from conchcheck.core.words.reader import WordsReader
from conchcheck.core.words.reading import read_calls

__all__ = [
    "CallForm",
    "ListLevel",
    "ToolList",
    "WordsCall",
    "WordsReader",
    "WordsReading",
    "estimate_tokens",
    "read_calls",
    "render_tools",
    "tool_response",
]
