"""Markers outside values: where a block of a call format really ends (issue 9, section 2).

A marker inside a JSON string, a Gemma 4 ``<|"|>`` string or a tagged value (Qwen3-Coder's
``<parameter=…>``, GLM's ``<arg_value>``, DeepSeek's ``<｜DSML｜parameter …>``) is the value's own
text: tools that write code or docs carry markup in their arguments. ``Lexer`` reads a stream
once, in chunks of any size, and reports the first marker that stands outside every value.
"""

from __future__ import annotations

import functools
import re
from enum import Enum

from conchcheck.core.words.values import Values

MAX_LOOKAHEAD = 256
"""Whitespace held after a closer while waiting to see what follows it; past this it is real."""


class _In(Enum):
    CODE = 0
    STRING = 1
    VALUE = 2


GEMMA_QUOTE = '<|"|>'
_STRING_END = {
    '"': re.compile(r'(?:[^"\\]|\\.)*"', re.S),
    "'": re.compile(r"(?:[^'\\]|\\.)*'", re.S),
}
_BACKSLASHES = re.compile(r"\\+\Z")
_SPACE = re.compile(r"\s*")


_OPENS = r"(?:\{|\[(?![A-Z/])){1,4096}"
"""A run of opening brackets, read as one token (bounded, so a search that wants only the
first of a run never reads a megabyte of it)."""
_PAIRS = r"(?:\{\}|\[\]){1,4096}"
"""A run of empty objects and lists, read as one token: it opens nothing."""
_Patterns = tuple[re.Pattern[str], tuple[str, ...], re.Pattern[str], dict[str, re.Pattern[str]]]


@functools.lru_cache(maxsize=64)
def _patterns(
    markers: tuple[str, ...],
    strings: bool,
    values: tuple[Values, ...],
    raw: str,
    inert: tuple[str, ...],
) -> _Patterns:
    """What a lexer searches with, built once per kind of block (a reply holds many)."""
    literals = sorted(markers, key=len, reverse=True)
    code = [re.escape(m) for m in literals]
    code += [v.opener for v in values]
    if strings:
        # Inert literals before the brackets, so "[ARGS]" is never read as a list; a run of
        # brackets is one token (1 MB of "{" is one search, not a million), but never takes
        # the "[" of a capital's or a slash's literal ("[[ARGS]" is a list, then "[ARGS]").
        code += [
            re.escape(raw),
            *map(re.escape, inert),
            r'"{1,4096}|\'{1,4096}',
            _PAIRS,
            _OPENS,
            r"[}\]]{1,4096}",
            r"\[",
        ]
    every = (*literals, *((raw, *inert) if strings else ()))
    starts = {m[0] for m in every} | ({"<"} if values else set())
    return (
        re.compile("|".join(code)),
        every,
        re.compile("[" + re.escape("".join(sorted(starts))) + "]"),
        {v.opener_prefix: re.compile(v.opener_prefix) for v in values},
    )


def first_anywhere(text: str, markers: tuple[str, ...]) -> tuple[int, str] | None:
    """The first of ``markers`` in ``text``, inside a value or not (a block never closed)."""
    hits = [(i, m) for m in markers if (i := text.find(m)) >= 0]
    return min(hits) if hits else None


