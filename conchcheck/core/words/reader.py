"""Tools in words, the reader half: calls read from a reply as it streams (DESIGN.md rule 6).

``WordsReader`` reads a stream as it comes: plain words go out at once (near a character
that can begin a marker, at most 32 characters late), a call is held until its block ends
(``blocks`` says where each family's opens and ends), reasoning and code fences pass, and a
``<tool_response>`` the model writes itself is never shown or believed (``reading.read_calls``
feeds it a whole reply once). Every character is read a bounded number of times, however chunked.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from typing import Any

from conchcheck.core.tools import Tool, as_tools
from conchcheck.core.words.blocks import (
    BY_OPENER,
    FENCE,
    HARMONY_ROLE,
    HELD_FENCE,
    HELD_FENCES,
    PASSED_FENCE,
    REASONING_ENDS,
    Block,
    BlockRole,
)
from conchcheck.core.words.forms import Reader, WordsCall, WordsReading, cut_call
from conchcheck.core.words.lexer import Lexer, first_anywhere
from conchcheck.core.words.lists import PHI4_OPENER, whole
from conchcheck.core.words.markers import (
    ANGLE,
    KEPT,
    LONGEST,
    MARKER_RE,
    SAFE,
    SHOWN,
    STRAY_CLOSERS,
    TOKEN,
    WAIT,
    Opening,
    Search,
    opening,
    partial_start,
    shown,
    triggers,
)
from conchcheck.core.words.state import ReaderState

_GATHER = 32
"""Words with a character that can begin a marker wait until this many are in hand."""
_MAX_FENCE_INFO = 40
_FALLBACKS = 16
"""Unclosed blocks split at a marker inside a value (a string the model never closed) per
reply; past this the block runs to the end, so a hostile reply can't make the reader rescan."""


_State = ReaderState
_TEXT = _State.TEXT
_shown = SHOWN.get


