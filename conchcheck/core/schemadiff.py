"""What converting a schema to a dialect changed in it, as a short list a person can read.

``schema_changes(before, after)`` walks both schemas together and names each place that
differs: a keyword removed or added, a value changed, a ``$ref`` inlined. Lists of schemas
(``anyOf``, ``prefixItems``, …) are walked item by item; other lists (``type``, ``enum``,
``required``) are values. The walk is bounded by ``limit`` changes and ``MAX_DEPTH`` levels.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

MAX_DEPTH = 64
"""Deeper than this, a difference is one change of the whole node."""
SHOWN_CHARS = 80
"""A value longer than this (as compact JSON) is cut, saying how long it was."""
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})


class ChangeKind(str, Enum):
    """How one place in a schema changed."""

    REMOVED = "removed"
    ADDED = "added"
    CHANGED = "changed"
    INLINED = "inlined"
    """A ``$ref`` replaced by the schema it points at."""


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One difference: where (a ``$.properties.x`` path), what, and the values shown."""

    path: str
    kind: ChangeKind
    before: str | None = None
    """The old value as compact JSON (cut to ``SHOWN_CHARS``); None when added."""
    after: str | None = None
    """The new value as compact JSON (cut); None when removed."""

    def line(self) -> str:
        """``$.properties.url.format: removed "uri"`` and the like."""
        match self.kind:
            case ChangeKind.REMOVED:
                return f"{self.path}: removed {self.before}"
            case ChangeKind.ADDED:
                return f"{self.path}: added {self.after}"
            case ChangeKind.CHANGED:
                return f"{self.path}: {self.before} → {self.after}"
            case ChangeKind.INLINED:
                return f"{self.path}: $ref {self.before} inlined"


def schema_changes(
    before: Any, after: Any, *, limit: int = 50
) -> tuple[tuple[SchemaChange, ...], int]:
    """The changes from ``before`` to ``after`` (at most ``limit``) and how many there are."""
    shown: list[SchemaChange] = []
    count = 0
    for change in _walk(before, after, "$", 0):
        count += 1
        if len(shown) < limit:
            shown.append(change)
    return tuple(shown), count


def _walk(before: Any, after: Any, path: str, depth: int) -> Iterator[SchemaChange]:
    if before == after:
        return
    if depth >= MAX_DEPTH or not (_both(before, after, Mapping) or _both(before, after, list)):
        yield SchemaChange(path, ChangeKind.CHANGED, _shown(before), _shown(after))
        return
    if isinstance(before, list):
        if len(before) != len(after):
            yield SchemaChange(path, ChangeKind.CHANGED, _shown(before), _shown(after))
            return
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _walk(old, new, f"{path}[{index}]", depth + 1)
        return
    ref = before.get("$ref")
    if isinstance(ref, str) and "$ref" not in after:
        yield SchemaChange(path, ChangeKind.INLINED, _shown(ref))
        return
    for key, old in before.items():
        where = f"{path}.{_key(key)}"
        if key not in after:
            yield SchemaChange(where, ChangeKind.REMOVED, _shown(old))
        elif key in _SCHEMA_LISTS or isinstance(old, Mapping):
            yield from _walk(old, after[key], where, depth + 1)
        elif old != after[key]:
            yield SchemaChange(where, ChangeKind.CHANGED, _shown(old), _shown(after[key]))
    for key, new in after.items():
        if key not in before:
            yield SchemaChange(f"{path}.{_key(key)}", ChangeKind.ADDED, after=_shown(new))


def _both(a: Any, b: Any, kind: type) -> bool:
    return isinstance(a, kind) and isinstance(b, kind)


def _key(key: object) -> str:
    text = str(key)
    return text if text.isidentifier() or text.startswith("$") else json.dumps(text)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[: SHOWN_CHARS - 1]}… ({len(text)} characters)"
