"""The forgiving JSON reader: mends the almost-JSON that models write, within hard limits.

Valid JSON takes the standard library's fast path. Anything else goes through a small
single-pass parser of our own that never evaluates, never recurses and never backtracks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from conchcheck.core.nesting import depth_of
from conchcheck.core.repairs import Repair as Repair
from conchcheck.errors import ConchcheckError

MAX_SIZE = 1 << 20
"""Largest text read, in characters (1 MiB of ASCII)."""

MAX_DEPTH = 64
"""Deepest nesting of objects and lists read."""


class Unreadable(ConchcheckError, ValueError):
    """Text the forgiving reader cannot read. ``reason`` says why; ``offset`` where, if known."""

    def __init__(self, reason: str, *, offset: int | None = None, text: str = "") -> None:
        self.reason = reason
        self.offset = offset
        where = ""
        if offset is not None:
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
            where = f" at line {line}, column {column}"
        super().__init__(
            f"Could not read the text as JSON{where}: {reason}.",
            hint='Send one JSON object, e.g. {"city": "Paris"}.',
        )


@dataclass(frozen=True, slots=True)
class Reading:
    """A value read from text, and what had to be mended to read it (empty for valid JSON)."""

    value: Any
    repairs: tuple[Repair, ...] = ()


def read_json(
    text: str,
    *,
    mend_unclosed: bool = True,
    max_size: int = MAX_SIZE,
    max_depth: int = MAX_DEPTH,
) -> Reading:
    """Read ``text`` as JSON, mending what models get wrong; raise ``Unreadable`` otherwise.

    With ``mend_unclosed=False`` (a reply that was cut off) an unclosed string, object or
    list is not closed: the text raises ``Unreadable`` with a reason that starts "cut off".
    """
    if len(text) > max_size:
        raise Unreadable(f"the text is {len(text)} characters long, over the limit of {max_size}")
    try:
        if "\\u" in text and _SURROGATE.search(text):
            # json.loads takes an unpaired \ud83d as a lone surrogate, a string no UTF-8 file,
            # report or request can hold: the reader below keeps such an escape as text.
            raise ValueError("a surrogate escape")
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except (ValueError, RecursionError):
        pass
    else:
        # Counting brackets runs in C; only text with more of them than the limit needs a walk.
        nested = isinstance(value, (dict, list))
        if nested and text.count("{") + text.count("[") > max_depth and depth_of(value) > max_depth:
            raise Unreadable(f"it is nested deeper than {max_depth} levels")
        return Reading(value)
    return _Parser(text, mend_unclosed=mend_unclosed, max_depth=max_depth).read()


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON and cannot be sent on to a tool; the slow path refuses them.
    raise ValueError(name)


def _finite(text: str) -> float:
    # `1e999` is valid JSON that Python reads as infinity, which no tool can be sent.
    number = float(text)
    if number in (_INFINITY, -_INFINITY):
        raise ValueError(text)
    return number


_INFINITY = float("inf")


_WHITESPACE = re.compile(r"[ \t\r\n\ufeff]*")
_SKIPPABLE = frozenset(" \t\r\n\ufeff/")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$\-]*|\d+")
_PLAIN = {'"': re.compile(r'[^"\\\x00-\x1f]+'), "'": re.compile(r"[^'\\\x00-\x1f]+")}
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""The escape of a UTF-16 surrogate, paired or not."""
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS: dict[str, tuple[Any, Repair | None]] = {
    "true": (True, None),
    "false": (False, None),
    "null": (None, None),
    "True": (True, Repair.PYTHON_LITERAL),
    "False": (False, Repair.PYTHON_LITERAL),
    "None": (None, Repair.PYTHON_LITERAL),
}
_FENCE_OPEN = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?")
_STARTS_VALUE = re.compile(r"[\"'{\[\-+.0-9A-Za-z_$]")
_STARTS_MEMBER = re.compile(r"[\"'A-Za-z_$0-9]")
_DROPPED = object()
_EXTRA_CLOSERS = frozenset({"}", "]", "}}", "]]", "}]", "]}"})

# Parser states: what the next token may be.
_VALUE, _KEY, _AFTER = 0, 1, 2


