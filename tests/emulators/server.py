"""A real HTTP server on 127.0.0.1 for emulated providers, run in a thread by a fixture.

An emulator is a function from a ``Received`` request to a ``Response``: a whole body, or a
stream of byte chunks sent with chunked transfer encoding, so clients meet real sockets,
real framing and real partial reads. A response's ``fault`` misbehaves on the socket itself
(resets, hangs, drips, lying lengths, cut streams); every fault ends when the server closes.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Received:
    """One request as the emulator saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Fault(str, Enum):
    """What a response does wrong on the socket."""

    RESET_BEFORE = "reset_before"
    """A TCP reset before a byte of the request is read (it is only peeked at, to choose)."""
    RESET_AFTER = "reset_after"
    """A TCP reset after the request is read, with no answer."""
    HANG = "hang"
    """The request is read and never answered; the connection stays open."""
    DRIP_STATUS = "drip_status"
    """The status line a byte every ``drip`` seconds."""
    DRIP_HEADERS = "drip_headers"
    """The status line at once, then the headers a byte at a time."""
    DRIP_BODY = "drip_body"
    """Status and headers at once, then the body a byte at a time (a stream a chunk at a
    time)."""
    LENGTH_LONGER = "length_longer"
    """A ``content-length`` 100 bytes longer than the body, then the connection closes."""
    LENGTH_SHORTER = "length_shorter"
    """A ``content-length`` half the body; all of it is sent, then the connection closes."""
    CUT_STREAM = "cut_stream"
    """The chunks, then the connection closes without the terminating chunk."""
    STALL_STREAM = "stall_stream"
    """The first half of the chunks, then silence with the connection open."""


