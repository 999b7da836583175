"""Read a tool call's arguments: mend, normalise guided only by the schema, check strictly.

DESIGN.md rules 1–3. Normalising never invents a value and never widens what a call may do:
the normalised arguments still go through the full strict check.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from conchcheck.repair import MAX_DEPTH, Repair, Unreadable, depth_of, read_json
from conchcheck.tools import signature

MAX_UNWRAP = 3
"""How many layers of JSON-in-a-string and envelopes are unwrapped."""

MAX_NORMALISE_DEPTH = 64
"""Deeper values are passed to the strict check as they are."""


class Normalisation(str, Enum):
    """A change made to read arguments the way their schema says. Values are stable codes."""

    NUMBER_FROM_TEXT = "number_from_text"
    BOOLEAN_FROM_TEXT = "boolean_from_text"
    NULL_FROM_TEXT = "null_from_text"
    LIST_FROM_TEXT = "list_from_text"
    OBJECT_FROM_TEXT = "object_from_text"
    SINGLE_TO_LIST = "single_to_list"
    ENUM_CASE = "enum_case"
    BROWSER_REF = "browser_ref"
    DROPPED_FIELD = "dropped_field"


class ProblemKind(str, Enum):
    """What is wrong with one field."""

    MISSING = "missing"
    TYPE = "type"
    ENUM = "enum"
    RANGE = "range"
    LENGTH = "length"
    PATTERN = "pattern"
    ITEMS = "items"
    CONST = "const"
    UNREADABLE = "unreadable"
    CUT_OFF = "cut_off"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Problem:
    """One field that does not fit, as the model will be told."""

    field: str
    """Dotted path such as ``filters.since`` or ``tags[2]``; ``(arguments)`` for the whole."""
    kind: ProblemKind
    wanted: str
    """What the schema wants, in words: ``text``, ``a number``, ``one of "a", "b"``."""
    got: str | None
    """What was sent, in words (``the text "ten"``); None when the field was missing."""
    valid_values: tuple[Any, ...] = ()
    line: str = ""
    """The line of the message, without its leading ``- ``."""


@dataclass(frozen=True, slots=True)
class Change:
    """One normalisation: which field, what was done, the value before and after."""

    field: str
    normalisation: Normalisation
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class ArgumentsResult:
    """How a call's arguments were read, normalised and checked."""

    ok: bool
    arguments: Any
    """The normalised arguments (what the tool receives when ``ok``); None if unreadable."""
    repairs: tuple[Repair | Normalisation, ...] = ()
    changes: tuple[Change, ...] = ()
    dropped: tuple[str, ...] = ()
    """Fields the schema does not take, removed before the tool could see them."""
    problems: tuple[Problem, ...] = ()
    message: str = ""
    """The model-facing text of DESIGN.md rule 3; empty when ``ok``."""
    checked: bool = True
    """False when the schema itself could not be used for the strict check."""
    waived: tuple[str, ...] = ()
    """Failures of combinators the simple checks don't judge (an integration's schema)."""


def read_arguments(
    raw: str | Mapping[str, Any] | Any,
    schema: Mapping[str, Any],
    *,
    cut_off: bool = False,
    tool: str | None = None,
) -> ArgumentsResult:
    """Read ``raw`` arguments for a tool with ``schema``; ``tool`` names it in the message.

    With ``cut_off=True`` (the reply hit its token limit) unclosed text is never mended.
    """
    repairs: list[Repair | Normalisation] = []
    try:
        value = _unwrap(raw, schema, repairs, cut_off=cut_off)
    except Unreadable as exc:
        cut = exc.reason.startswith("cut off")
        problem = _problem(
            "(arguments)",
            ProblemKind.CUT_OFF if cut else ProblemKind.UNREADABLE,
            "one JSON object",
            None,
            line=(
                "(arguments): the reply was cut off before the arguments ended, so nothing was run."
                if cut
                else f"(arguments): could not be read as JSON ({exc.reason})."
            ),
        )
        return _result(False, None, repairs, (), (), (problem,), schema, tool, True, ())
    walk = _Normaliser(schema)
    value = walk.value(value, schema, "", 0)
    repairs.extend(c.normalisation for c in walk.changes if c.normalisation not in repairs)
    problems, checked, waived = _check(value, schema)
    return _result(
        not problems, value, repairs, walk.changes, walk.dropped, problems, schema, tool,
        checked, waived,
    )  # fmt: skip


