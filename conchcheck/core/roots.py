"""The root of a tool's schema: one object, as Anthropic, OpenAI, Vertex and Bedrock want it,
and the node merges that takes (an anyOf of objects united, allOf joined, a scalar root
wrapped). Pure; comments name the refusal each rule avoids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from conchcheck.core.schemas import clone, is_number, strings_of, text_of, unique

_LIST = (list, tuple)  # JSON arrays; tuples too, for schemas built in Python
_SCHEMA = (Mapping, bool)

ROOT_WRAPPER = "value"
ARRAY_WORDS = ("items", "prefixItems", "minItems", "maxItems")
_NOT_OBJECT_WORDS = ("anyOf", "oneOf", "pattern", "minLength", "maxLength", "minimum", "maximum")
HOISTED = ("$schema", "$id", "$defs", "definitions")
_LOWER = ("minimum", "minLength", "minItems", "minProperties")  # allOf keeps the larger
_UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")  # allOf keeps the smaller
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_SLOTS: tuple[str, ...] = ("allOf", "anyOf", "oneOf", "prefixItems", "items", "not")
SCHEMA_SLOTS += ("additionalItems", "additionalProperties", "unevaluatedItems", "contains")
SCHEMA_SLOTS += ("unevaluatedProperties", "propertyNames", "if", "then", "else", "contentSchema")


class Flattener(Protocol):
    """What shaping the root needs of a converter: a node with its $ref and allOf resolved."""

    def flatten(
        self, node: Any, refs: tuple[str, ...], depth: int
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """``node`` flattened, and the refs expanded on the way."""


def shape_root(
    schema: Mapping[str, Any], converter: Flattener
) -> tuple[dict[str, Any], bool, tuple[str, ...]]:
    """One object at the root: (raw root, whether it was wrapped, refs expanded on the way)."""
    flat, refs = converter.flatten(schema, (), 0)
    while True:
        branches = flat.get("anyOf", flat.get("oneOf"))
        rest = {k: v for k, v in flat.items() if k not in ("anyOf", "oneOf")}
        if not isinstance(branches, _LIST) or not is_object(rest):
            break  # Anthropic: "input_schema.type: Field required" (S21), so as_object.
        # Anthropic: "input_schema does not support oneOf, allOf, or anyOf at the top level" (S20).
        flats = [converter.flatten(branch, refs, 0) for branch in branches if branch is not False]
        options = [(branch, b_refs) for branch, b_refs in flats if not is_null(branch)]
        if len(options) == 1 and is_object(options[0][0]):
            # The branch's own anyOf may come up with it: go round again.
            flat, refs = merge([rest, options[0][0]]), options[0][1]
            continue
        if options and all(is_object(option) for option, _ in options):
            return as_object(union_objects(rest, [option for option, _ in options])), False, refs
        break
    if not isinstance(branches, _LIST) and is_object(rest):
        return as_object(rest), False, refs
    # Vertex: "parameters schema should be of type OBJECT" (S16); OpenAI (S27), Bedrock (S30).
    inner = {k: v for k, v in schema.items() if k not in (*HOISTED, "description")}
    described = {k: schema[k] for k in ("description",) if k in schema}
    hoisted = {k: schema[k] for k in HOISTED if k in schema}
    properties = {"properties": {ROOT_WRAPPER: inner}, "required": [ROOT_WRAPPER]}
    return {"type": "object", **described, **properties, **hoisted}, True, ()


def union_objects(rest: Mapping[str, Any], options: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Merge object alternatives: properties united, required only where every branch says so."""
    own = rest.get("properties")
    props: dict[str, list[Any]] = {}
    requires = [unique(strings_of(option.get("required"))) for option in options]
    listed = []
    for i, (option, required) in enumerate(zip(options, requires, strict=True), 1):
        option_props = option.get("properties")
        option_props = option_props if isinstance(option_props, Mapping) else {}
        for name, sub in option_props.items():
            seen = props.setdefault(name, [])
            seen += [] if sub in seen else [sub]
        listed.append(
            f"({i}) {', '.join(unique([*map(str, option_props), *required])) or 'no fields'}"
        )
    note = f"Fill in one of these alternatives: {'; '.join(listed)}."
    out = {**rest, "description": sentences(text_of(rest.get("description")), [note])}
    out["properties"] = dict(own) if isinstance(own, Mapping) else {}
    for name, seen in props.items():
        out["properties"].setdefault(name, seen[0] if len(seen) == 1 else {"anyOf": seen})
    common = [name for name in requires[0] if all(name in names for names in requires[1:])]
    required = unique([*strings_of(rest.get("required")), *common])
    return {**out, "required": required} if required else out


