"""Where a schema breaks the rules OpenAI's strict mode enforces.

With ``strict: true`` OpenAI refuses a function whose schema leaves an object open or a
property optional (provider-facts S24: "'additionalProperties' is required to be supplied
and to be false"; S25: "'required' is required to be supplied and to be an array including
every key in properties"). An endpoint that takes such a schema with ``strict: true`` does
not enforce strict mode: it ignores ``strict`` (llama-server never reads it; provider-facts,
real servers measured by hand 2026-12-04).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from conchcheck.core.jsontypes import JsonValue

DEPTH_LIMIT = 64
"""Schema levels walked; a deeper schema is reported at the limit, never recursed into."""
_ONE = ("items", "additionalItems", "not", "if", "then", "else", "contains")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "definitions", "patternProperties")


def strict_breaks(schema: JsonValue) -> tuple[str, ...]:
    """Each place ``schema`` breaks a strict-mode rule, as ``path: rule``; empty when none."""
    return tuple(_breaks(schema, "#", 0))


def _breaks(node: JsonValue, path: str, depth: int) -> Iterator[str]:
    if not isinstance(node, Mapping):
        return
    if depth >= DEPTH_LIMIT:
        yield f"{path}: deeper than {DEPTH_LIMIT} levels"
        return
    properties = node.get("properties")
    if node.get("type") == "object" or isinstance(properties, Mapping):
        if node.get("additionalProperties") is not False:
            yield f"{path}: additionalProperties is not false"
        required = node.get("required")
        wanted = set(required) if isinstance(required, list) else set()
        names = list(properties) if isinstance(properties, Mapping) else []
        missing = [name for name in names if name not in wanted]
        if missing:
            yield f"{path}: not required: {', '.join(missing)}"
    for key in _ONE:
        yield from _breaks(node.get(key), f"{path}/{key}", depth + 1)
    for key in _MANY:
        items = node.get(key)
        if isinstance(items, list):
            for index, item in enumerate(items):
                yield from _breaks(item, f"{path}/{key}/{index}", depth + 1)
    for key in _NAMED:
        named = node.get(key)
        if isinstance(named, Mapping):
            for name, item in named.items():
                yield from _breaks(item, f"{path}/{key}/{name}", depth + 1)
