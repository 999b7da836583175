"""The gemini dialect against real MCP servers' tools (tests/data/mcp-schemas/README.md names
where each came from), checked by Gemini's rules as its refusals show them (S01–S16)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conchcheck.core.dialects import GEMINI_KEYWORDS, to_dialect

CORPUS = Path(__file__).parent / "data" / "mcp-schemas"
OPENAPI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
# Which bounds belong to which type; a bound elsewhere is at best ignored, so none is sent.
BOUNDS = {
    "minLength": {"string"},
    "maxLength": {"string"},
    "pattern": {"string"},
    "minItems": {"array"},
    "maxItems": {"array"},
    "minimum": {"number", "integer"},
    "maximum": {"number", "integer"},
}


def gemini_problems(node: Any, path: str = "parameters") -> Iterator[str]:
    """Every way `node` breaks Gemini's functionDeclarations[].parameters rules, with a path."""
    if not isinstance(node, Mapping):
        yield f"{path}: not a schema object: {node!r}"
        return
    for key in sorted(set(node) - GEMINI_KEYWORDS):
        yield f"{path}: unknown keyword {key!r} (S01-S07: 'Cannot find field')"
    if "description" in node and not isinstance(node["description"], str):
        yield f"{path}.description: not text"
    if "anyOf" in node:
        # Vertex: "When using any_of, it must be the only field set" (S14).
        if list(node) != ["anyOf"]:
            yield f"{path}: fields beside anyOf: {sorted(set(node) - {'anyOf'})} (S14)"
        branches = node["anyOf"]
        if not isinstance(branches, list) or len(branches) < 2:
            yield f"{path}.anyOf: wants a list of two or more branches, got {branches!r}"
            return
        for i, branch in enumerate(branches):
            if not isinstance(branch, Mapping) or "type" not in branch:
                yield f"{path}.anyOf[{i}]: branch without a type (S10/S15)"
            yield from gemini_problems(branch, f"{path}.anyOf[{i}]")
        return
    kind = node.get("type")
    if kind is None:
        yield f"{path}.type: must be specified (S10/S15)"
        return
    if kind not in OPENAPI_TYPES:
        yield f"{path}.type: {kind!r} is not an OpenAPI type (S09 refuses 'null')"
        return
    if "nullable" in node and node["nullable"] is not True:
        yield f"{path}.nullable: only true is meaningful, got {node['nullable']!r}"
    if "enum" in node:
        values = node["enum"]
        if not isinstance(values, list) or not values:
            yield f"{path}.enum: wants a non-empty list"
        elif not all(isinstance(value, str) for value in values):
            yield f"{path}.enum: values must be text, got {values!r}"
        if kind != "string":
            yield f"{path}.enum: on a {kind}; Gemini's enum is for STRING"
    for key, kinds in BOUNDS.items():
        if key in node and kind not in kinds:
            yield f"{path}.{key}: on a {kind}"
    if ("properties" in node or "required" in node) and kind != "object":
        yield f"{path}: properties/required on a {kind}"
    properties = node.get("properties", {})
    if "properties" in node and (not isinstance(properties, Mapping) or not properties):
        yield f"{path}.properties: should be non-empty for OBJECT type (S12)"
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        yield f"{path}.required: wants a list of names"
    else:
        for i, name in enumerate(required):
            if name not in properties:
                yield f"{path}.required[{i}]: property {name!r} is not defined (S11)"
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            yield from gemini_problems(sub, f"{path}.properties[{name}]")
    if (kind == "array") != ("items" in node):
        yield f"{path}: items {'missing from' if kind == 'array' else 'on'} a {kind}"
    if "items" in node:
        yield from gemini_problems(node["items"], f"{path}.items")


def load_corpus() -> list[Any]:
    params = []
    for file in sorted(CORPUS.glob("*.json")):
        for tool in json.loads(file.read_text(encoding="utf-8")):
            params.append(pytest.param(tool, id=f"{file.stem}:{tool['name']}"))
    return params


TOOLS = load_corpus()


def test_corpus_is_large_and_varied() -> None:
    servers = {param.id.split(":")[0] for param in TOOLS}
    assert len(TOOLS) >= 100
    assert len(servers) >= 6
    text = json.dumps([param.values[0]["inputSchema"] for param in TOOLS])
    for quirk in ('"$ref"', '"$defs"', '"anyOf"', '"oneOf"', '"const"', '"type": ["'):
        assert quirk in text, quirk


