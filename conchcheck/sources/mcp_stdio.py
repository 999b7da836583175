"""An MCP server started from a command line, spoken to over stdio (newline-delimited JSON).

The revision is picked as the stdio binding says (docs/specification/2026-07-28/basic/
transports/stdio.mdx, "Backward Compatibility"): ``server/discover`` first, and a server that
answers it with an error that is not a 2026-07-28 one, or keeps quiet for
``DISCOVER_PATIENCE`` seconds, gets the ``initialize`` handshake.

A server starts in a session (and process group) of its own, with the small environment of
``conchcheck.sources.environment`` and the variables passed to it. It is always stopped: its
stdin closed, SIGTERM to its process group, ``STOP_GRACE`` seconds for it to exit, then
SIGKILL to whatever is left of the group, so a launcher (``uvx``, ``npx``) takes its children
with it, and a child it forked and left behind goes too, even once the server itself has
exited. A child that leaves the group (``setsid`` after a double fork, as a daemon does) is
beyond this: nothing names it any more. What the server wrote on stderr is kept (the tail)
for the message when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import IO, Any, BinaryIO

from conchcheck.core.credentials import credentials_in
from conchcheck.core.nesting import MAX_DEPTH, text_too_deep
from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.redaction import Redactor
from conchcheck.sources.environment import server_environment, speech_mask
from conchcheck.sources.mcp import (
    DEADLINE,
    DISCOVER_PATIENCE,
    HINT,
    MAX_MESSAGE_BYTES,
    Listing,
    answers,
    list_tools,
    masked,
    remaining,
)

STDERR_TAIL = 4096
"""Bytes of the server's stderr kept for an error message."""
STOP_GRACE = 2.0
"""Seconds a server has to exit after SIGTERM before its group is killed."""
MAX_WAITING = 256
"""Lines read ahead of the client: a server that floods stdout then waits to write more."""
_TOO_BIG = object()
_ENDED = object()
_QUIET = object()


def read_stdio_tools(
    command: str, *, deadline: float = DEADLINE, env: Mapping[str, str] | None = None
) -> list[Tool]:
    """The tools of the MCP server that ``command`` (a shell-like command line) starts."""
    return list(read_stdio_listing(command, deadline=deadline, env=env).tools)


def read_stdio_listing(
    command: str,
    *,
    deadline: float = DEADLINE,
    patience: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Listing:
    """The tools, revision and cache hint of the MCP server that ``command`` starts.

    ``patience``: how long its silence about ``server/discover`` is waited out before the
    handshake is tried (``DISCOVER_PATIENCE``, at most half the deadline, when None).
    ``env``: variables the server gets beyond the default environment; their values are
    masked in what it says, as every key conchcheck holds is, and so are the credentials
    written in ``command`` (``conchcheck.core.credentials``).
    """
    passed = dict(env or {})
    # A library caller need not have held a --token written on the command line.
    mask = speech_mask(passed, credentials_in(f"mcp:stdio:{command}"))
    return masked(lambda: _listing(command, deadline, patience, passed, mask), mask)


def _listing(
    command: str,
    deadline: float,
    patience: float | None,
    passed: Mapping[str, str],
    mask: Redactor,
) -> Listing:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"The MCP command line `{command}` cannot be split: {exc}.") from None
    if not argv:
        raise InputError("The MCP source has no command.", hint="Write mcp:stdio:<command line>.")
    channel = StdioChannel(argv, server_environment(passed), mask)
    if patience is None:
        # Silence on the probe waits at most half the deadline, so the handshake has the rest.
        patience = min(DISCOVER_PATIENCE, deadline / 2)
    try:
        return list_tools(channel, time.monotonic() + deadline, patience=patience)
    finally:
        channel.close()


