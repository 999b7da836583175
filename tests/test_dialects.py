"""Tests for conchcheck.core.dialects: one row per provider quirk, plus property tests."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conchcheck.core.dialects import (
    GEMINI_KEYWORDS,
    MAX_NODES,
    ROOT_WRAPPER,
    STRICT_KEYWORDS,
    Dialect,
    to_dialect,
    unwrap_arguments,
)
from conchcheck.errors import UnknownDialectError

FAMILIES = [dialect.value for dialect in Dialect]
STR = {"type": "string"}
INT = {"type": "integer"}


def any_value(description: str | None = None) -> dict[str, Any]:
    """What gemini makes of a node that says nothing of its value: each scalar or an object."""
    said = {"description": description} if description else {}
    kinds = ("string", "number", "boolean", "object")
    return {"anyOf": [{"type": kind, "nullable": True, **said} for kind in kinds]}


def obj(**properties: Any) -> dict[str, Any]:
    """An object schema with these properties (the usual shape of a tool's parameters)."""
    return {"type": "object", "properties": properties}


def positions(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema node of a converted schema (property names are not walked as keywords)."""
    yield node
    for sub in node.get("properties", {}).values():
        yield from positions(sub)
    if "items" in node:
        yield from positions(node["items"])
    for branch in node.get("anyOf", []):
        yield from positions(branch)


TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "$defs": {
        "Node": {
            "type": "object",
            "description": "A node",
            "properties": {
                "name": STR,
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        }
    },
}


def tree_level(inner: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "A node",
        "properties": {"name": STR, "children": {"type": "array", "items": inner}},
    }


CUT_NODE = {"type": "object", "description": "A node. Recursive; deeper levels omitted."}

CASES = [
    # permissive: the schema as sent
    pytest.param(
        "permissive",
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": True, "c": False},
            "additionalProperties": False,
            "$defs": {"A": {"anyOf": [STR, {"type": "null"}]}},
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": True, "c": False},
            "additionalProperties": False,
            "$defs": {"A": {"anyOf": [STR, {"type": "null"}]}},
        },
        id="permissive-as-sent-with-boolean-schemas",
    ),
    pytest.param(
        "permissive",
        {"type": "array", "items": STR},
        {"type": "array", "items": STR},
        id="permissive-keeps-array-root",
    ),
    # anthropic: one object at the root
    pytest.param(
        "anthropic",
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": True},
            "additionalProperties": False,
            "$defs": {"A": {"type": ["string", "null"]}},
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": True},
            "additionalProperties": False,
            "$defs": {"A": {"type": ["string", "null"]}},
        },
        id="anthropic-object-root-passes-as-sent",
    ),
    pytest.param(
        "anthropic", {"properties": {"a": STR}}, obj(a=STR), id="anthropic-adds-missing-root-type"
    ),
    pytest.param("anthropic", {}, {"type": "object"}, id="anthropic-empty-root-becomes-object"),
    pytest.param(
        "anthropic",
        {"type": ["object", "null"], "properties": {"a": STR}},
        obj(a=STR),
        id="anthropic-nullable-object-root-becomes-object",
    ),
    pytest.param(
        "anthropic",
        {"type": "array", "items": STR, "description": "Tags to add."},
        {
            "type": "object",
            "description": "Tags to add.",
            "properties": {"value": {"type": "array", "items": STR}},
            "required": ["value"],
        },
        id="anthropic-wraps-array-root",
    ),
    pytest.param(
        "anthropic",
        {"type": "string"},
        {"type": "object", "properties": {"value": STR}, "required": ["value"]},
        id="anthropic-wraps-string-root",
    ),
    pytest.param(
        "anthropic",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/Tag"},
            "$defs": {"Tag": {"type": "string"}},
        },
        {
            "type": "object",
            "properties": {"value": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}},
            "required": ["value"],
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"Tag": {"type": "string"}},
        },
        id="anthropic-wrap-hoists-defs",
    ),
    pytest.param(
        "anthropic",
        {"type": "array", "items": {"anyOf": [STR, {"$ref": "#"}]}},
        {
            "type": "object",
            "properties": {
                "value": {
                    "type": "array",
                    "items": {"anyOf": [STR, {"$ref": "#/properties/value"}]},
                }
            },
            "required": ["value"],
        },
        id="anthropic-wrap-rebases-root-refs",
    ),
    pytest.param(
        "anthropic",
        {
            "allOf": [
                {"type": "object", "properties": {"a": STR}, "required": ["a"]},
                {"properties": {"b": INT}, "required": ["b"]},
            ]
        },
        {"type": "object", "properties": {"a": STR, "b": INT}, "required": ["a", "b"]},
        id="anthropic-merges-root-allof",
    ),
    pytest.param(
        "anthropic",
        {
            "description": "Find a user.",
            "anyOf": [
                {"type": "object", "properties": {"id": INT}, "required": ["id"]},
                {
                    "type": "object",
                    "properties": {"name": STR, "id": STR},
                    "required": ["name", "id"],
                },
            ],
        },
        {
            "type": "object",
            "description": "Find a user. Fill in one of these alternatives: (1) id; (2) name, id.",
            "properties": {"id": {"anyOf": [INT, STR]}, "name": STR},
            "required": ["id"],
        },
        id="anthropic-merges-root-anyof-of-objects",
    ),
    pytest.param(
        "anthropic",
        {
            "type": "object",
            "properties": {"id": INT, "name": STR},
            "required": ["limit"],
            "oneOf": [{"required": ["id"]}, {"required": ["name"]}],
        },
        {
            "type": "object",
            "properties": {"id": INT, "name": STR},
            "required": ["limit"],
            "description": "Fill in one of these alternatives: (1) id; (2) name.",
        },
        id="anthropic-merges-root-oneof-of-required-lists",
    ),
    pytest.param(
        "anthropic",
        {"anyOf": [obj(a=STR), {"type": "null"}]},
        obj(a=STR),
        id="anthropic-root-anyof-null-branch-dropped",
    ),
    pytest.param(
        "anthropic",
        {"anyOf": [obj(a=STR), STR], "description": "Either."},
        {
            "type": "object",
            "description": "Either.",
            "properties": {"value": {"anyOf": [obj(a=STR), STR]}},
            "required": ["value"],
        },
        id="anthropic-wraps-mixed-root-anyof",
    ),
    pytest.param(
        "anthropic",
        {
            "$ref": "#/definitions/Args",
            "definitions": {"Args": obj(q={"$ref": "#/definitions/Q"}), "Q": STR},
        },
        {
            "definitions": {"Args": obj(q={"$ref": "#/definitions/Q"}), "Q": STR},
            "type": "object",
            "properties": {"q": {"$ref": "#/definitions/Q"}},
        },
        id="anthropic-resolves-root-ref",
    ),
    # gemini: the OpenAPI subset of functionDeclarations[].parameters
    pytest.param(
        "gemini",
        {
            "type": "object",
            "properties": {"to": {"$ref": "#/$defs/Address"}},
            "$defs": {"Address": {"type": "string", "description": "An e-mail address."}},
        },
        obj(to={"type": "string", "description": "An e-mail address."}),
        id="gemini-ref-inlined",
    ),
    pytest.param(
        "gemini",
        {
            "properties": {
                "a": {"$ref": "#/definitions/A"},
                "b": {"$ref": "#/properties/a"},
                "c": {"$ref": "#/definitions/A~1B"},
            },
            "definitions": {"A": INT, "A/B": {"type": "boolean"}},
        },
        obj(a=INT, b=INT, c={"type": "boolean"}),
        id="gemini-definitions-and-pointer-refs-inlined",
    ),
    pytest.param(
        "gemini",
        obj(a={"$ref": "#/$defs/A", "description": "Mine."})
        | {"$defs": {"A": {"type": "integer", "description": "Theirs."}}},
        obj(a={"type": "integer", "description": "Mine."}),
        id="gemini-ref-sibling-description-wins",
    ),
    pytest.param(
        "gemini",
        TREE,
        obj(root=tree_level(tree_level(tree_level(CUT_NODE)))),
        id="gemini-recursive-ref-depth-limited",
    ),
    pytest.param(
        "gemini",
        {
            "$defs": {"A": {"$ref": "#/$defs/A", "description": "Loop."}},
            **obj(a={"$ref": "#/$defs/A"}),
        },
        obj(a={"type": "string", "description": "Loop."}),
        id="gemini-self-alias-ref-cut",
    ),
    pytest.param(
        "gemini",
        obj(
            a={"$ref": "#/$defs/missing", "description": "Gone."},
            b={"$ref": "other.json#/x"},
            c={"$ref": "#anchor"},
        ),
        obj(a=any_value("Gone."), b=any_value(), c=any_value()),
        id="gemini-dangling-ref-becomes-typed-node",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": ["string", "null"]}),
        obj(a={"type": "string", "nullable": True}),
        id="gemini-type-list-null-becomes-nullable",
    ),
    pytest.param(
        "gemini",
        obj(
            a={
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
                "title": "A",
                "description": "How many.",
            }
        ),
        obj(
            a={
                "type": "integer",
                "nullable": True,
                "description": "How many. Default: null.",
                "minimum": 1,
            }
        ),
        id="gemini-anyof-null-becomes-nullable",
    ),
    pytest.param(
        "gemini",
        obj(a={"oneOf": [{"type": "null"}, {"$ref": "#/$defs/S"}]}) | {"$defs": {"S": STR}},
        obj(a={"type": "string", "nullable": True}),
        id="gemini-oneof-null-ref-becomes-nullable",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": ["string", "integer"], "description": "Id."}),
        obj(
            a={
                "anyOf": [
                    {"type": "string", "description": "Id."},
                    {"type": "integer", "description": "Id."},
                ]
            }
        ),
        id="gemini-type-list-becomes-anyof",
    ),
    pytest.param(
        "gemini",
        obj(a={"description": "Id.", "anyOf": [STR, {"type": "array", "items": INT}]}),
        obj(
            a={
                "anyOf": [
                    {"type": "string", "description": "Id."},
                    {"type": "array", "description": "Id.", "items": INT},
                ]
            }
        ),
        id="gemini-anyof-is-the-only-field",
    ),
    pytest.param(
        "gemini",
        obj(a={"anyOf": [STR, INT, {"type": "null"}]}),
        obj(
            a={
                "anyOf": [
                    {"type": "string", "nullable": True},
                    {"type": "integer", "nullable": True},
                ]
            }
        ),
        id="gemini-anyof-with-null-each-branch-nullable",
    ),
    pytest.param(
        "gemini",
        obj(a={"anyOf": [STR, INT], "oneOf": [{"type": "boolean"}]}),
        obj(a={"anyOf": [STR, INT]}),
        id="gemini-anyof-wins-over-oneof",
    ),
    pytest.param(
        "gemini",
        obj(
            a={
                "type": "object",
                "properties": {"a": STR, "b": INT},
                "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
            }
        ),
        obj(
            a={
                "anyOf": [
                    {"type": "object", "properties": {"a": STR, "b": INT}, "required": ["a"]},
                    {"type": "object", "properties": {"a": STR, "b": INT}, "required": ["b"]},
                ]
            }
        ),
        id="gemini-anyof-siblings-distributed-into-branches",
    ),
    pytest.param(
        "gemini",
        obj(
            a={
                "allOf": [
                    {"$ref": "#/$defs/Base"},
                    {"properties": {"b": INT}, "required": ["b"]},
                    {"properties": {"n": {"maximum": 9}}},
                    {"properties": {"n": {"maximum": 5}}},
                ]
            }
        )
        | {"$defs": {"Base": {"type": "object", "properties": {"a": STR}, "required": ["a"]}}},
        obj(
            a={
                "type": "object",
                "properties": {"a": STR, "b": INT, "n": {"type": "number", "maximum": 5}},
                "required": ["a", "b"],
            }
        ),
        id="gemini-allof-merged",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": "integer", "enum": [1, 2]}),
        obj(a={"type": "string", "enum": ["1", "2"]}),
        id="gemini-integer-enum-as-strings",
    ),
    pytest.param(
        "gemini",
        obj(a={"enum": ["a", None]}),
        obj(a={"type": "string", "nullable": True, "enum": ["a"]}),
        id="gemini-enum-null-becomes-nullable",
    ),
    pytest.param(
        "gemini",
        obj(a={"enum": ["1", 1, True, 1.5, {"k": "v"}, [1]]}),
        obj(a={"type": "string", "enum": ["1", "true", "1.5", '{"k": "v"}', "[1]"]}),
        id="gemini-mixed-enum-as-unique-strings",
    ),
    pytest.param(
        "gemini",
        obj(a={"const": "fixed"}, b={"const": 3}),
        obj(a={"type": "string", "enum": ["fixed"]}, b={"type": "string", "enum": ["3"]}),
        id="gemini-const-becomes-string-enum",
    ),
    pytest.param(
        "gemini",
        {
            "properties": {
                "o": {"properties": {"x": STR}},
                "l": {"items": INT},
                "n": {"maximum": 3},
                "e": {"enum": ["x"]},
                "s": {},
                "u": {"type": "strung"},
                "r": {"required": []},
            }
        },
        obj(
            o=obj(x=STR),
            l={"type": "array", "items": INT},
            n={"type": "number", "maximum": 3},
            e={"type": "string", "enum": ["x"]},
            s=any_value(),
            u=STR,
            r={"type": "object"},
        ),
        id="gemini-every-node-typed",
    ),
    pytest.param(
        "gemini",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "title": "T",
            "type": "object",
            "strict": True,
            "additionalProperties": False,
            "patternProperties": {"^x": STR},
            "propertyNames": {"pattern": "^[a-z]+$"},
            "properties": {
                "n": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "multipleOf": 2,
                    "minimum": 1,
                    "examples": [],
                }
            },
        },
        obj(n={"type": "number", "minimum": 1}),
        id="gemini-drops-unknown-keywords",
    ),
    pytest.param(
        "gemini",
        obj(
            **{
                "type": STR,
                "format": {"type": "string", "format": "email"},
                "$ref": INT,
                "properties": {"type": "array", "items": STR},
            }
        ),
        obj(
            **{
                "type": STR,
                "format": {"type": "string", "description": "Format: email."},
                "$ref": INT,
                "properties": {"type": "array", "items": STR},
            }
        ),
        id="gemini-property-names-are-not-keywords",
    ),
    pytest.param(
        "gemini",
        obj(
            when={
                "type": "string",
                "description": "When to meet",
                "format": "date-time",
                "default": "now",
                "examples": ["2026-01-01T09:00:00Z"],
            }
        ),
        obj(
            when={
                "type": "string",
                "description": 'When to meet. Format: date-time. Default: "now". Example: "2026-01-01T09:00:00Z".',
            }
        ),
        id="gemini-default-and-example-join-the-description",
    ),
    pytest.param(
        "gemini",
        obj(
            at={"type": "string", "format": "date-time"}, mail={"type": "string", "format": "email"}
        ),
        obj(
            at={"type": "string", "description": "Format: date-time."},
            mail={"type": "string", "description": "Format: email."},
        ),
        id="gemini-format-moves-to-description",
    ),
    pytest.param(
        "gemini",
        obj(
            a={"type": "object", "description": "Filters!", "default": {"k": [1, "é"]}},
            b={"type": "integer", "examples": [1, 2], "example": 3},
        ),
        obj(
            a={"type": "object", "description": 'Filters! Default: {"k": [1, "é"]}.'},
            b={"type": "integer", "description": "Examples: 1, 2, 3."},
        ),
        id="gemini-default-and-examples-json-encoded",
    ),
    pytest.param(
        "gemini",
        {"type": "object", "properties": {"a": STR}, "required": ["a", "ghost", "a", 7]},
        {"type": "object", "properties": {"a": STR}, "required": ["a"]},
        id="gemini-required-names-only-defined",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": "object", "properties": {}, "required": ["x"]}),
        obj(a={"type": "object"}),
        id="gemini-empty-object-has-no-properties",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": "array"}),
        obj(a={"type": "array", "items": STR}),
        id="gemini-array-without-items-gets-string-items",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": "array", "prefixItems": [{"type": "number"}, STR]}, b={"items": [INT]}),
        obj(
            a={
                "type": "array",
                "description": "Items in order: number, string.",
                "items": {"type": "number"},
            },
            b={"type": "array", "items": INT},
        ),
        id="gemini-prefixitems-first-becomes-items",
    ),
    pytest.param(
        "gemini",
        obj(
            s={"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^a"},
            a={"type": "array", "items": STR, "minItems": 1, "maxItems": 3},
            i={"type": "integer", "minimum": 0, "maximum": 10},
        ),
        obj(
            s={"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^a"},
            a={"type": "array", "items": STR, "minItems": 1, "maxItems": 3},
            i={"type": "integer", "minimum": 0, "maximum": 10},
        ),
        id="gemini-keeps-supported-bounds",
    ),
    pytest.param(
        "gemini",
        obj(
            s={"type": "string", "minimum": 1, "minItems": 2, "minLength": 1.5, "pattern": 3},
            i={"type": "integer", "properties": {"x": STR}, "items": STR, "maxLength": -1},
        ),
        obj(s=STR, i=INT),
        id="gemini-drops-bounds-of-other-types",
    ),
    pytest.param(
        "gemini",
        {"type": "array", "items": {"type": "integer", "format": "int32"}, "description": "Ids."},
        {
            "type": "object",
            "description": "Ids.",
            "properties": {
                "value": {
                    "type": "array",
                    "items": {"type": "integer", "description": "Format: int32."},
                }
            },
            "required": ["value"],
        },
        id="gemini-wraps-non-object-root",
    ),
    pytest.param(
        "gemini",
        {"anyOf": [STR, INT]},
        {"type": "object", "properties": {"value": {"anyOf": [STR, INT]}}, "required": ["value"]},
        id="gemini-wraps-root-anyof-of-scalars",
    ),
    pytest.param(
        "gemini",
        {"oneOf": [obj(a=STR), {"$ref": "#/$defs/B"}], "$defs": {"B": obj(b={"const": 2})}},
        {
            "type": "object",
            "description": "Fill in one of these alternatives: (1) a; (2) b.",
            "properties": {"a": STR, "b": {"type": "string", "enum": ["2"]}},
        },
        id="gemini-merges-root-oneof-of-objects",
    ),
    pytest.param(
        "gemini",
        obj(
            t=True,
            f=False,
            l={"type": "array", "items": True},
            n={"anyOf": [False, INT, {"type": "null"}]},
        ),
        obj(
            t=any_value(),
            l={"type": "array", "items": any_value()},
            n={"type": "integer", "nullable": True},
        ),
        id="gemini-boolean-schemas",
    ),
    pytest.param(
        "gemini",
        obj(a={"type": "string", "nullable": True}, b={"type": "null"}),
        obj(a={"type": "string", "nullable": True}, b={"type": "string", "nullable": True}),
        id="gemini-openapi-nullable-and-null-type",
    ),
    # strict: type, description, enum, items, properties, required only
    pytest.param(
        "strict",
        obj(
            s={"type": "string", "pattern": "^a", "minLength": 1, "title": "S", "nullable": False},
            n={"type": "integer", "minimum": 0, "multipleOf": 2},
            a={"type": "array", "items": STR, "minItems": 1, "uniqueItems": True},
        ),
        obj(s=STR, n=INT, a={"type": "array", "items": STR}),
        id="strict-drops-pattern",
    ),
    pytest.param(
        "strict",
        obj(
            a={
                "anyOf": [STR, INT, {"type": "null"}, {"type": "array", "items": STR}],
                "description": "Key",
            }
        ),
        obj(a={"type": "string", "description": "Key. Also accepts: integer, array, null."}),
        id="strict-anyof-keeps-first-branch-notes-others",
    ),
    pytest.param(
        "strict",
        obj(a={"oneOf": [{"type": "null"}, obj(x=STR)]}),
        obj(a={"type": "object", "description": "Also accepts: null.", "properties": {"x": STR}}),
        id="strict-oneof-null-noted",
    ),
    pytest.param(
        "strict",
        obj(a={"type": ["string", "null"]}, b={"type": ["integer", "string"]}),
        obj(
            a={"type": "string", "description": "Also accepts: null."},
            b={"type": "integer", "description": "Also accepts: string."},
        ),
        id="strict-type-list-reduced-to-first",
    ),
    pytest.param(
        "strict",
        obj(
            a={"const": 3},
            b={"enum": [1, 2, None]},
            c={"type": "string", "enum": ["x"]},
            d={"enum": [None, True]},
        ),
        obj(
            a={"type": "integer", "enum": [3]},
            b={"type": "integer", "enum": [1, 2, None]},
            c={"type": "string", "enum": ["x"]},
            d={"type": "boolean", "enum": [None, True]},
        ),
        id="strict-const-and-enum-values-kept",
    ),
    pytest.param(
        "strict",
        TREE,
        obj(root=tree_level(tree_level(tree_level(CUT_NODE)))),
        id="strict-recursive-ref-depth-limited",
    ),
    pytest.param(
        "strict",
        {
            "allOf": [obj(a=STR), {"properties": {"b": {"$ref": "#/$defs/B"}}, "required": ["b"]}],
            "$defs": {"B": {"type": "integer", "format": "int64", "default": 0}},
        },
        {
            "type": "object",
            "properties": {
                "a": STR,
                "b": {"type": "integer", "description": "Format: int64. Default: 0."},
            },
            "required": ["b"],
        },
        id="strict-allof-and-ref-inlined",
    ),
    pytest.param(
        "strict",
        {"type": ["string", "null"], "description": "Query."},
        {
            "type": "object",
            "description": "Query.",
            "properties": {"value": {"type": "string", "description": "Also accepts: null."}},
            "required": ["value"],
        },
        id="strict-wraps-non-object-root",
    ),
    pytest.param(
        "strict",
        obj(a={"type": "array", "prefixItems": [INT, INT]}, b={}),
        obj(
            a={"type": "array", "description": "Items in order: integer, integer.", "items": INT},
            b=STR,
        ),
        id="strict-prefixitems-and-untyped",
    ),
]


@pytest.mark.parametrize(("family", "schema", "expected"), CASES)
def test_to_dialect(family: str, schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert to_dialect(schema, family) == expected


def freeze(value: Any) -> Any:
    """A read-only copy: any attempt to modify it raises."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(sub) for key, sub in value.items()})
    if isinstance(value, list):
        return tuple(freeze(sub) for sub in value)
    return value


@pytest.mark.parametrize(("family", "schema", "expected"), CASES)
def test_input_never_modified_and_output_deterministic(
    family: str, schema: dict[str, Any], expected: dict[str, Any]
) -> None:
    before = copy.deepcopy(schema)
    first = to_dialect(schema, family)
    second = to_dialect(schema, family)
    assert schema == before
    assert json.dumps(first) == json.dumps(second)
    assert to_dialect(freeze(schema), family) == expected


def test_output_shares_nothing_with_input() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "string", "enum": ["x"]}},
    }
    for family in FAMILIES:
        out = to_dialect(schema, family)
        out["properties"]["a"]["enum"].append("y")
        assert schema["properties"]["a"]["enum"] == ["x"]


