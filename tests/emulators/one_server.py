"""One server speaking three chat APIs at one base URL, as llama.cpp's llama-server does:
``/v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` beside ``/props`` and
``/v1/models`` (provider-facts, "Real servers measured by hand"). Each API is an endpoint of
its own: its own results, capability entry and report row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile
from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import EmulatorServer, Received, Response

TINY = Path(__file__).parent.parent / "data" / "targets" / "tiny.yaml"
TARGET = "llamacpp:local"
APIS = ("openai", "responses", "anthropic")
"""In the order they are probed: the chat API (llamacpp's own) first."""


@dataclass
class OneServer:
    """Routes each request by its path to the emulator of that API."""

    chat: OpenAIEmulator
    responses: ResponsesEmulator
    messages: AnthropicEmulator

    def __call__(self, received: Received) -> Response:
        if received.path.endswith("/responses"):
            return self.responses(received)
        if received.path.endswith("/messages"):
            return self.messages(received)
        return self.chat(received)


def one_server() -> OneServer:
    """The three APIs over one model that calls natively; ``/v1/responses`` never reads
    ``strict``, as llama-server's doesn't."""
    model = oracle(load_matrix(str(TINY)))
    return OneServer(
        OpenAIEmulator(model, flavour="llamacpp"),
        ResponsesEmulator(model, quirks={"ignores_strict"}),
        AnthropicEmulator(model),
    )


@dataclass(frozen=True)
class ThreeApis:
    """The three APIs of one server probed one after another into one capability file; the
    server is down once they are done."""

    url: str
    """The base URL, the same for the three."""
    cache: Path
    results: dict[str, Path]
    """Each API's ``results.json``."""
    held: list[list[str]]
    """The APIs of the capability file's entries after each probe."""


def probe_each_api(root: Path) -> ThreeApis:
    """Probe ``llamacpp:local`` in each of the three APIs with ``conchcheck probe``."""
    server = EmulatorServer(one_server())
    url = server.url + "/v1"
    cache = root / "capabilities.yaml"
    results: dict[str, Path] = {}
    held: list[list[str]] = []
    try:
        for api in APIS:
            out = root / api
            done = CliRunner().invoke(
                app,
                ["probe", TARGET, "--base-url", url, "--api", api, "--matrix", str(TINY),
                 "--cache", str(cache), "--out", str(out), "--format", "json", "--quiet"],
            )  # fmt: skip
            assert done.exit_code == 0, done.output
            results[api] = out / "results.json"
            held.append([e.api.value for e in CapabilityFile(cache).entries()])
    finally:
        server.close()
    return ThreeApis(url, cache, results, held)
