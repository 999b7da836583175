"""What a provider declares about a model: tool support and context window, with evidence.

Unknown counts as able (DESIGN.md rule 8): a catalogue that fails, or doesn't list the
model, gives ``None`` and the probe tries natively. Catalogues are cached per base URL for
30 minutes, failures too, so a missing model is looked up once, not on every request.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote

from conchcheck.wire.keys import Secret
from conchcheck.wire.lookup import (
    Fetched,
    anthropic_headers,
    bearer,
    fetch_json,
    google_headers,
    objects_in,
)
from conchcheck.wire.providers import ApiFamily, Catalogue, Target
from conchcheck.wire.transport import Wire

TTL = 30 * 60.0
"""Seconds a catalogue (or its failure) is kept."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the catalogue says of one model; None means it doesn't say."""

    source: str
    """Where it was read: ``GET https://…/models`` and the like (keys never appear)."""
    listed: bool | None = None
    tools: bool | None = None
    context_window: int | None = None
    evidence: str = ""
    """The fields read, as they were: ``supported_parameters: [...]``."""
    error: str | None = None


class Catalogues:
    """Reads and caches catalogues through one ``Wire``; ``clock`` is injectable for tests."""

    def __init__(self, wire: Wire, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.wire = wire
        self.clock = clock
        self._cache: dict[str, tuple[float, Fetched]] = {}

    async def _get(self, key: str, fetch: Callable[[], Awaitable[Fetched]]) -> Fetched:
        cached = self._cache.get(key)
        if cached is not None and self.clock() - cached[0] < TTL:
            return cached[1]
        fetched = await fetch()
        self._cache[key] = (self.clock(), fetched)
        return fetched

    async def lookup(self, target: Target, key: Secret | None) -> ModelInfo:
        """What ``target``'s provider declares about its model."""
        kind = target.provider.catalogue
        if kind is Catalogue.OPENROUTER:
            return await self._openrouter(target, key)
        if kind is Catalogue.OLLAMA:
            return await self._ollama(target)
        if kind is Catalogue.LLAMACPP:
            return await self._llamacpp(target)
        if kind in (Catalogue.OPENAI, Catalogue.ANTHROPIC):
            return await self._listing(target, key)
        if kind is Catalogue.GEMINI:
            return await self._gemini(target, key)
        return ModelInfo(source="none", evidence="this provider has no catalogue conchcheck reads")

    async def _openrouter(self, target: Target, key: Secret | None) -> ModelInfo:
        url = f"{target.base_url}/models"
        headers = bearer(key)
        fetched = await self._get(
            url, lambda: fetch_json(self.wire, "GET", url, headers=headers, key=key)
        )
        source = f"GET {fetched.url}"
        if fetched.error is not None:
            return ModelInfo(source, error=fetched.error)
        models = objects_in(fetched.data, "data")
        entry = next((m for m in models if m.get("id") == target.model), None)
        if entry is None:
            return ModelInfo(
                source, listed=False, evidence=f"{len(models)} models listed; not this one"
            )
        params = entry.get("supported_parameters")
        tools = "tools" in params if isinstance(params, list) else None
        window = entry.get("context_length")
        return ModelInfo(
            source,
            True,
            tools,
            window if isinstance(window, int) else None,
            f"supported_parameters: {params}, context_length: {window}",
        )

    async def _ollama(self, target: Target) -> ModelInfo:
        root = target.base_url.removesuffix("/v1")
        url = f"{root}/api/show"
        fetched = await self._get(
            f"{url}#{target.model}",
            lambda: fetch_json(self.wire, "POST", url, body={"model": target.model}),
        )
        source = f"POST {fetched.url} {{model: {target.model}}}"
        if fetched.error is not None:
            listed = False if fetched.status == 404 else None
            return ModelInfo(source, listed=listed, error=fetched.error)
        data = fetched.data if isinstance(fetched.data, dict) else {}
        capabilities = data.get("capabilities")
        tools = "tools" in capabilities if isinstance(capabilities, list) else None
        info = data.get("model_info")
        info = info if isinstance(info, dict) else {}
        window = next(
            (v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)),
            None,
        )
        return ModelInfo(
            source, True, tools, window, f"capabilities: {capabilities}, context_length: {window}"
        )

    async def _llamacpp(self, target: Target) -> ModelInfo:
        url = f"{target.base_url.removesuffix('/v1')}/props"
        fetched = await self._get(url, lambda: fetch_json(self.wire, "GET", url))
        source = f"GET {fetched.url}"
        if fetched.error is not None:
            return ModelInfo(source, error=fetched.error)
        data = fetched.data if isinstance(fetched.data, dict) else {}
        caps = data.get("chat_template_caps")
        tools = caps.get("supports_tools") if isinstance(caps, dict) else None
        settings = data.get("default_generation_settings")
        window = (settings or {}).get("n_ctx") if isinstance(settings, dict) else None
        window = window if isinstance(window, int) else data.get("n_ctx")
        return ModelInfo(
            source,
            None,
            tools if isinstance(tools, bool) else None,
            window if isinstance(window, int) else None,
            f"chat_template_caps: {caps}, n_ctx: {window}",
        )

    async def _listing(self, target: Target, key: Secret | None) -> ModelInfo:
        url = f"{target.base_url}/models"
        headers = (
            anthropic_headers(key) if target.provider.api is ApiFamily.ANTHROPIC else bearer(key)
        )
        fetched = await self._get(
            url, lambda: fetch_json(self.wire, "GET", url, headers=headers, key=key)
        )
        source = f"GET {fetched.url}"
        if fetched.error is not None:
            return ModelInfo(source, error=fetched.error)
        ids = [m.get("id") for m in objects_in(fetched.data, "data")]
        # These listings say a model exists, nothing about its tools.
        return ModelInfo(source, target.model in ids, evidence=f"{len(ids)} models listed")

    async def _gemini(self, target: Target, key: Secret | None) -> ModelInfo:
        root = target.base_url.removesuffix("/openai")
        # A name pasted from the models list keeps its "models/" (the gemini adapter drops it too).
        model = target.model.removeprefix("models/")
        url = f"{root}/models/{quote(model, safe='')}"
        headers = google_headers(key)
        fetched = await self._get(
            url, lambda: fetch_json(self.wire, "GET", url, headers=headers, key=key)
        )
        source = f"GET {fetched.url}"
        if fetched.error is not None:
            return ModelInfo(
                source, listed=False if fetched.status == 404 else None, error=fetched.error
            )
        data = fetched.data if isinstance(fetched.data, dict) else {}
        window = data.get("inputTokenLimit")
        methods = data.get("supportedGenerationMethods")
        return ModelInfo(
            source,
            True,
            None,
            window if isinstance(window, int) else None,
            f"inputTokenLimit: {window}, supportedGenerationMethods: {methods}",
        )