def test_property_order_follows_input() -> None:
    schema = obj(zeta=STR, alpha=INT, mid={"type": ["string", "null"]})
    for family in FAMILIES:
        assert list(to_dialect(schema, family)["properties"]) == ["zeta", "alpha", "mid"]


@pytest.mark.parametrize("family", ["gemni", "GEMINIS", "openai", ""])
def test_unknown_family_is_refused_with_a_sentence(family: str) -> None:
    with pytest.raises(UnknownDialectError) as caught:
        to_dialect(obj(), family)
    assert str(caught.value) == (
        f"Unknown schema dialect {family!r}. Choose one of: permissive, gemini, anthropic, strict."
    )
    assert caught.value.hint
    assert isinstance(caught.value, ValueError)


def test_unknown_family_hint_suggests_the_close_name() -> None:
    with pytest.raises(UnknownDialectError) as caught:
        unwrap_arguments({}, obj(), "gemni")
    assert caught.value.hint == "Did you mean 'gemini'?"


def test_family_given_as_member_or_any_case() -> None:
    schema = obj(a={"type": ["string", "null"]})
    expected = obj(a={"type": "string", "nullable": True})
    assert to_dialect(schema, Dialect.GEMINI) == to_dialect(schema, " Gemini ") == expected


@pytest.mark.parametrize(
    ("family", "schema", "arguments", "expected"),
    [
        pytest.param("gemini", {"type": "array"}, {"value": [1]}, [1], id="wrapped-array-root"),
        pytest.param("strict", {"type": "string"}, {"value": "x"}, "x", id="wrapped-string-root"),
        pytest.param(
            "anthropic", {"anyOf": [STR, INT]}, {"value": 3}, 3, id="wrapped-mixed-anyof-root"
        ),
        pytest.param(
            "gemini", obj(value=STR), {"value": "x"}, {"value": "x"}, id="object-root-untouched"
        ),
        pytest.param(
            "anthropic",
            {"anyOf": [obj(value=STR), obj(b=INT)]},
            {"value": "x"},
            {"value": "x"},
            id="merged-root-untouched",
        ),
        pytest.param(
            "permissive", {"type": "array"}, {"value": [1]}, {"value": [1]}, id="permissive-never"
        ),
        pytest.param("gemini", {"type": "array"}, {}, {}, id="wrapped-but-value-missing"),
    ],
)
def test_unwrap_arguments(family: str, schema: Any, arguments: Any, expected: Any) -> None:
    assert unwrap_arguments(arguments, schema, family) == expected


