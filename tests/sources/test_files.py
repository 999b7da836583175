"""Tools files (plain, OpenAI and Anthropic shapes, JSON or YAML) and OpenAPI 3 documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.sources import read_tools
from tests.sources.documents import api, fan_out, nested_chain, operations, self_refs

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = Tool("get_weather", "Weather for a city.", SCHEMA)

PETSTORE = """\
openapi: 3.0.3
info: {title: Pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List the pets.
      parameters:
        - {name: limit, in: query, schema: {type: integer}, description: How many.}
        - {name: X-Trace, in: header, schema: {type: string}}
    post:
      summary: Add a pet.
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Pet"}
  /pets/{petId}:
    parameters:
      - $ref: "#/components/parameters/PetId"
    get:
      operationId: show pet!
      description: One pet.
    delete: {}
components:
  parameters:
    PetId: {name: petId, in: path, required: true, schema: {type: string}}
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        owner: {$ref: "#/components/schemas/Owner"}
    Owner:
      type: object
      properties:
        name: {type: string}
        pets: {type: array, items: {$ref: "#/components/schemas/Pet"}}
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param(
            "t.json",
            '[{"name": "get_weather", "description": "Weather for a city.", "parameters": %s}]',
            id="plain-json",
        ),
        pytest.param(
            "t.json",
            '{"tools": [{"type": "function", "function": {"name": "get_weather",'
            ' "description": "Weather for a city.", "parameters": %s}}]}',
            id="openai-json",
        ),
        pytest.param(
            "t.json",
            '[{"name": "get_weather", "description": "Weather for a city.", "input_schema": %s}]',
            id="anthropic-json",
        ),
        pytest.param(
            "t.yaml",
            "tools:\n  - name: get_weather\n    description: Weather for a city.\n"
            "    input_schema: %s\n",
            id="anthropic-yaml",
        ),
        pytest.param(
            "t.yml",
            "- type: function\n  function:\n    name: get_weather\n"
            "    description: Weather for a city.\n    parameters: %s\n",
            id="openai-yaml",
        ),
    ],
)
def test_tools_files(tmp_path: Path, name: str, text: str) -> None:
    assert read_tools(write(tmp_path, name, text % json.dumps(SCHEMA))) == [WEATHER]


def test_openapi_operations_become_tools(tmp_path: Path) -> None:
    tools = read_tools(write(tmp_path, "pets.yaml", PETSTORE))
    assert [(t.name, t.description) for t in tools] == [
        ("listPets", "List the pets."),
        ("post_pets", "Add a pet."),
        ("show_pet", "One pet."),
        ("delete_pets_petId", ""),
    ]
    assert tools[0].parameters == {
        "type": "object",
        "properties": {"limit": {"type": "integer", "description": "How many."}},
    }
    body = tools[1].parameters
    assert body["required"] == ["body"]
    pet = body["properties"]["body"]
    assert pet["required"] == ["name"]
    # The Pet -> Owner -> Pet cycle is written out once, then cut where Pet comes back.
    assert pet["properties"]["owner"]["properties"]["pets"] == {
        "type": "array",
        "items": {
            "description": "Any value: #/components/schemas/Pet again, not written out inside itself."
        },
    }
    assert tools[2].parameters == {
        "type": "object",
        "properties": {"petId": {"type": "string"}},
        "required": ["petId"],
    }


