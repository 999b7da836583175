"""Targets from what a provider lists, probed as one fleet that shares the provider's
concurrency and rate limits, a results folder each and ``index.json``: every model of its
catalogue (``conchcheck probe PROVIDER:*``), or every upstream provider OpenRouter routes one
model to (``conchcheck probe openrouter:MODEL --upstreams``), each pinned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from types import MappingProxyType

from conchcheck.errors import InputError, UnusableError
from conchcheck.run.targets import TargetEntry, TargetsFile
from conchcheck.wire.keys import Secret, resolve_key
from conchcheck.wire.listing import MAX_MODELS, Listing, list_models, list_upstreams
from conchcheck.wire.providers import ApiFamily, Catalogue, Target, parse_target
from conchcheck.wire.transport import Policy, Transport, Wire

EVERY = "*"
"""The model that names the whole catalogue: ``openrouter:*``."""
DEFAULT_MAX_MODELS = 20
"""Models probed when --max-models is not given: a catalogue of hundreds is a long run."""
MAX_MAX_MODELS = 1000


@dataclass(frozen=True, slots=True)
class CatalogueSpec:
    """Which provider's catalogue to probe, and which of its models."""

    target: str
    """``provider:*``."""
    base_url: str | None = None
    api_family: str | None = None
    key_variable: str | None = None
    filter: str | None = None
    """Only models whose id holds this text, ignoring case."""
    max_models: int = DEFAULT_MAX_MODELS


@dataclass(frozen=True, slots=True)
class CatalogueChoice:
    """What the catalogue listed, and the models chosen from it, in its order."""

    listing: Listing
    matched: int
    """Models that passed the filter (all listed without one)."""
    chosen: tuple[str, ...]

    def said(self, spec: CatalogueSpec) -> str:
        """One sentence: how many were listed, matched and chosen, and where from."""
        listed = len(self.listing.models)
        more = f" (the first {MAX_MODELS}; it lists more)" if self.listing.cut else ""
        text = f"{spec.target}: {self.listing.source} listed {listed} models{more}"
        if spec.filter:
            text += f", {self.matched} matching {spec.filter!r}"
        left = self.matched - len(self.chosen)
        text += f"; probing {len(self.chosen)}"
        return text + (f", {left} left out by --max-models {spec.max_models}." if left else ".")


def is_catalogue(target: str) -> bool:
    """Whether ``target`` names a provider's whole catalogue (``provider:*``)."""
    return target.endswith(f":{EVERY}")


def catalogue_targets(
    spec: CatalogueSpec, policy: Policy, transport: Transport | None = None
) -> tuple[TargetsFile, CatalogueChoice]:
    """The catalogue's models as a fleet's targets. ``UnusableError`` (exit 3) when it
    can't be read; ``CredentialsError`` when the key is unset; ``InputError`` for a bad
    ``max_models`` or when no model is left to probe."""
    if not 1 <= spec.max_models <= MAX_MAX_MODELS:
        raise InputError(f"--max-models: {spec.max_models} is not within 1-{MAX_MAX_MODELS}.")
    provider_target = parse_target(spec.target, base_url=spec.base_url, api=spec.api_family)
    listing = _listed(list_models, provider_target, spec.key_variable, policy, transport)
    if listing.error is not None:
        raise UnusableError(
            f"{spec.target}: the catalogue can't be read ({listing.source}): {listing.error}",
            hint="Check the base URL and the key; a server without a model list can still"
            " be probed model by model.",
        )
    wanted = (spec.filter or "").casefold()
    matched = [m for m in listing.models if wanted in m.casefold()]
    chosen = tuple(matched[: spec.max_models])
    choice = CatalogueChoice(listing, len(matched), chosen)
    if not chosen:
        raise InputError(f"{choice.said(spec).rstrip('.')}: nothing to probe.")
    entries = tuple(
        TargetEntry(replace(provider_target, model=model), api_key_env=spec.key_variable)
        for model in chosen
    )
    source = f"{spec.target} ({listing.source})"
    return TargetsFile(source, entries, MappingProxyType({})), choice


def upstream_targets(
    target: str,
    policy: Policy,
    *,
    base_url: str | None = None,
    key_variable: str | None = None,
    transport: Transport | None = None,
) -> tuple[TargetsFile, Listing]:
    """``target`` (an OpenRouter model) once per upstream provider that serves it, each
    pinned. ``InputError`` for a target that isn't OpenRouter's chat API or lists no
    upstream; ``UnusableError`` when its endpoints can't be read."""
    model = parse_target(target, base_url=base_url)
    provider = model.provider
    if provider.catalogue is not Catalogue.OPENROUTER or provider.api is not ApiFamily.OPENAI:
        raise InputError(
            f"--upstreams: {target} is not an OpenRouter model; only OpenRouter routes one"
            " model to many providers.",
            hint="For example: conchcheck probe openrouter:qwen/qwen3-8b --upstreams.",
        )
    listing = _listed(list_upstreams, model, key_variable, policy, transport)
    if listing.error is not None:
        raise UnusableError(
            f"{target}: its upstream providers can't be read ({listing.source}): {listing.error}",
            hint="Check the model's id; OpenRouter answers 404 for one it doesn't serve.",
        )
    if not listing.models:
        raise InputError(f"{target}: {listing.source} lists no upstream provider.")
    entries = tuple(
        TargetEntry(replace(model, route=route), api_key_env=key_variable)
        for route in listing.models
    )
    source = f"{target} --upstreams ({listing.source})"
    return TargetsFile(source, entries, MappingProxyType({})), listing


Lister = Callable[[Wire, Target, Secret | None], Awaitable[Listing]]


def _listed(
    lister: Lister,
    target: Target,
    key_variable: str | None,
    policy: Policy,
    transport: Transport | None,
) -> Listing:
    """What ``lister`` reads for ``target``, with its provider's key (read first: an unset
    one is ``CredentialsError`` before anything is sent)."""
    key = resolve_key(target.provider, api_key_env=key_variable)

    async def read() -> Listing:
        async with Wire(policy=policy, transport=transport) as wire:
            return await lister(wire, target, key)

    return asyncio.run(read())