def merge(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """allOf as one node: properties and required united, bounds tightened, else first wins."""
    out = dict(parts[0])
    for part in parts[1:]:
        for key, value in part.items():
            old = out.setdefault(key, value)
            if old is value:
                continue
            if key == "properties" and isinstance(old, Mapping) and isinstance(value, Mapping):
                joined = dict(old)
                for name, sub in value.items():
                    now = joined.setdefault(name, sub)
                    if now != sub:
                        joined[name] = {"allOf": [now, sub]}
                out[key] = joined
            elif key == "required" and isinstance(old, _LIST) and isinstance(value, _LIST):
                out[key] = unique([*strings_of(old), *strings_of(value)])
            elif key == "items" and isinstance(old, _SCHEMA) and isinstance(value, _SCHEMA):
                out[key] = {"allOf": [old, value]}
            elif key in _LOWER and is_number(old) and is_number(value):
                out[key] = max(old, value)
            elif key in _UPPER and is_number(old) and is_number(value):
                out[key] = min(old, value)
    return out


def rebase(node: Any) -> Any:
    """Copy a wrapped root, pointing its local refs at the root's new place under ROOT_WRAPPER."""
    if not isinstance(node, Mapping):
        return clone(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#"):
            from urllib.parse import unquote

            head = unquote(value[1:]).split("/")[1:2]
            keep = value[1:] and (
                not value.startswith("#/") or head in (["$defs"], ["definitions"])
            )
            out[key] = value if keep else f"#/properties/{ROOT_WRAPPER}{value[1:]}"
        elif key in SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: rebase(sub) for name, sub in value.items()}
        elif key in SCHEMA_SLOTS and isinstance(value, _LIST):
            out[key] = [rebase(sub) for sub in value]
        else:
            out[key] = rebase(value) if key in SCHEMA_SLOTS else clone(value)
    return out


def sentences(base: str | None, notes: Iterable[str]) -> str | None:
    """`base` followed by each note not already at its end, as sentences."""
    text = base
    for note in notes:
        stem = (text or "").strip()
        if stem.endswith(note):
            continue
        stem += "." if stem and stem[-1] not in ".!?" else ""
        text = f"{stem} {note}" if stem else note
    return text


def is_object(flat: Mapping[str, Any]) -> bool:
    """Whether a flattened node is, or can only be, an object."""
    declared = flat.get("type")
    if "enum" in flat or "const" in flat:
        return False  # Gemini would type the root as a string enum
    if isinstance(declared, _LIST):
        return [t for t in declared if t != "null"] == ["object"]
    if declared is not None:
        return bool(declared == "object")
    return not any(word in flat for word in (*_NOT_OBJECT_WORDS, *ARRAY_WORDS))


def as_object(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The node with ``type: object`` said, first when it wasn't said at all."""
    return {**flat, "type": "object"} if "type" in flat else {"type": "object", **flat}


def is_null(flat: Mapping[str, Any]) -> bool:
    """Whether the node allows only null (a type, an enum or a const of it)."""
    declared, values = flat.get("type"), flat.get("enum")
    if "const" in flat:
        values = [flat["const"]]
    names = list(declared) if isinstance(declared, _LIST) else [declared]
    return names == ["null"] or (isinstance(values, _LIST) and list(values) == [None])
