"""Tool definitions as conchcheck reads them, and the one-line signature of a schema."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from conchcheck.core.schemas import resolve_ref, strings_of
from conchcheck.errors import InputError

SIGNATURE_DEPTH = 3
"""Nested objects deeper than this are written as ``object`` in a signature."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: its name, description and parameter schema (``{}`` when it takes none)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


def as_tool(spec: Mapping[str, Any]) -> Tool:
    """Read a tool in the plain form or the OpenAI ``{"type": "function", …}`` form."""
    body: Any = spec.get("function") if spec.get("type") == "function" else spec
    if not isinstance(body, Mapping) or not isinstance(body.get("name"), str):
        raise InputError(
            "A tool must have a 'name' (text), in the plain form or under 'function'.",
            hint='Write {"name": "get_weather", "parameters": {…}}.',
        )
    # Anthropic spells the schema `input_schema`; Gemini `parametersJsonSchema`.
    schema = body.get("parameters", body.get("input_schema", body.get("parametersJsonSchema")))
    description = body.get("description")
    return Tool(
        name=body["name"],
        description=description if isinstance(description, str) else "",
        parameters=schema if isinstance(schema, Mapping) else {},
    )


def as_tools(specs: Iterable[Mapping[str, Any] | Tool]) -> tuple[Tool, ...]:
    """Read every tool of a list; ``Tool`` values pass as they are."""
    return tuple(spec if isinstance(spec, Tool) else as_tool(spec) for spec in specs)


def signature(schema: Mapping[str, Any]) -> str:
    """The schema on one line: ``{query: string, limit?: integer, order?: "a"|"b"}``."""
    return _Signature(schema).render(schema, 0)


def first_sentence(text: str) -> str:
    """The first sentence of a description, or its first line when it has no full stop."""
    line = text.strip().split("\n", 1)[0].strip()
    match = _SENTENCE_END.search(line)
    return line[: match.start() + 1] if match else line


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


class _Signature:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.seen_refs: list[str] = []

    def resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any] | None:
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if ref in self.seen_refs:
            return None
        target = resolve_ref(self.root, ref)
        return target if isinstance(target, Mapping) else None

    def render(self, node: Any, depth: int) -> str:
        if not isinstance(node, Mapping):
            return "any"
        resolved = self.resolve(node)
        if resolved is None:
            return "object" if "$ref" in node else "any"
        ref = node.get("$ref")
        if isinstance(ref, str):
            self.seen_refs.append(ref)
            try:
                return self.render(resolved, depth)
            finally:
                self.seen_refs.pop()
        return self.shape(resolved, depth)

    def shape(self, node: Mapping[str, Any], depth: int) -> str:
        if "const" in node:
            return json.dumps(node["const"], ensure_ascii=False)
        enum = node.get("enum")
        if isinstance(enum, list) and enum:
            return "|".join(json.dumps(v, ensure_ascii=False) for v in enum)
        for combiner in ("anyOf", "oneOf"):
            branches = node.get(combiner)
            if isinstance(branches, list) and branches:
                return "|".join(self.render(b, depth) for b in branches)
        kind = node.get("type")
        if isinstance(kind, list):
            return "|".join(self.typed(node, k, depth) for k in kind if isinstance(k, str)) or "any"
        if kind is None:
            if "properties" in node:
                kind = "object"
            elif "items" in node:
                kind = "array"
        return self.typed(node, kind, depth) if isinstance(kind, str) else "any"

    def typed(self, node: Mapping[str, Any], kind: str, depth: int) -> str:
        if kind == "array":
            items = node.get("items")
            inner = self.render(items, depth) if isinstance(items, Mapping) else "any"
            return f"({inner})[]" if "|" in inner else f"{inner}[]"
        if kind != "object":
            return kind
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            return "object"
        if depth >= SIGNATURE_DEPTH:
            return "object"
        required = node.get("required")
        # Only names are required: a list inside (an invalid schema) requires nothing.
        needed = set(strings_of(required))
        fields = [
            f"{name}{'' if name in needed else '?'}: {self.render(sub, depth + 1)}"
            for name, sub in properties.items()
        ]
        if node.get("additionalProperties") not in (None, False):
            fields.append("...")
        return "{" + ", ".join(fields) + "}"


class ChoiceMode(str, Enum):
    """How the model may use the tools it is given."""

    AUTO = "auto"
    NONE = "none"
    REQUIRED = "required"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """A tool choice; ``name`` is set for ``ChoiceMode.TOOL`` (force that tool)."""

    mode: ChoiceMode
    name: str | None = None
