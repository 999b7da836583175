"""Tool definitions in either form, and the one-line signature of a schema."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.tools import Tool, as_tool, first_sentence, signature
from conchcheck.errors import InputError

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    ("spec", "tool"),
    [
        pytest.param(
            {"name": "f", "description": "d", "parameters": SCHEMA},
            Tool("f", "d", SCHEMA),
            id="plain",
        ),
        pytest.param(
            {"type": "function", "function": {"name": "f", "parameters": SCHEMA}},
            Tool("f", "", SCHEMA),
            id="openai",
        ),
        pytest.param(
            {"name": "f", "input_schema": SCHEMA},
            Tool("f", "", SCHEMA),
            id="anthropic-input-schema",
        ),
        pytest.param(
            {"name": "f", "parametersJsonSchema": SCHEMA},
            Tool("f", "", SCHEMA),
            id="gemini-json-schema",
        ),
        pytest.param({"name": "f"}, Tool("f", "", {}), id="no-parameters"),
        pytest.param(
            {"name": "f", "description": None, "parameters": "x"},
            Tool("f", "", {}),
            id="junk-fields-ignored",
        ),
    ],
)
def test_as_tool(spec: dict[str, Any], tool: Tool) -> None:
    assert as_tool(spec) == tool


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="empty"),
        pytest.param({"type": "function"}, id="function-missing"),
        pytest.param({"name": 3}, id="name-not-text"),
    ],
)
def test_as_tool_needs_a_name(spec: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="A tool must have a 'name'"):
        as_tool(spec)


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer"},
                    "order": {"enum": ["newest", "oldest"]},
                },
                "required": ["query"],
            },
            '{query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="design-rule-3-example",
        ),
        pytest.param({}, "any", id="empty-schema"),
        pytest.param({"type": "object", "properties": {}}, "{}", id="no-arguments"),
        pytest.param({"type": "object"}, "object", id="free-object"),
        pytest.param(
            {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
            "{a?: any, ...}",
            id="open-object",
        ),
        pytest.param({"type": "array", "items": {"type": "string"}}, "string[]", id="array-root"),
        pytest.param(
            {"type": "array", "items": {"enum": ["a", "b"]}}, '("a"|"b")[]', id="array-of-options"
        ),
        pytest.param({"type": ["string", "null"]}, "string|null", id="type-list"),
        pytest.param(
            {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "integer|null", id="any-of"
        ),
        pytest.param({"const": 3}, "3", id="const"),
        pytest.param(
            {"properties": {"a": {"items": {"type": "integer"}}}},
            "{a?: integer[]}",
            id="types-inferred",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/p"}},
                "$defs": {"p": {"type": "object", "properties": {"n": {"type": "string"}}}},
            },
            "{p?: {n?: string}}",
            id="ref-followed",
        ),
        pytest.param(
            {"type": "object", "properties": {"next": {"$ref": "#"}}},
            "{next?: {next?: object}}",
            id="recursive-ref-cut",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/nope"}}},
            "{x?: object}",
            id="dangling-ref",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "a": {
                        "type": "object",
                        "properties": {
                            "b": {
                                "type": "object",
                                "properties": {
                                    "c": {"type": "object", "properties": {"d": {"type": "string"}}}
                                },
                            }
                        },
                    }
                },
            },
            "{a?: {b?: {c?: object}}}",
            id="deep-nesting-cut",
        ),
        pytest.param(
            {"type": "object", "properties": {"ünï": {"type": "string"}}, "required": ["ünï"]},
            "{ünï: string}",
            id="unicode-name",
        ),
    ],
)
def test_signature(schema: dict[str, Any], text: str) -> None:
    assert signature(schema) == text


@pytest.mark.parametrize(
    ("text", "first"),
    [
        pytest.param("Get the weather. Then more.", "Get the weather.", id="two-sentences"),
        pytest.param("Get the weather\nsecond line", "Get the weather", id="first-line"),
        pytest.param(
            "Version 2.5 of it. More.", "Version 2.5 of it.", id="decimal-point-is-not-an-end"
        ),
        pytest.param("  ", "", id="blank"),
    ],
)
def test_first_sentence(text: str, first: str) -> None:
    assert first_sentence(text) == first
