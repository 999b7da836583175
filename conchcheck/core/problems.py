"""The strict check of a call's arguments, and how each failure is told to the model.

DESIGN.md rule 3: each field, what was wanted, what was sent, the valid values, then the
tool's one-line signature.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

from conchcheck.core import patterns
from conchcheck.core.excerpt import excerpt
from conchcheck.core.schemas import nullable_branch, types_of
from conchcheck.core.tools import signature


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
    SCHEMA = "schema"
    """Not the arguments': the tool's schema is not valid JSON Schema, or can't be used."""


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


def message(
    problems: tuple[Problem, ...],
    dropped: tuple[str, ...],
    schema: Mapping[str, Any],
    tool: str | None,
) -> str:
    """The model-facing text: each problem, each dropped field, then the signature."""
    subject = f"The arguments for {tool}" if tool else "The arguments"
    lines = [f"{subject} don't fit. Fix these and call it again:"]
    lines.extend(f"- {p.line}" for p in problems)
    lines.extend(f"- {name}: not a field this tool takes, so it was dropped." for name in dropped)
    lines.append(f"It takes: {signature(schema)}")
    return "\n".join(lines)


_WAIVED = frozenset(
    {
        "anyOf",
        "oneOf",
        "not",
        "contains",
        "propertyNames",
        "dependentSchemas",
        "dependencies",
        "unevaluatedProperties",
        "unevaluatedItems",
        "patternProperties",
    }
)


SCHEMA_EXCERPT = 300
"""Characters of jsonschema's words about a bad schema kept in its problem (they quote it)."""


def check(value: Any, schema: Any) -> tuple[tuple[Problem, ...], Problem | None, tuple[str, ...]]:
    """Check ``value`` strictly: (problems, the schema's own problem, waived failures).

    Failures of combinators the simple checks don't judge (``oneOf``, ``not``, …) are waived,
    not held against the call. A schema that is not valid JSON Schema, or that jsonschema
    cannot use, never refuses a call: the call goes through unchecked, and the schema's
    problem says why.
    """
    validator = _validator(schema)
    if isinstance(validator, Problem):
        return (), validator, ()
    try:
        # Whole-object errors (a missing field) first, then fields in the schema's order.
        errors = sorted(validator.iter_errors(value), key=lambda e: len(e.path) > 0)
    except Exception as exc:
        # A valid schema jsonschema still cannot use: a remote or dangling $ref.
        return (), schema_problem(f"could not be used ({exc})"), ()
    problems: list[Problem] = []
    waived: list[str] = []
    seen: set[str] = set()
    for error in errors:
        if error.validator in _WAIVED and nullable_branch(error.schema)[0] is None:
            waived.append(f"{_field(error.absolute_path) or '(arguments)'}: {error.message}")
            continue
        for problem in _describe(error):
            if problem.line not in seen:
                seen.add(problem.line)
                problems.append(problem)
    return tuple(problems), None, tuple(waived)


def invalid_schema(schema: Any) -> Problem | None:
    """Why ``schema`` is no JSON Schema object valid by its own draft; None when it is one."""
    validator = _validator(schema)
    return validator if isinstance(validator, Problem) else None


def schema_problem(why: str) -> Problem:
    """The problem of a tool's schema that can't check arguments: ``why`` in jsonschema's words
    (cut to ``SCHEMA_EXCERPT``, since they quote the schema)."""
    line = (
        f"(schema): the tool's schema {excerpt(why, SCHEMA_EXCERPT)}, so the arguments were not"
        " checked against it."
    )
    return Problem("(schema)", ProblemKind.SCHEMA, "valid JSON Schema", None, line=line)


def _validator(schema: Any) -> Any:
    """A validator for ``schema``, or the ``Problem`` that says why there is none."""
    if not isinstance(schema, Mapping):
        # JSON Schema allows true and false too; a tool's parameters are always an object.
        return schema_problem(f"is {_got(schema)}, not a JSON object")
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
        error = best_match(cls(cls.META_SCHEMA).iter_errors(dict(schema)))
        if error is not None:
            where = _field(error.absolute_path) or "its root"
            return schema_problem(f"is not valid JSON Schema (at {where}: {error.message})")
        # Patterns on RE2: no argument can make a check backtrack for minutes.
        return jsonschema.validators.extend(cls, patterns.KEYWORDS)(schema)  # type: ignore[no-untyped-call]
    except Exception as exc:
        return schema_problem(f"could not be used ({exc})")


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
            result.append(problem(path, ProblemKind.MISSING, wanted, None, line=line))
        return result
    if rule == "type":
        wanted = _type_words([limit] if isinstance(limit, str) else list(limit))
        if (
            wanted == "a number"
            and limit in ("integer", ["integer"])
            and isinstance(instance, float)
        ):
            wanted = "a whole number"
        return [problem(field, ProblemKind.TYPE, wanted, got)]
    if rule == "enum":
        wanted = _one_of(limit)
        return [problem(field, ProblemKind.ENUM, wanted, got, valid=tuple(limit))]
    if rule == "const":
        wanted = json.dumps(limit, ensure_ascii=False)
        return [problem(field, ProblemKind.CONST, wanted, got, valid=(limit,))]
    bounds = {
        "minimum": "a number of at least",
        "maximum": "a number of at most",
        "exclusiveMinimum": "a number more than",
        "exclusiveMaximum": "a number less than",
        "minLength": "text of at least",
        "maxLength": "text of at most",
        "minItems": "a list of at least",
        "maxItems": "a list of at most",
    }
    if rule in bounds:
        unit = {"L": " characters", "I": " items"}.get(rule[3], "")
        kind = {"L": ProblemKind.LENGTH, "I": ProblemKind.ITEMS}.get(rule[3], ProblemKind.RANGE)
        return [problem(field, kind, f"{bounds[rule]} {limit}{unit}", got)]
    if rule == "pattern":
        return [problem(field, ProblemKind.PATTERN, f"text matching the pattern {limit}", got)]
    if rule in ("anyOf", "oneOf") and isinstance(schema, Mapping):
        branches = schema.get(rule, [])
        wanted = " or ".join(_wanted(b) for b in branches if isinstance(b, Mapping))
        return [problem(field, ProblemKind.TYPE, wanted, got)]
    line = f"{field}: {error.message}."
    return [problem(field, ProblemKind.OTHER, error.message, got, line=line)]


def problem(
    field: str,
    kind: ProblemKind,
    wanted: str,
    got: str | None,
    *,
    valid: tuple[Any, ...] = (),
    line: str = "",
) -> Problem:
    """A problem whose line reads ``field: expected WANTED, got GOT.`` unless ``line`` is given."""
    line = line or f"{field}: expected {wanted}, got {got}."
    return Problem(field, kind, wanted, got, valid, line)


_TYPE_WORDS = {
    "string": "text",
    "integer": "a number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


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
        return _type_words(types_of(node)) if types_of(node) else "any value"
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
