"""Tools in words, the block half of the reader: a block's head, its body up to a closer
outside every value, and what it becomes once it ends (``reader.WordsReader`` feeds it).

``BlockReader`` holds the whole state of a reply being read; ``WordsReader`` adds the words
around the blocks, the reply's opening and its end.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from typing import Any

from conchcheck.core.tools import Tool, as_tools
from conchcheck.core.words import react
from conchcheck.core.words.blocks import (
    BY_OPENER,
    FENCE,
    HELD_FENCE,
    HELD_FENCES,
    PASSED_FENCE,
    Block,
    BlockRole,
)
from conchcheck.core.words.forms import MAX_CALLS, OVER, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer, first_anywhere
from conchcheck.core.words.lists import PHI4_OPENER
from conchcheck.core.words.markers import ANGLE, Search, triggers
from conchcheck.core.words.state import ReaderState
from conchcheck.core.words.thinking import KEPT_IN_REASONING, calls_in_reasoning

_MAX_FENCE_INFO = 40
_FALLBACKS = 16
"""Unclosed blocks split at a marker inside a value (a string the model never closed) per
reply; past this the block runs to the end, so a hostile reply can't make the reader rescan."""

_State = ReaderState


class BlockReader:
    """The state of a reply being read, and the reading of its blocks."""

    __slots__ = (
        "_block",
        "_bytes",
        "_calls",
        "_fake",
        "_fallbacks",
        "_head",
        "_head_end",
        "_in_reasoning",
        "_inside",
        "_lag",
        "_lag_ok",
        "_lexer",
        "_opener",
        "_openers",
        "_parts",
        "_pending",
        "_plain",
        "_reader",
        "_reasoned",
        "_resume",
        "_state",
        "_stray",
        "_tentative",
        "_trigger",
        "_triggers",
    )

    def __init__(self, tools: Iterable[Mapping[str, Any] | Tool]) -> None:
        offered = as_tools(tools)
        self._reader = Reader({t.name: t for t in offered})
        self._openers = (*(f"{t.name}(" for t in offered), PHI4_OPENER, *react.OPENERS)
        self._inside = calls_in_reasoning(tuple(t.name for t in offered))
        self._state = _State.START
        self._pending = ""  # short text whose meaning the next chunk decides
        self._opener = ""  # the marker that opened the block or head being read
        self._head = ""  # a block's head, or a fence's info string
        self._head_end = ""  # what ended the head (Harmony's <|message|>, a function's >)
        self._block: Block | None = None
        self._lexer: Lexer | None = None
        self._parts: list[str] = []  # a held block's text read so far
        self._lag: list[str] = []  # a held block's text not read yet (no closer can be in it)
        self._triggers: Search = ANGLE  # finds a first character of the block's closers
        self._trigger = "<"  # that character, when it is the only one ("" when it is not)
        self._lag_ok = False  # in a held block, so text with no trigger may wait unread
        self._plain = False  # in the text state with nothing pending: plain words pass as they are
        self._calls: list[WordsCall] = []
        self._fake = 0
        self._stray = 0
        self._reasoned = False  # a reasoning block or closer ended reasoning already
        self._in_reasoning = 0
        self._resume: Block | None = None  # the reasoning a call inside it broke off
        self._tentative = -1  # the first call read inside reasoning not closed yet
        self._fallbacks = 0
        self._bytes = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def _begin(self, block: Block, out: list[str]) -> None:
        lexer = (
            Lexer((*block.closers, *self._inside), strings=False) if block.calls_inside else None
        )
        self._state, self._block, self._lexer = _State.BLOCK, block, lexer or block.lexer()
        self._parts, self._lag = [], []
        self._triggers, self._trigger = triggers(block)
        self._lag_ok = block.role is not BlockRole.REASONING
        if block.role is BlockRole.REASONING:
            out.append(self._opener + self._head + self._head_end)

    def _head_step(self, text: str, pos: int, out: list[str]) -> int:
        block = self._block
        assert block is not None and block.head_end is not None
        stop = min(len(text), pos + block.head_limit + len(block.head_end))
        end = text.find(block.head_end, pos, stop)
        seen = text[pos : end if end >= 0 else stop]
        broken = block.broken_head(seen, self._opener)
        if end < 0 and not broken and stop == len(text):
            self._pending = text[pos:]  # the head goes on in the next chunk
            return len(text)
        if end < 0 or broken:
            out.append(self._opener)  # not a block after all: words, read again as such
            self._state, self._head_end = _State.TEXT, ""
            return pos
        self._head = text[pos:end]
        self._begin(block.after_head(self._head), out)
        return end + len(block.head_end)

    def _body(self, text: str, pos: int, out: list[str]) -> int:
        block, lexer = self._block, self._lexer
        assert block is not None and lexer is not None
        shift = 0  # how much longer ``text`` is here than the caller's
        if block.role is not BlockRole.REASONING:
            # A held block can only end where one of its closers begins: text with none of
            # their first characters waits unread, and is read in one go with what follows
            # (every character is still read once, in order).
            if self._triggers(text, pos) is None:
                self._lag.append(text[pos:] if pos else text)
                return len(text)
            if self._lag:
                self._lag.append(text[pos:] if pos else text)
                lagged, self._lag = "".join(self._lag), []
                shift, text, pos = len(lagged) - len(text), lagged, 0
        before = lexer.fed
        found = lexer.feed(text, pos, keep=False)
        if found is None:
            end = len(text) - lexer.unread
            self._pending = text[end:]
            if block.role is BlockRole.REASONING:
                out.append(text[pos:end])  # shown as it comes
            else:
                self._parts.append(text[pos:end])
            return len(text) - shift
        index, marker = found
        closed = marker in block.closers
        cut = pos + index - before
        end = cut + len(marker) if closed else cut
        if block.role is BlockRole.REASONING:
            if marker in self._inside:
                out.append(text[pos:cut])
                return self._call_inside(block, marker, out) + cut - shift
            out.append(text[pos:end])
            self._reasoned |= block.opener != FENCE  # a code fence is no reasoning
            self._closed(closed)
            return end - shift
        self._parts.append(text[pos:cut])
        self._end("".join(self._parts), marker if closed else "", out, cut_off=False)
        return end - shift

    def _end(self, body: str, closer: str, out: list[str], *, cut_off: bool) -> None:
        """A block ended (``closer`` empty when nothing closed it): read it, then words."""
        block = self._block
        assert block is not None
        if block.sift is not None:
            calls, words = block.sift(self._reader, self._opener, self._head, body, closer, cut_off)
            self._add(calls)
            out.append(words)
        elif block.role is BlockRole.RESPONSE:
            self._fake += 1 if closer or body.strip() else 0
        elif block.read is not None:
            raw = self._opener + self._head + self._head_end + body + closer
            if cut_off and not closer and not (block.to_end or block.calls_close):
                self._add([cut_call(block.form, raw)])
            elif len(self._calls) >= MAX_CALLS:
                self._reader.over += 1  # never read: the reply holds more calls than are read
            else:
                head = block.implied + self._head
                self._add(block.read(self._reader, head, body, raw, cut_off))
        resume = self._resume
        self._to_text()
        if resume is not None:
            self._begin(resume, [])  # the reasoning goes on after the call (its opener shown)

    def _add(self, calls: list[WordsCall]) -> None:
        """Keep ``calls`` up to ``MAX_CALLS`` in the reply; count the rest."""
        kept = [c for c in calls if c is not OVER]
        self._reader.over += len(calls) - len(kept)
        calls = kept
        room = max(MAX_CALLS - len(self._calls), 0)
        if len(calls) > room:
            self._reader.over += len(calls) - room
            calls = calls[:room]
        self._calls += calls

    def _call_inside(self, reasoning: Block, marker: str, out: list[str]) -> int:
        """A call opened inside reasoning (``thinking``): read it, then resume the reasoning.
        Returns how far past ``marker``'s start reading goes on (just past the call's opener)."""
        opener = self._inside[marker]
        if self._tentative < 0:
            self._tentative = len(self._calls)
        self._to_text()
        self._resume, self._opener = reasoning, opener
        self._begin(BY_OPENER[opener], out)
        return len(opener)

    def _closed(self, closed: bool) -> None:
        """Reasoning ended (``closed``: by its closer): calls read inside a closed block were
        thoughts, but for the families that keep them (``thinking.KEPT_IN_REASONING``)."""
        if closed and self._tentative >= 0:
            self._thoughts(self._tentative)
        self._tentative = -1
        self._to_text()

    def _thoughts(self, start: int) -> None:
        """The calls read from ``start`` on were written in reasoning: counted, not kept, but
        for the families that keep them (``thinking.KEPT_IN_REASONING``)."""
        inside = self._calls[start:]
        kept = [c for c in inside if c.form in KEPT_IN_REASONING]
        self._in_reasoning += len(inside) - len(kept)
        self._calls[start:] = kept

    def _to_text(self) -> None:
        self._lag_ok = False
        self._state, self._block, self._lexer = _State.TEXT, None, None
        self._parts, self._head, self._opener, self._head_end = [], "", "", ""
        self._resume = None

    def _fence_info(self, text: str, pos: int, out: list[str]) -> int:
        # The info string is bounded by _MAX_FENCE_INFO: only that much is ever read again.
        stop = min(len(text), pos + _MAX_FENCE_INFO + 1)
        end = text.find("\n", pos, stop)
        if end < 0 and stop == len(text):
            self._pending = text[pos:]
            return len(text)
        if end < 0:
            out.append(FENCE)  # not a fence opening after all
            self._state = _State.TEXT
            return pos
        self._head, self._opener = text[pos:end], FENCE
        if self._head.strip().lower() in HELD_FENCES:
            self._begin(HELD_FENCE, out)
        else:
            out.append(FENCE + self._head + "\n")
            self._head = ""
            self._begin(PASSED_FENCE, out)
            out.pop()  # _begin shows a passed block's opener; this one is shown above
        return end + 1

    def _finish_block(self, tail: str, out: list[str], *, cut_off: bool) -> str | None:
        block, lexer = self._block, self._lexer
        assert block is not None and lexer is not None
        tail, self._lag = "".join(self._lag) + tail, []
        start = lexer.fed
        found = lexer.feed(tail) or lexer.finish(cut_off=cut_off)
        if block.role is BlockRole.REASONING:
            # Shown as it came; only the tail is left, and what follows its closer.
            end = len(tail) if found is None else found[0] - start
            end += len(found[1]) if found is not None and found[1] in block.closers else 0
            out.append(tail[:end])
            self._closed(found is not None and found[1] in block.closers)
            return tail[end:] or None
        self._parts.append(tail)
        whole = "".join(self._parts)
        if (
            found is None
            and not cut_off  # a cut reply leaves its last value open: that is the cut
            and lexer.in_value
            and self._fallbacks < _FALLBACKS
        ):
            # A string or value never closed swallowed the closer: the model's quoting broke,
            # so the first closer seen anywhere ends the block after all.
            found = first_anywhere(whole, (*block.closers, *block.reopen))
            self._fallbacks += found is not None
        if found is None:
            self._end(whole, "", out, cut_off=cut_off)
            return None
        index, marker = found
        closed = marker in block.closers
        self._end(whole[:index], marker if closed else "", out, cut_off=False)
        return whole[index + len(marker) if closed else index :] or None
