"""The providers conchcheck knows, the chat API families they speak, and targets written
``provider:model``.

Each provider names its API family (which adapter speaks to it), its default base URL, the
environment variable its key is read from (none for local servers), the schema dialect it
needs and where its catalogue says what a model can do.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, replace
from enum import Enum
from urllib.parse import urlsplit

from conchcheck.core.dialects import Dialect
from conchcheck.errors import InputError


class ApiFamily(str, Enum):
    """A chat API family: one wire format, spoken by one adapter (``--api`` names one)."""

    OPENAI = "openai"
    """Chat completions (``/chat/completions``), and every OpenAI-compatible server."""
    RESPONSES = "responses"
    """OpenAI's Responses API (``/responses``)."""
    ANTHROPIC = "anthropic"
    """Anthropic's Messages API (``/messages``)."""
    OLLAMA = "ollama"
    """Ollama's native chat API (``/api/chat``)."""
    GEMINI = "gemini"
    """Gemini's native ``generateContent``."""

    def __str__(self) -> str:
        return self.value


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
    """One provider: how to reach it and what it needs."""

    name: str
    api: ApiFamily
    """The API family it speaks, which picks the adapter."""
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
    api: ApiFamily,
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
        _p(
            "openai",
            ApiFamily.OPENAI,
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            catalogue=Catalogue.OPENAI,
        ),
        _p(
            "openai-responses",
            ApiFamily.RESPONSES,
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            catalogue=Catalogue.OPENAI,
            note="the Responses API (/responses)",
        ),
        _p(
            "anthropic",
            ApiFamily.ANTHROPIC,
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
            Dialect.ANTHROPIC,
            Catalogue.ANTHROPIC,
        ),
        _p(
            "gemini",
            ApiFamily.GEMINI,
            "https://generativelanguage.googleapis.com/v1beta",
            "GEMINI_API_KEY",
            Dialect.GEMINI,
            Catalogue.GEMINI,
            "native generateContent",
        ),
        _p(
            "gemini-openai",
            ApiFamily.OPENAI,
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "GEMINI_API_KEY",
            Dialect.GEMINI,
            Catalogue.GEMINI,
            "OpenAI-compatible endpoint",
        ),
        _p(
            "openrouter",
            ApiFamily.OPENAI,
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            catalogue=Catalogue.OPENROUTER,
            note="google/* models get the gemini dialect",
        ),
        _p(
            "ollama",
            ApiFamily.OLLAMA,
            "http://127.0.0.1:11434",
            None,
            catalogue=Catalogue.OLLAMA,
            note="native /api/chat",
        ),
        _p(
            "ollama-openai",
            ApiFamily.OPENAI,
            "http://127.0.0.1:11434/v1",
            None,
            catalogue=Catalogue.OLLAMA,
            note="Ollama's OpenAI-compatible /v1",
        ),
        _p(
            "llamacpp",
            ApiFamily.OPENAI,
            "http://127.0.0.1:8080/v1",
            None,
            catalogue=Catalogue.LLAMACPP,
            note="llama.cpp's llama-server",
        ),
        _p("vllm", ApiFamily.OPENAI, "http://127.0.0.1:8000/v1", None),
        _p("sglang", ApiFamily.OPENAI, "http://127.0.0.1:30000/v1", None),
        _p("lmstudio", ApiFamily.OPENAI, "http://127.0.0.1:1234/v1", None),
        _p("groq", ApiFamily.OPENAI, "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        _p("together", ApiFamily.OPENAI, "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
        _p("mistral", ApiFamily.OPENAI, "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
        _p("deepseek", ApiFamily.OPENAI, "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        _p("xai", ApiFamily.OPENAI, "https://api.x.ai/v1", "XAI_API_KEY"),
    )
}


@dataclass(frozen=True, slots=True)
class Target:
    """One provider and model to probe, at a base URL."""

    provider: Provider
    model: str
    base_url: str
    route: str | None = None
    """OpenRouter only: the one upstream provider allowed to serve the model (``provider:
    {only: [route], allow_fallbacks: false}``), as ``probe --upstreams`` pins each."""

    @property
    def label(self) -> str:
        """``provider:model`` as the user wrote it, and ``@upstream`` when one is pinned."""
        pinned = f"@{self.route}" if self.route is not None else ""
        return f"{self.provider.name}:{self.model}{pinned}"

    @property
    def dialect(self) -> Dialect:
        """The schema dialect this target needs."""
        return self.provider.dialect_for(self.model)


def parse_target(text: str, *, base_url: str | None = None, api: str | None = None) -> Target:
    """Read ``provider:model``; ``base_url`` overrides the provider's or names a new server.

    ``api`` makes the target speak another API family, e.g. ``responses`` for a compatible
    server's ``/v1/responses`` (vLLM, Ollama, LM Studio, OpenRouter, gateways).

    An unknown provider with a base URL is any OpenAI-compatible server. Everything is
    checked here, before a request is sent: printable names, a URL with an http(s) scheme,
    a valid host and a port from 1 to 65535.
    """
    if not text.isprintable():
        # repr shows a control character as an escape, so the message stays one safe line.
        raise InputError(
            f"The target {text!r} holds a control character.",
            hint="Write it provider:model, in printable characters.",
        )
    name, sep, model = text.partition(":")
    if not sep or not name or not model:
        raise InputError(
            f"The target {text!r} is not written provider:model.",
            hint="For example openrouter:qwen/qwen3-8b, ollama:qwen3:4b or llamacpp:local.",
        )
    if model != model.strip():
        raise InputError(
            f"The model {model!r} starts or ends with a space.", hint="Remove the spaces."
        )
    provider = PROVIDERS.get(name)
    if provider is None:
        if base_url is None:
            known = ", ".join(PROVIDERS)
            raise InputError(
                f"Unknown provider {name!r} in {text!r}. Known providers: {known}.",
                hint="For any other OpenAI-compatible server, add --base-url.",
            )
        if not _PROVIDER_NAME.fullmatch(name):
            raise InputError(
                f"The provider name {name!r} may hold only letters, digits, '.', '_' and '-'.",
                hint="It names the server in reports and the capability file.",
            )
        provider = Provider(
            name, default_api(name), base_url, None, Dialect.PERMISSIVE, Catalogue.NONE
        )
    if api is not None and api != provider.api:
        try:
            api_family = ApiFamily(api)
        except ValueError:
            names = ", ".join(known.value for known in ApiFamily)
            raise InputError(f"Unknown API {api!r}.", hint=f"Use one of: {names}.") from None
        provider = replace(provider, api=api_family)
    return Target(provider, model, check_url(base_url or provider.base_url))


def default_api(provider: str) -> ApiFamily:
    """The API family ``provider`` speaks when no ``--api`` is given: its registry entry's,
    and ``openai`` for a server the registry doesn't know (any OpenAI-compatible one)."""
    known = PROVIDERS.get(provider)
    return known.api if known is not None else ApiFamily.OPENAI


_PROVIDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_LABEL = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def check_url(url: str) -> str:
    """``url`` without a trailing slash, or ``InputError`` saying what is wrong with it."""
    if not url.isprintable() or any(char.isspace() for char in url):
        raise InputError(
            f"The base URL {url!r} holds a space or a control character.",
            hint="Encode a space in a path as %20.",
        )
    url = url.rstrip("/")
    example = "Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1."
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # a broken [IPv6] bracket
        raise InputError(f"The base URL {url!r} is not a URL: {exc}.", hint=example) from None
    try:
        port = parts.port
    except ValueError:  # out of range, or not a number
        port = 0
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"The base URL {url!r} is not an http(s) URL.", hint=example)
    if parts.username or parts.password or parts.query or parts.fragment:
        # A key in a URL ends up in logs, reports and the capability file.
        raise InputError(
            "The base URL must not carry credentials, a query or a fragment.",
            hint="Put the key in the provider's variable, or name one with --api-key-env.",
        )
    if (port is not None and not 1 <= port <= 65535) or parts.netloc.endswith(":"):
        raise InputError(f"The base URL {url!r} has no port from 1 to 65535.", hint=example)
    if not _valid_host(parts.hostname):
        raise InputError(f"The base URL {url!r} has no valid host name.", hint=example)
    return url


def _valid_host(host: str) -> bool:
    """An IP address, or a name whose labels a resolver would look up."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    labels = ascii_host.removesuffix(".").split(".")
    # A last label of digits only is a mistyped address (1.2.3.4.5), never a name.
    return (
        len(ascii_host) <= 253
        and all(_LABEL.fullmatch(label) for label in labels)
        and not labels[-1].isdigit()
    )


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (localhost or a loopback address)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_insecure(url: str) -> bool:
    """Whether ``url`` is plain http to another machine, where a key goes only when allowed."""
    return url.startswith("http://") and not is_loopback(url)
