"""Tools in words, the reader half: calls read from a reply as it streams (DESIGN.md rule 6).

``WordsReader`` reads a stream as it comes: words go out at once, a call is held until its
block ends (``blocks`` says where each family's block opens and ends), reasoning and code
fences pass untouched, and a ``<tool_response>`` the model writes itself is never shown or
believed. ``read_calls`` is the same reader fed once. Every character is read a bounded
number of times, so the reader is linear in its input however it is chunked.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conchcheck.core.tools import Tool, as_tools
from conchcheck.core.words.blocks import BY_OPENER, REASONING_ENDS, Block, Role
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call, names_offered_tool
from conchcheck.core.words.lexer import Lexer


@dataclass(frozen=True, slots=True)
class WordsReading:
    """Calls read from a reply, and the words the user sees."""

    calls: tuple[WordsCall, ...]
    text: str
    fake_responses: int = 0
    """``<tool_response>`` blocks the model wrote itself (dropped, never believed)."""
    in_reasoning: int = 0
    """Calls written before a reasoning closer whose opener the server took: not calls."""


def read_calls(
    text: str, tools: Iterable[Mapping[str, Any] | Tool], *, cut_off: bool = False
) -> WordsReading:
    """Read a whole reply. ``cut_off``: the reply hit its token limit (nothing is mended)."""
    reader = WordsReader(tools)
    shown = reader.feed(text)
    end = reader.close(cut_off=cut_off)
    return WordsReading(end.calls, shown + end.text, end.fake_responses, end.in_reasoning)


_FENCE = "```"
_MARKERS = tuple(sorted((*BY_OPENER, _FENCE, *REASONING_ENDS), key=len, reverse=True))
_PREFIXES = sorted({m[:i] for m in _MARKERS for i in range(1, len(m))}, key=len, reverse=True)
_MARKER_RE = re.compile("|".join(re.escape(m) for m in _MARKERS))
# The longest end of the text that could begin a marker (searched in the last few characters).
_PART_RE = re.compile("(?:" + "|".join(re.escape(p) for p in _PREFIXES) + r")\Z")
_LONGEST = max(len(m) for m in _MARKERS)
assert {m[0] for m in _MARKERS} <= set("<[`"), "feed's fast path knows only these"
_HELD_FENCES = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_use", "tool"})
_MAX_FENCE_INFO = 40
_FALLBACKS = 16
"""Unclosed blocks split at a marker inside a value (a string the model never closed) per
reply; past this the block runs to the end, so a hostile reply can't make the reader rescan."""
_HELD_FENCE = Block(_FENCE, CallForm.FENCE, None, (_FENCE,))
_PASSED_FENCE = Block(_FENCE, CallForm.FENCE, None, (_FENCE,), strings=False, role=Role.REASONING)


class _State(str, Enum):
    START = "start"
    TEXT = "text"
    WHOLE = "whole"
    HEAD = "head"
    BLOCK = "block"
    FENCE_INFO = "fence_info"


_TEXT = _State.TEXT