def _unwrap(
    raw: Any, schema: Mapping[str, Any], repairs: list[Repair | Normalisation], *, cut_off: bool
) -> Any:
    value = raw
    if isinstance(raw, (dict, list)) and depth_of(raw) > MAX_DEPTH:
        # Providers that send arguments as an object (Ollama) parse them with no depth limit.
        raise Unreadable(f"it is nested deeper than {MAX_DEPTH} levels")
    if isinstance(raw, str):
        if not raw.strip():
            # Several servers send "" for a tool that takes no arguments.
            repairs.append(Repair.EMPTY)
            return {}
        reading = read_json(raw, mend_unclosed=not cut_off)
        repairs.extend(reading.repairs)
        value = reading.value
    properties = schema.get("properties")
    names = properties.keys() if isinstance(properties, Mapping) else set()
    for _ in range(MAX_UNWRAP):
        if isinstance(value, str) and value.strip()[:1] in ("{", "["):
            reading = read_json(value, mend_unclosed=not cut_off)
            repairs.append(Repair.JSON_STRING)
            repairs.extend(r for r in reading.repairs if r not in repairs)
            value = reading.value
        elif isinstance(value, dict) and (key := _envelope_key(value, names)):
            repairs.append(Repair.ENVELOPE)
            value = value[key]
        else:
            break
    if value is None and schema.get("type", "object") == "object":
        repairs.append(Repair.EMPTY)
        return {}
    return value


def _envelope_key(value: dict[str, Any], names: Any) -> str | None:
    # `{"arguments": {...}}` or `{"name": "f", "arguments": "{...}"}`: a whole call sent where
    # its arguments belong. Never when the tool itself takes one of those fields.
    for key in ("arguments", "parameters"):
        if key in value and set(value) <= {key, "name", "type"} and not set(value) & set(names):
            return key
    return None


def _result(
    ok: bool,
    value: Any,
    repairs: list[Repair | Normalisation],
    changes: tuple[Change, ...] | list[Change],
    dropped: tuple[str, ...] | list[str],
    problems: tuple[Problem, ...],
    schema: Mapping[str, Any],
    tool: str | None,
    checked: bool,
    waived: tuple[str, ...],
) -> ArgumentsResult:
    unique = tuple(dict.fromkeys(repairs))
    message = "" if ok else _message(problems, tuple(dropped), schema, tool)
    return ArgumentsResult(
        ok, value, unique, tuple(changes), tuple(dropped), problems, message, checked, waived
    )


def _message(
    problems: tuple[Problem, ...],
    dropped: tuple[str, ...],
    schema: Mapping[str, Any],
    tool: str | None,
) -> str:
    subject = f"The arguments for {tool}" if tool else "The arguments"
    lines = [f"{subject} don't fit. Fix these and call it again:"]
    lines.extend(f"- {p.line}" for p in problems)
    lines.extend(f"- {name}: not a field this tool takes, so it was dropped." for name in dropped)
    lines.append(f"It takes: {signature(schema)}")
    return "\n".join(lines)


# -- normalising ------------------------------------------------------------------------------

_NUMBER_TEXT = re.compile(r"\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_REF_TEXT = re.compile(r"\s*\[?\s*(?:ref\s*[=:]\s*)?([A-Za-z]{0,3}\d+)\s*\]?\s*")
_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "if")


