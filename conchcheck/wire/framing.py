"""Cutting a streamed body into events: server-sent events and newline-delimited JSON.

Both decoders take bytes in any pieces and return whole events as they complete, in time
linear in the stream's length; ``close`` says whether the stream ended the documented way.
"""

from __future__ import annotations

import codecs


class SSEDecoder:
    """Server-sent events (the ``data:`` lines of each event, joined by newlines)."""

    def __init__(self, *, done_marker: str | None = "[DONE]") -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line: list[str] = []  # pieces of a line not yet ended: joined once, so linear
        self._data: list[str] = []
        self._event = ""
        self.done_marker = done_marker
        self.done = False
        """Whether the terminator (``data: [DONE]``) was seen."""

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Events completed by ``chunk``, each ``(event name, data)``."""
        events: list[tuple[str, str]] = []
        text = self._text.decode(chunk)
        if "\n" not in text:
            self._line.append(text)
            return events
        lines = ("".join(self._line) + text).split("\n")
        self._line = [lines.pop()]
        for line in lines:
            self._take(line.removesuffix("\r"), events)
        return events

    def close(self) -> list[tuple[str, str]]:
        """Events left when the body ends (an event without its blank line still counts)."""
        events: list[tuple[str, str]] = []
        rest = "".join(self._line) + self._text.decode(b"", final=True)
        self._line = []
        if rest:
            self._take(rest.removesuffix("\r"), events)
        self._take("", events)
        return events

    def _take(self, line: str, events: list[tuple[str, str]]) -> None:
        if not line:
            if self._data:
                data = "\n".join(self._data)
                self._data = []
                if self.done_marker is not None and data.strip() == self.done_marker:
                    self.done = True
                else:
                    events.append((self._event or "message", data))
            self._event = ""
            return
        if line.startswith(":"):
            return  # a comment: keep-alives, and provenance notes in recorded fixtures
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


class NDJSONDecoder:
    """Newline-delimited JSON (Ollama): one event a line."""

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._line: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Lines completed by ``chunk``, each ``("message", line)``."""
        text = self._text.decode(chunk)
        if "\n" not in text:
            self._line.append(text)
            return []
        lines = ("".join(self._line) + text).split("\n")
        self._line = [lines.pop()]
        return [("message", line.strip()) for line in lines if line.strip()]

    def close(self) -> list[tuple[str, str]]:
        """The last line, when the body did not end with a newline."""
        rest = ("".join(self._line) + self._text.decode(b"", final=True)).strip()
        self._line = []
        return [("message", rest)] if rest else []
