"""Schema dialects: rewrite a tool's JSON Schema into the subset one provider family accepts.

Pure and deterministic (DESIGN.md rule 4); comments name the refusal each rule avoids.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from conchcheck.core.names import Name
from conchcheck.core.roots import (
    ARRAY_WORDS,
    is_null,
    merge,
    rebase,
    sentences,
    shape_root,
)
from conchcheck.core.roots import ROOT_WRAPPER as ROOT_WRAPPER
from conchcheck.core.schemas import (
    clone,
    is_number,
    json_text,
    json_type,
    resolve_ref,
    strings_of,
    text_of,
    unique,
)
from conchcheck.errors import UnknownDialectError


class Dialect(Name):
    """The schema dialect a provider family accepts."""

    PERMISSIVE = "permissive"
    GEMINI = "gemini"
    ANTHROPIC = "anthropic"
    STRICT = "strict"


# The OpenAPI Schema fields Gemini's functionDeclarations[].parameters takes (S01–S16), in the
# order gemini/strict nodes list them; property order always follows the input.
_ORDER: tuple[str, ...] = ("anyOf", "type", "nullable", "description", "enum", "properties")
_ORDER += ("required", "items", "minItems", "maxItems", "minimum", "maximum", "minLength")
_ORDER += ("maxLength", "pattern")
GEMINI_KEYWORDS: frozenset[str] = frozenset(_ORDER)
STRICT_KEYWORDS: frozenset[str] = frozenset(
    {"type", "description", "enum", "items", "properties", "required"}
)
REF_DEPTH_LIMIT = 3  # expansions of one $ref along a path before the node is cut
MAX_NODES = 10_000  # nodes converted before expansion stops (hostile mutually-referencing defs)
MAX_DEPTH = 64  # nesting, and chained $ref/allOf hops, before a node is cut (bounded recursion)

_TYPES = ("string", "number", "integer", "boolean", "array", "object")
_BOUNDS = {
    "string": ("minLength", "maxLength", "pattern"),
    "array": ("minItems", "maxItems"),
    "integer": ("minimum", "maximum"),
    "number": ("minimum", "maximum"),
}
_OBJECT_WORDS = ("properties", "required", "additionalProperties", "patternProperties")
_NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
_HINTS = ("enum", "const", *_OBJECT_WORDS, *ARRAY_WORDS, *_NUMBER_WORDS, *_STRING_WORDS)
_ANY = ("string", "number", "boolean", "object")  # what an untyped gemini node may hold
_CHILD_WORDS = ("$ref", "allOf", "anyOf", "oneOf", "properties", "items", "prefixItems")
_RECURSIVE = "Recursive; deeper levels omitted."
_TOO_DEEP = "Nested too deep; deeper levels omitted."
_TOO_LARGE = "Schema too large; deeper levels omitted."
_LIST = (list, tuple)  # JSON arrays; tuples too, for schemas built in Python
_SCHEMA = (Mapping, bool)


def to_dialect(schema: Mapping[str, Any], family: str | Dialect) -> dict[str, Any]:
    """Return a new copy of `schema` in the dialect of `family`; the input is never modified.

    Where the rules leave room: a root anyOf/oneOf of objects is merged (properties united,
    required where every branch requires, "Fill in one of these alternatives: (1) a; (2) b.");
    any other non-object root is wrapped as {ROOT_WRAPPER: root}. permissive and anthropic keep
    nested boolean schemas; gemini/strict read `true` as {} and drop a `false` property or branch.
    A $ref met a (REF_DEPTH_LIMIT + 1)th time on a path becomes {"type": <target's type>,
    "description": "<description> Recursive; deeper levels omitted."} ("Schema too large; …" past
    MAX_NODES nodes, "Nested too deep; …" past MAX_DEPTH); a dangling $ref is dropped. Gemini puts
    anyOf's siblings into each branch. Words joining the description, in order: "Items in order:
    string, integer." (prefixItems; the first becomes `items`), "Format: date-time.", "Default:
    "now".", "Example: 1." / "Examples: 1, 2." (JSON), strict's "Also accepts: integer, null.".
    An array without items gets string items; an untyped node is typed from its keywords, else
    it is any value: gemini's anyOf of a nullable string, number, boolean and object, strict's
    string (strict types an enum by its values); keywords foreign to a node's type are dropped.
    Gemini splices an anyOf inside an anyOf into it, and turns an integer's exclusiveMinimum/
    exclusiveMaximum into the next whole minimum/maximum, a number's into "Greater than 0.".
    """
    dialect = _dialect(family)
    if dialect is Dialect.PERMISSIVE:
        copied: dict[str, Any] = clone(schema)
        return copied
    converter = _Converter(schema, dialect)
    root, wrapped, refs = shape_root(schema, converter)
    if dialect is Dialect.ANTHROPIC:
        shaped: dict[str, Any] = rebase(root) if wrapped else clone(root)
        return shaped
    return converter.convert(root, refs, 0)


def unwrap_arguments(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], family: str | Dialect
) -> Any:
    """Undo the root wrapping.

    When to_dialect wrapped this schema's root for this family, return arguments["value"];
    otherwise return arguments unchanged.
    """
    dialect = _dialect(family)
    if not isinstance(arguments, Mapping) or ROOT_WRAPPER not in arguments:
        return arguments
    if dialect is Dialect.PERMISSIVE:
        return arguments
    _, wrapped, _ = shape_root(schema, _Converter(schema, dialect))
    return arguments[ROOT_WRAPPER] if wrapped else arguments


def _dialect(family: str | Dialect) -> Dialect:
    if isinstance(family, Dialect):
        return family
    names = [dialect.value for dialect in Dialect]
    try:
        return Dialect(str(family).strip().lower())
    except ValueError:
        import difflib  # only for the error message: kept off start-up

        close = difflib.get_close_matches(str(family).lower(), names, n=1)
        hint = f"Did you mean '{close[0]}'?" if close else "When unsure, use 'strict'."
        raise UnknownDialectError(
            f"Unknown schema dialect {family!r}. Choose one of: {', '.join(names)}.", hint=hint
        ) from None


class _Converter:
    """One gemini/strict conversion: the document refs resolve against, and the node budget."""

    def __init__(self, root: Mapping[str, Any], dialect: Dialect) -> None:
        self.root = root
        self.gemini = dialect is Dialect.GEMINI
        self.nodes = 0

    def flatten(
        self, node: Any, refs: tuple[str, ...], hops: int
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Resolve the node's own $ref and allOf into one plain dict; children stay raw."""
        schema = _as_schema(node)
        if hops > MAX_DEPTH:
            return self.stub(schema, _TOO_DEEP), refs
        parts = [{k: v for k, v in schema.items() if k not in ("$ref", "allOf")}]
        ref = schema.get("$ref")
        target = resolve_ref(self.root, ref) if isinstance(ref, str) else None
        if isinstance(ref, str) and target is not None:
            # Gemini rejects $ref ("Unknown name \"ref\"", S04), so it is inlined; recursion is cut.
            if refs.count(ref) >= REF_DEPTH_LIMIT or self.nodes > MAX_NODES:
                note = _TOO_LARGE if self.nodes > MAX_NODES else _RECURSIVE
                return self.stub(schema, note), refs
            flat, refs = self.flatten(target, (*refs, ref), hops + 1)
            parts.append(flat)
        all_of = schema.get("allOf")
        for branch in all_of if isinstance(all_of, _LIST) else ():
            flat, refs = self.flatten(branch, refs, hops + 1)
            parts.append(flat)
        return merge(parts), refs

    def stub(self, node: Mapping[str, Any], note: str) -> dict[str, Any]:
        """A typed leaf standing for a node that is not expanded further."""
        ref = node.get("$ref")
        target = _as_schema(resolve_ref(self.root, ref) if isinstance(ref, str) else None)
        basis = node if "type" in node or not target else target
        kind = _infer_type(basis, self.gemini)
        description = text_of(node.get("description")) or text_of(target.get("description"))
        out: dict[str, Any] = {"type": kind, "description": sentences(description, [note])}
        if kind == "array":
            out["items"] = {"type": "string"}
        return out

    def convert(self, node: Any, refs: tuple[str, ...], depth: int) -> dict[str, Any]:
        """Convert one schema node and its children."""
        self.nodes += 1
        parent = isinstance(node, Mapping) and any(word in node for word in _CHILD_WORDS)
        if parent and (self.nodes > MAX_NODES or depth > MAX_DEPTH):
            node = self.stub(node, _TOO_LARGE if self.nodes > MAX_NODES else _TOO_DEEP)
        flat, refs = self.flatten(node, refs, 0)
        branches = flat.get("anyOf", flat.get("oneOf"))
        rest = {k: v for k, v in flat.items() if k not in ("anyOf", "oneOf")}
        if isinstance(branches, _LIST):
            flats = [self.flatten(branch, refs, 0) for branch in branches if branch is not False]
            null = any(is_null(branch) for branch, _ in flats)
            # Siblings go into each branch: A and (B or C) = (A and B) or (A and C).
            options = [(merge([rest, b]), b_refs) for b, b_refs in flats if not is_null(b)]
            nulls = ["null"] if null else []
            if not options:
                return self.single(rest, refs, depth, nulls)
            if len(options) == 1 or not self.gemini:
                # strict is the lowest common denominator (DESIGN rule 4 lists no anyOf): one
                # branch is kept and the description names the others.
                first = self.convert(options[0][0], options[0][1], depth + 1)
                others = [_infer_type(option, self.gemini) for option, _ in options[1:]]
                return self.also(first, others + nulls)
            # Vertex refuses anyOf with siblings (S14; BerriAI/litellm#11164): only anyOf stays.
            converted = [
                self.convert(option, option_refs, depth + 1) for option, option_refs in options
            ]
            return _any_of([_nullable(b) for b in converted] if null else converted)
        declared = flat.get("type")
        if self.gemini and declared is None and not any(word in flat for word in _HINTS):
            # Nothing says what the value is, so any value fits. Gemini has no "any" and refuses
            # an untyped node (S10/S15); string alone would turn a number, a flag or a null the
            # server takes into text (github-mcp-server's projects_write `value`: "Any JSON value
            # is accepted; use null to clear the field"). So: every scalar, and an object, each
            # nullable. A list is left out: its items would need an "any" of their own.
            return _any_of([self.single({**rest, "type": t}, refs, depth, ["null"]) for t in _ANY])
        if not isinstance(declared, _LIST):
            return self.single(rest, refs, depth, [])
        # Gemini refuses a "null" type (S09) and llama.cpp's Hermes template refuses type lists.
        names = unique(name for name in declared if name in _TYPES)
        nulls = ["null"] if "null" in declared else []
        if self.gemini and len(names) > 1 and "enum" not in flat and "const" not in flat:
            return _any_of([self.single({**rest, "type": t}, refs, depth, nulls) for t in names])
        typed = {**rest, "type": names[0]} if names else {k: rest[k] for k in rest if k != "type"}
        return self.single(typed, refs, depth, names[1:] + nulls)

    def single(
        self, flat: Mapping[str, Any], refs: tuple[str, ...], depth: int, others: list[str]
    ) -> dict[str, Any]:
        """Convert a node without alternatives; `others` are the types it also accepts."""
        kind = _infer_type(flat, self.gemini)
        out: dict[str, Any] = {"type": kind}
        null = flat.get("type") == "null" or flat.get("nullable") is True
        values = [flat["const"]] if "const" in flat else flat.get("enum")
        if isinstance(values, _LIST) and self.gemini:
            # Gemini takes only string enums; the argument reader turns "1" back into 1.
            texts = unique(
                v if isinstance(v, str) else json_text(v) for v in values if v is not None
            )
            null = null or None in values
            if texts:
                out["enum"] = texts
        elif isinstance(values, _LIST) and values:
            out["enum"] = clone(values)
        notes: list[str] = []
        if kind == "object":
            props = flat.get("properties")
            converted = {
                name: self.convert(sub, refs, depth + 1)
                for name, sub in (props.items() if isinstance(props, Mapping) else ())
                if sub is not False
            }
            if converted:  # Gemini: "properties: should be non-empty for OBJECT type" (S12).
                out["properties"] = converted
            required = flat.get("required")
            # Gemini: "required[0]: property is not defined" (S11).
            names = unique(name for name in strings_of(required) if name in converted)
            if names:
                out["required"] = names
        elif kind == "array":
            items, prefix = flat.get("items"), flat.get("prefixItems")
            if isinstance(items, _LIST):  # draft-04 tuple form
                items, prefix = None, items
            if isinstance(prefix, _LIST) and prefix:
                out["items"] = self.convert(prefix[0], refs, depth + 1)
                if len(prefix) > 1:
                    kinds = [_infer_type(self.flatten(p, refs, 0)[0], self.gemini) for p in prefix]
                    notes.append(f"Items in order: {', '.join(kinds)}.")
            elif isinstance(items, Mapping) or items is True:
                out["items"] = self.convert(items, refs, depth + 1)
            else:  # OpenAI refuses "array schema missing items" (S26).
                out["items"] = {"type": "string"}
        for key in _BOUNDS.get(kind, ()) if self.gemini else ():
            if _bound_ok(key, flat.get(key)):
                out[key] = flat[key]
        if self.gemini and kind in ("integer", "number"):
            notes += _exclusive(flat, kind, out)
        description = sentences(text_of(flat.get("description")), notes + _notes(flat))
        if description is not None:
            out["description"] = description
        return self.also(_ordered(out), others + (["null"] if null else []))

    def also(self, node: dict[str, Any], others: list[str]) -> dict[str, Any]:
        """Record the other accepted types: `nullable` for gemini, words for strict."""
        if self.gemini:
            return _nullable(node) if "null" in others else node
        others = unique(other for other in others if other != node.get("type"))
        if not others:
            return node
        note = f"Also accepts: {', '.join(others)}."
        return _ordered(
            {**node, "description": sentences(text_of(node.get("description")), [note])}
        )


