"""Matrices: the built-in one is complete and satisfiable; bad ones name every problem exactly."""

from __future__ import annotations

import hashlib
import json
import textwrap
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from conchcheck.core.arguments import read_arguments
from conchcheck.core.matching import (
    Judgement,
    Matcher,
    MatcherKind,
    as_matcher,
    judge,
    judge_answer,
    match,
)
from conchcheck.errors import InputError
from conchcheck.matrix import (
    Matrix,
    MatrixError,
    builtin_matrices,
    load_matrix,
    validate_file,
)
from conchcheck.wire.chat import ChoiceMode, ToolChoice
from tests.emulators.oracle import ideal, ideal_calls

DATA = Path(__file__).parent / "data" / "matrices"
DEFAULT = files("conchcheck") / "matrices" / "default.yaml"

SCHEMA_CASES = [
    "baseline",
    "ref-defs",
    "definitions",
    "ref-recursive",
    "anyof-null",
    "type-list-null",
    "one-of",
    "all-of",
    "const",
    "additional-properties-false",
    "additional-properties-true",
    "pattern-properties",
    "formats",
    "annotations",
    "constraints",
    "integer-enum",
    "prefix-items",
    "deep-nesting",
    "empty-parameters",
    "no-parameters",
    "array-root",
    "schema-id",
    "long-description",
    "unicode",
    "dotted-name",
    "dashed-name",
    "many-tools",
    "dangling-ref",
    "unknown-type",
]
PROMPTS = [
    "remember-fact",
    "weather-enum",
    "three-arguments",
    "integer-argument",
    "boolean-argument",
    "nested-object",
    "choose-among-ten",
    "no-tool-needed",
    "parallel-calls",
    "forced-choice",
    "follow-up-code-word",
]


@pytest.fixture(scope="module")
def default() -> Matrix:
    return load_matrix("default")


def test_builtin_matrices() -> None:
    assert builtin_matrices() == ["default"]


def test_default_has_every_case_and_prompt(default: Matrix) -> None:
    assert default.name == "default"
    assert [case.id for case in default.schema_cases] == SCHEMA_CASES
    assert [prompt.id for prompt in default.prompts] == PROMPTS
    data = yaml.safe_load(DEFAULT.read_text(encoding="utf-8"))
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False)
    assert default.digest == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert default.path == str(DEFAULT)
    assert validate_file("default") == []


def _case_parameters(default: Matrix, case_id: str) -> Any:
    (case,) = [c for c in default.schema_cases if c.id == case_id]
    return case.tools[0].parameters


def _text(default: Matrix, case_id: str) -> str:
    return json.dumps(_case_parameters(default, case_id), ensure_ascii=False)


def test_default_schema_cases_carry_their_feature(default: Matrix) -> None:
    cases = {case.id: case for case in default.schema_cases}
    assert [c.id for c in default.schema_cases if not c.valid] == ["dangling-ref", "unknown-type"]
    # The emulators key on these exact strings (tests/emulators/openai_api.py).
    assert '"$ref": "#/$defs/missing"' in _text(default, "dangling-ref")
    assert '"type": "strung"' in _text(default, "unknown-type")
    many = cases["many-tools"].tools
    assert [t.name for t in many[:2]] + [many[-1].name] == [
        "lookup_item_001",
        "lookup_item_002",
        "lookup_item_128",
    ]
    assert len({t.name for t in many}) == 128
    assert cases["no-parameters"].tool.parameters == {}
    assert cases["many-tools"].tool.name == "lookup_item"
    assert cases["many-tools"].copies == 128
    assert cases["baseline"].tools == (cases["baseline"].tool,)
    assert _case_parameters(default, "empty-parameters") == {"type": "object", "properties": {}}
    assert _case_parameters(default, "array-root")["type"] == "array"
    assert len(cases["long-description"].tools[0].description) >= 2900
    assert "città" in _text(default, "unicode")
    assert [cases[i].tools[0].name for i in ("dotted-name", "dashed-name")] == [
        "files.read",
        "get-weather",
    ]
    depth, node = 0, _case_parameters(default, "deep-nesting")
    while "level" + str(depth + 1) in node.get("properties", {}):
        depth += 1
        node = node["properties"][f"level{depth}"]
    assert depth == 8
    for key in ("$defs", "definitions", "prefixItems", "patternProperties", "oneOf", "allOf"):
        assert any(key in _text(default, c.id) for c in default.schema_cases), key
    names = [t.name for c in default.schema_cases for t in c.tools]
    assert len(names) == len(set(names)), "cases are sent together, so names must differ"


