"""The providers conchcheck knows, and targets written ``provider:model``.

Each provider names its chat API family (which adapter speaks to it), its default base URL,
the environment variable its key is read from (none for local servers), the schema dialect
its family needs and where its catalogue says what a model can do.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit

from conchcheck.core.dialects import Dialect
from conchcheck.errors import InputError


class Catalogue(str, Enum):
    """Where a provider declares what a model can do."""

    OPENROUTER = "openrouter"  # /api/v1/models: supported_parameters, context_length
    OLLAMA = "ollama"  # /api/show: capabilities, context length
    LLAMACPP = "llamacpp"  # /props: chat_template_caps, n_ctx
    OPENAI = "openai"  # /v1/models: the model exists (nothing about tools)
    ANTHROPIC = "anthropic"  # /v1/models: the model exists
    GEMINI = "gemini"  # /v1beta/models/{model}: inputTokenLimit
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Provider:
    """One provider: how to reach it and what its family needs."""

    name: str
    api: str
    """The adapter's API family: ``openai``, ``anthropic``, ``ollama`` or ``gemini``."""
    base_url: str
    key_env: str | None
    """The variable the key is read from; None for servers that need none."""
    dialect: Dialect
    catalogue: Catalogue
    note: str = ""

    def dialect_for(self, model: str) -> Dialect:
        """The schema dialect for ``model`` here.

        OpenRouter routes ``google/*`` models to Google, which refuses schema keywords
        outside its OpenAPI subset (provider-facts S01–S16), so those get ``gemini``.
        """
        if self.name == "openrouter" and model.startswith("google/"):
            return Dialect.GEMINI
        return self.dialect


def _p(
    name: str,
    api: str,
    url: str,
    key: str | None,
    dialect: Dialect = Dialect.PERMISSIVE,
    catalogue: Catalogue = Catalogue.NONE,
    note: str = "",
) -> Provider:
    return Provider(name, api, url, key, dialect, catalogue, note)


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        _p("openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY",
           catalogue=Catalogue.OPENAI),
        _p("anthropic", "anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY",
           Dialect.ANTHROPIC, Catalogue.ANTHROPIC),
        _p("gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY",
           Dialect.GEMINI, Catalogue.GEMINI, "native generateContent"),
        _p("gemini-openai", "openai", "https://generativelanguage.googleapis.com/v1beta/openai",
           "GEMINI_API_KEY", Dialect.GEMINI, Catalogue.GEMINI, "OpenAI-compatible endpoint"),
        _p("openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
           catalogue=Catalogue.OPENROUTER, note="google/* models get the gemini dialect"),
        _p("ollama", "ollama", "http://127.0.0.1:11434", None, catalogue=Catalogue.OLLAMA,
           note="native /api/chat"),
        _p("ollama-openai", "openai", "http://127.0.0.1:11434/v1", None,
           catalogue=Catalogue.OLLAMA, note="Ollama's OpenAI-compatible /v1"),
        _p("llamacpp", "openai", "http://127.0.0.1:8080/v1", None, catalogue=Catalogue.LLAMACPP,
           note="llama.cpp's llama-server"),
        _p("vllm", "openai", "http://127.0.0.1:8000/v1", None),
        _p("sglang", "openai", "http://127.0.0.1:30000/v1", None),
        _p("lmstudio", "openai", "http://127.0.0.1:1234/v1", None),
        _p("groq", "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        _p("together", "openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        _p("mistral", "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
        _p("deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        _p("xai", "openai", "https://api.x.ai/v1", "XAI_API_KEY"),
    )
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Target:
    """One provider and model to probe, at a base URL."""

    provider: Provider
    model: str
    base_url: str

    @property
    def label(self) -> str:
        """``provider:model`` as the user wrote it."""
        return f"{self.provider.name}:{self.model}"

    @property
    def dialect(self) -> Dialect:
        """The schema dialect this target's family needs."""
        return self.provider.dialect_for(self.model)


def parse_target(text: str, *, base_url: str | None = None) -> Target:
    """Read ``provider:model``; ``base_url`` overrides the provider's or names a new server.

    An unknown provider with a base URL is any OpenAI-compatible server.
    """
    name, sep, model = text.partition(":")
    if not sep or not name or not model:
        raise InputError(
            f"The target {text!r} is not written provider:model.",
            hint="For example openrouter:qwen/qwen3-8b, ollama:qwen3:4b or llamacpp:local.",
        )
    provider = PROVIDERS.get(name)
    if provider is None:
        if base_url is None:
            known = ", ".join(PROVIDERS)
            raise InputError(
                f"Unknown provider {name!r} in {text!r}. Known providers: {known}.",
                hint="For any other OpenAI-compatible server, add --base-url.",
            )
        provider = Provider(name, "openai", base_url, None, Dialect.PERMISSIVE, Catalogue.NONE)
    url = (base_url or provider.base_url).rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"The base URL {url!r} is not an http(s) URL.")
    if parts.username or parts.password or parts.query or parts.fragment:
        # A key in a URL ends up in logs, reports and the capability file.
        raise InputError(
            "The base URL must not carry credentials, a query or a fragment.",
            hint="Put the key in the provider's variable, or name one with --api-key-env.",
        )
    return Target(provider, model, url)


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (localhost or a loopback address)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