class WordsReader:
    """Reads a reply as it streams: ``feed`` returns words safe to show, ``close`` the rest."""

    __slots__ = (
        "_block",
        "_bytes",
        "_calls",
        "_fake",
        "_fallbacks",
        "_head",
        "_head_end",
        "_in_reasoning",
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
        "_state",
        "_stray",
        "_trigger",
        "_triggers",
    )

    def __init__(self, tools: Iterable[Mapping[str, Any] | Tool]) -> None:
        offered = as_tools(tools)
        self._reader = Reader({t.name: t for t in offered})
        self._openers = (*(f"{t.name}(" for t in offered), PHI4_OPENER)
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
        self._fallbacks = 0
        self._bytes = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed_bytes(self, data: bytes) -> str:
        """``feed`` for bytes, decoded as UTF-8 across chunks, so a character split between
        two chunks reads the same as one that is not."""
        return self.feed(self._bytes.decode(data))

    def feed(self, text: str) -> str:
        """Take the next piece of the reply; return the words that can be shown now."""
        # Words are read here: most deltas can begin no marker (SAFE remembers them, "<b>" and
        # "`code`" too); most others only at their end, a "<" or "`" that waits alone for the
        # next delta (SHOWN remembers where). Everything else is gathered (_gather).
        if self._plain:
            if text in SAFE:
                return text
            if "<" not in text and "[" not in text and "`" not in text and "{" not in text:
                if len(SAFE) < KEPT and len(text) <= TOKEN:
                    SAFE.add(text)  # while there is room (KEPT)
                return text
        elif self._state is not _TEXT or len(self._pending) > 2:
            return self._gather(text)
        else:
            text, self._pending = self._pending + text, ""
            if text in SAFE:
                self._plain = True
                return text
        cut = _shown(text)
        if cut is None:
            cut = shown(text)
        if cut is WAIT:
            return self._gather(text)
        text, self._pending = cut
        self._plain = not self._pending
        return text

    def _gather(self, text: str) -> str:
        # Anything else waits until _GATHER characters are in hand and is read at once: one
        # search per few tokens, not one per token, and a marker split across deltas is
        # whole by then. The words wait at most that long.
        if self._pending:
            text = self._pending + text
            if len(text) < _GATHER:
                self._pending = text
                return ""
            self._pending = ""
        elif self._lag_ok and (
            self._trigger not in text if self._trigger else self._triggers(text) is None
        ):
            self._lag.append(text)  # a held block's text that can't end it (_body)
            return ""
        elif len(text) < _GATHER and self._state is not _State.START:
            self._pending, self._plain = text, False
            return ""
        if self._state is _TEXT and MARKER_RE.search(text) is None:
            # Usually no marker is whole in hand: only the last few characters can begin one.
            end = partial_start(text, len(text) - LONGEST + 1)
            self._pending, self._plain = text[end:], end == len(text)
            return text[:end]
        out: list[str] = []
        self._read(text, out)
        self._plain = self._state is _TEXT and not self._pending
        return "".join(out)

    def close(self, *, cut_off: bool = False) -> WordsReading:
        """End the reply: the words still held, every call, and the count of fake results."""
        out: list[str] = []
        rest: str | None = self._bytes.decode(b"", final=True)
        while rest is not None:
            self._read(rest, out)
            rest = self._finish(out, cut_off=cut_off)
        self._state, self._plain = _State.TEXT, True
        calls, self._calls = tuple(self._calls), []
        return WordsReading(calls, "".join(out), self._fake, self._in_reasoning, self._stray)

    def _read(self, text: str, out: list[str]) -> None:
        # Every step reads on from a position in ``text`` (never a copy of the rest), and
        # what it can't decide yet waits in ``_pending`` for the next chunk.
        if self._pending:
            text, self._pending = self._pending + text, ""
        pos = 0
        while pos < len(text):
            pos = self._step(text, pos, out)

    # -- one state at a time: each step reads from ``pos`` and returns where it stopped -------

    def _step(self, text: str, pos: int, out: list[str]) -> int:
        state = self._state
        if state is _State.TEXT:
            return self._text(text, pos, out)
        if state is _State.BLOCK:
            return self._body(text, pos, out)
        if state is _State.START:
            return self._start(text, pos, out)
        if state is _State.WHOLE:
            self._parts.append(text[pos:] if pos else text)
            return len(text)
        if state is _State.HEAD:
            return self._head_step(text, pos, out)
        return self._fence_info(text, pos, out)

    def _start(self, text: str, pos: int, out: list[str]) -> int:
        rest = text[pos:] if pos else text
        lead = rest.lstrip()
        if not lead:
            self._parts.append(rest)  # leading space: kept aside, never read again
            return len(text)
        how = opening(lead, self._openers)
        if how is Opening.WAIT:
            self._pending = rest
            return len(text)
        if how is Opening.HARMONY:
            # gpt-oss: " to=functions.f<|channel|>commentary json<|message|>{…}" (openai/
            # harmony's tests; llama.cpp's gpt-oss parser): read from its head on.
            cut = len(rest) - len(lead) + len(HARMONY_ROLE.opener)
            self._opener, self._head = "".join(self._parts) + rest[:cut], ""
            self._parts = []
            self._state, self._block, self._head_end = _State.HEAD, HARMONY_ROLE, "<|message|>"
            return pos + cut
        if how is Opening.WHOLE:
            self._state = _State.WHOLE
            self._parts.append(rest)
            return len(text)
        self._state = _State.TEXT
        out.append("".join(self._parts))
        self._parts = []
        return pos

    def _text(self, text: str, pos: int, out: list[str]) -> int:
        match = MARKER_RE.search(text, pos)
        if match is None:
            end = partial_start(text, max(pos, len(text) - LONGEST + 1))
            out.append(text[pos:end])
            self._pending = text[end:]
            return len(text)
        out.append(text[pos : match.start()])
        marker = match.group()
        if marker in REASONING_ENDS and self._reasoned:
            # Reasoning ended once already: a later closer is stray, and never undoes the calls
            # read since (vLLM partitions at the first </think> only; docs/research/
            # call-reading-reasoning-and-several-calls.md §4, case S8).
            self._stray += 1
        elif marker in REASONING_ENDS:
            # The server took the opener (Qwen3 and DeepSeek templates put <think> in the
            # prompt): everything before was reasoning, and its calls were never calls.
            out.append(marker)
            self._in_reasoning += len(self._calls)
            self._calls.clear()
            self._reasoned = True
        elif marker in STRAY_CLOSERS:
            self._stray += 1  # a closer with no opener is never words
        elif marker == FENCE:
            self._state, self._head = _State.FENCE_INFO, ""
        else:
            block = BY_OPENER[marker]
            self._opener, self._head, self._head_end = marker, "", ""
            if block.head_end is not None:
                self._state, self._block, self._head_end = _State.HEAD, block, block.head_end
            else:
                self._begin(block, out)
        return match.end()

    def _begin(self, block: Block, out: list[str]) -> None:
        self._state, self._block, self._lexer = _State.BLOCK, block, block.lexer()
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
            out.append(text[pos:end])
            self._reasoned |= block.opener != FENCE  # a code fence is no reasoning
            self._to_text()
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
            self._calls += calls
            out.append(words)
        elif block.role is BlockRole.RESPONSE:
            self._fake += 1 if closer or body.strip() else 0
        elif block.read is not None:
            raw = self._opener + self._head + self._head_end + body + closer
            if cut_off and not closer and not (block.to_end or block.calls_close):
                self._calls.append(cut_call(block.form, raw))
            else:
                head = block.implied + self._head
                self._calls += block.read(self._reader, head, body, raw, cut_off)
        self._to_text()

    def _to_text(self) -> None:
        self._lag_ok = False
        self._state, self._block, self._lexer = _State.TEXT, None, None
        self._parts, self._head, self._opener, self._head_end = [], "", "", ""

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

    def _finish(self, out: list[str], *, cut_off: bool) -> str | None:
        """End of the reply in the current state; text to read again, if any."""
        state, pending = self._state, self._pending
        self._pending = ""
        if state is _State.TEXT:
            out.append(pending)
        elif state is _State.START:
            out.append("".join(self._parts) + pending)
            self._to_text()
        elif state is _State.WHOLE:
            calls, words = whole(self._reader, "".join(self._parts), cut_off=cut_off)
            self._calls += calls
            out.append(words)
            self._to_text()
        elif state is _State.FENCE_INFO:
            out.append(FENCE + pending)
            self._to_text()
        elif state is _State.HEAD:
            block = self._block
            assert block is not None
            if cut_off and block.role is BlockRole.CALLS:
                self._calls.append(cut_call(block.form, self._opener + pending))
            else:
                out.append(self._opener + pending)
            self._to_text()
        else:
            return self._finish_block(pending, out, cut_off=cut_off)
        return None

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
            self._to_text()
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