def test_default_prompt_details(default: Matrix) -> None:
    prompts = {prompt.id: prompt for prompt in default.prompts}
    assert len(prompts["choose-among-ten"].tools) == 10
    assert prompts["forced-choice"].tools == ("get_weather", "remember")
    assert all(default.tools[ident].name == ident for p in default.prompts for ident in p.tools)
    assert prompts["forced-choice"].tool_choice == ToolChoice(ChoiceMode.TOOL, "remember")
    assert prompts["weather-enum"].tool_choice == ToolChoice(ChoiceMode.AUTO)
    assert prompts["parallel-calls"].expect.parallel
    assert prompts["no-tool-needed"].expect.no_call
    follow_up = prompts["follow-up-code-word"].follow_up
    assert follow_up is not None
    assert follow_up.result == "The code word is PELICAN-42."
    assert follow_up.answer == Matcher(MatcherKind.CONTAINS, "PELICAN-42")


@pytest.mark.parametrize("prompt_id", PROMPTS)
def test_default_prompt_is_satisfiable(default: Matrix, prompt_id: str) -> None:
    (prompt,) = [p for p in default.prompts if p.id == prompt_id]
    calls = ideal_calls(prompt)
    assert judge(calls, prompt.expect)[0] is Judgement.PASS
    silent = judge([], prompt.expect)[0]
    assert silent is (Judgement.NO_CALL if prompt.expect.wants_call else Judgement.PASS)
    tools = {default.tools[ident].name: default.tools[ident] for ident in prompt.tools}
    for name, arguments in calls:  # the ideal call also fits the tool's own schema
        assert read_arguments(arguments, tools[name].parameters).ok, (name, arguments)
    if prompt.follow_up is not None:
        answer = f"It says: {ideal(prompt.follow_up.answer)}"
        assert judge_answer(answer, prompt.follow_up.answer) is None


def test_a_users_copy_is_checked_the_same(tmp_path: Path, default: Matrix) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(DEFAULT.read_text(encoding="utf-8"), encoding="utf-8")
    mine = load_matrix(path)
    assert (mine.schema_cases, mine.prompts, mine.digest) == (
        default.schema_cases,
        default.prompts,
        default.digest,
    )
    assert mine.path == str(path)
    path.write_text("# a comment changes nothing\n" + path.read_text(encoding="utf-8"))
    assert load_matrix(path).digest == default.digest