class _Normaliser:
    """Walks a value beside its schema, building a normalised copy (the input is untouched)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.changes: list[Change] = []
        self.dropped: list[str] = []

    def change(self, field: str, kind: Normalisation, before: Any, after: Any) -> Any:
        self.changes.append(Change(field or "(arguments)", kind, before, after))
        return after

    def value(self, value: Any, node: Any, field: str, depth: int) -> Any:
        node, nullable = _simple(_resolve(self.root, node))
        if node is None or depth > MAX_NORMALISE_DEPTH:
            return _copy(value)
        kinds = _kinds(node)
        if nullable and kinds != ["string"] and value in ("null", "None"):
            return self.change(field, Normalisation.NULL_FROM_TEXT, value, None)
        if value is None or len(kinds) != 1:
            return self.enum(_copy(value), node, field)
        kind = kinds[0]
        if kind in ("integer", "number") and isinstance(value, str):
            if _NUMBER_TEXT.fullmatch(value):
                number = json.loads(value.strip().lstrip("+"))
                if isinstance(number, float) and number.is_integer() and kind == "integer":
                    number = int(number)
                return self.change(field, Normalisation.NUMBER_FROM_TEXT, value, number)
        elif kind == "boolean" and value in ("true", "false"):
            return self.change(field, Normalisation.BOOLEAN_FROM_TEXT, value, value == "true")
        elif kind == "array":
            return self.array(value, node, field, depth)
        elif kind == "object":
            return self.object(value, node, field, depth)
        elif kind == "string" and isinstance(value, str):
            return self.string(value, node, field)
        return self.enum(_copy(value), node, field)

    def array(self, value: Any, node: Mapping[str, Any], field: str, depth: int) -> Any:
        if isinstance(value, str) and value.strip().startswith("["):
            parsed = _read_quietly(value)
            if isinstance(parsed, list):
                value = self.change(field, Normalisation.LIST_FROM_TEXT, value, parsed)
        if not isinstance(value, list):
            value = self.change(field, Normalisation.SINGLE_TO_LIST, value, [value])
        items = node.get("items")
        return [self.value(v, items, f"{field}[{i}]", depth + 1) for i, v in enumerate(value)]

    def object(self, value: Any, node: Mapping[str, Any], field: str, depth: int) -> Any:
        if isinstance(value, str) and value.strip().startswith("{"):
            parsed = _read_quietly(value)
            if isinstance(parsed, dict):
                value = self.change(field, Normalisation.OBJECT_FROM_TEXT, value, parsed)
        if not isinstance(value, dict):
            return _copy(value)
        properties = node.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        extra = node.get("additionalProperties")
        # Open objects keep their fields; a schema that lists its fields and says nothing
        # more takes only those (the common tool schema, and the one models add fields to).
        closed = extra is False or (
            "properties" in node and extra in (None, False) and "patternProperties" not in node
        )
        result: dict[str, Any] = {}
        for key, item in value.items():
            path = f"{field}.{key}" if field else key
            if key in properties:
                result[key] = self.value(item, properties[key], path, depth + 1)
            elif closed:
                self.dropped.append(path)
                self.change(path, Normalisation.DROPPED_FIELD, item, None)
            elif isinstance(extra, Mapping):
                result[key] = self.value(item, extra, path, depth + 1)
            else:
                result[key] = _copy(item)
        return result

    def string(self, value: str, node: Mapping[str, Any], field: str) -> Any:
        name = field.rsplit(".", 1)[-1]
        if name.lower() == "ref" or name.endswith(("_ref", "Ref")):
            # Browser refs copied from a snapshot: `[ref=e12]`, `ref=e12`, `e12]`.
            match = _REF_TEXT.fullmatch(value)
            if match and match.group(1) != value:
                value = self.change(field, Normalisation.BROWSER_REF, value, match.group(1))
        return self.enum(value, node, field)

    def enum(self, value: Any, node: Mapping[str, Any], field: str) -> Any:
        options = node.get("enum")
        if not isinstance(options, list) or not isinstance(value, str) or value in options:
            return value
        folded = value.strip().casefold()
        matches = [o for o in options if isinstance(o, str) and o.casefold() == folded]
        if len(matches) == 1:
            return self.change(field, Normalisation.ENUM_CASE, value, matches[0])
        if _NUMBER_TEXT.fullmatch(value):
            number = json.loads(value.strip())
            hits = [o for o in options if not isinstance(o, bool) and o == number]
            if len(hits) == 1:
                return self.change(field, Normalisation.NUMBER_FROM_TEXT, value, hits[0])
        return value


def _resolve(root: Mapping[str, Any], node: Any) -> Mapping[str, Any] | None:
    """Follow local ``$ref`` pointers (bounded); None when one can't be followed."""
    for _ in range(32):
        if not isinstance(node, Mapping):
            return {} if node is True else None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#"):
            return None
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                return None
            target = target[part]
        node = target
    return None


