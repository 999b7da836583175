"""Tools in words, the reader half: calls read from a reply as it streams (DESIGN.md rule 6).

``WordsReader`` reads a stream as it comes: plain words go out at once (near a character
that can begin a marker, at most 32 characters late), a call is held until its block ends
(``blocks`` says where each family's opens and ends), reasoning and code fences pass, and a
``<tool_response>`` the model writes itself is never shown or believed (``reading.read_calls``
feeds it a whole reply once). Every character is read a bounded number of times, however chunked.
"""

from __future__ import annotations

from conchcheck.core.words import react
from conchcheck.core.words.blockreader import BlockReader
from conchcheck.core.words.blocks import (
    BY_OPENER,
    FENCE,
    HARMONY_ROLE,
    PYTHONIC_LIST,
    REASONING_ENDS,
    BlockRole,
)
from conchcheck.core.words.forms import WordsReading, cut_call
from conchcheck.core.words.lists import whole
from conchcheck.core.words.markers import (
    KEPT,
    LONGEST,
    MARKER_RE,
    SAFE,
    SHOWN,
    STRAY_CLOSERS,
    TOKEN,
    WAIT,
    Opening,
    opening,
    partial_start,
    shown,
)
from conchcheck.core.words.state import ReaderState

_GATHER = 32
"""Words with a character that can begin a marker wait until this many are in hand."""


_State = ReaderState
_TEXT = _State.TEXT
_shown = SHOWN.get


class WordsReader(BlockReader):
    """Reads a reply as it streams: ``feed`` returns words safe to show, ``close`` the rest."""

    __slots__ = ()

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
            # Every character a marker may begin with (markers.MARKERS and BARE): "]" for
            # MiniMax-M3, "{" for a call's JSON after words.
            if not ("<" in text or "[" in text or "`" in text or "{" in text or "]" in text):
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
        over, self._reader.over = self._reader.over, 0
        text = "".join(out)
        return WordsReading(calls, text, self._fake, self._in_reasoning, self._stray, over)

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
            self._thoughts(0)
            self._reasoned = True
        elif marker in STRAY_CLOSERS:
            self._stray += 1  # a closer with no opener is never words
        elif marker == FENCE:
            self._state, self._head = _State.FENCE_INFO, ""
        elif marker[-1] == "(":
            self._opener = ""  # a pythonic list: read from its "[" (markers.PYTHONIC)
            self._begin(PYTHONIC_LIST, out)
            return match.start()
        else:
            block = BY_OPENER[marker]
            self._opener, self._head, self._head_end = marker, "", ""
            if block.head_end is not None:
                self._state, self._block, self._head_end = _State.HEAD, block, block.head_end
            else:
                self._begin(block, out)
        return match.end()

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
            text = "".join(self._parts)
            if text.lstrip().startswith(react.OPENERS):
                read = react.react(self._reader, text, cut_off=cut_off)
                if read is None:
                    self._to_text()
                    return text  # no action: words after all, read again as such
                calls, words = read
            else:
                calls, words = whole(self._reader, text, cut_off=cut_off)
            self._add(calls)
            out.append(words)
            self._to_text()
        elif state is _State.FENCE_INFO:
            out.append(FENCE + pending)
            self._to_text()
        elif state is _State.HEAD:
            block = self._block
            assert block is not None
            if cut_off and block.role is BlockRole.CALLS:
                self._add([cut_call(block.form, self._opener + pending)])
            else:
                out.append(self._opener + pending)
            self._to_text()
        else:
            return self._finish_block(pending, out, cut_off=cut_off)
        return None