# One row a problem: (file, "line: $.path: message"). Every file's rows are all it reports.
PROBLEMS = [
    pytest.param("yaml-syntax", "8: YAML: found unexpected end of stream (while scanning a quoted scalar at line 6)", id="yaml-syntax"),
    pytest.param("empty", "1: $: expected an object, got null", id="empty-file"),
    pytest.param("structure", "2: $.version: expected 1, got 2", id="version-not-1"),
    pytest.param("structure", '3: $.name: expected an id of lower-case letters and digits, joined by single dashes, got "Bad_Name"', id="name-not-an-id"),
    pytest.param("structure", "4: $.colour: unknown key; expected one of version, name, description, tools, schema_cases, prompts", id="unknown-top-key"),
    pytest.param("structure", "6: $.tools.bad name: expected a tool name of 1 to 64 letters, digits, '_', '.', ':' or '-', got \"bad name\"", id="tool-id-not-a-name"),
    pytest.param("structure", "9: $.tools.remember.parameters: expected an object, got a list", id="parameters-not-an-object"),
    pytest.param("structure", "10: $.tools.lister: missing 'name'", id="tool-without-name"),
    pytest.param("structure", "15: $.schema_cases[0].tool.description: expected text, got a number", id="description-not-text"),
    pytest.param("structure", "15: $.schema_cases[0].tool.name: expected a tool name of 1 to 64 letters, digits, '_', '.', ':' or '-', got \"has space\"", id="tool-name-with-space"),
    pytest.param("structure", "16: $.schema_cases[0].copies: expected at least 1, got 0", id="copies-zero"),
    pytest.param("structure", "17: $.schema_cases[1]: missing 'id'", id="case-without-id"),
    pytest.param("structure", '17: $.schema_cases[1].feature: expected text that is not empty, got ""', id="feature-empty"),
    pytest.param("structure", "18: $.schema_cases[1].tool: expected an object, got a list", id="case-tool-a-list"),
    pytest.param("structure", '21: $.prompts[0].user: expected text that is not empty, got ""', id="user-empty"),
    pytest.param("structure", "22: $.prompts[0].tools: expected at least 1 item, got []", id="no-tools-offered"),
    pytest.param("structure", '23: $.prompts[0].tool_choice: expected auto, none, required or {tool: name}, got "sometimes"', id="tool-choice-unknown"),
    pytest.param("structure", "28: $.prompts[0].expect.calls[0].arguments.fact.equal: unknown key; expected one of equals, equals_ci, contains, one_of, number, any, absent, items_contain, fields", id="matcher-misspelt"),
    pytest.param("structure", "29: $.prompts[0].expect.calls[0].arguments.other: expected exactly one of equals, equals_ci, contains, one_of, number, any, absent, items_contain, fields, got contains, equals", id="matcher-two-kinds"),
    pytest.param("structure", "30: $.prompts[0].expect.calls[0].arguments.plain: expected a matcher such as {equals_ci: paris}, or a plain value to equal, got a list", id="matcher-bare-list"),
    pytest.param("structure", "31: $.prompts[0].expect.calls[0].arguments.count.number.value: expected a number, got text", id="number-value-text"),
    pytest.param("structure", "32: $.prompts[0].expect.calls[0].arguments.size.number.tolerance: expected at least 0, got -1", id="tolerance-negative"),
    pytest.param("structure", "33: $.prompts[0].expect.calls[0].arguments.gone.absent: expected true, got false", id="absent-false"),
    pytest.param("structure", "34: $.prompts[0].expect.calls[0].arguments.empty: expected exactly one of equals, equals_ci, contains, one_of, number, any, absent, items_contain, fields, got none", id="matcher-empty"),
    pytest.param("structure", "35: $.prompts[0].expect.parralel: unknown key; expected one of calls, no_call, parallel", id="expect-key-misspelt"),
    pytest.param("structure", '38: $.prompts[1].tools: lists "remember" more than once', id="tool-offered-twice"),
    pytest.param("structure", "39: $.prompts[1].tool_choice: forces a call, but no call is expected", id="forced-but-no-call"),
    pytest.param("structure", "39: $.prompts[1].tool_choice.force: unknown key; expected one of tool", id="tool-choice-extra-key"),
    pytest.param("structure", "41: $.prompts[1].follow_up: a follow-up needs an expected call to answer", id="follow-up-without-call"),
    pytest.param("structure", "41: $.prompts[1].follow_up.answer.any: unknown key; expected one of equals, equals_ci, contains, one_of", id="answer-matcher-not-text"),
    pytest.param("structure", "41: $.prompts[1].follow_up.result: expected text, got a number", id="result-not-text"),
    pytest.param("references", "22: $.schema_cases[0].tool: no tool with id 'nowhere' in $.tools", id="case-tool-id-unknown"),
    pytest.param("references", "23: $.schema_cases[1].id: duplicate id 'same'; also at line 20", id="duplicate-case-id"),
    pytest.param("references", "26: $.schema_cases[1].copies: copies is only for valid cases, not valid: false", id="copies-on-invalid-case"),
    pytest.param("references", "33: $.schema_cases[3].tool: case 'clash' has a tool named 'remember' too", id="tool-name-in-two-cases"),
    pytest.param("references", "35: $.prompts[0].id: duplicate id 'same'; also at line 20", id="prompt-id-same-as-case-id"),
    pytest.param("references", "37: $.prompts[0].tools[1]: no tool with id 'missing_tool' in $.tools", id="prompt-tool-id-unknown"),
    pytest.param("references", "43: $.prompts[1].tools[1]: a second tool named 'remember'", id="two-offered-tools-one-name"),
    pytest.param("references", "44: $.prompts[1].tool_choice.tool: 'get_weather' is not offered by this prompt (offered: remember)", id="forced-tool-not-offered"),
    pytest.param("references", "47: $.prompts[1].expect.calls[0].tool: 'get_weather' is not offered by this prompt (offered: remember)", id="expected-tool-not-offered"),
    pytest.param("references", "51: $.prompts[1].expect.calls[1].arguments.town: remember takes no 'town' (it takes fact)", id="argument-not-taken"),
    pytest.param("references", "56: $.prompts[2].tool_choice: forces a call, but no call is expected", id="required-but-no-call"),
    pytest.param("references", "58: $.prompts[2].expect.no_call: no_call is true, but calls are listed", id="no-call-with-calls"),
    pytest.param("references", "59: $.prompts[2].expect.parallel: parallel needs at least two expected calls", id="parallel-one-call"),
    pytest.param("references", "62: $.prompts[2].follow_up: a follow-up needs an expected call to answer", id="follow-up-no-call"),
    pytest.param("references", "66: $.prompts[3].tool_choice: tool_choice none forbids the calls expected", id="none-but-calls"),
    pytest.param("references", "73: $.prompts[4].expect: list the calls wanted, or set no_call: true", id="expectation-says-nothing"),
    pytest.param("yaml-data", "4: $.name: duplicate key; also at line 3", id="duplicate-key"),
    pytest.param("yaml-data", '15: $.prompts[0].expect.calls[0].arguments.date.equals: an unquoted date is not text; write "2025-03-14" in quotes', id="unquoted-date"),
    pytest.param("yaml-data", "16: $.prompts[0].expect.calls[0].arguments.1: a key must be text, got a number; quote it", id="number-key"),
    pytest.param("invalid-schemas", '10: $.tools.broken.parameters.properties.a.type: not JSON Schema: unknown type "strung" (set valid: false if that is the point)', id="unknown-type-left-valid"),
    pytest.param("invalid-schemas", '19: $.schema_cases[0].tool.parameters.properties.a.$ref: "#/$defs/missing" points at nothing (set valid: false if that is the point)', id="dangling-ref-left-valid"),
    pytest.param("schema-keys", "10: $.tools.unused.parameters.properties.note.yet checked.: 'yet checked.' is not a JSON Schema keyword and has no value; a comma in an unquoted YAML flow mapping splits the text (description reads \"Never offered\"): quote it", id="comma-split-in-a-tool-no-prompt-offers"),
    pytest.param("schema-keys", "11: $.tools.unused.parameters.properties.size.or blocks: 'or blocks' is not a JSON Schema keyword and has no value; a comma in an unquoted YAML flow mapping splits the text (description reads \"In bytes\"): quote it", id="comma-split-without-a-full-stop"),
    pytest.param("schema-keys", "17: $.tools.offered.parameters.properties.city.like Paris.: 'like Paris.' is not a JSON Schema keyword and has no value; a comma in an unquoted YAML flow mapping splits the text (description reads \"The city name\"): quote it", id="comma-split-in-an-offered-tool-once"),
    pytest.param("schema-keys", "18: $.tools.nameless: missing 'name'", id="prompt-tool-without-name"),
    pytest.param("schema-keys", '22: $.tools.nameless.parameters.properties.a.type: not JSON Schema: unknown type "strung"', id="nameless-prompt-tool-still-checked"),
    pytest.param("schema-keys", "26: $.schema_cases[0].tool: missing 'name'", id="case-tool-without-name"),
    pytest.param("schema-keys", '30: $.schema_cases[0].tool.parameters.properties.b.type: not JSON Schema: unknown type "text" (set valid: false if that is the point)', id="nameless-case-tool-still-checked"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "problem"), PROBLEMS)