class _Parser:
    """One pass over the text with an explicit stack: linear time, bounded depth."""

    def __init__(self, text: str, *, mend_unclosed: bool, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.end = len(text)
        self.mend = mend_unclosed
        self.max_depth = max_depth
        self.repairs: list[Repair] = []

    def note(self, repair: Repair) -> None:
        if repair not in self.repairs:
            self.repairs.append(repair)

    def fail(self, reason: str, offset: int | None = None) -> Unreadable:
        return Unreadable(reason, offset=self.pos if offset is None else offset, text=self.text)

    def read(self) -> Reading:
        self.unfence()
        self.skip()
        if self.pos >= self.end:
            raise self.fail("there is no JSON value in it", offset=None)
        values = [self.value()]
        while True:
            self.skip()
            if self.pos < self.end and self.text[self.pos] == ",":
                self.pos += 1
                self.skip()
            if self.pos >= self.end:
                break
            char = self.text[self.pos]
            if char in "{[":
                values.append(self.value())
            elif char in "}]" and self.text[self.pos : self.end].strip() in _EXTRA_CLOSERS:
                # Small models often close once too often: `{"a": 1}}` (SmolLM2, seen live).
                self.note(Repair.EXTRA_CLOSER)
                break
            else:
                raise self.fail("there is text after the JSON value")
        return Reading(self.join(values), tuple(self.repairs))

    def join(self, values: list[Any]) -> Any:
        if len(values) == 1:
            return values[0]
        # Pieces of one call have disjoint keys and are joined; whole calls repeat keys, so
        # the first is kept and the note says the rest were dropped.
        if all(isinstance(v, dict) for v in values):
            seen: set[str] = set()
            for value in values:
                if seen & value.keys():
                    break
                seen |= value.keys()
            else:
                self.note(Repair.JOINED_OBJECTS)
                return {k: v for value in values for k, v in value.items()}
        self.note(Repair.EXTRA_OBJECTS_DROPPED)
        return values[0]

    def unfence(self) -> None:
        start = _WHITESPACE.match(self.text).end()  # type: ignore[union-attr]
        if not self.text.startswith("```", start):
            return
        opened = _FENCE_OPEN.match(self.text, start)
        assert opened is not None
        self.note(Repair.FENCE)
        self.pos = opened.end()
        closing = self.text.rfind("```")
        if closing >= self.pos and not self.text[closing + 3 :].strip():
            self.end = closing

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text, end = self.text, self.end
        if self.pos < end and text[self.pos] not in _SKIPPABLE:
            return
        while True:
            self.pos = min(_WHITESPACE.match(text, self.pos).end(), end)  # type: ignore[union-attr]
            if text.startswith("//", self.pos) and self.pos < end:
                newline = text.find("\n", self.pos, end)
                self.pos = end if newline < 0 else newline + 1
            elif text.startswith("/*", self.pos) and self.pos < end:
                close = text.find("*/", self.pos + 2, end)
                self.pos = end if close < 0 else close + 2
            else:
                return
            self.note(Repair.COMMENT)

    def value(self) -> Any:
        """Read one whole value starting at ``pos``.

        Containers are attached to their parent when they open, so at a cut the outermost
        one already holds everything read; a member whose value never came is left out.
        """
        text = self.text
        stack: list[dict[str, Any] | list[Any]] = []
        key = ""
        state = _VALUE
        while True:
            self.skip()
            if self.pos >= self.end:
                if not stack:
                    raise self.fail("the text ended before a value")
                if not self.mend:
                    raise self.fail("cut off before the JSON was closed")
                self.note(Repair.UNCLOSED)
                return stack[0]
            char = text[self.pos]
            top = stack[-1] if stack else None
            if state == _KEY:
                if char == "}":
                    self.pos += 1
                    stack.pop()
                    if not stack:
                        return top
                    state = _AFTER
                    continue
                key = self.key(char)
                self.skip()
                if self.pos < self.end:
                    if text[self.pos] != ":":
                        raise self.fail(f"expected ':' after the key {json.dumps(key)}")
                    self.pos += 1
                state = _VALUE
            elif state == _AFTER:
                in_object = isinstance(top, dict)
                closer = "}" if in_object else "]"
                if char == ",":
                    self.pos += 1
                    self.skip()
                    if self.pos < self.end and text[self.pos] == closer:
                        self.note(Repair.TRAILING_COMMA)
                    else:
                        if self.pos >= self.end and self.mend:
                            # Cut right after a comma: closing it drops the comma as well.
                            self.note(Repair.TRAILING_COMMA)
                        state = _KEY if in_object else _VALUE
                elif char == closer:
                    self.pos += 1
                    done = stack.pop()
                    if not stack:
                        return done
                elif _STARTS_MEMBER.match(char) if in_object else _STARTS_VALUE.match(char):
                    self.note(Repair.MISSING_COMMA)
                    state = _KEY if in_object else _VALUE
                else:
                    raise self.fail(f"expected ',' or '{closer}'")
            elif char in "{[":
                if len(stack) >= self.max_depth:
                    raise self.fail(f"it is nested deeper than {self.max_depth} levels")
                self.pos += 1
                fresh: dict[str, Any] | list[Any] = {} if char == "{" else []
                if top is not None:
                    _attach(top, key, fresh)
                stack.append(fresh)
                state = _KEY if char == "{" else _VALUE
            elif char == "]" and isinstance(top, list):
                self.pos += 1
                stack.pop()
                if not stack:
                    return top
                state = _AFTER
            else:
                item = self.scalar(char, inside=top is not None)
                if item is _DROPPED:
                    continue
                if top is None:
                    return item
                _attach(top, key, item)
                state = _AFTER

    def key(self, char: str) -> str:
        if char in "\"'":
            return self.string(char)
        word = _WORD.match(self.text, self.pos, self.end)
        if not word:
            raise self.fail("expected a key in quotes")
        self.note(Repair.BARE_KEY)
        self.pos = word.end()
        return word.group()

    def scalar(self, char: str, *, inside: bool) -> Any:
        if char in "\"'":
            return self.string(char)
        number = _NUMBER.match(self.text, self.pos, self.end)
        if number:
            return self.number(number)
        word = _WORD.match(self.text, self.pos, self.end)
        if word and word.group() in _LITERALS:
            value, repair = _LITERALS[word.group()]
            if repair:
                self.note(repair)
            self.pos = word.end()
            return value
        if word and self.end == word.end() and any(w.startswith(word.group()) for w in _LITERALS):
            if not (inside and self.mend):
                raise self.fail("cut off inside a literal")
            # `{"a": 1, "b": tr` ended normally: leave the member out rather than guess it.
            self.pos = self.end
            return _DROPPED
        if word and word.group() in {"NaN", "Infinity"}:
            raise self.fail(f"{word.group()} is not a number JSON can carry")
        raise self.fail("expected a value")

    def number(self, match: re.Match[str]) -> int | float:
        raw = match.group()
        if not _JSON_NUMBER.fullmatch(raw):
            self.note(Repair.NUMBER_FORMAT)
        self.pos = match.end()
        try:
            if "." in raw or "e" in raw or "E" in raw:
                result = float(raw)
                if result in (_INFINITY, -_INFINITY):
                    raise ValueError(raw)
                return result
            return int(raw)
        except ValueError:
            raise self.fail(f"the number {raw[:20]} is out of range", match.start()) from None

    def string(self, quote: str) -> str:
        """Read a string whose opening quote is at ``pos``."""
        if quote == "'":
            self.note(Repair.SINGLE_QUOTES)
        start = self.pos
        self.pos += 1
        plain = _PLAIN[quote]
        text, end = self.text, self.end
        parts: list[str] = []
        while True:
            run = plain.match(text, self.pos, end)
            if run:
                parts.append(run.group())
                self.pos = run.end()
            if self.pos >= end:
                if not self.mend:
                    raise self.fail("cut off inside a string", start)
                self.note(Repair.UNCLOSED)
                return "".join(parts)
            char = text[self.pos]
            if char == quote:
                self.pos += 1
                return "".join(parts)
            if char != "\\":
                self.note(Repair.CONTROL_CHARACTER)
                parts.append(char)
                self.pos += 1
                continue
            parts.append(self.escape(quote))

    def escape(self, quote: str) -> str:
        text = self.text
        if self.pos + 1 >= self.end:
            self.pos = self.end
            return ""
        code = text[self.pos + 1]
        if code == quote or code in _ESCAPES:
            self.pos += 2
            return quote if code == quote else _ESCAPES[code]
        if code == "u":
            digits = text[self.pos + 2 : self.pos + 6]
            if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                self.pos += 6
                unit = int(digits, 16)
                low = text[self.pos : self.pos + 6]
                if 0xD800 <= unit < 0xDC00 and low[:2] == "\\u" and _is_low_surrogate(low[2:]):
                    self.pos += 6
                    return chr(0x10000 + ((unit - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00))
                if not 0xD800 <= unit < 0xE000:
                    return chr(unit)
                # Half a pair: no character at all. Kept as the model wrote it, like `\d`.
                self.pos -= 6
        # An unknown escape such as `\d` in a regex a model wrote: keep both characters.
        self.note(Repair.BAD_ESCAPE)
        self.pos += 2
        return "\\" + code


def _attach(container: dict[str, Any] | list[Any], key: str, item: Any) -> None:
    if isinstance(container, list):
        container.append(item)
    else:
        container[key] = item


def _is_low_surrogate(digits: str) -> bool:
    try:
        return len(digits) == 4 and 0xDC00 <= int(digits, 16) < 0xE000
    except ValueError:
        return False
