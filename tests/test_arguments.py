"""Arguments: read forgivingly, normalise by the schema only, check strictly, say what's wrong."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.arguments import ProblemKind, read_arguments
from conchcheck.core.tools import Tool
from conchcheck.core.words import read_calls

SEARCH_MAIL = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "order": {"type": "string", "enum": ["newest", "oldest"]},
    },
    "required": ["query"],
}

EVERYTHING = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "urgent": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "filter": {
            "type": "object",
            "properties": {"since": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
        },
        "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
        "meta": {
            "type": "object",
            "additionalProperties": True,
            "properties": {"a": {"type": "string"}},
        },
        "note": {"type": ["string", "null"]},
        "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "level": {"enum": [1, 2, 3]},
        "ref": {"type": "string"},
        "target_ref": {"type": "string"},
        "mode": {"type": "string", "enum": ["Fast", "fast", "slow"]},
        "link": {"$ref": "#/$defs/link"},
    },
    "$defs": {
        "link": {
            "type": "object",
            "properties": {"url": {"type": "string"}, "depth": {"type": "integer"}},
        }
    },
}


@pytest.mark.parametrize(
    ("raw", "arguments", "repairs"),
    [
        pytest.param({"count": "3"}, {"count": 3}, ["number_from_text"], id="integer-from-text"),
        pytest.param(
            {"count": " 7 "}, {"count": 7}, ["number_from_text"], id="integer-from-padded-text"
        ),
        pytest.param(
            {"count": "3.0"}, {"count": 3}, ["number_from_text"], id="integral-text-to-integer"
        ),
        pytest.param(
            {"ratio": "0.25"}, {"ratio": 0.25}, ["number_from_text"], id="number-from-text"
        ),
        pytest.param(
            {"urgent": "true"}, {"urgent": True}, ["boolean_from_text"], id="true-from-text"
        ),
        pytest.param(
            {"urgent": "false"}, {"urgent": False}, ["boolean_from_text"], id="false-from-text"
        ),
        pytest.param(
            {"tags": '["a", "b"]'},
            {"tags": ["a", "b"]},
            ["list_from_text"],
            id="list-sent-as-json-text",
        ),
        pytest.param(
            {"tags": "solo"}, {"tags": ["solo"]}, ["single_to_list"], id="one-value-becomes-list"
        ),
        pytest.param(
            {"ids": ["1", 2]}, {"ids": [1, 2]}, ["number_from_text"], id="list-items-normalised"
        ),
        pytest.param(
            {"ids": "[1, 2"},
            {"ids": [1, 2]},
            ["list_from_text", "unclosed"],
            id="list-text-mended-and-the-mending-counted",
        ),
        pytest.param(
            {"filter": "{'since': 'monday'}"},
            {"filter": {"since": "monday"}},
            ["object_from_text", "single_quotes"],
            id="object-text-mended-and-the-mending-counted",
        ),
        pytest.param(
            {"filter": '{"since": "monday"}'},
            {"filter": {"since": "monday"}},
            ["object_from_text"],
            id="object-sent-as-json-text",
        ),
        pytest.param(
            {"filter": {"unit": "C"}},
            {"filter": {"unit": "c"}},
            ["enum_case"],
            id="option-in-wrong-case",
        ),
        pytest.param(
            {"level": "2"}, {"level": 2}, ["number_from_text"], id="integer-enum-from-text"
        ),
        pytest.param(
            {"ref": "[ref=e12]"}, {"ref": "e12"}, ["browser_ref"], id="browser-ref-bracketed"
        ),
        pytest.param(
            {"ref": "ref=e12"}, {"ref": "e12"}, ["browser_ref"], id="browser-ref-prefixed"
        ),
        pytest.param(
            {"target_ref": "e12]"},
            {"target_ref": "e12"},
            ["browser_ref"],
            id="browser-ref-half-bracket",
        ),
        pytest.param({"ref": "e12"}, {"ref": "e12"}, [], id="browser-ref-clean"),
        pytest.param(
            {"note": "null"}, {"note": "null"}, [], id="null-text-kept-where-text-allowed"
        ),
        pytest.param(
            {"size": "None"},
            {"size": None},
            ["null_from_text"],
            id="null-from-text-where-null-allowed",
        ),
        pytest.param(
            {"size": "4"}, {"size": 4}, ["number_from_text"], id="nullable-integer-from-text"
        ),
        pytest.param(
            {"labels": {"x": "1"}},
            {"labels": {"x": 1}},
            ["number_from_text"],
            id="open-object-values-by-schema",
        ),
        pytest.param(
            {"meta": {"a": "s", "extra": 1}},
            {"meta": {"a": "s", "extra": 1}},
            [],
            id="open-object-keeps-fields",
        ),
        pytest.param(
            {"link": {"depth": "2", "junk": 0}},
            {"link": {"depth": 2}},
            ["number_from_text", "dropped_field"],
            id="ref-followed",
        ),
        pytest.param(
            {"count": 3, "colour": "red"},
            {"count": 3},
            ["dropped_field"],
            id="unknown-field-dropped",
        ),
        pytest.param(
            '{"count": "3",}',
            {"count": 3},
            ["trailing_comma", "number_from_text"],
            id="text-mended-then-normalised",
        ),
        pytest.param("", {}, ["empty"], id="empty-text-is-no-arguments"),
        pytest.param("null", {}, ["empty"], id="null-is-no-arguments"),
        pytest.param(
            '"{\\"count\\": 1}"', {"count": 1}, ["json_string"], id="arguments-as-json-string"
        ),
        pytest.param(
            '{"arguments": {"count": 1}}', {"count": 1}, ["envelope"], id="arguments-envelope"
        ),
        pytest.param(
            {"name": "f", "arguments": '{"count": 1}'},
            {"count": 1},
            ["envelope", "json_string"],
            id="whole-call-envelope",
        ),
        pytest.param(
            {"parameters": {"count": 1}}, {"count": 1}, ["envelope"], id="parameters-envelope"
        ),
    ],
)
def test_normalisations(raw: Any, arguments: Any, repairs: list[str]) -> None:
    result = read_arguments(raw, EVERYTHING)
    assert result.ok, result.message
    assert result.arguments == arguments
    assert [r.value for r in result.repairs] == repairs


def test_option_case_ambiguous_is_left_alone() -> None:
    result = read_arguments({"mode": "FAST"}, EVERYTHING)
    assert (result.ok, result.arguments, result.repairs) == (False, {"mode": "FAST"}, ())


def test_envelope_kept_when_the_tool_takes_that_field() -> None:
    schema = {"type": "object", "properties": {"arguments": {"type": "string"}}}
    result = read_arguments({"arguments": "x"}, schema)
    assert (result.ok, result.arguments, result.repairs) == (True, {"arguments": "x"}, ())


@pytest.mark.parametrize(
    ("raw", "arguments", "repairs", "typed"),
    [
        pytest.param({"count": "3"}, {"count": 3}, [], ["count"], id="integer-typed"),
        pytest.param({"ratio": "0.25"}, {"ratio": 0.25}, [], ["ratio"], id="number-typed"),
        pytest.param({"urgent": "true"}, {"urgent": True}, [], ["urgent"], id="boolean-typed"),
        pytest.param({"size": "null"}, {"size": None}, [], ["size"], id="nullable-null-typed"),
        pytest.param({"note": "null"}, {"note": "null"}, [], [], id="null-text-kept-for-text"),
        pytest.param({"level": "2"}, {"level": 2}, [], ["level"], id="integer-option-typed"),
        pytest.param({"ids": "[1, 2]"}, {"ids": [1, 2]}, [], ["ids"], id="list-json-text-typed"),
        pytest.param(
            {"filter": '{"since": "monday"}'},
            {"filter": {"since": "monday"}},
            [],
            ["filter"],
            id="object-json-text-typed",
        ),
        pytest.param(
            {"ids": '["1", 2]'},
            {"ids": [1, 2]},
            ["number_from_text"],
            ["ids"],
            id="json-inside-a-value-carries-types",
        ),
        pytest.param(
            {"labels": '{"x": "1"}'},
            {"labels": {"x": 1}},
            ["number_from_text"],
            ["labels"],
            id="open-object-json-values-carry-types",
        ),
        pytest.param(
            {"ids": "[1, 2"}, {"ids": [1, 2]}, ["unclosed"], ["ids"], id="broken-list-json-counts"
        ),
        pytest.param(
            {"ids": "7"}, {"ids": [7]}, ["single_to_list"], ["ids[0]"], id="one-value-for-a-list"
        ),
        pytest.param(
            {"mode": "SLOW"}, {"mode": "slow"}, ["enum_case"], [], id="option-case-counts"
        ),
        pytest.param(
            {"ref": "[ref=e12]"}, {"ref": "e12"}, ["browser_ref"], [], id="browser-ref-counts"
        ),
        pytest.param(
            {"count": "3", "colour": "red"},
            {"count": 3},
            ["dropped_field"],
            ["count"],
            id="unknown-field-dropped-counts",
        ),
        pytest.param(
            {"arguments": '{"count": "3"}'},
            {"count": 3},
            ["envelope", "json_string", "number_from_text"],
            [],
            id="arguments-unwrapped-from-json-carry-types",
        ),
        pytest.param(
            '{"count": "3"}',
            {"count": 3},
            ["number_from_text"],
            [],
            id="json-text-arguments-carry-types",
        ),
    ],
)
def test_untyped_values_are_typed_by_the_schema_without_a_repair(
    raw: Any, arguments: Any, repairs: list[str], typed: list[str]
) -> None:
    result = read_arguments(raw, EVERYTHING, untyped=True)
    assert result.ok, result.message
    assert (result.arguments, [r.value for r in result.repairs], list(result.typed)) == (
        arguments,
        repairs,
        typed,
    )
    # The typing is still recorded as a change of the reading.
    assert {c.field for c in result.changes} >= set(typed)


def test_dropped_fields_are_named_and_changes_recorded() -> None:
    result = read_arguments({"count": "3", "colour": "red", "filter": {"x": 1}}, EVERYTHING)
    assert result.dropped == ("colour", "filter.x")
    assert [(c.field, c.normalisation.value, c.before, c.after) for c in result.changes] == [
        ("count", "number_from_text", "3", 3),
        ("colour", "dropped_field", "red", None),
        ("filter.x", "dropped_field", 1, None),
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"limit": "ten"},
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            "- query: required (text), but it was missing.\n"
            '- limit: expected a number, got the text "ten".\n'
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="design-rule-3-example",
        ),
        pytest.param(
            {"query": "x", "order": "latest"},
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            '- order: expected one of "newest", "oldest", got the text "latest".\n'
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="option-not-offered",
        ),
        pytest.param(
            {"query": 5, "limit": 2.5, "tone": "x"},
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            "- query: expected text, got the number 5.\n"
            "- limit: expected a whole number, got the number 2.5.\n"
            "- tone: not a field this tool takes, so it was dropped.\n"
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="wrong-types-and-a-dropped-field",
        ),
        pytest.param(
            '{"query": ',
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            "- query: required (text), but it was missing.\n"
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="mended-text-still-missing-a-field",
        ),
        pytest.param(
            "query=cats",
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            "- (arguments): could not be read as JSON (expected a value).\n"
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="unreadable-text",
        ),
        pytest.param(
            '"cats"',
            "The arguments for search_mail don't fit. Fix these and call it again:\n"
            '- (arguments): expected an object, got the text "cats".\n'
            'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}',
            id="not-an-object",
        ),
    ],
)
def test_messages(raw: Any, message: str) -> None:
    result = read_arguments(raw, SEARCH_MAIL, tool="search_mail")
    assert not result.ok
    assert result.message == message


BOUNDS = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 10},
        "x": {"type": "number", "exclusiveMinimum": 0},
        "s": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"},
        "l": {"type": "array", "minItems": 1, "maxItems": 2},
        "k": {"const": "fixed"},
        "t": {"type": ["string", "null"]},
    },
}


@pytest.mark.parametrize(
    ("raw", "field", "kind", "line"),
    [
        pytest.param(
            {"n": 0},
            "n",
            ProblemKind.RANGE,
            "n: expected a number of at least 1, got the number 0.",
            id="minimum",
        ),
        pytest.param(
            {"n": 11},
            "n",
            ProblemKind.RANGE,
            "n: expected a number of at most 10, got the number 11.",
            id="maximum",
        ),
        pytest.param(
            {"x": 0},
            "x",
            ProblemKind.RANGE,
            "x: expected a number more than 0, got the number 0.",
            id="exclusive-minimum",
        ),
        pytest.param(
            {"s": "a"},
            "s",
            ProblemKind.LENGTH,
            's: expected text of at least 2 characters, got the text "a".',
            id="min-length",
        ),
        pytest.param(
            {"s": "abcd"},
            "s",
            ProblemKind.LENGTH,
            's: expected text of at most 3 characters, got the text "abcd".',
            id="max-length",
        ),
        pytest.param(
            {"s": "A1"},
            "s",
            ProblemKind.PATTERN,
            's: expected text matching the pattern ^[a-z]+$, got the text "A1".',
            id="pattern",
        ),
        pytest.param(
            {"l": []},
            "l",
            ProblemKind.ITEMS,
            "l: expected a list of at least 1 items, got an empty list.",
            id="min-items",
        ),
        pytest.param(
            {"l": [1, 2, 3]},
            "l",
            ProblemKind.ITEMS,
            "l: expected a list of at most 2 items, got a list of 3.",
            id="max-items",
        ),
        pytest.param(
            {"k": "other"},
            "k",
            ProblemKind.CONST,
            'k: expected "fixed", got the text "other".',
            id="const",
        ),
        pytest.param(
            {"t": 3},
            "t",
            ProblemKind.TYPE,
            "t: expected text or null, got the number 3.",
            id="type-list",
        ),
        pytest.param(
            {"n": True},
            "n",
            ProblemKind.TYPE,
            "n: expected a number, got the value true.",
            id="boolean-is-not-a-number",
        ),
    ],
)
def test_problem_shapes(raw: Any, field: str, kind: ProblemKind, line: str) -> None:
    result = read_arguments(raw, BOUNDS)
    assert [(p.field, p.kind, p.line) for p in result.problems] == [(field, kind, line)]


def test_problem_fields() -> None:
    (problem,) = read_arguments({"query": "x", "order": "Latest"}, SEARCH_MAIL).problems
    assert (problem.field, problem.wanted, problem.got, problem.valid_values) == (
        "order",
        'one of "newest", "oldest"',
        'the text "Latest"',
        ("newest", "oldest"),
    )


def test_nested_fields_are_named_by_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"qty": {"type": "integer"}},
                    "required": ["qty"],
                },
            }
        },
    }
    result = read_arguments({"items": [{"qty": 1}, {"qty": "x"}, {}]}, schema)
    assert [p.line for p in result.problems] == [
        'items[1].qty: expected a number, got the text "x".',
        "items[2].qty: required (a number), but it was missing.",
    ]


def test_cut_off_arguments_are_never_mended() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    result = read_arguments('{"command": "rm -rf /tmp/build', schema, cut_off=True, tool="shell")
    assert (result.ok, result.arguments) == (False, None)
    assert result.problems[0].kind == ProblemKind.CUT_OFF
    assert result.message == (
        "The arguments for shell don't fit. Fix these and call it again:\n"
        "- (arguments): the reply was cut off before the arguments ended, so nothing was run.\n"
        "It takes: {command?: string}"
    )
    # The same text from a reply that ended normally is mended.
    assert read_arguments('{"command": "ls', schema).arguments == {"command": "ls"}
    # Complete arguments in a cut reply are fine.
    assert read_arguments('{"command": "ls"}', schema, cut_off=True).ok


INTEGRATION = {
    "type": "object",
    "properties": {
        "target": {
            "oneOf": [
                {"type": "string", "format": "uri"},
                {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            ]
        },
        "when": {"type": "string"},
    },
    "required": ["when"],
    "if": {"properties": {"when": {"const": "later"}}},
    "then": {"required": ["target"]},
}


def test_complex_schema_checked_only_for_plain_mistakes() -> None:
    waived = read_arguments({"when": "now", "target": 5}, INTEGRATION)
    assert waived.ok
    assert waived.waived == ("target: 5 is not valid under any of the given schemas",)
    plain = read_arguments({"when": 3}, INTEGRATION)
    assert [p.line for p in plain.problems] == ["when: expected text, got the number 3."]
    required_by_then = read_arguments({"when": "later"}, INTEGRATION)
    assert [p.line for p in required_by_then.problems] == [
        "target: required (any value), but it was missing."
    ]


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "strung"}}}, id="unknown-type"
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s.json"}}},
            id="remote-ref",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, id="dangling-ref"
        ),
        pytest.param({"type": "object", "required": "a"}, id="malformed-required"),
    ],
)
def test_a_schema_that_cannot_check_never_refuses(schema: dict[str, Any]) -> None:
    result = read_arguments({"a": "anything"}, schema)
    assert (result.ok, result.checked, result.arguments) == (True, False, {"a": "anything"})
    assert result.schema_problem is not None and result.problems == ()


A = {"a": {"type": "string"}}
NOT_CHECKED = "so the arguments were not checked against it."
MALFORMED = [
    pytest.param({"type": "object", "properties": A, "required": [["a"]]},
                 "is not valid JSON Schema (at required[0]: ['a'] is not of type 'string')",
                 id="required-holds-a-list"),
    pytest.param({"type": "object", "properties": A, "required": [1]},
                 "is not valid JSON Schema (at required[0]: 1 is not of type 'string')",
                 id="required-holds-a-number"),
    pytest.param({"type": "object", "properties": A, "required": "a"},
                 "is not valid JSON Schema (at required: 'a' is not of type 'array')",
                 id="required-is-text"),
    pytest.param({"type": "object", "properties": {"a": {"type": "object", "required": [["b"]]}}},
                 "is not valid JSON Schema (at properties.a.required[0]: ['b'] is not of type "
                 "'string')", id="nested-required-holds-a-list"),
    pytest.param({"type": "object", "properties": [A]},
                 "is not valid JSON Schema (at properties: [{'a': {'type': 'string'}}] is not of "
                 "type 'object')", id="properties-a-list"),
    pytest.param({"type": "object", "properties": {"a": "string"}},
                 "is not valid JSON Schema (at properties.a: 'string' is not of type 'object', "
                 "'boolean')", id="a-property-is-text"),
    pytest.param({"type": 3},
                 "is not valid JSON Schema (at type: 3 is not valid under any of the given "
                 "schemas)", id="type-a-number"),
    pytest.param({"type": {"a": 1}},
                 "is not valid JSON Schema (at type: {'a': 1} is not valid under any of the given "
                 "schemas)", id="type-an-object"),
    pytest.param({"type": "object", "properties": {"a": {"enum": "abc"}}},
                 "is not valid JSON Schema (at properties.a.enum: 'abc' is not of type 'array')",
                 id="enum-not-a-list"),
    pytest.param({"type": "object", "properties": {"a": {"type": "array", "items": "x"}}},
                 "is not valid JSON Schema (at properties.a.items: 'x' is not of type 'object', "
                 "'boolean')", id="items-text"),
    pytest.param({"type": "object", "properties": {"a": {"anyOf": {"type": "string"}}}},
                 "is not valid JSON Schema (at properties.a.anyOf: {'type': 'string'} is not of "
                 "type 'array')", id="any-of-an-object"),
    pytest.param({"type": "object", "properties": {"a": {"type": "string", "pattern": 5}}},
                 "is not valid JSON Schema (at properties.a.pattern: 5 is not of type 'string')",
                 id="pattern-a-number"),
    pytest.param({"type": "object", "properties": {"a": {"type": "integer", "minimum": "5"}}},
                 "is not valid JSON Schema (at properties.a.minimum: '5' is not of type "
                 "'number')", id="minimum-text"),
    pytest.param({"type": "object", "properties": A, "additionalProperties": "no"},
                 "is not valid JSON Schema (at additionalProperties: 'no' is not of type "
                 "'object', 'boolean')", id="additional-properties-text"),
    pytest.param({"type": "object", "properties": {"a": {"$ref": 5}}},
                 "is not valid JSON Schema (at properties.a.$ref: 5 is not of type 'string')",
                 id="ref-a-number"),
    pytest.param({"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}},
                 "could not be used (PointerToNowhere: '/$defs/gone' does not exist within "
                 "{'type': 'object', 'properties': {'a': {'$ref': '#/$defs/gone'}}})",
                 id="dangling-ref"),
    pytest.param([A], "is a list of 1, not a JSON object", id="schema-a-list"),
    pytest.param("object", 'is the text "object", not a JSON object', id="schema-text"),
    pytest.param(None, "is null, not a JSON object", id="schema-null"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "why"), MALFORMED)
@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        pytest.param('{"a": {"x": 1}}', True, id="read-and-unchecked"),
        pytest.param("not json {", False, id="unreadable"),
    ],
)
def test_an_invalid_schema_is_one_problem_never_an_exception(
    schema: Any, why: str, raw: str, ok: bool
) -> None:
    if not ok and why.startswith("could not be used"):
        why = ""  # a $ref leads nowhere only when a value is checked through it
    result = read_arguments(raw, schema, tool="t")
    line = f"(schema): the tool's schema {why}, {NOT_CHECKED}" if why else None
    assert (result.ok, result.checked) == (ok, line is None)
    assert (result.schema_problem.line if result.schema_problem else None) == line
    assert [p.kind for p in result.problems] == ([] if ok else [ProblemKind.UNREADABLE])
    if not ok:
        # The model is told what it can fix, and the tool's shape as far as it can be read.
        assert result.message.startswith("The arguments for t don't fit.")
        assert "(schema)" not in result.message


@pytest.mark.parametrize(("schema", "why"), MALFORMED)
def test_the_words_reader_reads_a_call_to_a_tool_whose_schema_is_invalid(
    schema: Any, why: str
) -> None:
    # A Tool as given: read from a dict, parameters that are no object become {} (as_tool).
    tools = [Tool("t", "d", schema)]
    reply = '<tool_call>{"name": "t", "arguments": {"a": "x"}}</tool_call>'
    (call,) = read_calls(reply, tools).calls
    assert (call.name, call.arguments, call.error) == ("t", {"a": "x"}, None)
    assert call.reading is not None and call.reading.schema_problem is not None
    assert call.reading.schema_problem.line == f"(schema): the tool's schema {why}, {NOT_CHECKED}"
    (unread,) = read_calls(reply.replace('{"a": "x"}', '"not json {"'), tools).calls
    assert unread.error is not None and unread.error.startswith("The arguments for t don't fit.")


def test_input_is_never_mutated() -> None:
    raw = {"count": "3", "tags": "x", "colour": "red", "filter": {"unit": "F"}}
    before = copy.deepcopy(raw)
    schema_before = copy.deepcopy(EVERYTHING)
    read_arguments(raw, EVERYTHING)
    assert raw == before
    assert schema_before == EVERYTHING


# -- abuse: nothing widens what a call may do ------------------------------------------------

CLOSED = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^/tmp/"},
        "recursive": {"type": "boolean"},
        "depth": {"type": "integer", "maximum": 3},
        "mode": {"enum": ["read", "list"]},
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        [
            "/tmp/x",
            "/etc",
            "true",
            "TRUE",
            "3",
            "3.5",
            "READ",
            "read",
            "[1, 2]",
            "{}",
            "null",
            "None",
            "e1]",
        ]
    ),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "path", "__proto__"]), children, max_size=3)
    ),
    max_leaves=8,
)
calls = st.dictionaries(
    st.sampled_from(["path", "recursive", "depth", "mode", "ids", "sudo", "__proto__", "Path"]),
    values,
    max_size=6,
)


@settings(max_examples=300)
@given(calls)
def test_a_normalised_call_passes_the_same_strict_check(raw: dict[str, Any]) -> None:
    result = read_arguments(raw, CLOSED)
    if result.ok:
        jsonschema.validate(result.arguments, CLOSED)
        assert set(result.arguments) <= set(CLOSED["properties"])
        assert set(result.arguments) <= set(raw)  # no field invented
    for name in result.dropped:
        assert name not in (result.arguments or {})


@settings(max_examples=200)
@given(st.text(max_size=60) | calls.map(json.dumps))
def test_any_text_gives_a_result(raw: str) -> None:
    result = read_arguments(raw, CLOSED, tool="files")
    assert result.ok or result.message.startswith("The arguments for files don't fit.")
    assert result.ok or result.message.endswith(
        'It takes: {path: string, recursive?: boolean, depth?: integer, mode?: "read"|"list", ids?: integer[]}'
    )


def test_a_depth_bomb_sent_as_an_object_is_refused() -> None:
    bomb: dict[str, Any] = {}
    node = bomb
    for _ in range(500):
        node["a"] = {}
        node = node["a"]
    result = read_arguments(bomb, {"type": "object"})
    assert (result.ok, result.arguments) == (False, None)
    assert (
        result.problems[0].line
        == "(arguments): could not be read as JSON (it is nested deeper than 64 levels)."
    )


def test_a_size_bomb_is_refused() -> None:
    result = read_arguments('{"q": "' + "x" * (1 << 20) + '"}', SEARCH_MAIL)
    assert result.problems[0].kind == ProblemKind.UNREADABLE
    assert "over the limit of 1048576" in result.problems[0].line
