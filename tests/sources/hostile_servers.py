"""Hostile MCP servers, one behaviour each, for the hostile-source tier.

Over stdio: ``python tests/sources/hostile_servers.py BEHAVIOUR [FILE]``. It imports only the
standard library, as it runs with the small environment conchcheck gives a server, from any
folder. Over HTTP: ``http_reply(behaviour, message, echoed)`` is what a loopback server
answers one POST with (the tests serve it with ``EmulatorServer``).

Each is of the ``initialize`` era (``server/discover`` is answered -32601, as SDK 1.x answers
it) and lists one tool, ``ping``, unless its behaviour says otherwise:

- ``deep-schema``: tool ``deep``, whose schema nests ``DEEP_SCHEMA`` objects;
- ``deep-line``: ``tools/list`` answered with ``DEEP_LINE`` brackets (``deep-sse`` the same in
  an SSE event, over HTTP);
- ``nan``, ``infinity``, ``huge-number``: tool ``weigh``'s schema holds ``NaN``,
  ``-Infinity`` or ``1e400`` (which Python reads as infinity);
- ``long-name``: one tool whose name is 100,000 characters;
- ``many-tools``: ``MANY`` tools, ``PAGE`` a page; ``loop-cursor``: an empty page whose
  cursor is always the same;
- ``chatter``: a banner on stdout before any JSON-RPC;
- ``stderr-flood``: stderr written without end while it answers; ``silent-flood``: the same,
  never answering; ``notify-flood``: notifications on stdout without end, never answering;
- ``fork``: forks a child that detaches (stdio on /dev/null, SIGTERM and SIGHUP ignored) and
  writes its pid to FILE, then answers; ``fork-exit``: the same, then exits without
  answering; ``escape``: the child leaves the group (``setsid`` and a second fork);
- ``echo``: every value of its environment in its stderr, tool ``noted``'s description and
  schema; ``echo-name``: a tool named after each value that looks secret; ``error``: each of
  those in the error it answers ``initialize`` with; ``echo-version``: the first of them as
  the protocol version it agrees on; ``echo-exit``: each of those in the last line of its
  stderr as it exits at once; ``env``: tool ``env``, whose
  description is its environment as JSON; over HTTP, ``echo-401``, ``echo-500``,
  ``echo-rpc`` and ``echo-tools`` echo ``echoed`` (the test's key) as a bearer token in a
  401, a 500, a JSON-RPC error and tool ``noted``; ``needs-bearer`` answers every request
  (notifications too) 401 unless it carries ``Authorization: Bearer <echoed>``;
- ``silent``: reads and never answers.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

DEEP_SCHEMA = 100
"""Objects nested in the ``deep-schema`` tool's schema."""
DEEP_LINE = 100_000
"""Brackets of the ``deep-line`` answer."""
MANY = 100_000
PAGE = 1000
BANNER = "Starting hostile MCP server v1.0 (press Ctrl-C to quit)"
FLOOD = b"W" * 4095 + b"\n"
SECRET_WORDS = ("KEY", "TOKEN", "SECRET")


