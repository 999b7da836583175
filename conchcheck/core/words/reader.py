"""Tools in words, the reader half: calls read from a reply as it streams (DESIGN.md rule 6).

``WordsReader`` reads a stream as it comes: words go out at once,
a call is held until it closes, code fences pass untouched, and a ``<tool_response>`` the
model writes itself is never shown or believed. ``read_calls`` is the same reader fed once.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conchcheck.core.tools import Tool, as_tools
from conchcheck.core.words.forms import (
    CallForm,
    Reader,
    WordsCall,
    cut_call,
    names_offered_tool,
)


@dataclass(frozen=True, slots=True)
class WordsReading:
    """Calls read from a reply, and the words the user sees."""

    calls: tuple[WordsCall, ...]
    text: str
    fake_responses: int = 0
    """``<tool_response>`` blocks the model wrote itself (dropped, never believed)."""


def read_calls(
    text: str, tools: Iterable[Mapping[str, Any] | Tool], *, cut_off: bool = False
) -> WordsReading:
    """Read a whole reply. ``cut_off``: the reply hit its token limit (nothing is mended)."""
    reader = WordsReader(tools)
    shown = reader.feed(text)
    end = reader.close(cut_off=cut_off)
    return WordsReading(end.calls, shown + end.text, end.fake_responses)


_TEXT_MARKERS = (
    "<tool_call>", "<function=", "<|python_tag|>", "[TOOL_CALLS]", "```", "<tool_response>",
)  # fmt: skip
_HELD_FENCES = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_use", "tool"})
_MAX_FENCE_INFO = 40
_MAX_FUNCTION_NAME = 200
_LONGEST_MARKER = max(len(m) for m in _TEXT_MARKERS)


class _State(str, Enum):
    START = "start"
    TEXT = "text"
    WHOLE = "whole"
    TOOL_CALL = "tool_call"
    FUNCTION_HEAD = "function_head"
    FUNCTION = "function"
    PYTHON_TAG = "python_tag"
    MISTRAL = "mistral"
    RESPONSE = "response"
    FENCE_INFO = "fence_info"
    FENCE_HELD = "fence_held"
    FENCE_PASS = "fence_pass"


class _Held:
    """Text held back, searched for closing tags across chunks in linear time."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.tail = ""

    def push(self, chunk: str, needles: tuple[str, ...]) -> tuple[str, str, str] | None:
        """Add ``chunk``; on the first needle, return (text before, needle, text after)."""
        window = self.tail + chunk
        found = min(((i, n) for n in needles if (i := window.find(n)) >= 0), default=None)
        if found is None:
            self.parts.append(chunk)
            keep = max(len(n) for n in needles) - 1
            self.tail = window[-keep:] if keep else ""
            return None
        index, needle = found
        whole = "".join(self.parts) + chunk
        start = len(whole) - len(window) + index
        self.parts, self.tail = [], ""
        return whole[:start], needle, whole[start + len(needle) :]

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts, self.tail = [], ""
        return text