def test_unwrap_returns_the_same_arguments_when_not_wrapped() -> None:
    arguments = {"a": 1}
    assert unwrap_arguments(arguments, obj(a=INT), "strict") is arguments


def test_wrapped_root_round_trips_through_the_wrapper_name() -> None:
    out = to_dialect({"type": "array", "items": INT}, "gemini")
    assert out["required"] == [ROOT_WRAPPER]
    assert unwrap_arguments({ROOT_WRAPPER: [1, 2]}, {"type": "array"}, "gemini") == [1, 2]


@pytest.mark.parametrize("family", ["gemini", "strict"])
def test_mutually_referencing_defs_are_bounded(family: str) -> None:
    # Each definition refers to the next one twice: 2**40 nodes if expanded naively.
    defs = {
        f"D{i}": obj(a={"$ref": f"#/$defs/D{i + 1}"}, b={"$ref": f"#/$defs/D{i + 1}"})
        for i in range(40)
    }
    schema = {"$defs": defs, **obj(root={"$ref": "#/$defs/D0"})}
    out = to_dialect(schema, family)
    assert sum(1 for _ in positions(out)) <= 3 * MAX_NODES
    assert "Schema too large; deeper levels omitted." in json.dumps(out)


@pytest.mark.parametrize("family", ["gemini", "strict"])
def test_deep_nesting_and_long_ref_chains_do_not_crash(family: str) -> None:
    deep: dict[str, Any] = STR
    for _ in range(300):
        deep = obj(x=deep)
    chain = {f"A{i}": {"$ref": f"#/$defs/A{i + 1}"} for i in range(500)}
    schema = {"$defs": chain, **obj(deep=deep, chain={"$ref": "#/$defs/A0"})}
    out = to_dialect(schema, family)
    text = json.dumps(out)
    assert "Nested too deep; deeper levels omitted." in text
    assert out["properties"]["chain"] == {
        "type": "string",
        "description": "Nested too deep; deeper levels omitted.",
    }