def _infer_type(flat: Mapping[str, Any], gemini: bool) -> str:
    """The one type a node gets: declared, else inferred (Gemini S10/S15 want every node typed)."""
    declared = flat.get("type")
    known = [t for t in (declared if isinstance(declared, _LIST) else [declared]) if t in _TYPES]
    values = [flat["const"]] if "const" in flat else flat.get("enum")
    if isinstance(values, _LIST) and gemini:
        return "string"
    if known:
        return str(known[0])
    if isinstance(values, _LIST):
        return next((json_type(v) for v in values if v is not None), "string")
    for words, kind in (
        (_OBJECT_WORDS, "object"),
        (ARRAY_WORDS, "array"),
        (_NUMBER_WORDS, "number"),
    ):
        if any(word in flat for word in words):
            return kind
    return "string"


def _exclusive(flat: Mapping[str, Any], kind: str, out: dict[str, Any]) -> list[str]:
    """Gemini refuses exclusiveMinimum (S05): an integer's becomes the next whole minimum (zod's
    `.positive()` is `exclusiveMinimum: 0`), a number's becomes words; likewise the maximum."""
    notes = []
    for key, bound, word, step in (
        ("exclusiveMinimum", "minimum", "Greater", 1),
        ("exclusiveMaximum", "maximum", "Less", -1),
    ):
        value: Any = flat.get(key)
        if value is True and is_number(flat.get(bound)):  # draft-04: the bound is exclusive
            value = out.pop(bound, flat[bound])
        if not is_number(value) or not math.isfinite(value):
            continue
        old: Any = out.get(bound)
        if kind == "number":
            if not is_number(old) or (old - value) * step <= 0:  # else the bound says more
                notes.append(f"{word} than {json_text(value)}.")
            continue
        whole = math.floor(value) + 1 if step > 0 else math.ceil(value) - 1
        out[bound] = (
            whole if not is_number(old) else max(old, whole) if step > 0 else min(old, whole)
        )
    return notes


