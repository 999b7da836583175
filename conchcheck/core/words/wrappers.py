"""Calls in wrappers no family owns: a code fence around a call's JSON. Held until it ends,
and a call only when it holds one naming an offered tool; otherwise it is words, exactly as
written.
"""

from __future__ import annotations

from conchcheck.core.words import lists
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, names_offered_tool


def fence_calls(
    reader: Reader, opener: str, info: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """A held fence's calls, and its words: a ``tool…`` fence always holds a call, a JSON one
    only when it names an offered tool; any other is words after all."""
    raw = f"{opener}{info}\n{body}{closer}"
    if info.strip().lower().startswith("tool"):
        form = CallForm.TOOL_CALL_FENCE
    elif names_offered_tool(body, reader.tools):
        form = CallForm.FENCE
    elif lists.is_cohere_action(body, reader.tools):
        # Command R+ writes "Action:" and its list in a json fence (its tool_use template).
        return lists.cohere(reader, body.rstrip("`"), raw, cut_off=cut_off), ""
    else:
        return [], raw
    return reader.json_body(body.rstrip("`"), form, raw, cut_off=cut_off), ""