class StdioChannel:
    """A started server process; ``close`` stops it whatever happened."""

    def __init__(self, argv: list[str], env: Mapping[str, str], mask: Redactor) -> None:
        self.name = f"`{shlex.join(argv)}`"
        self.mask = mask
        try:
            # A session of its own: stopping the group stops what a launcher started.
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                start_new_session=True,
            )
        except OSError as exc:
            raise InputError(
                f"The MCP server {self.name} could not be started: {exc.strerror or exc}.",
                hint="Check the command and that it is installed.",
            ) from None
        self.lines: queue.Queue[Any] = queue.Queue(MAX_WAITING)
        self.stderr = bytearray()
        self._readers = [
            threading.Thread(target=self._read_out, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._read_err, args=(self.process.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_out(self, stream: IO[bytes]) -> None:
        # readline with a limit: a line past it is cut there, and the rest is never buffered.
        while line := stream.readline(MAX_MESSAGE_BYTES + 1):
            if len(line) > MAX_MESSAGE_BYTES:
                self.lines.put(_TOO_BIG)
                return
            if line.strip():
                self.lines.put(line)
        self.lines.put(_ENDED)

    def _read_err(self, stream: BinaryIO) -> None:
        # read1 returns what is there, so a crash's last words arrive before the pipe closes.
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            self.stderr += chunk
            del self.stderr[:-STDERR_TAIL]

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        """Write one message as a line; the messages are small, so a pipe never fills."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            raise self._ended(str(message.get("method"))) from None

    def receive(self, waiting_for: str, deadline: float) -> Any:
        """The next line from stdout, parsed."""
        message = self._next(waiting_for, deadline)
        if message is _QUIET:
            raise InputError(
                f"The MCP server {self.name} did not answer {waiting_for} within the deadline;"
                " it was stopped.",
                hint=HINT,
            )
        return message

    def probe(self, request: Mapping[str, Any], deadline: float) -> Mapping[str, Any] | None:
        """Send ``request`` and return its response, or None when none came by ``deadline``:
        a server that ignores a request before ``initialize`` is of that era (stdio.mdx)."""
        method = str(request.get("method"))
        self.send(request, deadline)
        while True:
            message = self._next(method, deadline)
            if message is _QUIET:
                return None
            if answers(message, request.get("id")):
                return message

    def _next(self, waiting_for: str, deadline: float) -> Any:
        """The next message, or ``_QUIET`` when none came by ``deadline``."""
        if remaining(deadline) <= 0:
            # A server that floods notifications never leaves the queue empty: the deadline
            # holds all the same, whatever is waiting.
            return _QUIET
        try:
            line = self.lines.get(timeout=remaining(deadline))
        except queue.Empty:
            return _QUIET
        if line is _ENDED:
            raise self._ended(waiting_for)
        if line is _TOO_BIG:
            raise InputError(
                f"The MCP server {self.name} sent a message larger than"
                f" {MAX_MESSAGE_BYTES >> 20} MB on {waiting_for}, the most conchcheck reads.",
                hint=HINT,
            )
        text = line.decode("utf-8", "replace")
        deep = text_too_deep(text)
        if deep is not None:
            # Python's parser recurses: a line of 100,000 brackets is refused before it.
            raise InputError(
                f"The MCP server {self.name} sent a message nested deeper than {MAX_DEPTH}"
                f" levels on {waiting_for} (at character {deep}); it was not parsed.",
                hint=HINT,
            )
        try:
            return json.loads(text)
        except ValueError:
            shown = text.strip()[:120]
            raise InputError(
                f"The MCP server {self.name} wrote a line that is not JSON-RPC on stdout"
                f" ({shown!r}).",
                hint="An MCP stdio server writes only JSON-RPC on stdout; logs go to stderr.",
            ) from None

    def _ended(self, waiting_for: str) -> InputError:
        try:
            code = self.process.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            code = None
        self._readers[1].join(timeout=1.0)  # the last of stderr, for the message
        status = f"exited with code {code}" if code is not None else "closed its stdout"
        return InputError(
            f"The MCP server {self.name} {status} before answering {waiting_for}"
            f"{self.last_words()}.",
            hint=HINT,
        )

    def last_words(self) -> str:
        """``; its stderr ended: <last line>`` when it wrote any, else nothing."""
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"; its stderr ended: {lines[-1].strip()[:200]}" if lines else ""

    def close(self) -> None:
        """Stop the server and its process group: stdin closed (the polite MCP way), SIGTERM,
        ``STOP_GRACE`` seconds, then SIGKILL to what is left, whatever came in between."""
        process = self.process
        try:
            if process.stdin is not None:
                with contextlib.suppress(OSError):  # a server gone already: a broken pipe
                    process.stdin.close()
            if _signal_group(process.pid, signal.SIGTERM):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=STOP_GRACE)
        finally:
            # Always, and in a finally: a server that has exited may have left children in
            # its group, and a second Ctrl-C while it was waited for must not spare them.
            _signal_group(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE)
        self._finish_readers()

    def _finish_readers(self) -> None:
        """Let the readers end (a full queue is emptied so the stdout one sees its end),
        within a second: a child that left the group may hold the pipes open for ever."""
        until = time.monotonic() + 1.0
        for reader in self._readers:
            while reader.is_alive() and time.monotonic() < until:
                with contextlib.suppress(queue.Empty):
                    while True:
                        self.lines.get_nowait()
                reader.join(timeout=0.05)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None and not any(r.is_alive() for r in self._readers):
                stream.close()


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the process group ``pgid``; False when none of it is left.

    The group is the server's pid (``start_new_session``), which stays its name after the
    server has exited, for as long as anything of the group is left.
    """
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Some member is not ours to signal (it changed its user): the rest were signalled.
        return True
    return True
