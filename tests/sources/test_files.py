"""Tools files (plain, OpenAI and Anthropic shapes, JSON or YAML) and OpenAPI 3 documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.sources import read_tools

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
    # The Pet -> Owner -> Pet cycle is inlined to the depth limit, then left open.
    node = pet
    for _ in range(3):
        node = node["properties"]["owner"]["properties"]["pets"]["items"]
    assert node["type"] == "object"
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
