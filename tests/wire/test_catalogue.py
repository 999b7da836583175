"""Catalogues read from emulated providers: what is declared, with evidence, cached."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from conchcheck.wire.catalogue import TTL, Catalogues, ModelInfo
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Wire
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler, Response

Serve = Callable[[Handler], EmulatorServer]

# Entries shaped as OpenRouter's /api/v1/models documents them (provider-facts 4.5).
OPENROUTER = [
    {
        "id": "qwen/qwen3-8b",
        "context_length": 40960,
        "supported_parameters": ["tools", "tool_choice", "max_tokens"],
    },
    {
        "id": "some/no-tools",
        "context_length": 8192,
        "supported_parameters": ["max_tokens", "temperature"],
    },
]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lookups(
    server: EmulatorServer, targets: list[str], clock: Clock | None = None, advance: float = 0
) -> list[ModelInfo]:
    async def go() -> list[ModelInfo]:
        async with Wire() as wire:
            catalogues = Catalogues(wire, clock=clock or Clock())
            infos = []
            for text in targets:
                infos.append(
                    await catalogues.lookup(
                        parse_target(
                            text,
                            base_url=server.url + "/api/v1"
                            if text.startswith("openrouter")
                            else server.url + "/v1",
                        ),
                        None,
                    )
                )
                if clock:
                    clock.now += advance
            return infos

    return asyncio.run(go())


def test_openrouter_catalogue(serve: Serve) -> None:
    server = serve(OpenAIEmulator(ignores_tools(), flavour="openrouter", catalogue=OPENROUTER))
    tools, no_tools, missing = lookups(
        server, ["openrouter:qwen/qwen3-8b", "openrouter:some/no-tools", "openrouter:not/listed"]
    )
    assert (tools.listed, tools.tools, tools.context_window) == (True, True, 40960)
    assert (
        tools.evidence
        == "supported_parameters: ['tools', 'tool_choice', 'max_tokens'], context_length: 40960"
    )
    assert tools.source == f"GET {server.url}/api/v1/models"
    assert (no_tools.tools, missing.listed, missing.tools) == (False, False, None)
    assert len(server.received) == 1  # one fetch serves every model for 30 minutes


def test_catalogue_cache_expires_and_failures_are_cached_too(serve: Serve) -> None:
    calls: list[Any] = []

    def flaky(received: Any) -> Response:
        calls.append(received)
        return Response(503, b"down")

    server = serve(flaky)
    clock = Clock()
    first, second, third = lookups(
        server, ["openrouter:a", "openrouter:b", "openrouter:c"], clock, advance=TTL / 2 + 1
    )
    assert first.error == "503: down" and first.tools is None  # unknown counts as able
    assert second == first and third.error == "503: down"
    assert len(calls) == 2  # a then c; b came from the cached failure


def test_llamacpp_props(serve: Serve) -> None:
    server = serve(
        OpenAIEmulator(ignores_tools(), flavour="llamacpp", template_tools=False, n_ctx=2048)
    )
    (info,) = lookups(server, ["llamacpp:local"])
    assert (info.tools, info.context_window, info.source) == (
        False,
        2048,
        f"GET {server.url}/props",
    )
    assert (
        info.evidence
        == "chat_template_caps: {'supports_tools': False, 'supports_tool_calls': False}, n_ctx: 2048"
    )


def test_no_catalogue(serve: Serve) -> None:
    server = serve(OpenAIEmulator(ignores_tools()))
    (info,) = lookups(server, ["vllm:m"])
    assert (info.source, info.tools, info.listed) == ("none", None, None)
