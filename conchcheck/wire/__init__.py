"""The wire layer: one adapter per chat API family, the provider registry, catalogues, HTTP.

The adapters (and httpx with them) load on first use: the registry alone is light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conchcheck.wire.adapter import ChatAdapter
    from conchcheck.wire.providers import ApiFamily, Target

__all__ = ["ADAPTERS", "adapter_for"]


def adapters() -> dict[ApiFamily, type[ChatAdapter]]:
    """The adapter class for each API family."""
    from conchcheck.wire.anthropic import AnthropicAdapter
    from conchcheck.wire.gemini import GeminiAdapter
    from conchcheck.wire.ollama import OllamaAdapter
    from conchcheck.wire.openai import OpenAIAdapter
    from conchcheck.wire.responses import ResponsesAdapter

    found = (OpenAIAdapter, AnthropicAdapter, OllamaAdapter, GeminiAdapter, ResponsesAdapter)
    return {adapter.api: adapter for adapter in found}


def adapter_for(target: Target) -> ChatAdapter:
    """A new adapter for ``target``'s API family."""
    return adapters()[target.provider.api]()


def __getattr__(name: str) -> object:
    if name == "ADAPTERS":
        return adapters()
    raise AttributeError(f"module 'conchcheck.wire' has no attribute {name!r}")