# --- property tests --------------------------------------------------------------------------


AWKWARD_NAMES = st.sampled_from(
    ["a", "b", "type", "properties", "$ref", "format", "enum", "items", "required", "ü ñ", ""]
)
REFS = st.sampled_from(
    [
        "#/$defs/A",
        "#/$defs/B",
        "#/$defs/Node",
        "#/definitions/Old",
        "#/$defs/missing",
        "#",
        "#/properties/a",
        "#/$defs/A/properties/type",
        "other.json#/x",
        "#anchor",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=4),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
TYPE_NAMES = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"])
LEAVES = st.one_of(
    TYPE_NAMES.map(lambda name: {"type": name}),
    st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True).map(lambda names: {"type": names}),
    st.lists(JSON_VALUES, min_size=1, max_size=4).map(lambda values: {"enum": values}),
    JSON_VALUES.map(lambda value: {"const": value}),
    REFS.map(lambda ref: {"$ref": ref}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer"])},
        optional={
            "format": st.sampled_from(["date-time", "email", "int32"]),
            "default": JSON_VALUES,
            "examples": st.lists(JSON_VALUES, max_size=2),
            "description": st.text(max_size=8),
            "pattern": st.just("^a"),
            "minLength": st.integers(0, 3),
            "minimum": st.integers(-2, 2),
            "exclusiveMinimum": st.one_of(st.booleans(), st.integers(-2, 2), st.floats(-2, 2)),
            "exclusiveMaximum": st.one_of(st.booleans(), st.integers(-2, 2)),
            "title": st.text(max_size=3),
            "nullable": st.booleans(),
        },
    ),
    st.booleans(),
    st.just({}),
)