@dataclass
class Response:
    """What the emulator sends: ``chunks`` streams (chunked encoding), else ``body``."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] | None = None
    hang_up: bool = False
    """Close the connection without answering (a backend that died mid-request)."""
    fault: Fault | None = None
    drip: float = 0.2
    """Seconds between the bytes of a drip fault."""

    @classmethod
    def json(cls, value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return cls(
            status,
            json.dumps(value).encode(),
            {"content-type": "application/json", **(headers or {})},
        )


Handler = Callable[[Received], Response]


class EmulatorServer:
    """Serves ``handler`` on a free loopback port until ``close``; records every request."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.received: list[Received] = []
        self.closing = threading.Event()
        """Set by ``close``: every hang and drip ends."""
        outer = self

        class _Request(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's
                # algorithm and the client's delayed ACK add ~40 ms to every reply.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def handle_one_request(self) -> None:
                # The request is peeked at, not read, so a fault can reset the connection
                # before a byte of it is consumed; what it answers is kept for ``_serve``.
                self._pending: tuple[Received, Response] | None = None
                peeked = _peek(self.connection, outer.closing)
                if peeked is None:
                    self.close_connection = True
                    return
                if peeked is not _TOO_BIG:
                    assert isinstance(peeked, Received)
                    outer.received.append(peeked)
                    response = outer.handler(peeked)
                    if response.fault is Fault.RESET_BEFORE:
                        _reset(self.connection)
                        self.close_connection = True
                        return
                    self._pending = (peeked, response)
                super().handle_one_request()

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if self._pending is not None:
                    received, response = self._pending
                else:
                    parts = urlsplit(self.path)
                    received = Received(
                        self.command, parts.path, parse_qs(parts.query),
                        {k.lower(): v for k, v in self.headers.items()}, body,
                    )  # fmt: skip
                    outer.received.append(received)
                    response = outer.handler(received)
                if response.hang_up:
                    # Nothing is written: the client reads an end of stream instead of a reply.
                    self.close_connection = True
                    return
                if response.fault is not None:
                    self._misbehave(response)
                    return
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                if response.chunks is None:
                    self.send_header("content-length", str(len(response.body)))
                    self.end_headers()
                    self.wfile.write(response.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self._chunks(response.chunks)
                self.wfile.write(b"0\r\n\r\n")

            def _chunks(self, chunks: Iterable[bytes]) -> None:
                for chunk in chunks:
                    if chunk:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()

            def _misbehave(self, response: Response) -> None:
                fault = response.fault
                self.close_connection = True
                if fault is Fault.RESET_AFTER or fault is Fault.RESET_BEFORE:
                    _reset(self.connection)
                    return
                if fault is Fault.HANG:
                    _wait_for_hang_up(self.connection, outer.closing)
                    return
                head = f"HTTP/1.1 {response.status} Fault\r\n".encode()
                fields = dict(response.headers)
                if response.chunks is not None:
                    fields["transfer-encoding"] = "chunked"
                else:
                    length = len(response.body)
                    if fault is Fault.LENGTH_LONGER:
                        length += 100
                    elif fault is Fault.LENGTH_SHORTER:
                        length //= 2
                        # Said, as done: the rest of the body would otherwise wait on a kept
                        # connection for the next request to read as its reply (an extra
                        # retry in a loaded CI run, 51 requests for 50).
                        fields["connection"] = "close"
                        self.close_connection = True
                    fields["content-length"] = str(length)
                lines = "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
                parts = [head, lines.encode(), response.body]
                drips = {Fault.DRIP_STATUS: 0, Fault.DRIP_HEADERS: 1, Fault.DRIP_BODY: 2}
                drip = (
                    drips.get(fault)
                    if response.chunks is None or fault is not Fault.DRIP_BODY
                    else None
                )
                for index, part in enumerate(parts):
                    if index == drip:
                        if not self._drip(part, response.drip):
                            return
                    else:
                        self.wfile.write(part)
                        self.wfile.flush()
                if response.chunks is None:
                    return
                chunks = list(response.chunks)
                if fault is Fault.DRIP_BODY:
                    for chunk in chunks:
                        self._chunks([chunk])
                        if outer.closing.wait(response.drip):
                            return
                    self.wfile.write(b"0\r\n\r\n")
                elif fault is Fault.STALL_STREAM:
                    self._chunks(chunks[: len(chunks) // 2])
                    _wait_for_hang_up(self.connection, outer.closing)
                else:
                    self._chunks(chunks)  # CUT_STREAM: no terminating chunk follows

            def _drip(self, data: bytes, every: float) -> bool:
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    if outer.closing.wait(every):
                        return False
                return True

            do_GET = do_POST = _serve

        class _Server(ThreadingHTTPServer):
            # socketserver's backlog of 5 drops the SYNs of a burst of new connections, and
            # the client's retry comes a second later: a probe at --concurrency 16 opens 16.
            request_queue_size = 128

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that hangs up mid-reply (timeout and size-cap tests) breaks the
                # write; keep it as evidence instead of printing a traceback.
                outer.errors.append(sys.exc_info()[1])

        self.errors: list[BaseException | None] = []
        self.httpd = _Server(("127.0.0.1", 0), _Request)
        self.httpd.daemon_threads = True
        # A short poll keeps shutdown quick: each test starts and stops its own servers.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


_TOO_BIG = object()
"""A request larger than the socket buffer can hold for a peek: read it the usual way."""


def _peek(conn: socket.socket, closing: threading.Event) -> Received | object | None:
    """The next request on ``conn``, left unread in the socket; None when the client closed."""
    wanted = 1 << 16
    started = time.monotonic()
    while not closing.is_set():
        readable, _, _ = select.select([conn], [], [], 0.05)
        if not readable:
            continue
        try:
            data = conn.recv(wanted, socket.MSG_PEEK)
        except OSError:
            return None
        if not data:
            return None
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            if len(data) >= wanted:
                return _TOO_BIG
            time.sleep(0.002)  # part of the head has come: wait for the rest
            continue
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        if len(rest) < length:
            wanted = len(head) + 4 + length
            if time.monotonic() - started > 5:
                return _TOO_BIG  # more than the socket buffer holds: it can't be peeked whole
            time.sleep(0.002)
            continue
        parts = urlsplit(target)
        return Received(method, parts.path, parse_qs(parts.query), headers, rest[:length])
    return None


def _reset(conn: socket.socket) -> None:
    # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def _wait_for_hang_up(conn: socket.socket, closing: threading.Event) -> None:
    while not closing.is_set():
        readable, _, _ = select.select([conn], [], [], 0.05)
        if readable:
            try:
                if not conn.recv(1, socket.MSG_PEEK):
                    return  # the client gave up
            except OSError:
                return
            time.sleep(0.05)  # bytes of a request we will never answer
