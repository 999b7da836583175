"""The wire layer: one adapter per chat API family, the provider registry, catalogues, HTTP."""

from __future__ import annotations

from conchcheck.wire.adapter import ChatAdapter
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.gemini import GeminiAdapter
from conchcheck.wire.ollama import OllamaAdapter
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.providers import Target

ADAPTERS: dict[str, type[ChatAdapter]] = {
    adapter.api: adapter
    for adapter in (OpenAIAdapter, AnthropicAdapter, OllamaAdapter, GeminiAdapter)
}
"""The adapter class for each API family named in the provider registry."""


def adapter_for(target: Target) -> ChatAdapter:
    """A new adapter for ``target``'s API family."""
    return ADAPTERS[target.provider.api]()


__all__ = ["ADAPTERS", "adapter_for"]
