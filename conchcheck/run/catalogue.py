"""A probe of a provider's whole catalogue (``conchcheck probe PROVIDER:*``): the models it
lists, filtered and capped, become the targets of one fleet, which shares the provider's
concurrency and rate limits and writes a results folder a model and ``index.json``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import MappingProxyType

from conchcheck.errors import InputError, UnusableError
from conchcheck.run.targets import TargetEntry, TargetsFile
from conchcheck.wire.keys import Secret, resolve_key
from conchcheck.wire.listing import MAX_MODELS, Listing, list_models
from conchcheck.wire.providers import Target, parse_target
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
    key = resolve_key(provider_target.provider, api_key_env=spec.key_variable)
    listing = asyncio.run(_list(policy, transport, provider_target, key))
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
        TargetEntry(_target(provider_target, model), api_key_env=spec.key_variable)
        for model in chosen
    )
    source = f"{spec.target} ({listing.source})"
    return TargetsFile(source, entries, MappingProxyType({})), choice


def _target(each: Target, model: str) -> Target:
    return Target(each.provider, model, each.base_url)


async def _list(
    policy: Policy, transport: Transport | None, target: Target, key: Secret | None
) -> Listing:
    async with Wire(policy=policy, transport=transport) as wire:
        return await list_models(wire, target, key)
