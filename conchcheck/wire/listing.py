"""Every model a provider's catalogue lists, for a probe of the whole catalogue
(``conchcheck probe PROVIDER:*``): the ids as each API family lists them, page by page.

Bounded: at most ``MAX_PAGES`` pages and ``MAX_MODELS`` ids are read, and a page that lists
nothing new ends the walk (a server that hands back its own cursor can't loop it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from conchcheck.core.jsontypes import JsonValue
from conchcheck.wire.keys import Secret
from conchcheck.wire.lookup import (
    anthropic_headers,
    bearer,
    fetch_json,
    google_headers,
    objects_in,
)
from conchcheck.wire.providers import ApiFamily, Target
from conchcheck.wire.transport import Wire

MAX_PAGES = 20
"""Pages of one catalogue read at most (Anthropic's and Gemini's lists are paged)."""
MAX_MODELS = 10_000
"""Model ids read at most; a catalogue longer than this is cut, and says so."""
MAX_UPSTREAMS = 100
"""Upstream providers of one model read at most (OpenRouter lists a few dozen at most)."""


Page = tuple[list[str], str | None]
"""The ids a page listed, and the cursor of the next page (None: the last)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """What a catalogue listed: its model ids in its order, or why none could be read."""

    source: str
    """The first request, as ``GET https://…/models`` (keys never appear)."""
    models: tuple[str, ...] = ()
    error: str | None = None
    """A sentence, when the catalogue couldn't be read."""
    cut: bool = False
    """More models were listed than ``MAX_MODELS``, or pages than ``MAX_PAGES``."""


async def list_models(wire: Wire, target: Target, key: Secret | None) -> Listing:
    """Every model ``target``'s provider lists at its base URL (the model is ignored)."""
    base = target.base_url
    match target.provider.api:
        case ApiFamily.OLLAMA:
            # Ollama's own API lists its local models at /api/tags (``models[].name``).
            return await _walk(wire, f"{base}/api/tags", {}, key, _ollama)
        case ApiFamily.ANTHROPIC:
            # Anthropic pages with ``has_more`` and ``last_id`` -> ``after_id``.
            url = f"{base}/models?limit=1000"
            return await _walk(wire, url, anthropic_headers(key), key, _anthropic, "after_id")
        case ApiFamily.GEMINI:
            # Gemini pages with ``nextPageToken`` -> ``pageToken``; only models that take
            # generateContent can be probed.
            url = f"{base}/models?pageSize=1000"
            return await _walk(wire, url, google_headers(key), key, _gemini, "pageToken")
        case ApiFamily.OPENAI | ApiFamily.RESPONSES:
            # OpenAI's /models shape (``data[].id``), which every compatible server, OpenRouter,
            # llama-server and Ollama's /v1 answer; Gemini's compatible endpoint too, its ids
            # written ``models/…``.
            return await _walk(wire, f"{base}/models", bearer(key), key, _openai)


async def list_upstreams(wire: Wire, target: Target, key: Secret | None) -> Listing:
    """The upstream providers OpenRouter routes ``target``'s model to, by the slug its
    ``provider.only`` takes: each endpoint's ``tag`` (``deepinfra/fp8``), else its
    ``provider_name`` (``GET /models/{author}/{slug}/endpoints``, openrouter.ai/docs)."""
    url = f"{target.base_url}/models/{quote(target.model, safe='/')}/endpoints"
    fetched = await fetch_json(wire, "GET", url, headers=bearer(key), key=key)
    source = f"GET {fetched.url}"
    if fetched.error is not None:
        return Listing(source, error=fetched.error)
    data = fetched.data.get("data") if isinstance(fetched.data, dict) else None
    slugs: list[str] = []
    for endpoint in objects_in(data, "endpoints"):
        slug = endpoint.get("tag") or endpoint.get("provider_name")
        if isinstance(slug, str) and slug and slug not in slugs:
            slugs.append(slug)
    cut = len(slugs) > MAX_UPSTREAMS
    return Listing(source, tuple(slugs[:MAX_UPSTREAMS]), cut=cut)


async def _walk(
    wire: Wire,
    url: str,
    headers: dict[str, str],
    key: Secret | None,
    read: Callable[[JsonValue], Page],
    cursor_name: str = "",
) -> Listing:
    models: list[str] = []
    seen: set[str] = set()
    source = ""
    page_url: str | None = url
    pages = 0
    while page_url is not None:
        fetched = await fetch_json(wire, "GET", page_url, headers=headers, key=key)
        source = source or f"GET {fetched.url}"
        if fetched.error is not None:
            return Listing(source, error=fetched.error)
        ids, cursor = read(fetched.data)
        fresh = [m for m in ids if m not in seen]
        seen.update(fresh)
        models += fresh
        pages += 1
        if len(models) >= MAX_MODELS or (cursor is not None and pages >= MAX_PAGES):
            return Listing(source, tuple(models[:MAX_MODELS]), cut=True)
        if not fresh:
            break
        page_url = None if cursor is None else f"{url}&{cursor_name}={quote(cursor, safe='')}"
    return Listing(source, tuple(models))


def _openai(data: JsonValue) -> Page:
    ids = [str(m["id"]).removeprefix("models/") for m in objects_in(data, "data") if "id" in m]
    return ids, None


def _ollama(data: JsonValue) -> Page:
    return [str(m["name"]) for m in objects_in(data, "models") if "name" in m], None


def _anthropic(data: JsonValue) -> Page:
    ids = [str(m["id"]) for m in objects_in(data, "data") if "id" in m]
    more = isinstance(data, dict) and data.get("has_more") is True
    last = data.get("last_id") if isinstance(data, dict) else None
    return ids, str(last) if more and isinstance(last, str) else None


def _gemini(data: JsonValue) -> Page:
    ids = [
        str(m["name"]).removeprefix("models/")
        for m in objects_in(data, "models")
        if "name" in m and "generateContent" in _strings(m.get("supportedGenerationMethods"))
    ]
    token = data.get("nextPageToken") if isinstance(data, dict) else None
    return ids, token if isinstance(token, str) and token else None


def _strings(value: JsonValue) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
