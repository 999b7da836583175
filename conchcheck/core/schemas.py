"""Reading a JSON Schema node: local references, nullable pairs, and the types it allows."""

from __future__ import annotations

import re
from collections.abc import Mapping
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
