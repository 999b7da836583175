"""Families that write a reply's calls as one list: LFM2's pythonic list, the JSON lists of
IBM Granite 3, Hunyuan A13B, Phi-4-mini, Cohere Command and xLAM.

Each list is read as a JSON (or Python) value, so its own closing bracket ends it: a marker
inside a string is text, and words after the list stay words (``blocks`` ends a block with
no closer where its value closes). Sources and the engine each rule follows:
docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md (LFM2, Granite,
Hunyuan) and call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from conchcheck.core.repair import Repair, Unreadable, read_json
from conchcheck.core.tools import Tool
from conchcheck.core.words import invocations
from conchcheck.core.words.forms import MAX_PYTHONIC, CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer

PHI4_OPENER = "functools["
"""Phi-4-mini's call prefix (vLLM's examples/tool_chat_template_phi4_mini.jinja)."""
DIRECTLY_ANSWER = "directly-answer"
"""Command R+'s tool for "no tool needed" (its tool_use template): never a call."""


def lfm2(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """LFM2: ``[f(a=1), g(b='x')]`` between its call markers, or the JSON list llama.cpp's
    template asks for (``[{"name": …, "arguments": …}]``)."""
    stripped = text.strip()
    if not stripped.startswith(("[{", "{")):
        calls = reader.pythonic(_json_names(stripped))
        if calls is not None:
            return [replace(call, form=CallForm.LFM2, raw=raw) for call in calls]
    return reader.json_body(text, CallForm.LFM2, raw, cut_off=cut_off)


def granite(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Granite 3.x: a JSON list after ``<|tool_call|>``."""
    return reader.json_body(text, CallForm.GRANITE, raw, cut_off=cut_off)


def hunyuan(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Hunyuan A13B: a JSON list inside ``<tool_calls>``. HY-V3 writes ``<tool_call>name
    <tool_sep>`` with GLM's key and value tags there instead (``invocations.hy_v3``)."""
    if text.lstrip().startswith(invocations.HY_CALL):
        return invocations.hy_v3(reader, text, raw, cut_off=cut_off)
    return reader.json_body(text, CallForm.HUNYUAN, raw, cut_off=cut_off)


def cohere(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Cohere Command: a JSON list of ``{"tool_call_id", "tool_name", "parameters"}``;
    ``directly-answer`` means no tool, so it is no call."""
    try:
        reading = read_json(text.strip(), mend_unclosed=not cut_off)
    except Unreadable as exc:
        if exc.reason.startswith("cut off"):
            return [cut_call(CallForm.COHERE, raw)]
        return [
            reader.failed(CallForm.COHERE, raw, f"Your tool call could not be read ({exc.reason}).")
        ]
    items = reading.value if isinstance(reading.value, list) else [reading.value]
    calls = [
        {"name": item["tool_name"], "arguments": item.get("parameters")}
        if isinstance(item, dict) and "tool_name" in item
        else item
        for item in items
        if not (isinstance(item, dict) and item.get("tool_name") == DIRECTLY_ANSWER)
    ]
    return reader.from_object(calls, CallForm.COHERE, raw, reading.repairs) if calls else []


def is_cohere_action(body: str, tools: Mapping[str, Tool]) -> bool:
    """Whether a fenced body is Command R+'s action list naming offered tools."""
    try:
        value = read_json(body.strip()).value
    except Unreadable:
        return False
    items = value if isinstance(value, list) and value else [value]
    return all(
        isinstance(item, dict)
        and (item.get("tool_name") in tools or item.get("tool_name") == DIRECTLY_ANSWER)
        for item in items
    )


def whole(reader: Reader, text: str, *, cut_off: bool) -> tuple[list[WordsCall], str]:
    """A reply that may be a call as a whole, and its words: Phi-4-mini's ``functools[…]``
    opening it, a call's JSON followed by words (xLAM's list), or ``Reader.whole``'s."""
    lead = len(text) - len(text.lstrip())
    if text.startswith(PHI4_OPENER, lead):
        start = lead + len(PHI4_OPENER) - 1
        found = Lexer((), balanced=True).find(text, start)
        if found is None and cut_off:
            return [cut_call(CallForm.PHI4_MINI, text[lead:])], ""
        end = len(text) if found is None else found[0]
        calls = reader.json_body(text[start:end], CallForm.PHI4_MINI, text[lead:end], cut_off=False)
        return calls, text[end:]
    if cut_off and (generic := _cut_generic(reader, text, lead)) is not None:
        return generic, ""
    calls, words = reader.whole(text, cut_off=cut_off)
    if calls and all(c.ok and Repair.EXTRA_OBJECTS_DROPPED not in c.repairs for c in calls):
        return calls, words  # one value, read whole: the common case costs no second look
    joined = _joined(reader, text, lead, cut_off=cut_off)
    if joined is not None:
        return joined
    if calls or not text.startswith(("[", "{"), lead):
        return calls, words
    # The value may be whole with words after it: vLLM's xlam parser loses the call there
    # (json.loads of the whole reply), but the value's own end is plain to see.
    found = Lexer((), balanced=True).find(text, lead)
    if found is None or not text[found[0] :].strip():
        return calls, words
    calls, rest = reader.whole(text[: found[0]], cut_off=False)
    return (calls, text[found[0] :]) if calls and not rest else ([], text)


def _joined(
    reader: Reader, text: str, lead: int, *, cut_off: bool
) -> tuple[list[WordsCall], str] | None:
    """Calls written one after another as JSON, joined by ``;`` or new lines, as Llama 3.x
    writes several (vLLM's llama3_json reads any separator in a whole reply, SGLang skips one
    character after each object: docs/research/call-reading-reasoning-and-several-calls.md
    §5), and the words after the last; None when the reply isn't two values or more."""
    if not text.startswith(("{", "["), lead):
        return None
    calls: list[WordsCall] = []
    pos = lead
    while True:
        found = Lexer((), balanced=True).find(text, pos)
        if found is None:
            # The last value never closed: cut, it is no call; else not calls joined.
            return (
                ([*calls, cut_call(CallForm.BARE_JSON, text[pos:])], "")
                if calls and cut_off
                else None
            )
        end = found[0]
        after = _separated(text, end)
        if not calls and (after == len(text) or text[after] not in "{["):
            return None  # one value: the reply as a whole (Reader.whole) says what it is
        got, rest = reader.whole(text[pos:end], cut_off=False)
        if not got or rest.strip():
            return (calls, text[pos:]) if calls else None
        calls += got
        if after == len(text):
            return calls, ""
        if text[after] not in "{[":
            return calls, text[end:]
        pos = after


def _cut_generic(reader: Reader, text: str, lead: int) -> list[WordsCall] | None:
    """llama.cpp's generic ``{"tool_calls": [{…}, …]`` cut inside its list: each call closed
    before the cut, then the one being written, cut (as a section that closes each call keeps
    them); None when the reply is not one or not cut inside it."""
    match = _GENERIC_LIST.match(text, lead)
    if match is None or Lexer((), balanced=True).find(text, lead) is not None:
        return None
    calls: list[WordsCall] = []
    pos = match.end()
    while text.startswith("{", pos) and (found := Lexer((), balanced=True).find(text, pos)):
        calls += reader.json_body(text[pos : found[0]], CallForm.GENERIC, text, cut_off=False)
        pos = _ITEM_END.match(text, found[0]).end()  # type: ignore[union-attr]
    return [*calls, cut_call(CallForm.GENERIC, text)] if text[pos:].strip() else calls


_GENERIC_LIST = re.compile(r'\{\s*"tool_calls"\s*:\s*\[\s*')
_ITEM_END = re.compile(r"\s*,?\s*")


def _separated(text: str, end: int) -> int:
    """Where the next value may start after one ending at ``end``: past the white space and
    at most one ``;`` that join two calls."""
    after = end
    while after < len(text) and text[after].isspace():
        after += 1
    if after < len(text) and text[after] == ";":
        after += 1
    while after < len(text) and text[after].isspace():
        after += 1
    return after


_JSON_NAMES: Mapping[str, bool | None] = {"true": True, "false": False, "null": None}


class _JsonNames(ast.NodeTransformer):
    """JSON's ``true``, ``false`` and ``null`` as Python's constants."""

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in _JSON_NAMES:
            return ast.copy_location(ast.Constant(_JSON_NAMES[node.id]), node)
        return node


def _json_names(text: str) -> str:
    """The pythonic list with JSON's literals as Python's: LFM2's template writes mappings
    with ``tojson`` (LFM2.5 template; vLLM's lfm2 parser and llama.cpp's lfm2 PEG read them)."""
    if len(text) > MAX_PYTHONIC:
        return text
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    if not any(isinstance(n, ast.Name) and n.id in _JSON_NAMES for n in ast.walk(tree)):
        return text
    try:
        return ast.unparse(_JsonNames().visit(tree))
    except (ValueError, RecursionError):
        return text


def pythonic_calls(
    reader: Reader, opener: str, head: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """A pythonic list after words (``markers.PYTHONIC``): its calls when it is a list of
    calls naming an offered tool, a cut call when the reply was cut inside one, else words."""
    listed = reader.pythonic(body)
    if listed is None and cut_off and reader.pythonic_start(body):
        listed = [cut_call(CallForm.PYTHONIC, body)]
    return (listed, "") if listed else ([], body)