def test_openapi_json_and_duplicate_names(tmp_path: Path) -> None:
    text = (
        '{"openapi": "3.1.0", "paths": {"/a": {"get": {"operationId": "same"}},'
        ' "/b": {"get": {"operationId": "same"}}}}'
    )
    tools = read_tools(write(tmp_path, "api.json", text))
    assert [t.name for t in tools] == ["same", "same_2"]
    assert tools[0].parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "openapi: 2.0\npaths: {}\n",
            "1: $.openapi: expected an OpenAPI 3 version such as '3.1.0', got 2.0.",
            id="swagger-2",
        ),
        pytest.param(
            "openapi: 3.0.0\ninfo: {}\n", "1: $: expected a 'paths' object.", id="no-paths"
        ),
        pytest.param(
            "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: '#/components/parameters/Nope'\n",
            "6: $.paths./a.get.parameters[0]: $ref '#/components/parameters/Nope' names nothing in this document.",
            id="dangling-ref",
        ),
        pytest.param(
            "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters:\n        - {in: query}\n",
            "6: $.paths./a.get.parameters[0]: a parameter needs 'name' and 'in' (text).",
            id="parameter-without-name",
        ),
        pytest.param(
            "openapi: 3.0.0\npaths:\n  /a:\n    post: [1]\n",
            "4: $.paths./a.post: expected an operation object.",
            id="operation-not-object",
        ),
        pytest.param(
            "openapi: 3.0.0\npaths:\n  /a:\n    post:\n      requestBody: {required: true}\n",
            "5: $.paths./a.post.requestBody: a request body needs a 'content' object.",
            id="body-without-content",
        ),
        pytest.param(
            "openapi: 3.0.0\npaths: {/a: {get: {}}\n",
            "3: $: not YAML: expected ',' or '}', but got '<stream end>'.",
            id="not-yaml",
        ),
    ],
)
def test_malformed_openapi(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "api.yaml", text)
    with pytest.raises(InputError) as caught:
        read_tools(path)
    assert str(caught.value) == f"{path}:{message}"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param(
            "mcp:ws://host/mcp",
            "The tool source 'mcp:ws://host/mcp' is not an MCP source I know.",
            id="unknown-mcp",
        ),
        pytest.param(
            "/no/such/tools.yaml", "/no/such/tools.yaml: no such file.", id="missing-file"
        ),
    ],
)
def test_bad_sources(source: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_tools(source)
    assert str(caught.value) == message


# -- hostile OpenAPI documents (issue 23) ---------------------------------------------------


AGAIN = {"description": "Any value: #/components/schemas/S0 again, not written out inside itself."}
BODY = "$.paths./r0.post.requestBody.content.application/json.schema"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(api(fan_out(10, 8)), f"1: {BODY}: the schema of tool 'op0' passes 10000 nodes with each $ref written out.", id="refs-fanning-out-to-10e8-nodes"),
        pytest.param(api(nested_chain(20, 8)), f"1: {BODY}: the schema of tool 'op0' is nested more than 128 levels with each $ref written out.", id="refs-chained-past-128-levels"),
        pytest.param(operations(100_000), "1: $.paths: 100000 operations, more than the 512 tools a probe takes.", id="100000-operations"),
        pytest.param(operations(20_000, same_id=True), "1: $.paths: 20000 operations, more than the 512 tools a probe takes.", id="20000-operations-of-one-operationid"),
        pytest.param(operations(513), "1: $.paths: 513 operations, more than the 512 tools a probe takes.", id="one-operation-too-many"),
    ],
)  # fmt: skip
def test_a_hostile_openapi_document_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "api.json", text)
    with pytest.raises(InputError) as caught:
        read_tools(path)
    assert str(caught.value) == f"{path}:{message}"


@pytest.mark.parametrize(
    ("schemas", "body"),
    [
        # Ten properties each naming the schema they are in: it is written out once.
        pytest.param(self_refs(10), {"type": "object", "properties": {f"p{k}": AGAIN for k in range(10)}}, id="recursive-fan-out-cut-at-its-return"),
        pytest.param(fan_out(3, 2), {"type": "object", "properties": {f"p{k}": {"type": "object", "properties": {f"p{j}": {"type": "string"} for j in range(3)}} for k in range(3)}}, id="a-small-fan-out-written-out"),
        # Eight chained $refs (the body's own and seven links) are followed; a ninth is left open.
        pytest.param(nested_chain(0, 8), {"description": "Any value: #/components/schemas/S8, past 8 $refs in a chain."}, id="a-ninth-chained-ref-cut"),
        pytest.param(nested_chain(0, 7), {"type": "string"}, id="eight-chained-refs-followed"),
    ],
)  # fmt: skip
def test_refs_are_written_out_within_bounds(
    tmp_path: Path, schemas: dict[str, object], body: object
) -> None:
    [tool] = read_tools(write(tmp_path, "api.json", api(schemas)))
    assert tool.parameters == {"type": "object", "properties": {"body": body}}


def test_operations_of_one_operationid_are_numbered() -> None:
    from conchcheck.sources.openapi import openapi_tools

    text = operations(512, same_id=True)
    names = [t.name for t in openapi_tools(json.loads(text), text, "api.json")]
    assert names == ["op", *(f"op_{i}" for i in range(2, 513))]
