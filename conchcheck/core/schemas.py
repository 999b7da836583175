"""Reading a JSON Schema node: local references, nullable pairs, the types it allows, and the
plain values inside it (text, lists of text, numbers, deep copies)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

MAX_REF_HOPS = 32
"""Chained ``$ref`` hops followed before a node counts as unresolvable."""

_INDEX = re.compile(r"0|[1-9][0-9]*")


def resolve_ref(root: Mapping[str, Any], ref: str) -> Any:
    """The node a local JSON pointer (``#/$defs/a``) names in ``root``, or None.

    Remote references and ``$anchor`` names are not followed (treated as dangling): the
    core does no I/O.
    """
    pointer = unquote(ref[1:])
    if not ref.startswith("#") or (pointer and not pointer.startswith("/")):
        return None
    node: Any = root
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, (list, tuple)) and _INDEX.fullmatch(token) and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def follow_refs(root: Mapping[str, Any], node: Any) -> Mapping[str, Any] | None:
    """``node`` with its chain of ``$ref`` followed; ``{}`` for ``true``; None if unresolvable."""
    for _ in range(MAX_REF_HOPS):
        if not isinstance(node, Mapping):
            return {} if node is True else None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        node = resolve_ref(root, ref)
    return None


def is_null(node: Any) -> bool:
    """Whether ``node`` is the ``{"type": "null"}`` branch of a nullable pair."""
    return isinstance(node, Mapping) and node.get("type") == "null"


def nullable_branch(node: Mapping[str, Any] | None) -> tuple[Mapping[str, Any] | None, bool]:
    """The node to read a value against, and whether null is allowed.

    ``anyOf``/``oneOf`` of one branch and null gives that branch; any other combinator gives
    None, since no single node says what the value should be.
    """
    if node is None:
        return None, False
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            others = [b for b in branches if not is_null(b)]
            if len(others) == 1 and len(branches) == 2 and isinstance(others[0], Mapping):
                return others[0], True
            return None, False
    if any(key in node for key in ("allOf", "not", "if")):
        return None, False
    kind = node.get("type")
    return node, kind == "null" or (isinstance(kind, list) and "null" in kind)


def types_of(node: Mapping[str, Any]) -> list[str]:
    """The non-null types a node allows, inferred from its keywords when it names none."""
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str) and k != "null"]
    if "properties" in node:
        return ["object"]
    if "items" in node:
        return ["array"]
    return []


# -- plain values inside a schema: text, lists of text, numbers, copies ---------------------

_LIST = (list, tuple)  # JSON arrays; tuples too, for schemas built in Python


def json_type(value: Any) -> str:
    """The JSON type of a plain value (``true`` is boolean, not integer)."""
    kinds: tuple[tuple[Any, str], ...] = ((bool, "boolean"), (int, "integer"), (float, "number"))
    kinds += ((Mapping, "object"), (_LIST, "array"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "string")


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number (a boolean is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def text_of(value: Any) -> str | None:
    """``value`` when it is text, else None."""
    return value if isinstance(value, str) else None


def strings_of(value: Any) -> list[str]:
    """The text items of a list, or nothing when ``value`` is no list."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, _LIST) else []


def unique(values: Iterable[Any]) -> list[Any]:
    """``values`` without repeats, first seen first."""
    return list(dict.fromkeys(values))


def json_text(value: Any) -> str:
    """``value`` as compact JSON text, for words in a description."""
    return json.dumps(clone(value), ensure_ascii=False, default=str)


def clone(value: Any) -> Any:
    """A deep copy as plain dicts and lists (works on frozen mappings and tuples too)."""
    if isinstance(value, Mapping):
        return {key: clone(sub) for key, sub in value.items()}
    return [clone(sub) for sub in value] if isinstance(value, _LIST) else value