def _notes(flat: Mapping[str, Any]) -> list[str]:
    """Format, default and examples as words: Gemini refuses `default` (S06) and most formats."""
    fmt = flat.get("format")
    notes = (
        [f"Format: {fmt if isinstance(fmt, str) else json_text(fmt)}."] if fmt is not None else []
    )
    notes += [f"Default: {json_text(flat['default'])}."] if "default" in flat else []
    examples = flat.get("examples")
    samples = (
        list(examples) if isinstance(examples, _LIST) else [examples] if "examples" in flat else []
    )
    samples += [flat["example"]] if "example" in flat else []  # OpenAPI's singular form
    if samples:
        label = "Example" if len(samples) == 1 else "Examples"
        notes.append(f"{label}: {', '.join(json_text(sample) for sample in samples)}.")
    return notes


def _any_of(branches: list[dict[str, Any]]) -> dict[str, Any]:
    """Alternatives as one anyOf, a branch that is an anyOf itself spliced in (A or (B or C)
    is A or B or C), since its branch would be untyped (S10/S15); repeats are dropped."""
    flat: list[dict[str, Any]] = []
    for branch in branches:
        for option in branch["anyOf"] if list(branch) == ["anyOf"] else [branch]:
            flat += [] if option in flat else [option]
    return flat[0] if len(flat) == 1 else {"anyOf": flat}


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if list(node) == ["anyOf"]:  # nullable cannot sit beside anyOf on Vertex (S14)
        return {"anyOf": [_nullable(branch) for branch in node["anyOf"]]}
    return _ordered({**node, "nullable": True})


def _ordered(node: Mapping[str, Any]) -> dict[str, Any]:
    return {key: node[key] for key in _ORDER if key in node}


def _as_schema(node: Any) -> Mapping[str, Any]:
    return node if isinstance(node, Mapping) else {}  # `true` is {}; `false` is dropped earlier


def _bound_ok(key: str, value: Any) -> bool:
    if key == "pattern":
        return isinstance(value, str)
    return is_number(value) and (key in _NUMBER_WORDS or (isinstance(value, int) and value >= 0))