class Lexer:
    """Finds the first of ``markers`` outside every value, across chunks, reading each once.

    ``strings``: JSON strings (inside braces or brackets only, so an apostrophe in prose is
    prose) and ``raw`` strings (Gemma 4's ``<|"|>``, FunctionGemma's ``<escape>``) hide
    markers. ``values``: tagged-value syntaxes that hide markers. ``again``: markers that,
    found inside an open value and followed by nothing but whitespace and one of them, still
    end the block (an unclosed value before the next call). ``balanced``: the end of the first
    bracketed value ends the block too, reported as the empty marker just after it (formats
    with no closer: Granite 3's ``<|tool_call|>[…]``). ``inert``: literals read as nothing
    (Mistral's ``[ARGS]``, which is no list). ``depth``: brackets opened before the text (a
    block whose opener or head ends with the ``{`` of its JSON).
    """

    def __init__(
        self,
        markers: tuple[str, ...],
        *,
        strings: bool = True,
        values: tuple[Values, ...] = (),
        again: tuple[str, ...] = (),
        balanced: bool = False,
        raw: str = GEMMA_QUOTE,
        inert: tuple[str, ...] = (),
        depth: int = 0,
    ) -> None:
        self.markers = markers
        self.values = values
        self.again = again
        self._balanced, self._raw = balanced, raw
        self._code, self._literals, self._start_re, self._prefixes = _patterns(
            markers, strings, values, raw, inert
        )
        # Literals a "[" may begin: one cut by the window's end waits for the rest.
        self._bracketed = tuple(m for m in self._literals if m[0] == "[")
        self._bracket_len = max(map(len, self._bracketed), default=0)
        self._longest = max(map(len, markers), default=0)
        self._value: Values | None = None
        self._value_re: re.Pattern[str] | None = None
        self._in = _In.CODE
        self._quote = ""
        self._depth = depth
        self._carry = ""
        self._offset = 0  # characters fed so far
        self.spans: list[tuple[str, int, int]] = []
        """Each tagged value read: (its opening tag, where its text starts, where it ends)."""
        self._opened: tuple[str, int] | None = None
        self._cut = False
        self._fresh = False  # inside a value: its current line so far is only space
        self.unread = 0
        """Characters at the end of the last ``feed(keep=False)`` left for the caller."""

    @property
    def fed(self) -> int:
        """Characters fed so far."""
        return self._offset

    @property
    def in_value(self) -> bool:
        """Whether the text fed so far ends inside a string or a tagged value."""
        return self._in is not _In.CODE

    def feed(self, text: str, start: int = 0, *, keep: bool = True) -> tuple[int, str] | None:
        """Read ``text[start:]``; the first marker outside values, as (offset in all the text
        fed, marker). The text is scanned in place, so feeding the rest of a long reply costs
        only what is read. ``keep=False``: an end that may begin a marker is not kept but
        left ``unread``, for the caller to feed again with what follows.
        """
        if self._carry:
            window, base, pos = self._carry + text[start:], self._offset - len(self._carry), 0
        else:
            window, base, pos = text, self._offset - start, start
        self._offset += len(text) - start
        self._carry = ""
        found = self._scan(window, base, final=False, pos=pos)
        self.unread = 0
        if not keep and found is None:
            self.unread, self._carry = len(self._carry), ""
            self._offset -= self.unread
        return found

    def finish(self, *, cut_off: bool = False) -> tuple[int, str] | None:
        """End of input: a closer still waiting for what follows it ends the block, unless
        the text was cut off (then what would have followed is unknown, so it is text).
        """
        window, self._carry = self._carry, ""
        self._cut = cut_off
        found = self._scan(window, self._offset - len(window), final=True)
        if found is None:
            self._close_value(self._offset)
        return found

    def find(self, text: str, start: int = 0) -> tuple[int, str] | None:
        """One piece: the first marker outside values in ``text[start:]``, reading to its end.

        Offsets are in ``text``; ``spans`` lists the values read up to the marker.
        """
        self._offset = len(text)
        found = self._scan(text, 0, final=True, pos=start)
        if found is None:
            self._close_value(len(text))
        return found

    # -- the scan ----------------------------------------------------------------------------

    def _scan(self, window: str, base: int, *, final: bool, pos: int = 0) -> tuple[int, str] | None:
        while pos < len(window):
            if self._in is _In.STRING:
                pos = self._string(window, pos)
            elif self._in is _In.VALUE:
                found = self._in_value(window, pos, base, final=final)
                if isinstance(found, tuple):
                    return found
                if found is None:
                    return None
                pos = found
            else:
                match = self._code.search(window, pos)
                if match is None:
                    self._carry = window[self._partial(window, pos) :]
                    return None
                token, pos = match.group(), match.end()
                if token in self.markers:
                    return base + match.start(), token
                if token[-1] == "[" and not final and len(window) - pos < self._bracket_len:
                    rest = window[pos - 1 :]
                    if any(m.startswith(rest) for m in self._bracketed):
                        self._depth += len(token) - 1
                        self._carry = rest  # "[AR" may yet be "[ARGS]"
                        return None
                if self.values and token[0] == "<" and token != self._raw:
                    self._open_value(token, base + pos)
                elif token == self._raw:
                    self._in, self._quote = _In.STRING, token
                elif token[0] in "\"'":
                    # Quotes mean strings only inside brackets; a run of them is empty strings,
                    # and an odd one opens one more.
                    if self._depth > 0 and len(token) % 2:
                        self._in, self._quote = _In.STRING, token[0]
                elif token[0] in "{[" and token[1:2] in ("}", "]"):
                    if self._balanced and not self._depth:
                        # An empty value is a whole value.
                        return self._value_end(window, match.start() + 2, base, final=final)
                elif token[0] in "{[":
                    self._depth += len(token)
                elif token[0] in "}]" and self._depth > 0:
                    if len(token) < self._depth or not self._balanced:
                        self._depth = max(self._depth - len(token), 0)
                        continue
                    pos, self._depth = match.start() + self._depth, 0
                    return self._value_end(window, pos, base, final=final)
        return None

    def _value_end(
        self, window: str, pos: int, base: int, *, final: bool
    ) -> tuple[int, str] | None:
        """The value ends the block just before ``pos`` (after its closing bracket); a closer
        right after it is the block's, and one that may begin there waits for what follows."""
        rest = window[pos : pos + self._longest]
        closer = next((m for m in self.markers if rest.startswith(m)), "")
        if closer or final or len(rest) >= self._longest:
            return base + pos, closer
        if any(m.startswith(rest) for m in self.markers):
            self._depth, self._carry = 1, window[pos - 1 :]
            return None  # wait to see what follows the value
        return base + pos, ""

    def _string(self, window: str, pos: int) -> int:
        quote = self._quote
        if quote in _STRING_END:
            match = _STRING_END[quote].match(window, pos)
            if match is not None:
                self._in = _In.CODE
                return match.end()
            # An odd run of backslashes escapes the next chunk's first character.
            tail = _BACKSLASHES.search(window, pos)
            self._carry = "\\" if tail is not None and len(tail.group()) % 2 else ""
            return len(window)
        end = window.find(quote, pos)  # a raw string: nothing is escaped inside
        if end >= 0:
            self._in = _In.CODE
            return end + len(quote)
        # The closing quote may be split across chunks: keep what could begin it.
        keep = next((k for k in range(len(quote) - 1, 0, -1) if window.endswith(quote[:k])), 0)
        self._carry = window[len(window) - keep :] if keep else ""
        return len(window)

    def _open_value(self, token: str, start: int) -> None:
        self._close_value(start - len(token))
        self._opened = (token, start)
        self._fresh = False  # the line holds the opening tag
        for values in self.values:
            if re.fullmatch(values.opener, token):
                self._in, self._value = _In.VALUE, values
                tokens = [values.closer, *self.markers, values.opener]
                self._value_re = re.compile(
                    "|".join(re.escape(t) if t is not values.opener else t for t in tokens)
                )
                return

    def _in_value(
        self, window: str, pos: int, base: int, *, final: bool
    ) -> int | tuple[int, str] | None:
        """Read on inside a value: the next position, the block's end, or None to wait."""
        values, pattern = self._value, self._value_re
        assert values is not None and pattern is not None
        match = pattern.search(window, pos)
        if match is None:
            tokens = [values.closer, *self.markers]
            index = self._tail(window, pos, tokens, values.opener_prefix)
            self._line(window, pos, index)
            self._carry = window[index:]
            return None
        token = match.group()
        fresh = self._line(window, pos, match.start())
        if token != values.closer and token not in self.markers:
            if values.own_line and not fresh:
                # The format writes each tag on a line of its own (Qwen3-Coder's template,
                # DeepSeek's DSML encoder): one inside a line is the value's text.
                self._fresh = False
                return match.end()
            self._open_value(token, base + match.end())  # an unclosed value ends at the next
            return match.end()
        follows = values.follows if token == values.closer else self.again
        after = _space_end(window, match.end())
        rest = window[after : after + max(map(len, follows), default=0)]
        if after - match.end() > MAX_LOOKAHEAD:
            real = True
        elif after == len(window) and final:
            real = not self._cut
        elif not final and (
            after == len(window) or (after + len(rest) == len(window) and _may_begin(rest, follows))
        ):
            self._carry = window[match.start() :]  # wait to see what follows
            return None
        else:
            real = rest.startswith(follows)
        if not real:
            self._fresh = False
            return match.end()  # the value's own text
        self._close_value(base + match.start())
        if token == values.closer:
            self._in = _In.CODE
            return match.end()
        return base + match.start(), token

    def _line(self, window: str, start: int, end: int) -> bool:
        """Read ``window[start:end]`` of a value: whether its line so far is only space."""
        newline = window.rfind("\n", start, end)
        if newline >= 0:
            self._fresh = not window[newline + 1 : end].strip()
        elif end > start:
            self._fresh = self._fresh and not window[start:end].strip()
        return self._fresh

    def _close_value(self, end: int) -> None:
        if self._opened is not None:
            self.spans.append((self._opened[0], self._opened[1], end))
            self._opened = None

    def _tail(self, window: str, pos: int, literals: list[str], prefix: str | None) -> int:
        """Where the longest end of ``window[pos:]`` that could begin a token starts."""
        end = len(window)
        index = end
        longest = max(map(len, literals), default=1)  # a value's closer may outrun markers
        start = max(pos, end - longest + 1)
        while (hit := self._start_re.search(window, start)) is not None:
            tail = window[hit.start() :]
            if any(m.startswith(tail) for m in literals):
                index = hit.start()
                break
            start = hit.start() + 1
        if prefix is not None:
            # Every value's opening tag starts with "<": search only from the first one.
            first = window.find("<", max(pos, end - 320))
            match = self._prefixes[prefix].search(window, first) if first >= 0 else None
            if match is not None:
                index = min(index, match.start())
        return index

    def _partial(self, window: str, pos: int) -> int:
        index = self._tail(window, pos, list(self._literals), None)
        for values in self.values:
            index = min(index, self._tail(window, pos, [], values.opener_prefix))
        return index


def _may_begin(rest: str, follows: tuple[str, ...]) -> bool:
    """Whether ``rest`` (cut by the window's end) could still grow into one of ``follows``."""
    return any(f.startswith(rest) and f != rest for f in follows)


def _space_end(text: str, pos: int) -> int:
    """The end of the whitespace that starts at ``pos``."""
    match = _SPACE.match(text, pos)
    return match.end() if match is not None else pos