def _simple(node: Mapping[str, Any] | None) -> tuple[Mapping[str, Any] | None, bool]:
    """The node to normalise against and whether null is allowed; None for a combinator."""
    if node is None:
        return None, False
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            others = [b for b in branches if not _is_null(b)]
            if len(others) == 1 and len(branches) == 2 and isinstance(others[0], Mapping):
                return others[0], True
            return None, False
    if any(key in node for key in _COMBINATORS):
        return None, False
    kind = node.get("type")
    return node, kind == "null" or (isinstance(kind, list) and "null" in kind)


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null"


def _kinds(node: Mapping[str, Any]) -> list[str]:
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


def _read_quietly(text: str) -> Any:
    try:
        return read_json(text).value
    except Unreadable:
        return None


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# -- checking ---------------------------------------------------------------------------------

_WAIVED = frozenset(
    {"anyOf", "oneOf", "not", "contains", "propertyNames", "dependentSchemas", "dependencies",
     "unevaluatedProperties", "unevaluatedItems", "patternProperties"}
)  # fmt: skip


def _check(
    value: Any, schema: Mapping[str, Any]
) -> tuple[tuple[Problem, ...], bool, tuple[str, ...]]:
    validator = _validator(schema)
    try:
        if validator is None:
            raise ValueError("no validator")
        # Whole-object errors (a missing field) first, then fields in the schema's order.
        errors = sorted(validator.iter_errors(value), key=lambda e: len(e.path) > 0)
    except Exception:
        # A schema jsonschema cannot use (unknown type, remote $ref, malformed) must never
        # turn a valid call into a refusal: the call goes through unchecked, and says so.
        return (), False, ()
    problems: list[Problem] = []
    waived: list[str] = []
    seen: set[str] = set()
    for error in errors:
        if error.validator in _WAIVED and _simple(error.schema)[0] is None:
            waived.append(f"{_field(error.absolute_path) or '(arguments)'}: {error.message}")
            continue
        for problem in _describe(error):
            if problem.line not in seen:
                seen.add(problem.line)
                problems.append(problem)
    return tuple(problems), True, tuple(waived)


def _validator(schema: Mapping[str, Any]) -> Any:
    try:
        canonical = json.dumps(schema)  # key order kept: it orders the messages
    except (TypeError, ValueError):
        return _build_validator(schema)
    return _cached_validator(canonical)


@functools.lru_cache(maxsize=256)
def _cached_validator(canonical: str) -> Any:
    # Checking a schema against its metaschema costs about a millisecond; a probe checks
    # the same few schemas thousands of times (bench/reader.py, read_arguments rows).
    return _build_validator(json.loads(canonical))


def _build_validator(schema: Mapping[str, Any]) -> Any:
    try:
        cls = validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(dict(schema))
        return cls(schema)
    except Exception:
        return None


