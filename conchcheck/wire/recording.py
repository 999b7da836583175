"""Recordings: every HTTP exchange of a probe, kept as data and served again without a network.

``RecordingTransport`` wraps the transport a probe would use and keeps each exchange: the
request (method, key-free URL, JSON body) and the reply as its raw bytes (still compressed,
still SSE or NDJSON), so a replay runs the same decoders and reducers. ``ReplayTransport``
answers each request from a ``Recording``: matched by method, URL and the sha256 of the
body's canonical JSON; when several cells send the same request (a prompt repeated, a
streaming check's whole half), each gets the reply recorded for it (``ASKER``), the rest in
the order they were recorded. The file format is
``conchcheck/jsonschemas/recording.schema.json``; keys are masked before anything is kept.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import AsyncIterator, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.errors import InputError
from conchcheck.redaction import held

ASKER: ContextVar[str] = ContextVar("asker", default="")
"""The cell a request is sent for (``native/weather/2``), set by the probe around each send:
a model may answer the same request differently each time, and a replay must give each cell
the reply it had, whatever order the requests come in."""
FORMAT = "conchcheck-recording"
VERSION = 1
KEPT_HEADERS = frozenset(
    {"content-type", "content-encoding", "retry-after", "retry-after-ms"}
    | {"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", "x-ratelimit-reset"}
    | {"anthropic-ratelimit-requests-reset"}
)
"""Reply headers a probe reads (framing, decoding, waits); the rest are not kept."""
DEADLINE = ("Deadline", "The attempt's deadline passed before the reply was complete.")
"""The error of an exchange cancelled at its deadline; replayed as the same deadline."""
_ERRORS: dict[str, type[httpx.TransportError]] = {
    cls.__name__: cls
    for cls in (
        httpx.ConnectError,
        httpx.ConnectTimeout,
        httpx.ReadError,
        httpx.ReadTimeout,
        httpx.WriteError,
        httpx.WriteTimeout,
        httpx.PoolTimeout,
        httpx.RemoteProtocolError,
        httpx.NetworkError,
        httpx.TimeoutException,
    )
}


def body_digest(content: bytes) -> tuple[JsonValue, str]:
    """A request body as JSON (None when empty) and the sha256 of its canonical JSON.

    Canonical: sorted keys, no spaces, UTF-8 as is. A body that is not JSON is hashed as is.
    """
    if not content:
        return None, hashlib.sha256(b"").hexdigest()
    try:
        value: JsonValue = json.loads(content)
    except ValueError:
        return None, hashlib.sha256(content).hexdigest()
    value = held().value(value)
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return value, hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class Recorded:
    """One exchange: the request as matched, and the reply as it came (or how it broke)."""

    method: str
    url: str
    request: JsonValue
    sha256: str
    status: int | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    truncated: bool = False
    error: tuple[str, str] | None = None
    """The transport error (its class name, its message) that ended the exchange."""
    asker: str = ""
    """The cell it was sent for (``ASKER``); empty when unknown."""

    def to_data(self) -> JsonObject:
        """The exchange as the recording file holds it."""
        try:
            text: str | None = self.body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        data: JsonObject = {
            "method": self.method,
            "url": self.url,
            "request": self.request,
            "request_sha256": self.sha256,
            "status": self.status,
            "headers": [list(pair) for pair in self.headers],
            "truncated": self.truncated,
            "error": {"type": self.error[0], "message": self.error[1]} if self.error else None,
            "asker": self.asker,
        }
        if text is not None:
            data["body"] = text
        else:
            data["body_base64"] = base64.b64encode(self.body).decode("ascii")
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Recorded:
        """An exchange read from a recording (already checked against its schema)."""
        if "body_base64" in data:
            body = base64.b64decode(data["body_base64"])
        else:
            body = str(data.get("body", "")).encode("utf-8")
        error = data.get("error")
        return cls(
            data["method"],
            data["url"],
            data.get("request"),
            data["request_sha256"],
            data.get("status"),
            [(k, v) for k, v in data.get("headers", [])],
            body,
            bool(data.get("truncated")),
            (error["type"], error["message"]) if error else None,
            str(data.get("asker", "")),
        )


@dataclass(slots=True)
class Recording:
    """A probe's exchanges and what they were recorded with."""

    target: str
    base_url: str
    matrix: str
    matrix_digest: str
    concurrency: int | None
    conchcheck_version: str
    exchanges: list[Recorded] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        """The whole recording as the file holds it, keys masked."""
        return held().value(
            {
                "format": FORMAT,
                "version": VERSION,
                "conchcheck_version": self.conchcheck_version,
                "target": self.target,
                "base_url": self.base_url,
                "matrix": {"name": self.matrix, "digest": self.matrix_digest},
                "concurrency": self.concurrency,
                "exchanges": [exchange.to_data() for exchange in self.exchanges],
            }
        )

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Recording:
        """A recording read from its file (already checked against its schema)."""
        return cls(
            data["target"],
            data["base_url"],
            data["matrix"]["name"],
            data["matrix"]["digest"],
            data.get("concurrency"),
            data["conchcheck_version"],
            [Recorded.from_data(item) for item in data["exchanges"]],
        )


