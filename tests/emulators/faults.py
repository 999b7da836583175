"""Hostile servers, one fault at a time: each turns the answer an emulator would give into a
broken one, and ``Injector`` puts it on the requests a test chooses.

The faults are those of issue 10 (resets, hangs, drips, 429s and 5xx, HTML, truncated or
lying bodies, cut streams, a 50 MB body, invalid UTF-8, a gzip bomb, a redirect, deep JSON,
huge arguments). Socket-level ones are ``server.Fault`` values; the rest are bodies.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tests.emulators.server import Fault, Handler, Received, Response

Breaker = Callable[[Response], Response]
"""Turns the answer an emulator would give into the faulty one."""

MB = 1 << 20


@dataclass
class Injector:
    """Serves ``handler``, but the requests ``when`` picks get ``fault`` (every one, or the
    first ``times``); ``hits`` keeps those requests, one per attempt the client made."""

    handler: Handler
    when: Callable[[Received], bool]
    fault: Breaker
    times: int | None = None
    hits: list[Received] = field(default_factory=list)

    def __call__(self, received: Received) -> Response:
        response = self.handler(received)
        if self.when(received) and (self.times is None or len(self.hits) < self.times):
            self.hits.append(received)
            return self.fault(response)
        return response


def on_socket(fault: Fault) -> Breaker:
    """The emulator's own answer, sent with ``fault`` on the socket."""
    return lambda response: dataclasses.replace(response, fault=fault)


def instead(response: Response) -> Breaker:
    """Another answer altogether (a status page, a redirect, a body of another shape)."""
    return lambda _: response


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Breaker:
    """An OpenAI-style JSON error with ``status``."""
    body = {"error": {"message": message, "type": "server_error", "code": status}}
    return instead(Response.json(body, status, headers))


HTML_502 = (
    b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)


def truncated(response: Response) -> Response:
    """The first half of the body, with an honest length."""
    return dataclasses.replace(response, body=response.body[: len(response.body) // 2])


def invalid_utf8(response: Response) -> Response:
    """The reply's text replaced by bytes that are not UTF-8."""
    body = response.body.replace(b'"content": null', b'"content": "caf\xe9 \xff\xfe ok \xc3"')
    assert body != response.body, "a reply with a call and no text"
    return dataclasses.replace(response, body=body)


def huge_arguments(size: int) -> Breaker:
    """The first tool call's arguments made ``size`` characters long."""

    def grow(response: Response) -> Response:
        data = json.loads(response.body)
        call = data["choices"][0]["message"]["tool_calls"][0]["function"]
        padding = "x" * (size - len('{"text": ""}'))
        call["arguments"] = json.dumps({"text": padding})
        return dataclasses.replace(response, body=json.dumps(data).encode())

    return grow


def deep_json(depth: int = 100_000) -> Breaker:
    """A body of ``depth`` nested arrays (Python's json would raise RecursionError)."""
    return instead(Response(200, b"[" * depth + b"]" * depth, {"content-type": "application/json"}))


def body_of(size: int) -> Breaker:
    """A 200 that streams ``size`` bytes of JSON text, a megabyte at a time."""

    def pieces() -> Iterator[bytes]:
        yield b'{"choices": [{"message": {"content": "'
        for _ in range(size // MB):
            yield b"a" * MB
        yield b'"}}]}'

    return lambda _: Response(200, headers={"content-type": "application/json"}, chunks=pieces())


def gzip_bytes(data: bytes) -> bytes:
    """``data`` gzip-compressed."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


@functools.cache
def _bomb(decoded: int) -> bytes:
    # One megabyte of zeros deflated once and repeated: after a full flush each block stands
    # alone, so the copies make one valid stream, built in milliseconds instead of seconds.
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = squeeze.compress(bytes(MB)) + squeeze.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()  # the final block
    crc = 0
    for _ in range(decoded // MB):
        crc = zlib.crc32(bytes(MB), crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (decoded // MB * MB) & 0xFFFFFFFF)
    return header + block * (decoded // MB) + last + trailer


def gzip_bomb(decoded: int = 256 * MB) -> Breaker:
    """A 200 whose gzip body decodes to ``decoded`` bytes (about a thousandth of that sent)."""
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    return lambda _: Response(200, _bomb(decoded), headers)


def redirect(location: str) -> Breaker:
    """A 307 to another host."""
    return instead(Response(307, b"", {"location": location}))


def without_last_event(response: Response) -> Response:
    """An SSE stream without its terminator (``data: [DONE]``), ending cleanly."""
    chunks = [c for c in response.chunks or () if c.strip() != b"data: [DONE]"]
    return dataclasses.replace(response, chunks=chunks)


def cut_mid_event(response: Response) -> Response:
    """An SSE stream whose connection drops in the middle of an event."""
    chunks = list(response.chunks or ())
    half = len(chunks) // 2
    cut = [*chunks[:half], chunks[half][: len(chunks[half]) // 2]]
    return dataclasses.replace(response, chunks=cut, fault=Fault.CUT_STREAM)


def cut_mid_line(response: Response) -> Response:
    """An NDJSON stream that ends cleanly in the middle of a line, before its done line."""
    lines = list(response.chunks or ())
    half = len(lines) // 2
    return dataclasses.replace(response, chunks=[*lines[:half], lines[half][:7]])
