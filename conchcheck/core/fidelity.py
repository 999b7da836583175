"""Argument fidelity: whether a call's decoded arguments are exactly the ones asked for, and
where they are not, what each altered value shows (newlines stripped, a value cut at a call
marker, a big integer rounded, escapes changed, non-ASCII text changed).

The expected arguments are the ones a prompt spells out; the ones got are what the reader
decoded from the reply. Values are compared with their JSON types (``1`` is not ``1.0`` and
``true`` is not ``1``); each differing leaf is one ``FieldChange``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.names import Name
from conchcheck.core.words.sections import DS_CALL_END, KIMI_CALL_END

CALL_ENDS: tuple[str, ...] = (
    "</tool_call>",  # Hermes, Qwen, GLM
    "<|im_end|>",  # ChatML's end of turn (Qwen, SmolLM)
    "<|eot_id|>",  # Llama 3's end of turn
    "</function>",  # Llama and Qwen3-Coder
    KIMI_CALL_END,  # Kimi K2
    "<|end|>",  # gpt-oss Harmony, Phi
    DS_CALL_END,  # DeepSeek V3
)
"""Markers that end a call or a turn: a server's parser or a stop token that meets one inside
a value may end the call there."""

_DOUBLE_ROUNDS_ABOVE = 2**53
"""Integers above this have no exact IEEE double: a JSON reader that parses numbers as doubles
(JavaScript's ``JSON.parse``, Go's ``encoding/json`` into an ``interface{}``) gives back the
nearest one."""

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_ROOT = "$"


class FidelityChange(Name):
    """What happened to a value that did not come back exactly."""

    NEWLINES_STRIPPED = "newlines_stripped"
    """Each ``\\n`` (or ``\\r\\n``) became nothing or a space; nothing else changed."""
    CUT_AT_MARKER = "cut_at_marker"
    """The value ends at a call marker (``CALL_ENDS``) it held, or the marker alone is gone
    (dropped as a special token); fields missing from a call cut this way count here too."""
    NUMBER_ROUNDED = "number_rounded"
    """An integer above 2^53 came back as the nearest double (as an integer or a float)."""
    ESCAPES_CHANGED = "escapes_changed"
    """Backslashes doubled or halved, ``\\n`` written as backslash-n, quotes escaped twice:
    the value was encoded or decoded once too often."""
    NON_ASCII_CHANGED = "non_ascii_changed"
    """Non-ASCII characters written as ``\\uXXXX`` text, as ``?`` or U+FFFD, dropped, read as
    Latin-1, or an emoji split into lone surrogates."""
    OTHER = "other"
    """Any other difference: a wrong value or type, a missing or extra field."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One value that did not come back exactly."""

    path: str
    """Where: ``code``, ``items[2].name``, ``["a.b"]`` for a key that is not a plain name,
    ``$`` for the arguments as a whole (when what came back is not an object)."""
    change: FidelityChange
    expected: JsonValue
    """None for a field that was not asked for."""
    got: JsonValue
    """None for a field that is missing (or came back null)."""


def compare_arguments(expected: JsonObject, got: JsonValue) -> tuple[FieldChange, ...]:
    """Each leaf where ``got`` differs from ``expected``, classified; empty when they are equal
    with their JSON types. Changes come in document order, an object's extra fields after
    the ones asked for.
    """
    found: list[FieldChange] = []
    missing: list[int] = []
    # (path, expected, got, which of the two is there); children are pushed in reverse so
    # the changes come out in document order. No recursion: the depth is whatever came back.
    stack: list[tuple[_Path, JsonValue, JsonValue, _Side]] = [(None, expected, got, _Side.BOTH)]
    while stack:
        path, want, have, side = stack.pop()
        if side is _Side.MISSING:
            missing.append(len(found))
            found.append(FieldChange(_render(path), FidelityChange.OTHER, want, None))
        elif side is _Side.EXTRA:
            found.append(FieldChange(_render(path), FidelityChange.OTHER, None, have))
        elif isinstance(want, dict) and isinstance(have, dict):
            for key in reversed([key for key in have if key not in want]):
                stack.append((_child(path, key), None, have[key], _Side.EXTRA))
            for key in reversed(list(want)):
                there = _Side.BOTH if key in have else _Side.MISSING
                stack.append((_child(path, key), want[key], have.get(key), there))
        elif isinstance(want, list) and isinstance(have, list):
            for index in reversed(range(max(len(want), len(have)))):
                sub: _Path = (path, f"[{index}]")
                if index >= len(want):
                    stack.append((sub, None, have[index], _Side.EXTRA))
                elif index >= len(have):
                    stack.append((sub, want[index], None, _Side.MISSING))
                else:
                    stack.append((sub, want[index], have[index], _Side.BOTH))
        elif not _same(want, have):
            found.append(FieldChange(_render(path), _classify(want, have), want, have))
    if any(field.change is FidelityChange.CUT_AT_MARKER for field in found):
        # A value cut at a marker ends the whole call there: the fields the call lost with it
        # are part of the cut, whatever order the model wrote them in.
        for index in missing:
            field = found[index]
            found[index] = FieldChange(
                field.path, FidelityChange.CUT_AT_MARKER, field.expected, field.got
            )
    return tuple(found)


def changes(fields: Iterable[FieldChange]) -> tuple[FidelityChange, ...]:
    """The distinct classes among ``fields``, in the enum's order."""
    seen = {field.change for field in fields}
    return tuple(change for change in FidelityChange if change in seen)


_Path: TypeAlias = "tuple[_Path, str] | None"
"""A path as a chain of (parent, segment), rendered only for a change: building each child's
path as text would cost its depth at every node."""