def deep_schema(levels: int = DEEP_SCHEMA) -> dict[str, Any]:
    """``levels`` objects, each the one property of the one outside it."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def said(environ: dict[str, str]) -> str:
    """Every value of ``environ``, the secret-looking first (an error message is cut)."""
    secret = [v for k, v in environ.items() if any(w in k for w in SECRET_WORDS)]
    return " ".join([*secret, *(v for v in environ.values() if v not in secret)])


def tools_for(behaviour: str, cursor: str | None, environ: dict[str, str]) -> dict[str, Any]:
    """The ``tools/list`` result of ``behaviour`` for the page at ``cursor``."""
    obj = {"type": "object"}
    if behaviour == "deep-schema":
        return {"tools": [{"name": "deep", "inputSchema": deep_schema()}]}
    if behaviour in {"nan", "infinity", "huge-number"}:
        odd = {"nan": float("nan"), "infinity": float("-inf"), "huge-number": 1e400}[behaviour]
        schema = {"type": "object", "properties": {"kg": {"type": "number", "maximum": odd}}}
        weigh = {"name": "weigh", "inputSchema": schema}
        return {"tools": [{"name": "ping", "inputSchema": obj}, weigh]}
    if behaviour == "long-name":
        return {"tools": [{"name": "n" * 100_000, "inputSchema": obj}]}
    if behaviour == "many-tools":
        start = int(cursor or 0)
        page = [{"name": f"t{i}", "inputSchema": obj} for i in range(start, start + PAGE)]
        return {"tools": page, **({"nextCursor": str(start + PAGE)} if start + PAGE < MANY else {})}
    if behaviour == "loop-cursor":
        return {"tools": [], "nextCursor": "again"}
    if behaviour == "echo":
        words = said(environ)
        note = {"type": "string", "description": words, "default": words, "enum": [words]}
        schema = {"type": "object", "properties": {"note": note}, "required": ["note"]}
        return {"tools": [{"name": "noted", "description": words, "inputSchema": schema}]}
    if behaviour == "echo-name":
        secret = [v for k, v in environ.items() if any(w in k for w in SECRET_WORDS)]
        return {"tools": [{"name": f"tool_{v}"[:64], "inputSchema": obj} for v in secret]}
    if behaviour == "env":
        return {"tools": [{"name": "env", "description": json.dumps(environ), "inputSchema": obj}]}
    return {"tools": [{"name": "ping", "description": "Answers pong.", "inputSchema": obj}]}


def answer(behaviour: str, message: dict[str, Any], environ: dict[str, str]) -> str | None:
    """The line answering ``message`` (None: nothing), JSON as Python writes it (NaN too)."""
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        return None
    if behaviour == "error" and method == "initialize":
        secret = " ".join(v for k, v in environ.items() if any(w in k for w in SECRET_WORDS))
        return _line(ident, error={"code": -32603, "message": f"bad configuration: {secret}"})
    if method == "initialize":
        secret = [v for k, v in environ.items() if any(w in k for w in SECRET_WORDS)]
        result = {
            "protocolVersion": secret[0] if behaviour == "echo-version" else "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
        return _line(ident, result)
    if method == "tools/list":
        if behaviour == "deep-line":
            return "[" * DEEP_LINE
        cursor = (message.get("params") or {}).get("cursor")
        return _line(ident, tools_for(behaviour, cursor, environ))
    return _line(ident, error={"code": -32601, "message": "Method not found"})


def _line(ident: Any, result: Any = None, error: Any = None) -> str:
    body = {"result": result} if error is None else {"error": error}
    return json.dumps({"jsonrpc": "2.0", "id": ident, **body})


def _flood() -> None:
    while True:
        os.write(2, FLOOD)


def _detach(pid_file: str, *, escape: bool) -> None:
    """Fork a child that outlives the server (it never returns); the server returns."""
    if os.fork() != 0:
        return
    if escape:
        # A daemon's way out: a session of its own, then a second fork so it leads none.
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with open(pid_file + ".part", "w") as file:
        file.write(str(os.getpid()))
    os.replace(pid_file + ".part", pid_file)
    while True:
        time.sleep(60)


def main(behaviour: str, extra: list[str]) -> None:
    environ = dict(os.environ)
    if behaviour in {"fork", "fork-exit", "escape"}:
        _detach(extra[0], escape=behaviour == "escape")
        while not os.path.exists(extra[0]):
            time.sleep(0.01)
        if behaviour == "fork-exit":
            sys.exit(0)
    if behaviour == "echo":
        print(said(environ), file=sys.stderr, flush=True)
    if behaviour == "echo-exit":
        secret = [v for k, v in environ.items() if any(w in k for w in SECRET_WORDS)]
        sys.exit(f"KeyError: no repository for {' '.join(secret)}")
    if behaviour == "chatter":
        print(BANNER, flush=True)
    if behaviour in {"stderr-flood", "silent-flood"}:
        threading.Thread(target=_flood, daemon=True).start()
    if behaviour == "notify-flood":
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
        while True:
            sys.stdout.write((note + "\n") * 1000)
    for line in sys.stdin:
        if behaviour in {"silent", "silent-flood"}:
            continue
        answered = answer(behaviour, json.loads(line), environ)
        if answered is not None:
            sys.stdout.write(answered + "\n")
            sys.stdout.flush()


def http_reply(
    behaviour: str, message: dict[str, Any], echoed: str = "", authorization: str | None = None
) -> tuple[int, str, bytes]:
    """(status, content type, body) a loopback MCP server of ``behaviour`` answers a POST with,
    given its ``Authorization`` header."""
    method, ident = message.get("method"), message.get("id")
    if behaviour == "needs-bearer" and authorization != f"Bearer {echoed}":
        return 401, "text/plain", b"Unauthorized"
    if ident is None:
        return 202, "application/json", b""
    bearer = f"Bearer {echoed} is not valid for this server"
    if behaviour == "echo-401":
        return 401, "text/plain", bearer.encode()
    if behaviour == "echo-500":
        return 500, "application/json", json.dumps({"detail": bearer}).encode()
    if behaviour == "echo-rpc" and method == "initialize":
        return (
            200,
            "application/json",
            _line(ident, error={"code": -32001, "message": bearer}).encode(),
        )
    if method == "tools/list" and behaviour in {"deep-line", "deep-sse"}:
        deep = "[" * DEEP_LINE
        if behaviour == "deep-sse":
            return 200, "text/event-stream", f"event: message\ndata: {deep}\n\n".encode()
        return 200, "application/json", deep.encode()
    environ = {"BEARER_TOKEN": bearer} if behaviour == "echo-tools" else {}
    line = answer("echo" if behaviour == "echo-tools" else behaviour, message, environ)
    return 200, "application/json", (line or "").encode()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