class RecordingTransport(httpx.AsyncBaseTransport):
    """Sends through ``inner`` and keeps every exchange in ``exchanges``.

    A reply's raw bytes are read whole, up to ``max_body`` + 1 bytes: one byte past the
    transport's body cap is enough for a replay to be refused as too large the same way.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None, max_body: int = 8 << 20):
        # The transport httpx would build for the wire's client (trust_env off, as there).
        self.inner = inner or httpx.AsyncHTTPTransport(trust_env=False)
        self.max_body = max_body
        self.exchanges: list[Recorded] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send, read the reply's raw bytes, keep the exchange, hand the bytes on."""
        value, digest = body_digest(await request.aread())
        kept = Recorded(request.method, held().text(str(request.url)), value, digest)
        kept.asker = ASKER.get()
        self.exchanges.append(kept)
        try:
            response = await self.inner.handle_async_request(request)
        except httpx.TransportError as exc:
            kept.error = (type(exc).__name__, held().text(str(exc)))
            raise
        except BaseException:
            # Cancelled: the attempt's deadline passed (a loaded machine). Kept as such, so a
            # replay meets the same deadline instead of an empty reply.
            kept.error = DEADLINE
            raise
        kept.status = response.status_code
        kept.headers = [
            (k.lower(), held().text(v))
            for k, v in response.headers.items()
            if k.lower() in KEPT_HEADERS
        ]
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
                size += len(chunk)
                if size > self.max_body:
                    kept.truncated = True
                    break
        except httpx.TransportError as exc:
            kept.error = (type(exc).__name__, held().text(str(exc)))
        except BaseException:
            kept.error = DEADLINE
            raise
        finally:
            await response.aclose()
            kept.body = b"".join(chunks)[: self.max_body + 1]
        return _response(kept)

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers each request from ``recording``; a request it lacks is an ``InputError``.

    The error is also kept in ``missing``: an engine that gathers its tasks may wrap it.
    """

    def __init__(self, recording: Recording, name: str) -> None:
        self.recording = recording
        self.name = name
        self.missing: InputError | None = None
        self._queues: dict[tuple[str, str, str], list[Recorded]] = {}
        for exchange in recording.exchanges:
            key = (exchange.method, exchange.url, exchange.sha256)
            self._queues.setdefault(key, []).append(exchange)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """The recorded reply to ``request``, byte for byte, or the recorded failure."""
        _, digest = body_digest(await request.aread())
        url = held().text(str(request.url))
        queue = self._queues.get((request.method, url, digest))
        if not queue:
            self.missing = self._unmatched(request.method, url, digest, queue is not None)
            raise self.missing
        asker = ASKER.get()
        # The cell's own reply first (its retries in their order), else the first left.
        index = next((i for i, e in enumerate(queue) if asker and e.asker == asker), 0)
        kept = queue.pop(index)
        if kept.status is None and kept.error is not None:
            if kept.error == DEADLINE:
                raise TimeoutError(DEADLINE[1])
            raise _ERRORS.get(kept.error[0], httpx.ConnectError)(kept.error[1], request=request)
        return _response(kept, request)

    @staticmethod
    async def sleep(seconds: float) -> None:
        """A retry's wait, not waited: the recorded reply is already here."""

    @staticmethod
    def jitter() -> float:
        """The middle of the jitter's range, every time."""
        return 0.5

    def _unmatched(self, method: str, url: str, digest: str, used: bool) -> InputError:
        rec = self.recording
        what = "no more exchanges" if used else "no exchange"
        return InputError(
            f"The recording {self.name} has {what} for {method} {url} with body sha256 "
            f"{digest}; it was recorded with matrix {rec.matrix} ({rec.matrix_digest}) "
            f"against {rec.target} at {rec.base_url}, concurrency {rec.concurrency}.",
            hint="Replay with the matrix and options it was recorded with, or record again.",
        )


def _response(kept: Recorded, request: httpx.Request | None = None) -> httpx.Response:
    # A stream, not content=: httpx would read and decode bytes given whole, and the wire
    # decodes raw bytes itself within its cap.
    # As bytes: httpx encodes text headers as ASCII, and decodes a server's non-ASCII ones as
    # UTF-8 (else Latin-1) when recording, so UTF-8 gives back the text that was kept.
    headers = [(k.encode(), v.encode()) for k, v in kept.headers]
    response = httpx.Response(
        kept.status or 0, headers=headers, stream=_Body(kept.body, kept.error)
    )
    if request is not None:
        response.request = request
    return response


class _Body(httpx.AsyncByteStream):
    """Recorded raw bytes, then the recorded transport error, if the reply broke off."""

    def __init__(self, body: bytes, error: tuple[str, str] | None) -> None:
        self.body = body
        self.error = error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in _pieces(self.body):
            yield chunk
        if self.error == DEADLINE:
            raise TimeoutError(DEADLINE[1])
        if self.error is not None:
            raise _ERRORS.get(self.error[0], httpx.ReadError)(self.error[1])


def _pieces(body: bytes, size: int = 65_536) -> Iterable[bytes]:
    return (body[i : i + size] for i in range(0, len(body), size))
