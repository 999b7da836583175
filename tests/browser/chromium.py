"""Debian's Chromium, headless, driven over the DevTools protocol with a websocket client of
our own (stdlib only): open a page, run script in it, collect console errors, take screenshots.

``browser()`` finds ``chromium`` (or $CONCHCHECK_CHROMIUM); without it a test skips, unless
$CONCHCHECK_REQUIRE_BROWSER is set (CI sets it), when it fails saying how to install it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-port=0", "--window-size=1400,900",
)  # fmt: skip
ERRORS = ("Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded")


def executable() -> str:
    """The Chromium to drive; skips (or fails when it is required) when there is none."""
    found = os.environ.get("CONCHCHECK_CHROMIUM") or shutil.which("chromium")
    if found:
        return found
    why = "no chromium on PATH: scripts/setup installs it (apt-get install chromium)"
    if os.environ.get("CONCHCHECK_REQUIRE_BROWSER"):
        pytest.fail(f"CONCHCHECK_REQUIRE_BROWSER is set but there is {why}", pytrace=False)
    pytest.skip(why)


class Page:
    """One page over its DevTools websocket: ``call`` a method, ``evaluate`` an expression."""

    def __init__(self, url: str) -> None:
        host, _, rest = url.removeprefix("ws://").partition("/")
        name, _, port = host.partition(":")
        self._sock = socket.create_connection((name, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self._sock.sendall(
            f"GET /{rest} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self._sock.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        self._send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self._receive())
            if message.get("id") == self._next:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for message in self.events:
                if message.get("method") == event:
                    self.events.remove(message)
                    return message
            self.events.append(json.loads(self._receive()))
        raise AssertionError(f"no {event} within {timeout} s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)  # fmt: skip
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[dict[str, Any]]:
        """Exceptions, console errors and warnings, and browser log errors seen so far."""
        self.call("Runtime.evaluate", expression="1")  # drain what came before
        bad = []
        for message in self.events:
            method, params = message.get("method"), message.get("params", {})
            level = params.get("type") if method == "Runtime.consoleAPICalled" else None
            if method == "Log.entryAdded":
                level = params.get("entry", {}).get("level")
            if method == "Runtime.exceptionThrown" or level in ("error", "warning", "assert"):
                bad.append(params)
        return bad

    def fonts(self, selector: str) -> list[tuple[str, list[str]]]:
        """Each element ``selector`` matches: its text, and the PostScript names of the fonts
        Chromium drew it with (a character no font has is drawn as an empty box in the first
        font, which is then named: compare its character map)."""
        self.call("DOM.enable")
        self.call("CSS.enable")
        root = self.call("DOM.getDocument", depth=0)["root"]["nodeId"]
        nodes = self.call("DOM.querySelectorAll", nodeId=root, selector=selector)["nodeIds"]
        texts = self.evaluate(
            f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => e.textContent)"
        )
        assert len(texts) == len(nodes), (texts, nodes)
        found = []
        for node, text in zip(nodes, texts, strict=True):
            fonts = self.call("CSS.getPlatformFontsForNode", nodeId=node)["fonts"]
            found.append((text, [font["postScriptName"] for font in fonts]))
        return found

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def open(self, url: str) -> float:
        """Navigate and wait for the load event; the seconds it took."""
        started = time.monotonic()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        return time.monotonic() - started

    def close(self) -> None:
        self._sock.close()

    def _send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        size = len(data)
        if size < 126:
            head = struct.pack("!BB", 0x81, 0x80 | size)
        elif size < 1 << 16:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, size)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self._sock.sendall(head + mask + masked)

    def _receive(self) -> str:
        parts = []
        while True:
            first, second = self._exact(2)
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", self._exact(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", self._exact(8))
            payload = self._exact(size)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise AssertionError("the browser closed the connection")
            if opcode in (0x9, 0xA):
                continue  # ping, pong: Chromium sends none unasked
            parts.append(payload)
            if first & 0x80:
                return b"".join(parts).decode()

    def _exact(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self._sock.recv(min(size - len(data), 1 << 20))
            if not chunk:
                raise AssertionError("the browser's connection ended")
            data += chunk
        return bytes(data)


@contextmanager
def browser() -> Iterator[Page]:
    """A fresh headless Chromium with one page, console and log events on; stopped after."""
    chromium = executable()
    # Chromium's helper processes can still be writing the profile when the browser exits
    # (seen once in CI: "Directory not empty: 'Default'"): a leftover file is not a failure.
    with tempfile.TemporaryDirectory(
        prefix="conchcheck-chromium-", ignore_cleanup_errors=True
    ) as profile:
        process = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            end = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text().strip():
                if process.poll() is not None or time.monotonic() > end:
                    raise AssertionError(f"{chromium} did not start (exit {process.poll()})")
                time.sleep(0.05)
            port = port_file.read_text().split()[0]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as reply:
                pages = [t for t in json.load(reply) if t["type"] == "page"]
            page = Page(pages[0]["webSocketDebuggerUrl"])
            try:
                for domain in ("Page", "Runtime", "Log"):
                    page.call(f"{domain}.enable")
                yield page
            finally:
                page.close()
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
