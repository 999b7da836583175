"""Read a tool call's arguments: mend, normalise guided only by the schema, check strictly.

DESIGN.md rules 1–3. Normalising never invents a value and never widens what a call may do:
the normalised arguments still go through the full strict check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conchcheck.core.nesting import depth_of
from conchcheck.core.patterns import matches
from conchcheck.core.problems import (
    Problem,
    ProblemKind,
    check,
    invalid_schema,
    message,
    problem,
)
from conchcheck.core.repair import MAX_DEPTH, Repair, Unreadable, read_json
from conchcheck.core.schemas import follow_refs, nullable_branch, types_of

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


SCHEMA_TYPING = frozenset(
    {
        Normalisation.NUMBER_FROM_TEXT,
        Normalisation.BOOLEAN_FROM_TEXT,
        Normalisation.NULL_FROM_TEXT,
        Normalisation.LIST_FROM_TEXT,
        Normalisation.OBJECT_FROM_TEXT,
    }
)
"""The normalisations that give text its type. In a format whose values carry no types
(``read_arguments(..., untyped=True)``) they are how each value is read, not repairs."""


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One normalisation: which field, what was done, the value before and after."""

    field: str
    normalisation: Normalisation
    before: Any
    after: Any
    mended: tuple[Repair, ...] = ()
    """What had to be mended to read a list or object sent as JSON text (always a repair)."""


@dataclass(frozen=True, slots=True)
class ArgumentsResult:
    """How a call's arguments were read, normalised and checked."""

    ok: bool
    arguments: Any
    """The normalised arguments (what the tool receives when ``ok``); None if unreadable."""
    repairs: tuple[Repair | Normalisation, ...] = ()
    changes: tuple[FieldChange, ...] = ()
    dropped: tuple[str, ...] = ()
    """Fields the schema does not take, removed before the tool could see them."""
    problems: tuple[Problem, ...] = ()
    message: str = ""
    """The model-facing text of DESIGN.md rule 3; empty when ``ok``."""
    checked: bool = True
    """False when the schema itself could not be used for the strict check (``schema_problem``
    says why)."""
    waived: tuple[str, ...] = ()
    """Failures of combinators the simple checks don't judge (an integration's schema)."""
    typed: tuple[str, ...] = ()
    """With ``untyped``: the fields whose text the schema typed (not repairs; see ``changes``)."""
    schema_problem: Problem | None = None
    """Why the schema could not check the arguments (not valid JSON Schema, a ``$ref`` that
    leads nowhere): the tool's fault, never the call's, so never among ``problems``."""


def read_arguments(
    raw: str | Mapping[str, Any] | Any,
    schema: Mapping[str, Any],
    *,
    cut_off: bool = False,
    tool: str | None = None,
    untyped: bool = False,
    python: bool = False,
) -> ArgumentsResult:
    """Read ``raw`` arguments for a tool with ``schema``; ``tool`` names it in the message.

    With ``cut_off=True`` (the reply hit its token limit) unclosed text is never mended.
    ``untyped=True``: ``raw`` is a mapping from a format whose values carry no types (every
    value is text, as in Qwen3-Coder's ``<parameter=…>`` lines). Typing each of those values by
    the schema (``SCHEMA_TYPING``) is then not a repair, since the model could not have written
    it any other way; the fields so typed are named in ``typed``. Everything else the model got
    wrong still counts: a dropped field, an option's case, broken JSON inside a list's text, a
    single value for a list, and any typing inside a value sent as JSON (JSON carries types).
    ``python=True`` (with ``untyped``): the format writes a list or object as Python's repr, so
    reading its quotes and ``True``/``None`` in a value's text is no repair either.
    """
    repairs: list[Repair | Normalisation] = []
    invalid = invalid_schema(schema)
    # An invalid schema guides nothing: the arguments are read, neither normalised nor checked
    # by it (its problem says so), and the model is told the tool's shape as far as it reads.
    shape: Mapping[str, Any] = schema if isinstance(schema, Mapping) else {}
    guide: Mapping[str, Any] = {} if invalid is not None else shape
    try:
        value = _unwrap(raw, guide, repairs, cut_off=cut_off)
    except Unreadable as exc:
        cut = exc.reason.startswith("cut off")
        unread = problem(
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
        return _result(False, None, repairs, (), (), (unread,), shape, tool, invalid)
    # Only values exactly as the format gave them are text; an envelope or JSON string
    # unwrapped above means the arguments were written as JSON, which carries types.
    texts = _text_fields(raw) if untyped and value is raw else set()
    walk = _Normaliser(guide, texts)
    value = walk.value(value, guide, "", 0)
    typed = _count(walk.changes, repairs, texts, _PYTHON_SPELLING if python else frozenset())
    problems, unusable, waived = ((), invalid, ()) if invalid else check(value, guide)
    return _result(
        not problems,
        value,
        repairs,
        walk.changes,
        walk.dropped,
        problems,
        shape,
        tool,
        unusable,
        waived,
        typed,
    )


def _text_fields(raw: Any) -> set[str]:
    if not isinstance(raw, Mapping):
        return set()
    return {key for key, value in raw.items() if isinstance(key, str) and isinstance(value, str)}


_PYTHON_SPELLING = frozenset({Repair.SINGLE_QUOTES, Repair.PYTHON_LITERAL})
"""What reading Python's repr as JSON mends (``read_arguments(..., python=True)``)."""


def _count(
    changes: list[FieldChange],
    repairs: list[Repair | Normalisation],
    texts: set[str],
    spelling: frozenset[Repair],
) -> tuple[str, ...]:
    """Add the changes that are repairs to ``repairs``; return the fields typed from text
    (``spelling``: what reading such a field's text mends that its format wrote so)."""
    typed: list[str] = []
    for change in changes:
        if change.field in texts and change.normalisation in SCHEMA_TYPING:
            typed.append(change.field)
        else:
            repairs.append(change.normalisation)
            if change.field in texts and change.normalisation is Normalisation.SINGLE_TO_LIST:
                # The one item is still the text as written: typing it is no repair either.
                texts.add(f"{change.field}[0]")
        spelled = spelling if change.field in texts else frozenset()
        repairs.extend(m for m in change.mended if m not in spelled)
    return tuple(dict.fromkeys(typed))


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
    changes: tuple[FieldChange, ...] | list[FieldChange],
    dropped: tuple[str, ...] | list[str],
    problems: tuple[Problem, ...],
    schema: Mapping[str, Any],
    tool: str | None,
    unusable: Problem | None,
    waived: tuple[str, ...] = (),
    typed: tuple[str, ...] = (),
) -> ArgumentsResult:
    unique = tuple(dict.fromkeys(repairs))
    text = "" if ok else message(problems, tuple(dropped), schema, tool)
    return ArgumentsResult(
        ok,
        value,
        unique,
        tuple(changes),
        tuple(dropped),
        problems,
        text,
        unusable is None,
        waived,
        typed,
        unusable,
    )