class _Side(Enum):
    """Which of the two values a node of the walk has."""

    BOTH = "both"
    MISSING = "missing"
    EXTRA = "extra"


def _child(path: _Path, key: str) -> _Path:
    if _PLAIN_KEY.fullmatch(key):
        return (path, key if path is None else f".{key}")
    return (path, f"[{json.dumps(key, ensure_ascii=False)}]")


def _render(path: _Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, segment = path
        parts.append(segment)
    return "".join(reversed(parts)) or _ROOT


def _same(want: JsonValue, have: JsonValue) -> bool:
    """Equal as JSON values of the same type (containers are walked, never compared here)."""
    return type(want) is type(have) and want == have


def _classify(want: JsonValue, have: JsonValue) -> FidelityChange:
    if isinstance(want, str) and isinstance(have, str):
        return _string_change(want, have)
    if _rounded(want, have):
        return FidelityChange.NUMBER_ROUNDED
    return FidelityChange.OTHER


def _rounded(want: JsonValue, have: JsonValue) -> bool:
    """``want`` is an integer above 2^53 and ``have`` is the double nearest to it."""
    if isinstance(want, bool) or not isinstance(want, int) or abs(want) <= _DOUBLE_ROUNDS_ABOVE:
        return False
    if isinstance(have, bool) or not isinstance(have, int | float):
        return False
    try:
        return have == float(want)
    except OverflowError:  # beyond any double: nothing to round to
        return False


def _string_change(want: str, have: str) -> FidelityChange:
    if _cut(want, have):
        return FidelityChange.CUT_AT_MARKER
    if _newlines_stripped(want, have):
        return FidelityChange.NEWLINES_STRIPPED
    # Non-ASCII first: "\u00e8" text alone is a non-ASCII change, though encoding the whole
    # value once more (below) would also write it.
    if _non_ascii_changed(want, have):
        return FidelityChange.NON_ASCII_CHANGED
    if _escapes_changed(want, have):
        return FidelityChange.ESCAPES_CHANGED
    return FidelityChange.OTHER


def _cut(want: str, have: str) -> bool:
    """``have`` is ``want`` up to a marker it holds (the marker's own text or whitespace
    before it may be kept), or ``want`` with its markers taken out."""
    if want.startswith(have):
        end = len(have)
        for marker in CALL_ENDS:
            at = want.find(marker, max(0, end - len(marker) + 1))
            if at != -1 and (at <= end or want[end:at].isspace()):
                return True
    dropped = want
    for marker in CALL_ENDS:
        dropped = dropped.replace(marker, "")
    return dropped != want and dropped == have


def _newlines_stripped(want: str, have: str) -> bool:
    if "\n" not in want:
        return False
    lines = want.replace("\r\n", "\n")
    return have in (lines.replace("\n", ""), lines.replace("\n", " "))


def _non_ascii_changed(want: str, have: str) -> bool:
    """Every ASCII character of ``want`` is in ``have`` as it was, and each non-ASCII one is
    there as itself or one of its stand-ins, or dropped (read left to right, greedily)."""
    if want.isascii():
        return False
    at = 0
    for char in want:
        if have.startswith(char, at):
            at += 1
            continue
        if char.isascii():
            return False
        for stand_in in _stand_ins(char):
            if have.startswith(stand_in, at):
                at += len(stand_in)
                break
        # else: dropped
    return at == len(have)


def _stand_ins(char: str) -> tuple[str, ...]:
    """What an encoder that can't keep ``char`` writes instead, longest first where one is a
    prefix of another."""
    escaped = json.dumps(char)[1:-1]  # "\u00e8", or a surrogate pair "\ud83c\udf6e"
    upper = "".join("\\u" + unit.upper() for unit in escaped.split("\\u")[1:])
    utf8 = len(char.encode("utf-8"))
    units = len(char.encode("utf-16-le")) // 2
    counts = sorted({utf8, units, 1}, reverse=True)
    surrogates: tuple[str, ...] = ()
    if units == 2:
        # An emoji split into its UTF-16 halves, each left alone (a pair escaped one half at a
        # time and read back by a lenient decoder).
        pair = char.encode("utf-16-le")
        high = chr(int.from_bytes(pair[:2], "little"))
        low = chr(int.from_bytes(pair[2:], "little"))
        surrogates = (high + low, high, low)
    return (
        escaped,
        upper,
        *surrogates,
        char.encode("utf-8").decode("latin-1"),  # UTF-8 bytes read as Latin-1 ("Ã¨")
        *("?" * count for count in counts),
        *("\ufffd" * count for count in counts),
    )


def _escapes_changed(want: str, have: str) -> bool:
    """``have`` is ``want`` encoded once more (whole, or only its backslashes, quotes or
    control characters) or decoded once more."""
    if have in (
        json.dumps(want, ensure_ascii=False)[1:-1],
        json.dumps(want)[1:-1],
        want.replace("\\", "\\\\"),
        want.replace('"', '\\"'),
        want.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"),
        want.replace("\\\\", "\\"),
    ):
        return True
    return "\\" in want and _decoded(want) == have


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}


def _decoded(text: str) -> str:
    """``text`` with its JSON escapes read (once more than it should have been); a backslash
    that starts no escape stays."""
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        following = text[at + 1 : at + 2]
        if char == "\\" and following in _ESCAPES:
            out.append(_ESCAPES[following])
            at += 2
        elif char == "\\" and following == "u" and _HEX4.fullmatch(text, at + 2, at + 6):
            out.append(chr(int(text[at + 2 : at + 6], 16)))
            at += 6
        else:
            out.append(char)
            at += 1
    return "".join(out)


_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