def _field(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: jsonschema.ValidationError) -> list[Problem]:
    field = _field(error.absolute_path) or "(arguments)"
    schema: Any = error.schema
    rule, instance = error.validator, error.instance
    limit: Any = error.validator_value
    got = _got(instance)
    if rule == "required":
        props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
        missing = [n for n in limit if isinstance(instance, dict) and n not in instance]
        result = []
        for name in missing:
            path = f"{field}.{name}" if field != "(arguments)" else name
            wanted = _wanted(props.get(name, {}))
            line = f"{path}: required ({wanted}), but it was missing."
            result.append(_problem(path, ProblemKind.MISSING, wanted, None, line=line))
        return result
    if rule == "type":
        wanted = _type_words([limit] if isinstance(limit, str) else list(limit))
        if (
            wanted == "a number"
            and limit in ("integer", ["integer"])
            and isinstance(instance, float)
        ):
            wanted = "a whole number"
        return [_problem(field, ProblemKind.TYPE, wanted, got)]
    if rule == "enum":
        wanted = _one_of(limit)
        return [_problem(field, ProblemKind.ENUM, wanted, got, valid=tuple(limit))]
    if rule == "const":
        wanted = json.dumps(limit, ensure_ascii=False)
        return [_problem(field, ProblemKind.CONST, wanted, got, valid=(limit,))]
    bounds = {
        "minimum": "a number of at least", "maximum": "a number of at most",
        "exclusiveMinimum": "a number more than", "exclusiveMaximum": "a number less than",
        "minLength": "text of at least", "maxLength": "text of at most",
        "minItems": "a list of at least", "maxItems": "a list of at most",
    }  # fmt: skip
    if rule in bounds:
        unit = {"L": " characters", "I": " items"}.get(rule[3], "")
        kind = {"L": ProblemKind.LENGTH, "I": ProblemKind.ITEMS}.get(rule[3], ProblemKind.RANGE)
        return [_problem(field, kind, f"{bounds[rule]} {limit}{unit}", got)]
    if rule == "pattern":
        return [_problem(field, ProblemKind.PATTERN, f"text matching the pattern {limit}", got)]
    if rule in ("anyOf", "oneOf") and isinstance(schema, Mapping):
        branches = schema.get(rule, [])
        wanted = " or ".join(_wanted(b) for b in branches if isinstance(b, Mapping))
        return [_problem(field, ProblemKind.TYPE, wanted, got)]
    line = f"{field}: {error.message}."
    return [_problem(field, ProblemKind.OTHER, error.message, got, line=line)]


def _problem(
    field: str,
    kind: ProblemKind,
    wanted: str,
    got: str | None,
    *,
    valid: tuple[Any, ...] = (),
    line: str = "",
) -> Problem:
    line = line or f"{field}: expected {wanted}, got {got}."
    return Problem(field, kind, wanted, got, valid, line)


_TYPE_WORDS = {
    "string": "text", "integer": "a number", "number": "a number", "boolean": "true or false",
    "array": "a list", "object": "an object", "null": "null",
}  # fmt: skip


def _type_words(kinds: list[Any]) -> str:
    words = list(dict.fromkeys(_TYPE_WORDS.get(str(k), str(k)) for k in kinds))
    return " or ".join(words) or "any value"


def _one_of(options: list[Any]) -> str:
    return "one of " + ", ".join(json.dumps(o, ensure_ascii=False) for o in options)


def _wanted(node: Mapping[str, Any]) -> str:
    if isinstance(node.get("enum"), list):
        return _one_of(node["enum"])
    if "const" in node:
        return json.dumps(node["const"], ensure_ascii=False)
    kinds = node.get("type")
    if kinds is None:
        return _type_words(_kinds(node)) if _kinds(node) else "any value"
    return _type_words([kinds] if isinstance(kinds, str) else list(kinds))


def _got(value: Any) -> str:
    if isinstance(value, str):
        text = json.dumps(value if len(value) <= 40 else value[:40] + "…", ensure_ascii=False)
        return f"the text {text}"
    if isinstance(value, bool):
        return f"the value {json.dumps(value)}"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return f"the number {json.dumps(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}" if value else "an empty list"
    return "an object"