def test_problem_is_reported(name: str, problem: str) -> None:
    path = DATA / f"{name}.yaml"
    assert f"{path}:{problem}" in validate_file(path)


@pytest.mark.parametrize("name", sorted({str(p.values[0]) for p in PROBLEMS}))
def test_nothing_else_is_reported(name: str) -> None:
    path = DATA / f"{name}.yaml"
    wanted = [f"{path}:{p.values[1]}" for p in PROBLEMS if p.values[0] == name]
    assert validate_file(path) == wanted


def test_every_bad_matrix_is_in_the_table() -> None:
    assert {p.stem for p in DATA.glob("*.yaml")} == {p.values[0] for p in PROBLEMS}


def test_matrix_error_is_one_line_naming_the_rest() -> None:
    # Each bad input is one line on stderr; `matrix validate` is what lists every problem.
    path = DATA / "references.yaml"
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    problems = validate_file(path)
    assert len(problems) == 16 and list(caught.value.problems) == problems
    assert str(caught.value) == (
        f"{problems[0]} (15 more problems: `conchcheck matrix validate {path}` lists every one)."
    )
    assert isinstance(caught.value, InputError)
    assert caught.value.exit_code == 2


def test_one_problem_is_the_whole_message() -> None:
    with pytest.raises(MatrixError) as caught:
        load_matrix(DATA / "empty.yaml")
    assert str(caught.value) == f"{DATA / 'empty.yaml'}:1: $: expected an object, got null."


