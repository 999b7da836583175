"""A body's bytes as they arrive, made readable: its content-encoding undone within a cap on
decoded bytes, then a stream cut into events (server-sent events, newline-delimited JSON).

The decoders take bytes in any pieces and return whole events as they complete, in time
linear in the stream's length; ``close`` says whether the stream ended the documented way.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import AsyncIterator

import httpx

from conchcheck.core.nesting import MAX_DEPTH, text_too_deep
from conchcheck.wire.adapter import ShapeKind, StreamReducer, WireShapeError
from conchcheck.wire.chat import Reply
from conchcheck.wire.exchange import WireError, WireErrorKind

# zlib's window bits: a gzip header and trailer, a zlib one, or none (raw deflate).
_GZIP, _ZLIB, _RAW = 16 + zlib.MAX_WBITS, zlib.MAX_WBITS, -zlib.MAX_WBITS


class Inflater:
    """Undoes a body's ``content-encoding`` (none, identity, gzip, deflate) without ever
    holding more than ``limit`` decoded bytes plus one.

    httpx decodes each compressed piece whole, so a 64 KB piece of a gzip bomb becomes
    64 MB before any size check sees it; here each piece is decoded at most to what the cap
    has left (``max_length``), and what zlib could not yet take waits in ``unconsumed_tail``.
    A ``WireShapeError`` of kind ``encoding`` says an encoding is unknown or corrupt.
    """

    def __init__(self, encoding: str | None, limit: int) -> None:
        names = [n.strip().lower() for n in (encoding or "").split(",")]
        names = [n for n in names if n and n != "identity"]
        self.limit = limit
        self.produced = 0
        self._fed = False
        self._sniffing = False
        """Deflate not yet known to carry its zlib header."""
        self._z: zlib._Decompress | None = None
        if not names:
            return
        if len(names) > 1 or names[0] not in ("gzip", "x-gzip", "deflate"):
            raise WireShapeError(
                ShapeKind.ENCODING,
                f"The reply is in content-encoding {encoding!r}, which conchcheck can't read "
                "(it reads gzip and deflate).",
            )
        self._sniffing = names[0] == "deflate"
        self._z = zlib.decompressobj(_ZLIB if self._sniffing else _GZIP)

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes of ``data``: more than the cap has left only when it is passed."""
        if self._z is None:
            self.produced += len(data)
            return data
        self._fed = self._fed or bool(data)
        out = self._inflate(data)
        self.produced += len(out)
        return out

    def close(self) -> bytes:
        """What zlib still holds at the end of the body (nothing past the cap)."""
        if self._z is None or self.produced > self.limit:
            return b""
        try:
            out = self._z.flush()
        except zlib.error as exc:
            raise self._corrupt(exc) from None
        if self._fed and not self._z.eof:
            raise WireShapeError(ShapeKind.ENCODING, "The reply's compressed body is cut short.")
        self.produced += len(out)
        return out

    def _inflate(self, data: bytes) -> bytes:
        assert self._z is not None
        room = self.limit - self.produced + 1  # one byte past the cap says it was passed
        if room <= 0:
            return b""
        try:
            out = self._z.decompress(data, room)
        except zlib.error as exc:
            if not self._sniffing:
                raise self._corrupt(exc) from None
            # "deflate" is often sent raw, without the zlib header it names (httpx allows it).
            self._z, self._sniffing = zlib.decompressobj(_RAW), False
            return self._inflate(data)
        self._sniffing = False
        # Input left in ``unconsumed_tail`` means ``out`` filled all of ``room``: the cap is
        # passed and the body abandoned, so the tail is never decoded.
        return out

    def _corrupt(self, exc: zlib.error) -> WireShapeError:
        return WireShapeError(ShapeKind.ENCODING, f"The reply's compressed body is corrupt: {exc}.")


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
        """Events left when the body ends (an event without its blank line still counts);
        nothing when called again."""
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
        """The last line, when the body did not end with a newline; nothing when called again."""
        rest = ("".join(self._line) + self._text.decode(b"", final=True)).strip()
        self._line = []
        return [("message", rest)] if rest else []


