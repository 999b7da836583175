"""The structure of a JSON Schema: its draft, and which values are subschemas, names or data.

The loader walks a tool's parameters with ``schema_nodes`` to find dangling references and
keys a YAML flow mapping split off; neither may look inside ``enum`` or ``default``, where
any data is allowed, nor mistake a property's name for a keyword.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import (
    Draft3Validator,
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from jsonschema.protocols import Validator

DRAFTS: dict[str, type[Validator]] = {
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
    "https://json-schema.org/draft/2019-09/schema": Draft201909Validator,
    "http://json-schema.org/draft-07/schema": Draft7Validator,
    "http://json-schema.org/draft-06/schema": Draft6Validator,
    "http://json-schema.org/draft-04/schema": Draft4Validator,
    "http://json-schema.org/draft-03/schema": Draft3Validator,
}
"""The validator of each draft by its ``$schema`` URI (without the empty fragment ``#``)."""

KEYWORDS = frozenset(
    {
        # core, and the older drafts' spellings (id, definitions, $recursive…)
        "$schema",
        "$id",
        "id",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "definitions",
        # applicators
        "prefixItems",
        "items",
        "additionalItems",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "dependentSchemas",
        "dependencies",
        "if",
        "then",
        "else",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "extends",
        "disallow",
        # validation
        "type",
        "const",
        "enum",
        "multipleOf",
        "divisibleBy",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        # annotations, format and content
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
"""Every keyword of JSON Schema drafts 3 to 2020-12."""

_NAMED = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
"""Keywords whose value maps names (never keywords) to subschemas."""
_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "extends",
    }
)
"""Keywords whose value is a subschema (``items`` and ``extends`` may also be a list)."""
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items", "extends", "disallow"})
"""Keywords whose value is a list of subschemas."""

Path = list[str | int]


def schema_nodes(schema: Any, path: Path, limit: int) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every object in ``schema`` that is a schema, with its path; ``limit`` levels at most.

    Each node is visited once, so the walk is linear in the size of the schema. Values of
    ``enum``, ``const``, ``default``, ``examples`` and of unknown keywords are data, not walked.
    """
    stack: list[tuple[Path, Any, int]] = [(path, schema, 0)]
    while stack:
        where, node, depth = stack.pop()
        if not isinstance(node, dict) or depth > limit:
            continue
        yield where, node
        below: list[tuple[Path, Any, int]] = []
        for key, value in node.items():
            if key in _NAMED and isinstance(value, dict):
                # draft 7's dependencies also maps names to lists of names: those are skipped
                below += [([*where, key, name], sub, depth + 1) for name, sub in value.items()]
            elif key in _MANY and isinstance(value, list):
                below += [([*where, key, i], sub, depth + 1) for i, sub in enumerate(value)]
            elif key in _ONE:
                below.append(([*where, key], value, depth + 1))
        stack.extend(reversed(below))  # file order, so problems come out as written


def stray_keys(node: dict[str, Any]) -> list[str]:
    """Keys of ``node`` that are no keyword and have no value: text a YAML comma split off."""
    return [key for key, value in node.items() if value is None and key not in KEYWORDS]


def metaschema(schema: dict[str, Any]) -> type[Validator] | None:
    """The draft ``schema`` is written in: its ``$schema``, else 2020-12; None if unknown."""
    dialect = schema.get("$schema")
    if not isinstance(dialect, str):
        return Draft202012Validator  # and a $schema that is not text, its metaschema refuses
    return DRAFTS.get(dialect.removesuffix("#"))
