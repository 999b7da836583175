"""Test-wide guards: no API keys from the environment and no network beyond loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator

import pytest

from conchcheck.redaction import forget_held
from tests.emulators.one_server import ThreeApis, probe_each_api
from tests.emulators.server import EmulatorServer, Handler

_real_connect = socket.socket.connect


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="Rewrite tests/golden from the renders."
    )


def _loopback_only(self: socket.socket, address: object) -> None:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise AssertionError(f"a test tried to reach {host}; tests stay on loopback")
    _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _closed_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(autouse=True)
def _cache_in_tmp(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # No test may touch the user's real capability file.
    monkeypatch.setenv(
        "CONCHCHECK_CACHE", str(tmp_path_factory.mktemp("cache") / "capabilities.yaml")
    )


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_PROXY", "_proxy")) or name in {"NO_COLOR", "FORCE_COLOR"}:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_keys_held_from_other_tests() -> Iterator[None]:
    # A probe holds the keys it reads for the rest of the process, and masks any 12
    # characters of them: another test's key must not mask this test's text (a digest of
    # "0123456789abcdef…" shares characters with an emulated key).
    forget_held()
    yield
    forget_held()


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], EmulatorServer]]:
    """Start emulators for one test; every one is shut down after it, pass or fail."""
    servers: list[EmulatorServer] = []

    def start(handler: Handler) -> EmulatorServer:
        server = EmulatorServer(handler)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def three_apis(tmp_path_factory: pytest.TempPathFactory) -> ThreeApis:
    """One server's chat, Responses and Messages APIs, each probed once for the session
    (the guards above held throughout); the server is down afterwards."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _loopback_only)
        root = tmp_path_factory.mktemp("three-apis")
        patch.setenv("CONCHCHECK_CACHE", str(root / "unused.yaml"))
        for name in list(os.environ):
            if name.endswith(("_API_KEY", "_PROXY", "_proxy")):
                patch.delenv(name)
        return probe_each_api(root)