@pytest.mark.parametrize("tool", TOOLS)
def test_gemini_accepts_every_real_mcp_tool(tool: dict[str, Any]) -> None:
    schema = tool["inputSchema"]
    before = copy.deepcopy(schema)
    out = to_dialect(schema, "gemini")
    assert schema == before, "the input was modified"
    assert out.get("type") == "object", "Vertex: parameters schema should be of type OBJECT (S16)"
    assert list(gemini_problems(out)) == []
    assert to_dialect(out, "gemini") == out, "not a fixed point"
    json.dumps(out, allow_nan=False)
    # Nothing the model may send is lost: every top-level field and requirement survives.
    fields = schema.get("properties", {})
    assert set(out.get("properties", {})) == {k for k, v in fields.items() if v is not False}
    assert out.get("required", []) == [
        name for name in schema.get("required", []) if name in fields
    ]


STR = {"type": "string"}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def any_value(description: str) -> dict[str, Any]:
    kinds = ("string", "number", "boolean", "object")
    node = {"nullable": True, "description": description}
    return {"anyOf": [{"type": kind, **node} for kind in kinds]}


# The quirks the corpus shows, each as small as it comes; `where` names a tool that has it.
QUIRKS = [
    pytest.param(
        {"type": ["string", "number"], "description": "Id."},
        {
            "anyOf": [
                {"type": "string", "description": "Id."},
                {"type": "number", "description": "Id."},
            ]
        },
        id="type-list-without-null",  # where: github-mcp-server issue_write value
    ),
    pytest.param(
        {"type": ["boolean", "string"], "description": "More?"},
        {
            "anyOf": [
                {"type": "boolean", "description": "More?"},
                {"type": "string", "description": "More?"},
            ]
        },
        id="type-list-boolean-or-string",  # where: mcp-server-sequential-thinking
    ),
    pytest.param(
        {"type": ["string", "integer", "null"]},
        {"anyOf": [{"type": "string", "nullable": True}, {"type": "integer", "nullable": True}]},
        id="type-list-with-null-and-two-others",
    ),
    pytest.param(
        {"type": ["object", "null"]},
        {"type": "object", "nullable": True},
        id="type-list-object-or-null",  # where: notion-mcp-server richTextRequest.text.link
    ),
    pytest.param(
        {"description": "Any JSON value is accepted; use null to clear the field."},
        any_value("Any JSON value is accepted; use null to clear the field."),
        id="no-type-no-hint-is-any-value",  # where: github-mcp-server projects_write value
    ),
    pytest.param(
        {"default": None, "title": "Anything", "description": "X."},
        any_value("X. Default: null."),
        id="pydantic-any-with-default-none",
    ),
    pytest.param(
        {"properties": {"a": STR}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": STR}, "required": ["a"]},
        id="no-type-but-properties-is-object",
    ),
    pytest.param({"items": STR}, {"type": "array", "items": STR}, id="no-type-but-items-is-array"),
    pytest.param(
        {"exclusiveMinimum": 0},
        {"type": "number", "description": "Greater than 0."},
        id="no-type-but-a-bound-is-number",
    ),
    pytest.param(
        {"pattern": "^a", "format": "uuid"},
        {"type": "string", "pattern": "^a", "description": "Format: uuid."},
        id="no-type-but-pattern-is-string",
    ),
    pytest.param(
        {"enum": [1, "a"]}, {"type": "string", "enum": ["1", "a"]}, id="no-type-enum-is-text"
    ),
    pytest.param(
        {"type": "array", "items": {"description": "A tag."}},
        {"type": "array", "items": any_value("A tag.")},
        id="items-without-type",
    ),
    pytest.param(
        {"type": "array", "items": {"enum": ["a", "b"]}},
        {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        id="items-enum-without-type",
    ),
    pytest.param(
        {"anyOf": [{"enum": ["a"]}, {"properties": {"x": STR}}]},
        {"anyOf": [{"type": "string", "enum": ["a"]}, obj(x=STR)]},
        id="anyof-branches-without-types",
    ),
    pytest.param(
        {"anyOf": [{"oneOf": [obj(x=STR), obj(y=STR)]}, STR]},
        {"anyOf": [obj(x=STR), obj(y=STR), STR]},
        id="anyof-inside-anyof-spliced",  # where: notion-mcp-server API-move-page parent
    ),
    pytest.param(
        {"anyOf": [STR, STR, {"type": "null"}]},
        {"type": "string", "nullable": True},
        id="anyof-repeated-branches-collapse",
    ),
    pytest.param(
        {"oneOf": [STR, {"type": "integer"}]},
        {"anyOf": [STR, {"type": "integer"}]},
        id="oneof-becomes-anyof",
    ),
    pytest.param(
        {"const": "workspace"},
        {"type": "string", "enum": ["workspace"]},
        id="const-becomes-enum-of-one",  # where: notion-mcp-server parentRequest
    ),
    pytest.param({"const": 3}, {"type": "string", "enum": ["3"]}, id="const-number-as-text"),
    pytest.param(
        {
            "anyOf": [{"type": "array", "items": {"$ref": "#/$defs/F"}}, {"type": "null"}],
            "default": None,
            "title": "Filters",
        },
        {
            "type": "array",
            "nullable": True,
            "description": "Default: null.",
            "items": {"type": "object", "properties": {"field": STR}, "required": ["field"]},
        },
        id="ref-in-array-in-optional",  # where: aws-pricing-mcp-server get_pricing filters
    ),
    pytest.param(
        {"type": "array", "items": {"$ref": "#/$defs/B"}},
        {"type": "array", "items": {"anyOf": [obj(field=STR) | {"required": ["field"]}, STR]}},
        id="ref-to-anyof-of-refs-in-array",  # where: notion-mcp-server API-patch-block-children
    ),
    pytest.param(
        {"anyOf": [STR, {"type": "null"}], "default": None, "title": "T", "description": "D"},
        {"type": "string", "nullable": True, "description": "D. Default: null."},
        id="pydantic-optional",  # where: mcp-server-git, aws-pricing-mcp-server
    ),
    pytest.param(
        {"type": "integer", "exclusiveMinimum": 0, "maximum": 100},
        {"type": "integer", "minimum": 1, "maximum": 100},
        id="integer-exclusive-minimum-is-next-whole",  # where: sentry-mcp limit (zod positive)
    ),
    pytest.param(
        {"type": "integer", "exclusiveMaximum": 10.5, "maximum": 12},
        {"type": "integer", "maximum": 10},
        id="integer-exclusive-maximum-tightens",
    ),
    pytest.param(
        {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
        {"type": "integer", "minimum": 1},
        id="draft04-exclusive-minimum-flag",
    ),
    pytest.param(
        {"type": "number", "exclusiveMinimum": 0, "description": "Seconds"},
        {"type": "number", "description": "Seconds. Greater than 0."},
        id="number-exclusive-minimum-as-words",
    ),
    pytest.param(
        {"type": "object", "additionalProperties": STR},
        {"type": "object"},
        id="free-form-object-keeps-no-properties",  # Gemini takes it; only `properties: {}` is S12
    ),
    pytest.param(
        {"type": "object", "properties": {}, "additionalProperties": False},
        {"type": "object"},
        id="empty-properties-dropped",  # where: github-mcp-server get_me (S12)
    ),
]
DEFS = {
    "F": obj(field=STR) | {"required": ["field"]},
    "B": {"anyOf": [{"$ref": "#/$defs/F"}, STR]},
}


@pytest.mark.parametrize(("node", "expected"), QUIRKS)
def test_gemini_quirk(node: dict[str, Any], expected: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"a": node}, "$defs": DEFS}
    before = copy.deepcopy(schema)
    out = to_dialect(schema, "gemini")
    assert out == obj(a=expected)
    assert schema == before
    assert list(gemini_problems(out)) == []
    assert to_dialect(out, "gemini") == out


@pytest.mark.parametrize(
    ("node", "problem"),
    [
        pytest.param({"type": "null"}, "S09", id="null-type"),
        pytest.param({"description": "x"}, "S10/S15", id="untyped"),
        pytest.param({"type": "object", "properties": {}}, "S12", id="empty-properties"),
        pytest.param({"type": "object", "required": ["a"]}, "S11", id="required-undefined"),
        pytest.param(
            {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "x"},
            "S14",
            id="anyof-with-sibling",
        ),
        pytest.param(
            {"anyOf": [{"type": "string"}, {"enum": ["a"]}]}, "S10/S15", id="anyof-untyped-branch"
        ),
        pytest.param({"type": "string", "default": "a"}, "S01-S07", id="unknown-keyword"),
        pytest.param({"type": "integer", "enum": [1, 2]}, "text", id="number-enum"),
        pytest.param({"type": "array"}, "items missing", id="array-without-items"),
    ],
)
def test_the_checker_catches_what_gemini_refuses(node: dict[str, Any], problem: str) -> None:
    assert any(problem in found for found in gemini_problems(node))


def test_the_checker_takes_a_free_form_object() -> None:
    # Gemini takes an OBJECT with no `properties` key (any fields); only `properties: {}` is S12.
    assert list(gemini_problems({"type": "object", "description": "Any fields."})) == []