@pytest.mark.parametrize(
    ("given", "message"),
    [
        pytest.param(
            "defualt",
            "defualt: no such file, and no built-in matrix of that name.",
            id="unknown-name",
        ),
        pytest.param("nope/m.yaml", "nope/m.yaml: no such file.", id="missing-file"),
    ],
)
def test_unknown_matrix(given: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_matrix(given)
    assert str(caught.value) == message
    assert not isinstance(caught.value, MatrixError)


def test_the_matrix_schema_is_valid_draft_2020_12() -> None:
    text = (files("conchcheck.jsonschemas") / "matrix.schema.json").read_text(encoding="utf-8")
    Draft202012Validator.check_schema(json.loads(text))


def test_matchers_from_a_matrix_match() -> None:
    assert match("Celsius", as_matcher({"equals": "celsius"})) == 'wanted "celsius", got "Celsius"'


def test_yaml_alias_bombs_are_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    lines = ['a0: &a0 ["lol"]'] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)
    ]
    bomb.write_text("\n".join(lines) + "\n")
    assert validate_file(bomb) == [
        f"{bomb}:1: $.a0: YAML anchors and aliases (&name, *name) are not allowed;"
        " write the value out"
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "a: " + "[" * 200, "1: $: nested more than 128 levels deep", id="flow-200-deep"
        ),
        pytest.param(
            "a: " + "[" * 100_000, "1: $: nested more than 128 levels deep", id="flow-100k-deep"
        ),
        pytest.param(
            "".join(" " * i + "-\n" for i in range(300)),
            "129: $: nested more than 128 levels deep",
            id="block-300-deep",
        ),
        pytest.param(
            "version: 1\nname: m\nprompts:\n  - &p {id: a}\n",
            "4: $.prompts[0]: YAML anchors and aliases (&name, *name) are not allowed; write the value out",
            id="anchor-without-alias",
        ),
        pytest.param(
            "version: 1\nbase: &b {x: 1}\nname: m\nother:\n  <<: *b\n",
            "2: $.base: YAML anchors and aliases (&name, *name) are not allowed; write the value out",
            id="merge-key",
        ),
    ],
)
def test_deep_or_aliased_yaml_is_one_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    assert validate_file(path) == [f"{path}:{problem}"]


@pytest.mark.parametrize(
    ("copies", "problem"),
    [
        pytest.param("1000", "expected at most 999, got 1000", id="one-past-the-most"),
        pytest.param(
            "100000000000000000000",
            "expected at most 999, got 100000000000000000000",
            id="huge-is-not-expanded",
        ),
    ],
)
def test_copies_are_checked_before_they_are_expanded(
    tmp_path: Path, copies: str, problem: str
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\nname: m\nschema_cases:\n  - id: many\n    feature: many tools\n"
        f"    tool: {{name: t, description: d, parameters: {{type: object}}}}\n    copies: {copies}\n"
    )
    assert validate_file(path) == [f"{path}:7: $.schema_cases[0].copies: {problem}"]


def test_copies_limit_is_the_schemas() -> None:
    from conchcheck.matrix.model import MAX_COPIES

    text = (files("conchcheck.jsonschemas") / "matrix.schema.json").read_text(encoding="utf-8")
    case = json.loads(text)["$defs"]["schemaCase"]["properties"]["copies"]
    assert (case["minimum"], case["maximum"]) == (1, MAX_COPIES)


