"""Tools in words, the list half: the tools as system-prompt text, sized to the window, and the
block that carries a tool's result back (DESIGN.md rules 6 and 7).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conchcheck.core.tools import ChoiceMode, Tool, ToolChoice, as_tools, first_sentence, signature
from conchcheck.core.words.forms import CALL_FORMAT

BUDGETS = (("full", 0.15), ("first_sentence", 0.25), ("names", 0.40))
"""DESIGN.md rule 7: the share of the window each level of the list may take."""


class ListLevel(str, Enum):
    """How much of each tool the list in the system prompt carries."""

    FULL = "full"
    FIRST_SENTENCE = "first_sentence"
    NAMES = "names"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class ToolList:
    """The tools as system-prompt text, and what that costs."""

    text: str
    """The text for the system prompt; empty at level ``none`` (chat only)."""
    level: ListLevel
    tokens: int
    """Estimated tokens of ``text`` (see ``estimate_tokens``)."""
    window_tokens: int | None
    note: str
    """One sentence saying which level was chosen and why."""


def estimate_tokens(text: str) -> int:
    """Estimated token count: one token per four bytes of UTF-8, rounded up.

    English averages about four characters a token in the BPE tokenizers of current models;
    counting bytes rather than characters keeps CJK text (three bytes, about one token a
    character) from being underestimated. It is an estimate for budgets, not a tokenizer.
    """
    return -(-len(text.encode("utf-8")) // 4)


def render_tools(
    tools: Iterable[Mapping[str, Any] | Tool], window_tokens: int | None = None
) -> ToolList:
    """The tool list for a model that takes tools in words, sized to its context window.

    Full descriptions while the list takes at most 15% of the window, first sentences at
    most 25%, names and arguments at most 40%; past that, no list (chat only). An unknown
    window counts as room for the full list.
    """
    offered = as_tools(tools)
    for level, share in BUDGETS:
        text = _list_text(offered, ListLevel(level))
        tokens = estimate_tokens(text)
        if window_tokens is None or tokens <= share * window_tokens:
            where = "an unknown window" if window_tokens is None else f"{window_tokens} tokens"
            note = f"{len(offered)} tools at level {level}: {tokens} tokens of {where}."
            return ToolList(text, ListLevel(level), tokens, window_tokens, note)
    note = (
        f"No tool list: even names and arguments of {len(offered)} tools take {tokens} tokens, "
        f"over 40% of the {window_tokens}-token window, so the model can only chat."
    )
    return ToolList("", ListLevel.NONE, 0, window_tokens, note)


def _list_text(tools: tuple[Tool, ...], level: ListLevel) -> str:
    lines = ["You can call these tools:"]
    for tool in tools:
        line = f"- {tool.name} {signature(tool.parameters)}"
        words = " ".join(tool.description.split())
        if level == ListLevel.FIRST_SENTENCE:
            words = first_sentence(tool.description)
        if words and level != ListLevel.NAMES:
            line += f": {words}"
        lines.append(line)
    lines += [
        "",
        "To call a tool, write the call in this form, one block for each call:",
        CALL_FORMAT,
        "The result comes back to you in a <tool_response> block. "
        "When no tool is needed, answer in words.",
    ]
    return "\n".join(lines)


def choice_words(choice: ToolChoice) -> str:
    """A tool choice said in words, after the list: what a client that lists the tools in the
    prompt tells the model in place of ``tool_choice`` (empty for ``auto``)."""
    match choice.mode:
        case ChoiceMode.AUTO:
            return ""
        case ChoiceMode.NONE:
            return "Do not call a tool this time: answer in words."
        case ChoiceMode.REQUIRED:
            return "This time you must call a tool: answer with a call, not in words."
        case ChoiceMode.TOOL:
            return f"This time you must call {choice.name}: answer with a call to it."


def tool_response(name: str, content: Any) -> str:
    """A ``<tool_response>`` block carrying a tool's result, which its text cannot close.

    The result goes in as JSON with every ``</`` written ``<\\/`` (a valid JSON escape of
    the same text), so no closing tag, in any case, can appear inside the block.
    """
    body = json.dumps({"name": name, "content": content}, ensure_ascii=False)
    return "<tool_response>\n" + body.replace("</", "<\\/") + "\n</tool_response>"
