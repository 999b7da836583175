"""Fixtures for the wire tests: emulated providers on real loopback sockets."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.emulators.server import EmulatorServer, Handler


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