@pytest.mark.parametrize(
    "copies",
    [pytest.param(0, id="zero"), pytest.param(10**20, id="huge"), pytest.param(True, id="a-bool")],
)
def test_a_schema_case_refuses_a_count_out_of_range(copies: int) -> None:
    from conchcheck.core.tools import Tool
    from conchcheck.matrix import SchemaCase

    with pytest.raises(InputError) as caught:
        SchemaCase("c", "f", Tool("t", "", {}), copies=copies)
    assert str(caught.value) == f"copies must be a whole number from 1 to 999, not {copies!r}."


# One parameters schema a row, alone in a schema case: (valid, parameters, every problem as
# "line: $.path: message"). The parameters start on line 10 of the file.
QUIRK_MATRIX = """\
version: 1
name: quirk
schema_cases:
  - id: quirk
    feature: one schema quirk
    valid: {valid}
    tool:
      name: quirk
      parameters:
"""
SPLIT = "is not a JSON Schema keyword and has no value; a comma in an unquoted YAML flow mapping splits the text"
AT = "$.schema_cases[0].tool.parameters"
LEFT_VALID = " (set valid: false if that is the point)"
QUIRKS = [
    pytest.param(True, "properties: {fact: {type: string, description: The fact to remember, in one sentence.}}", [f"10: {AT}.properties.fact.in one sentence.: 'in one sentence.' {SPLIT} (description reads \"The fact to remember\"): quote it"], id="comma-split-flow-mapping"),
    pytest.param(True, "{type: object, description: Pick red, green, or blue.}", [f"10: {AT}.green: 'green' {SPLIT} (description reads \"Pick red\"): quote it", f"10: {AT}.or blue.: 'or blue.' {SPLIT} (description reads \"Pick red\"): quote it"], id="comma-split-twice"),
    pytest.param(False, "properties: {fact: {type: string, description: The fact to remember, in one sentence.}}", [f"10: {AT}.properties.fact.in one sentence.: 'in one sentence.' {SPLIT} (description reads \"The fact to remember\"): quote it"], id="comma-split-in-a-case-meant-invalid"),
    pytest.param(True, "properties: {a: {type: string, in one sentence.}}", [f"10: {AT}.properties.a.in one sentence.: 'in one sentence.' {SPLIT} (type reads \"string\"): quote it"], id="bare-key-in-flow-mapping"),
    pytest.param(True, "\n".join([
        "type: object",
        "properties:",
        "  a: {anyOf: [{type: string, description: One, or two}]}",
        "  b: {type: array, prefixItems: [{type: string, description: Three, or four}]}",
        "  c: {type: object, additionalProperties: {type: string, description: Five, or six}}",
        "patternProperties:",
        '  "^x-": {if: {type: string}, then: {minLength: 1, description: Seven, or eight}}',
        "$defs:",
        '  d: {not: {type: "null", description: Nine, or ten}}',
        "dependentSchemas:",
        "  e: {items: {type: string, description: Eleven, or twelve}}",
    ]), [
        f"12: {AT}.properties.a.anyOf[0].or two: 'or two' {SPLIT} (description reads \"One\"): quote it",
        f"13: {AT}.properties.b.prefixItems[0].or four: 'or four' {SPLIT} (description reads \"Three\"): quote it",
        f"14: {AT}.properties.c.additionalProperties.or six: 'or six' {SPLIT} (description reads \"Five\"): quote it",
        f"16: {AT}.patternProperties.^x-.then.or eight: 'or eight' {SPLIT} (description reads \"Seven\"): quote it",
        f"18: {AT}.$defs.d.not.or ten: 'or ten' {SPLIT} (description reads \"Nine\"): quote it",
        f"20: {AT}.dependentSchemas.e.items.or twelve: 'or twelve' {SPLIT} (description reads \"Eleven\"): quote it",
    ], id="comma-split-in-every-kind-of-subschema"),
    pytest.param(True, 'properties: {nickname: {type: [string, "null"], default: null}}', [], id="default-null-is-a-value"),
    pytest.param(True, 'properties: {"in one sentence.": {type: string}, "like Paris.": {}}\n$defs: {"or two": true}', [], id="property-named-like-a-stray-key"),
    pytest.param(True, "properties: {a: {enum: [red, null], examples: [{note: null}]}, b: {const: null, default: {x: null}}}", [], id="enum-const-examples-hold-null-data"),
    pytest.param(True, "{type: object, x-note: {draft: null}}", [], id="unknown-keyword-holds-data"),
    pytest.param(True, '$schema: "http://json-schema.org/draft-04/schema#"\nproperties: {n: {type: number, minimum: 0, exclusiveMinimum: 0}}', [f"11: {AT}.properties.n.exclusiveMinimum: not JSON Schema: 0 is not of type 'boolean'{LEFT_VALID}"], id="draft-04-by-its-own-metaschema"),
    pytest.param(True, 'properties: {n: {type: number, minimum: 0, exclusiveMinimum: 0}}', [], id="same-schema-fine-in-2020-12"),
    pytest.param(True, '$schema: "http://json-schema.org/draft-07/schema#"\ntype: array\nitems: [{type: string}, {type: integer}]', [], id="draft-07-tuple-items-fine"),
    pytest.param(True, "type: array\nitems: [{type: string}, {type: integer}]", [f"11: {AT}.items: not JSON Schema: [{{'type': 'string'}}, {{'type': 'integer'}}] is not of type 'object', 'boolean'{LEFT_VALID}"], id="tuple-items-refused-by-2020-12"),
    pytest.param(True, '$schema: "https://json-schema.org/draft-07/schema#"\ntype: object', [f'10: {AT}.$schema: "https://json-schema.org/draft-07/schema#" is no draft conchcheck knows, so it can\'t be checked; write the draft\'s own URI, such as "https://json-schema.org/draft/2020-12/schema" or "http://json-schema.org/draft-07/schema#"{LEFT_VALID}'], id="unknown-draft"),
    pytest.param(False, '$schema: "https://json-schema.org/draft-07/schema#"\ntype: object', [], id="unknown-draft-meant-invalid"),
]  # fmt: skip


