"""JSON Schemas shipped with conchcheck, and what their errors mean in conchcheck's words.

Each schema is ``<name>.schema.json`` here, read with ``importlib.resources``. A problem is a
path and a message (``expected an object, got a list``); the caller adds file and line.
"""

from __future__ import annotations

import functools
import json
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

Location = list[str | int]
"""Where in the instance: keys and list indexes from the root."""

KINDS = {"object": "an object", "array": "a list", "string": "text", "boolean": "true or false"}
KINDS |= {"integer": "a whole number", "number": "a number", "null": "null"}


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """A validator for the shipped schema ``<name>.schema.json`` (which may ``$ref`` the
    others by their ``$id``: the prompts file's prompt is the matrix's)."""
    return Draft202012Validator(_load(name), registry=_registry())


def _load(name: str) -> Any:
    return json.loads((files(__name__) / f"{name}.schema.json").read_text(encoding="utf-8"))


@functools.cache
def _registry() -> Registry[Any]:
    shipped = (
        _load(entry.name.removesuffix(".schema.json"))
        for entry in files(__name__).iterdir()
        if entry.name.endswith(".schema.json")
    )
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in shipped if "$id" in schema
    )


def problems(name: str, instance: Any) -> list[tuple[Location, str]]:
    """Every way ``instance`` fails the shipped schema ``name``, as (path, message), once."""
    # One ``required`` error comes per missing key, and each names every missing key.
    found = {
        (tuple(path), message): None
        for error in validator(name).iter_errors(instance)
        for path, message in describe(error)
    }
    return [(list(path), message) for path, message in found]


def describe(error: ValidationError) -> list[tuple[Location, str]]:
    """A schema error in conchcheck's words, at the path of what is wrong.

    A subschema's ``x-message`` says what a value should be, in place of the keyword's own.
    """
    path: Location = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    value: Any = error.instance
    want: Any = error.validator_value
    if "propertyNames" in error.relative_schema_path:
        path.append(value)  # the key itself is wrong
    known = ", ".join(schema.get("properties", {}))
    match error.validator:
        case "required":
            return [(path, f"missing '{key}'") for key in want if key not in value]
        case "additionalProperties":
            unknown = [key for key in value if key not in schema.get("properties", {})]
            return [([*path, key], f"unknown key; expected one of {known}") for key in unknown]
        case "minProperties" | "maxProperties" if known:
            return [(path, f"expected exactly one of {known}, got {', '.join(value) or 'none'}")]
        case "uniqueItems":
            again = next(item for i, item in enumerate(value) if item in value[:i])
            return [(path, f"lists {show(again)} more than once")]
    got = kind(value) if error.validator == "type" else show(value)
    expected = schema.get("x-message") or _expected(str(error.validator), want)
    return [(path, f"{expected}, got {got}" if expected else error.message)]


def kind(value: Any) -> str:
    """What a value is, in words: ``an object``, ``a list``, ``text``, ``a number``, …"""
    if isinstance(value, bool):
        return KINDS["boolean"]
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "a number"
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "text"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def show(value: Any) -> str:
    """A value as JSON, for a message."""
    return json.dumps(value, ensure_ascii=False)


def _expected(keyword: str, want: Any) -> str | None:
    s = "" if want == 1 else "s"
    if keyword == "type":
        return "expected " + " or ".join(
            KINDS[k] for k in ([want] if isinstance(want, str) else want)
        )
    if keyword == "minLength" and want == 1:
        return "expected text that is not empty"
    if keyword == "enum":
        return "expected one of " + ", ".join(show(v) for v in want)
    texts = {
        "const": f"expected {show(want)}",
        "pattern": f"expected text matching {want}",
        "minLength": f"expected at least {want} character{s}",
        "minItems": f"expected at least {want} item{s}",
        "minProperties": f"expected at least {want} key{s}",
        "minimum": f"expected at least {want}",
        "maximum": f"expected at most {want}",
    }
    return texts.get(keyword)