# -- normalising ------------------------------------------------------------------------------

_BOOLEAN_TEXT = {False: ("true", "false"), True: ("true", "false", "True", "False")}
"""Booleans read from text; a format without types may also write Python's literals."""
_NUMBER_TEXT = re.compile(r"\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_REF_TEXT = re.compile(r"\s*\[?\s*(?:ref\s*[=:]\s*)?([A-Za-z]{0,3}\d+)\s*\]?\s*")


class _Normaliser:
    """Walks a value beside its schema, building a normalised copy (the input is untouched)."""

    def __init__(self, root: Mapping[str, Any], texts: set[str] | None = None) -> None:
        self.root = root
        self.texts = set(texts or ())
        """Fields given as text by a format without types: Python's True/False read too."""
        self.changes: list[FieldChange] = []
        self.dropped: list[str] = []

    def change(
        self,
        field: str,
        kind: Normalisation,
        before: Any,
        after: Any,
        mended: tuple[Repair, ...] = (),
    ) -> Any:
        self.changes.append(FieldChange(field or "(arguments)", kind, before, after, mended))
        return after

    def value(self, value: Any, node: Any, field: str, depth: int) -> Any:
        node, nullable = nullable_branch(follow_refs(self.root, node))
        if node is None or depth > MAX_NORMALISE_DEPTH:
            return _copy(value)
        kinds = types_of(node)
        # A format without types puts a value on lines of its own (Qwen3-Coder's
        # <parameter=on>\n  true\n</parameter>): around a literal that isn't text, the
        # indentation is layout, not part of the value. Numbers allow it already.
        literal = value.strip() if field in self.texts and isinstance(value, str) else value
        if nullable and kinds != ["string"] and literal in ("null", "None"):
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
        elif kind == "boolean" and literal in _BOOLEAN_TEXT.get(field in self.texts, ()):
            truth = literal in ("true", "True")
            return self.change(field, Normalisation.BOOLEAN_FROM_TEXT, value, truth)
        elif kind == "array":
            return self.array(value, node, field, depth)
        elif kind == "object":
            return self.object(value, node, field, depth)
        elif kind == "string" and isinstance(value, str):
            return self.string(value, node, field)
        return self.enum(_copy(value), node, field)

    def array(self, value: Any, node: Mapping[str, Any], field: str, depth: int) -> Any:
        if isinstance(value, str) and value.strip().startswith("["):
            parsed, mended = _read_quietly(value)
            if isinstance(parsed, list):
                value = self.change(field, Normalisation.LIST_FROM_TEXT, value, parsed, mended)
        if not isinstance(value, list):
            value = self.change(field, Normalisation.SINGLE_TO_LIST, value, [value])
        items = node.get("items")
        return [self.value(v, items, f"{field}[{i}]", depth + 1) for i, v in enumerate(value)]

    def object(self, value: Any, node: Mapping[str, Any], field: str, depth: int) -> Any:
        if isinstance(value, str) and value.strip().startswith("{"):
            parsed, mended = _read_quietly(value)
            if isinstance(parsed, dict):
                value = self.change(field, Normalisation.OBJECT_FROM_TEXT, value, parsed, mended)
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
        by_pattern = node.get("patternProperties")
        by_pattern = by_pattern if isinstance(by_pattern, Mapping) else {}
        result: dict[str, Any] = {}
        for key, item in value.items():
            path = f"{field}.{key}" if field else key
            named = next((s for p, s in by_pattern.items() if _names(p, key)), None)
            if key in properties:
                result[key] = self.value(item, properties[key], path, depth + 1)
            elif isinstance(named, Mapping):
                # A key its patternProperties name is not unknown, closed object or not.
                result[key] = self.value(item, named, path, depth + 1)
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


def _read_quietly(text: str) -> tuple[Any, tuple[Repair, ...]]:
    """The value of JSON text and what had to be mended to read it; None if unreadable."""
    try:
        reading = read_json(text)
    except Unreadable:
        return None, ()
    return reading.value, reading.repairs


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _names(pattern: Any, key: str) -> bool:
    """Whether a ``patternProperties`` pattern names ``key`` (on RE2: linear in the key)."""
    return isinstance(pattern, str) and matches(pattern, key)
