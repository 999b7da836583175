"""A real HTTP server on 127.0.0.1 for emulated providers, run in a thread by a fixture.

An emulator is a function from a ``Received`` request to a ``Response``: a whole body, or a
stream of byte chunks sent with chunked transfer encoding, so clients meet real sockets,
real framing and real partial reads.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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


@dataclass
class Response:
    """What the emulator sends: ``chunks`` streams (chunked encoding), else ``body``."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] | None = None
    hang_up: bool = False
    """Close the connection without answering (a backend that died mid-request)."""

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

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
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
                for chunk in response.chunks:
                    if chunk:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

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
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