class WordsReader:
    """Reads a reply as it streams: ``feed`` returns words safe to show, ``close`` the rest."""

    def __init__(self, tools: Iterable[Mapping[str, Any] | Tool]) -> None:
        offered = as_tools(tools)
        self._reader = Reader({t.name: t for t in offered})
        self._openers = tuple(f"{t.name}(" for t in offered)
        self._state = _State.START
        self._pending = ""  # short text whose meaning the next chunk decides
        self._held = _Held()
        self._header = ""  # a fence's info string or a function's name
        self._inside = ""  # a <tool_call> body read so far whose JSON string is still open
        self._quote = (False, False)  # (inside a JSON string, after a backslash) at its end
        self._calls: list[WordsCall] = []
        self._fake = 0
        self._bytes = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: str | bytes) -> str:
        """Take the next piece of the reply; return the words that can be shown now.

        Bytes are decoded as UTF-8 across chunks, so a character split between two chunks
        reads the same as one that is not.
        """
        out: list[str] = []
        rest: str | None = self._bytes.decode(chunk) if isinstance(chunk, bytes) else chunk
        while rest:
            rest = self._step(rest, out)
        return "".join(out)

    def close(self, *, cut_off: bool = False) -> WordsReading:
        """End the reply: the words still held, every call, and the count of fake results."""
        out: list[str] = []
        rest = self._bytes.decode(b"", final=True)
        while rest:
            rest = self._step(rest, out) or ""
        self._finish(out, cut_off=cut_off)
        self._state = _State.TEXT
        return WordsReading(tuple(self._calls), "".join(out), self._fake)

    # -- one state at a time: each step consumes input and returns what is left -------------

    def _step(self, text: str, out: list[str]) -> str | None:
        state = self._state
        if state == _State.START:
            return self._start(text)
        if state == _State.TEXT:
            return self._text(text, out)
        if state == _State.WHOLE:
            self._held.parts.append(text)
            return None
        if state in (_State.PYTHON_TAG, _State.MISTRAL):
            self._held.parts.append(text)
            return None
        if state in (_State.FENCE_INFO, _State.FUNCTION_HEAD):
            return self._header_step(text, out)
        closers = {
            _State.TOOL_CALL: ("</tool_call>", "<tool_call>"),
            _State.FUNCTION: ("</function>",),
            _State.RESPONSE: ("</tool_response>",),
            _State.FENCE_HELD: ("```",),
            _State.FENCE_PASS: ("```",),
        }[state]
        if state == _State.FENCE_PASS:
            return self._pass_fence(text, out)
        found = self._held.push(text, closers)
        if found is None:
            return None
        body, needle, after = found
        if state == _State.TOOL_CALL:
            # A marker inside a JSON string is text (issue 9): only one outside ends the block.
            body = self._inside + body
            if self._in_json_string(body):
                self._inside = body + needle
                return after or None
            self._inside, self._quote = "", (False, False)
        self._state = _State.TEXT
        if state == _State.TOOL_CALL:
            raw = f"<tool_call>{body}</tool_call>"
            self._calls += self._reader.json_body(body, CallForm.TOOL_CALL, raw, cut_off=False)
            # A second opening tag ends an unclosed block; it opens the next one.
            return needle + after if needle == "<tool_call>" else after
        if state == _State.FUNCTION:
            raw = f"<function={self._header}>{body}</function>"
            self._calls += self._reader.function_tag(self._header, body, raw, cut_off=False)
        elif state == _State.RESPONSE:
            self._fake += 1
        else:
            self._fence_done(body, out, cut_off=False)
        return after

    def _in_json_string(self, body: str) -> bool:
        """Whether ``body`` (a JSON body) ends inside a string; scans only what is new."""
        if not body.lstrip().startswith(("{", "[")):
            return False
        inside, escaped = self._quote
        for char in body[len(self._inside) :]:
            if escaped:
                escaped = False
            elif inside and char == "\\":
                escaped = True
            elif char == '"':
                inside = not inside
        self._quote = (inside, escaped)
        return inside

    def _start(self, text: str) -> str | None:
        pending = self._pending + text
        lead = pending.lstrip()
        # A reply that opens with a marker is read as words; one that opens with JSON or
        # with an offered tool's name and "(" is held whole, since only all of it can say.
        if not lead or any(m.startswith(lead) and m != lead for m in _TEXT_MARKERS):
            self._pending = pending
            return None
        if not lead.startswith(_TEXT_MARKERS):
            if lead[0] in "{[" or lead.startswith(self._openers):
                self._state = _State.WHOLE
                self._pending = ""
                self._held.parts.append(pending)
                return None
            if any(opener.startswith(lead) for opener in self._openers):
                self._pending = pending
                return None
        self._state, self._pending = _State.TEXT, ""
        return pending

    def _text(self, text: str, out: list[str]) -> str | None:
        window = self._pending + text
        found = min(((i, m) for m in _TEXT_MARKERS if (i := window.find(m)) >= 0), default=None)
        if found is None:
            keep = _partial_marker(window)
            out.append(window[: len(window) - keep])
            self._pending = window[len(window) - keep :]
            return None
        index, marker = found
        out.append(window[:index])
        self._pending = ""
        self._header = ""
        self._state = {
            "<tool_call>": _State.TOOL_CALL,
            "<function=": _State.FUNCTION_HEAD,
            "<|python_tag|>": _State.PYTHON_TAG,
            "[TOOL_CALLS]": _State.MISTRAL,
            "```": _State.FENCE_INFO,
            "<tool_response>": _State.RESPONSE,
        }[marker]
        return window[index + len(marker) :] or None

    def _header_step(self, text: str, out: list[str]) -> str | None:
        fence = self._state == _State.FENCE_INFO
        opener, limit = ("```", _MAX_FENCE_INFO) if fence else ("<function=", _MAX_FUNCTION_NAME)
        # The header is bounded by ``limit``, so joining it to each chunk stays linear.
        header = self._header + text
        end = header.find("\n" if fence else ">")
        newline = end if fence else header.find("\n")
        broken = 0 <= newline < (end if end >= 0 else len(header)) if not fence else False
        if end < 0 and len(header) <= limit and not broken:
            self._header = header
            return None
        if end < 0 or end > limit or broken:
            # Not a fence opening or a function tag after all: plain words, read again as such.
            out.append(opener)
            self._state, self._header = _State.TEXT, ""
            return header
        self._header = header[:end]
        if not fence:
            self._state = _State.FUNCTION
        elif self._header.strip().lower() in _HELD_FENCES:
            self._state = _State.FENCE_HELD
        else:
            self._state = _State.FENCE_PASS
            out.append("```" + self._header + "\n")
        return header[end + 1 :] or None

    def _pass_fence(self, text: str, out: list[str]) -> str | None:
        window = self._pending + text
        index = window.find("```")
        if index < 0:
            keep = len(window) - len(window.rstrip("`"))
            keep = min(keep, 2)
            out.append(window[: len(window) - keep])
            self._pending = window[len(window) - keep :]
            return None
        out.append(window[: index + 3])
        self._pending = ""
        self._state = _State.TEXT
        return window[index + 3 :] or None

    def _fence_done(self, body: str, out: list[str], *, cut_off: bool) -> None:
        info = self._header
        raw = f"```{info}\n{body}```"
        kind = info.strip().lower()
        if kind.startswith("tool"):
            form = CallForm.TOOL_CALL_FENCE
        elif names_offered_tool(body, self._reader.tools):
            form = CallForm.FENCE
        else:
            out.append(raw)
            return
        self._calls += self._reader.json_body(body.rstrip("`"), form, raw, cut_off=cut_off)

    def _finish(self, out: list[str], *, cut_off: bool) -> None:
        state, held = self._state, self._inside + self._held.take()
        self._inside, self._quote = "", (False, False)
        pending, self._pending = self._pending, ""
        reader = self._reader
        if state in (_State.START, _State.TEXT, _State.FENCE_PASS):
            out.append(pending)
        elif state == _State.WHOLE:
            calls, words = reader.whole(held, cut_off=cut_off)
            self._calls += calls
            out.append(words)
        elif state == _State.TOOL_CALL:
            raw = f"<tool_call>{held}"
            self._calls += (
                [cut_call(CallForm.TOOL_CALL, raw)]
                if cut_off
                else reader.json_body(held, CallForm.TOOL_CALL, raw, cut_off=False)
            )
        elif state == _State.FUNCTION:
            raw = f"<function={self._header}>{held}"
            self._calls += (
                [cut_call(CallForm.FUNCTION_TAG, raw)]
                if cut_off
                else reader.function_tag(self._header, held, raw, cut_off=False)
            )
        elif state == _State.FUNCTION_HEAD:
            if cut_off:
                self._calls.append(cut_call(CallForm.FUNCTION_TAG, "<function=" + self._header))
            else:
                out.append("<function=" + self._header)
        elif state == _State.PYTHON_TAG:
            self._calls += reader.python_tag(held, "<|python_tag|>" + held, cut_off=cut_off)
        elif state == _State.MISTRAL:
            self._calls += reader.mistral(held, "[TOOL_CALLS]" + held, cut_off=cut_off)
        elif state == _State.RESPONSE:
            self._fake += 1
        elif state == _State.FENCE_INFO:
            out.append("```" + self._header)
        elif state == _State.FENCE_HELD:
            self._fence_done(held, out, cut_off=cut_off)
        self._header = ""


def _partial_marker(text: str) -> int:
    """Length of the longest end of ``text`` that could begin a marker."""
    for size in range(min(len(text), _LONGEST_MARKER - 1), 0, -1):
        tail = text[-size:]
        if any(marker.startswith(tail) for marker in _TEXT_MARKERS):
            return size
    return 0