@pytest.mark.parametrize(("valid", "parameters", "problems"), QUIRKS)
def test_schema_quirk(tmp_path: Path, valid: bool, parameters: str, problems: list[str]) -> None:
    path = tmp_path / "quirk.yaml"
    text = QUIRK_MATRIX.format(valid=str(valid).lower()) + textwrap.indent(parameters, " " * 8)
    path.write_text(text + "\n", encoding="utf-8")
    assert validate_file(path) == [f"{path}:{problem}" for problem in problems]


_DATA_KEYWORDS = {"enum", "const", "default", "examples"}


def _nulls(node: Any, path: str) -> list[str]:
    """Every null in a schema outside the data keywords (stricter than the loader's rule)."""
    if isinstance(node, list):
        return [n for i, item in enumerate(node) for n in _nulls(item, f"{path}[{i}]")]
    if not isinstance(node, dict):
        return [path] if node is None else []
    return [
        n
        for key, value in node.items()
        if key not in _DATA_KEYWORDS
        for n in _nulls(value, f"{path}.{key}")
    ]


@pytest.mark.parametrize("name", builtin_matrices())
def test_every_builtin_schema_is_what_its_author_meant(name: str) -> None:
    matrix = load_matrix(name)
    offered = {ident for prompt in matrix.prompts for ident in prompt.tools}
    meant = [case.tool for case in matrix.schema_cases if case.valid]
    schemas = [
        (f"$.tools.{ident}", tool, ident in offered or tool in meant)
        for ident, tool in matrix.tools.items()
    ]
    schemas += [(f"case {case.id}", case.tool, case.valid) for case in matrix.schema_cases]
    assert len(schemas) == len(matrix.tools) + len(matrix.schema_cases) > 0
    for where, tool, valid in schemas:
        params = tool.parameters
        if valid:
            validator_for(params, default=Draft202012Validator).check_schema(params)
        assert _nulls(params, where) == []


@pytest.mark.parametrize(
    ("tool", "field", "description"),
    [
        pytest.param("remember", "fact", "The fact to remember, in one sentence.", id="remember-fact"),
        pytest.param("get_weather", "city", "The city name, like Paris.", id="get-weather-city"),
        pytest.param("translate_text", "language", "The language to translate into, like French.", id="translate-text-language"),
    ],
)  # fmt: skip
def test_split_descriptions_are_whole_again(
    default: Matrix, tool: str, field: str, description: str
) -> None:
    properties = default.tools[tool].parameters["properties"]
    assert properties[field] == {"type": "string", "description": description}