def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    properties = st.dictionaries(AWKWARD_NAMES, children, max_size=4)
    return st.one_of(
        st.fixed_dictionaries(
            {"properties": properties},
            optional={
                "type": st.sampled_from(["object", ["object", "null"]]),
                "required": st.lists(AWKWARD_NAMES, max_size=3),
                "additionalProperties": children,
                "patternProperties": st.dictionaries(st.just("^x"), children, max_size=1),
                "description": st.text(max_size=8),
            },
        ),
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.just("array"),
                "items": children,
                "prefixItems": st.lists(children, max_size=2),
                "minItems": st.integers(0, 2),
            },
        ),
        st.builds(
            lambda keyword, branches, description: {keyword: branches, "description": description},
            st.sampled_from(["anyOf", "oneOf", "allOf"]),
            st.lists(children, min_size=1, max_size=3),
            st.text(max_size=5),
        ),
        st.tuples(REFS, st.text(max_size=5)).map(
            lambda pair: {"$ref": pair[0], "description": pair[1]}
        ),
    )


SUBSCHEMAS = st.recursive(LEAVES, extend, max_leaves=10)
ROOTS = st.builds(
    lambda body, defs, old: {
        **(body if isinstance(body, dict) else {}),
        "$defs": defs,
        "definitions": old,
    },
    SUBSCHEMAS,
    st.fixed_dictionaries({"A": SUBSCHEMAS, "Node": SUBSCHEMAS}, optional={"B": SUBSCHEMAS}),
    st.fixed_dictionaries({}, optional={"Old": SUBSCHEMAS}),
)
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(ROOTS)
def test_gemini_output_is_inside_the_subset(schema: dict[str, Any]) -> None:
    out = to_dialect(schema, "gemini")
    assert out["type"] == "object"
    for node in positions(out):
        assert set(node) <= GEMINI_KEYWORDS
        if "anyOf" in node:
            assert list(node) == ["anyOf"]
            assert len(node["anyOf"]) >= 2
            assert all("type" in branch for branch in node["anyOf"])  # S10/S15
            continue
        assert node["type"] in {"string", "number", "integer", "boolean", "array", "object"}
        assert all(isinstance(value, str) for value in node.get("enum", []))
        assert node.get("properties", {"x": {}}) != {}
        assert set(node.get("required", [])) <= set(node.get("properties", {}))
        assert ("items" in node) == (node["type"] == "array")
        assert node.get("nullable", True) is True
    assert to_dialect(out, "gemini") == out
    assert json.dumps(to_dialect(out, "gemini")) == json.dumps(out)


@PROPERTY_SETTINGS
@given(ROOTS)
def test_strict_output_is_inside_the_subset(schema: dict[str, Any]) -> None:
    out = to_dialect(schema, "strict")
    assert out["type"] == "object"
    for node in positions(out):
        assert set(node) <= STRICT_KEYWORDS
        assert node["type"] in {"string", "number", "integer", "boolean", "array", "object"}
        assert ("items" in node) == (node["type"] == "array")
    assert json.dumps(to_dialect(out, "strict")) == json.dumps(out)


@PROPERTY_SETTINGS
@given(ROOTS, st.sampled_from(FAMILIES))
def test_every_family_leaves_input_alone_and_returns_json(
    schema: dict[str, Any], family: str
) -> None:
    before = json.dumps(schema)
    out = to_dialect(schema, family)
    assert json.dumps(schema) == before
    json.dumps(out, allow_nan=False)
    sentinel = object()
    if unwrap_arguments({ROOT_WRAPPER: sentinel}, schema, family) is sentinel:
        assert out["properties"] == {ROOT_WRAPPER: out["properties"][ROOT_WRAPPER]}
        assert out["required"] == [ROOT_WRAPPER]
    if family == "anthropic":
        assert out["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf"} & set(out)