class WordsReader:
    """Reads a reply as it streams: ``feed`` returns words safe to show, ``close`` the rest."""

    def __init__(self, tools: Iterable[Mapping[str, Any] | Tool]) -> None:
        offered = as_tools(tools)
        self._reader = Reader({t.name: t for t in offered})
        self._openers = tuple(f"{t.name}(" for t in offered)
        self._state = _State.START
        self._pending = ""  # short text whose meaning the next chunk decides
        self._opener = ""  # the marker that opened the block or head being read
        self._head = ""  # a block's head, or a fence's info string
        self._block: Block | None = None
        self._lexer: Lexer | None = None
        self._parts: list[str] = []  # a held block's text, or a passed block's unshown tail
        self._calls: list[WordsCall] = []
        self._fake = 0
        self._in_reasoning = 0
        self._fallbacks = 0
        self._bytes = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: str | bytes) -> str:
        """Take the next piece of the reply; return the words that can be shown now.

        Bytes are decoded as UTF-8 across chunks, so a character split between two chunks
        reads the same as one that is not.
        """
        text = chunk if chunk.__class__ is str else self._bytes.decode(chunk)  # type: ignore[arg-type]
        # Most deltas are plain words: no character that can begin a marker.
        if (
            self._state is _TEXT
            and not self._pending
            and "<" not in text
            and "[" not in text
            and "`" not in text
        ):
            return text
        out: list[str] = []
        rest: str | None = text
        while rest:
            rest = self._step(rest, out)
        return "".join(out)

    def close(self, *, cut_off: bool = False) -> WordsReading:
        """End the reply: the words still held, every call, and the count of fake results."""
        out: list[str] = []
        rest: str | None = self._bytes.decode(b"", final=True)
        while True:
            while rest:
                rest = self._step(rest, out)
            rest = self._finish(out, cut_off=cut_off)
            if not rest:
                break
        self._state = _State.TEXT
        calls, self._calls = tuple(self._calls), []
        return WordsReading(calls, "".join(out), self._fake, self._in_reasoning)

    # -- one state at a time: each step consumes input and returns what is left -------------

    def _step(self, text: str, out: list[str]) -> str | None:
        state = self._state
        if state is _State.TEXT:
            return self._text(text, out)
        if state is _State.BLOCK:
            return self._body(text, out)
        if state is _State.START:
            return self._start(text)
        if state is _State.WHOLE:
            self._parts.append(text)
            return None
        if state is _State.HEAD:
            return self._head_step(text, out)
        return self._fence_info(text, out)

    def _start(self, text: str) -> str | None:
        pending = self._pending + text
        lead = pending.lstrip()
        # A reply that opens with a marker is read as words; one that opens with JSON or
        # with an offered tool's name and "(" is held whole, since only all of it can say.
        if not lead or any(m.startswith(lead) and m != lead for m in _MARKERS):
            self._pending = pending
            return None
        if not lead.startswith(_MARKERS):
            if lead[0] in "{[" or lead.startswith(self._openers):
                self._state, self._pending = _State.WHOLE, ""
                self._parts = [pending]
                return None
            if any(opener.startswith(lead) for opener in self._openers):
                self._pending = pending
                return None
        self._state, self._pending = _State.TEXT, ""
        return pending

    def _text(self, text: str, out: list[str]) -> str | None:
        window = self._pending + text
        match = _MARKER_RE.search(window)
        if match is None:
            part = _PART_RE.search(window, max(0, len(window) - _LONGEST + 1))
            keep = 0 if part is None else len(window) - part.start()
            out.append(window[: len(window) - keep])
            self._pending = window[len(window) - keep :]
            return None
        out.append(window[: match.start()])
        self._pending = ""
        marker, rest = match.group(), window[match.end() :]
        if marker in REASONING_ENDS:
            # The server took the opener (Qwen3 and DeepSeek templates put <think> in the
            # prompt): everything before was reasoning, and its calls were never calls.
            out.append(marker)
            self._in_reasoning += len(self._calls)
            self._calls.clear()
        elif marker == _FENCE:
            self._state, self._head = _State.FENCE_INFO, ""
        else:
            block = BY_OPENER[marker]
            self._opener, self._head = marker, ""
            if block.head_end is not None:
                self._state, self._block = _State.HEAD, block
            else:
                self._begin(block, out)
        return rest or None

    def _begin(self, block: Block, out: list[str]) -> None:
        self._state, self._block, self._lexer = _State.BLOCK, block, block.lexer()
        self._parts = []
        if block.role is Role.REASONING:
            out.append(self._opener + self._head_text())

    def _head_text(self) -> str:
        block = BY_OPENER.get(self._opener)
        end = block.head_end if block is not None and block.head_end is not None else ""
        return self._head + end if self._head or end else ""

    def _head_step(self, text: str, out: list[str]) -> str | None:
        block = self._block
        assert block is not None and block.head_end is not None
        head = self._head + text
        end = head.find(block.head_end)
        seen = head[: end if end >= 0 else len(head)]
        # A function name holds no newline and no tag; a Harmony header no newline.
        broken = "\n" in seen or (block.head_end == ">" and "<" in seen)
        if end < 0 and len(head) <= block.head_limit and not broken:
            self._head = head
            return None
        if end < 0 or end > block.head_limit or broken:
            out.append(self._opener)  # not a block after all: words, read again as such
            self._state, self._head = _State.TEXT, ""
            return head
        self._head = head[:end]
        self._begin(block.after_head(self._head), out)
        return head[end + len(block.head_end) :] or None

    def _body(self, text: str, out: list[str]) -> str | None:
        block, lexer = self._block, self._lexer
        assert block is not None and lexer is not None
        found = lexer.feed(text)
        if block.role is Role.REASONING:
            # Shown as it comes, less what may begin its closer.
            window = "".join(self._parts) + text
            if found is None:
                keep = lexer.carried
                out.append(window[: len(window) - keep])
                self._parts = [window[len(window) - keep :]] if keep else []
                return None
            shown = lexer.fed - len(window)
            cut = found[0] - shown
            end = cut + len(found[1]) if found[1] in block.closers else cut
            out.append(window[:end])
            self._to_text()
            return window[end:] or None
        self._parts.append(text)
        if found is None:
            return None
        whole = "".join(self._parts)
        index, marker = found
        closed = marker in block.closers
        self._end(whole[:index], marker if closed else "", out, cut_off=False)
        return whole[index + len(marker) if closed else index :] or None

    def _end(self, body: str, closer: str, out: list[str], *, cut_off: bool) -> None:
        """A block ended (``closer`` empty when nothing closed it): read it, then words."""
        block = self._block
        assert block is not None
        if block is _HELD_FENCE:
            self._fence_done(body, out, cut_off=cut_off)
        elif block.role is Role.RESPONSE:
            self._fake += 1 if closer or body.strip() else 0
        elif block.read is not None:
            raw = self._opener + self._head_text() + body + closer
            if cut_off and not closer and not block.to_end:
                self._calls.append(cut_call(block.form, raw))
            else:
                self._calls += block.read(self._reader, self._head, body, raw, cut_off)
        self._to_text()

    def _to_text(self) -> None:
        self._state, self._block, self._lexer = _State.TEXT, None, None
        self._parts, self._head, self._opener = [], "", ""

    def _fence_info(self, text: str, out: list[str]) -> str | None:
        # The info string is bounded by _MAX_FENCE_INFO, so joining it to each chunk stays
        # linear.
        info = self._head + text
        end = info.find("\n")
        if end < 0 and len(info) <= _MAX_FENCE_INFO:
            self._head = info
            return None
        if end < 0 or end > _MAX_FENCE_INFO:
            out.append(_FENCE)  # not a fence opening after all
            self._state, self._head = _State.TEXT, ""
            return info
        self._head, self._opener = info[:end], _FENCE
        if self._head.strip().lower() in _HELD_FENCES:
            self._begin(_HELD_FENCE, out)
        else:
            out.append(_FENCE + self._head + "\n")
            self._head = ""
            self._begin(_PASSED_FENCE, out)
            out.pop()  # _begin shows a passed block's opener; this one is shown above
        return info[end + 1 :] or None

    def _fence_done(self, body: str, out: list[str], *, cut_off: bool) -> None:
        info = self._head
        raw = f"{_FENCE}{info}\n{body}{_FENCE}"
        kind = info.strip().lower()
        if kind.startswith("tool"):
            form = CallForm.TOOL_CALL_FENCE
        elif names_offered_tool(body, self._reader.tools):
            form = CallForm.FENCE
        else:
            out.append(raw)
            return
        self._calls += self._reader.json_body(body.rstrip("`"), form, raw, cut_off=cut_off)

    def _finish(self, out: list[str], *, cut_off: bool) -> str | None:
        """End of the reply in the current state; text to read again, if any."""
        state, pending = self._state, self._pending
        self._pending = ""
        if state in (_State.START, _State.TEXT):
            out.append(pending)
        elif state is _State.WHOLE:
            calls, words = self._reader.whole("".join(self._parts), cut_off=cut_off)
            self._calls += calls
            out.append(words)
            self._to_text()
        elif state is _State.FENCE_INFO:
            out.append(_FENCE + self._head)
            self._to_text()
        elif state is _State.HEAD:
            block = self._block
            assert block is not None
            if cut_off and block.role is Role.CALLS:
                self._calls.append(cut_call(block.form, self._opener + self._head))
            else:
                out.append(self._opener + self._head)
            self._to_text()
        else:
            return self._finish_block(out, cut_off=cut_off)
        return None

    def _finish_block(self, out: list[str], *, cut_off: bool) -> str | None:
        block, lexer = self._block, self._lexer
        assert block is not None and lexer is not None
        found = lexer.finish(cut_off=cut_off)
        whole = "".join(self._parts)
        if block.role is Role.REASONING:
            out.append(whole)
            self._to_text()
            return None
        if (
            found is None
            and not cut_off  # a cut reply leaves its last value open: that is the cut
            and lexer.in_value
            and lexer.first_anywhere is not None
            and self._fallbacks < _FALLBACKS
        ):
            # A string or value never closed swallowed the closer: the model's quoting broke,
            # so the first closer seen anywhere ends the block after all.
            self._fallbacks += 1
            found = lexer.first_anywhere
        if found is None:
            self._end(whole, "", out, cut_off=cut_off)
            return None
        index, marker = found
        closed = marker in block.closers
        self._end(whole[:index], marker if closed else "", out, cut_off=False)
        return whole[index + len(marker) if closed else index :] or None