class Body:
    """One reply's body as it arrives: its content-encoding undone, no more than ``limit``
    decoded bytes kept, and a stream's events fed to its reducer as they complete.

    What goes wrong (an encoding it can't read, too many bytes, JSON nested too deep to
    parse) is a ``WireError`` value; ``partial`` is what a stream cut short carried.
    """

    def __init__(
        self,
        encoding: str | None,
        limit: int,
        decoder: SSEDecoder | NDJSONDecoder | None = None,
        reducer: StreamReducer | None = None,
    ) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.decoder = decoder
        self.reducer = reducer
        self._finished = False
        self.error: WireError | None = None
        """Set at the start when the encoding can't be read."""
        self._inflater: Inflater | None = None
        try:
            self._inflater = Inflater(encoding, limit)
        except WireShapeError as exc:
            self.error = WireError(WireErrorKind.BAD_SHAPE, str(exc), exc.kind.value)

    def feed(self, data: bytes) -> WireError | None:
        """Take raw bytes as received; why reading must stop, or None."""
        if self.error is not None or self._inflater is None:
            return self.error
        try:
            return self._take(self._inflater.feed(data))
        except WireShapeError as exc:
            return WireError(WireErrorKind.BAD_SHAPE, str(exc), exc.kind.value)

    def close(self) -> WireError | None:
        """The body ended: what zlib still held, and a stream's last event."""
        if self.error is not None or self._inflater is None:
            return self.error
        try:
            error = self._take(self._inflater.close())
        except WireShapeError as exc:
            return WireError(WireErrorKind.BAD_SHAPE, str(exc), exc.kind.value)
        if error is None and self.decoder is not None:
            # The last event, when the body ended without its blank line, is checked like the
            # others; the decoder's ``close`` gives nothing more when called again.
            error = self._events(self.decoder.close())
        return error

    async def read(self, pieces: AsyncIterator[bytes]) -> WireError | None:
        """Take every raw piece of a body, then close it; why reading stopped, or None."""
        async for data in pieces:
            error = self.feed(data)
            if error is not None:
                return error
        return self.close()

    def text(self) -> str:
        """The decoded body so far as text (invalid UTF-8 replaced)."""
        return b"".join(self.chunks).decode("utf-8", errors="replace")

    def partial(self) -> Reply | None:
        """What a stream carried before it was cut; None for a whole body (asked once)."""
        if self.reducer is None or self._finished:
            return None
        self._finished = True
        try:
            return self.reducer.finish(terminated=False)
        except WireShapeError as exc:
            return exc.partial

    def _take(self, chunk: bytes) -> WireError | None:
        self.size += len(chunk)
        if self.size > self.limit:
            detail = f"The reply passed {self.limit} bytes and was abandoned."
            return WireError(WireErrorKind.TOO_LARGE, detail)
        self.chunks.append(chunk)
        if self.decoder is None:
            return None
        return self._events(self.decoder.feed(chunk))

    def _events(self, events: list[tuple[str, str]]) -> WireError | None:
        for event, data in events:
            deep = text_too_deep(data)
            if deep is not None:
                return too_deep(deep)
            if self.reducer is not None:
                self.reducer.feed(data, event)
        return None


def too_deep(offset: int) -> WireError:
    """The error for JSON nested past ``MAX_DEPTH``, found at ``offset`` before parsing."""
    detail = (
        f"The reply nests deeper than {MAX_DEPTH} levels (at character {offset}); "
        "it was not parsed."
    )
    return WireError(WireErrorKind.BAD_SHAPE, detail, ShapeKind.TOO_DEEP.value)


async def drain(response: httpx.Response, body: Body) -> WireError | None:
    """Read the whole of ``response`` into ``body``; why it had to stop, or None."""
    # The raw bytes, decoded by ``Body`` within the cap: httpx decodes a compressed piece
    # whole (a gzip bomb grew to 310 MB past the 8 MB cap that way).
    if body.error is not None:
        return body.error
    if response.is_stream_consumed:
        # Built in memory (httpx.MockTransport): read and decoded before it came here.
        return body.feed(response.content) or body.close()
    return await body.read(response.aiter_raw())


def encoding_of(response: httpx.Response) -> str | None:
    """The body's content-encoding still to undo (a MockTransport's arrives decoded)."""
    encoding: str | None = response.headers.get("content-encoding")
    return None if response.is_stream_consumed else encoding
