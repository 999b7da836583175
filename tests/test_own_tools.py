"""``probe --tools``: your own tools as schema cases, their smoke prompts, a ``--prompts``
file, what each dialect changes in a schema, and the report's Your tools section.

The end-to-end probe reads all four kinds of source at once: the real ``mcp-server-time``
over stdio, a streamable-HTTP MCP server on loopback, an OpenAPI document and a tools file.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import to_dialect
from conchcheck.core.matching import MatcherKind
from conchcheck.core.schemadiff import ChangeKind, schema_changes
from conchcheck.core.tools import Tool
from conchcheck.core.usertools import Origin
from conchcheck.errors import InputError
from conchcheck.matrix.loader import MatrixError
from conchcheck.matrix.own import MAX_TOOLS, own_matrix
from conchcheck.sources import read_tools
from tests.emulators.mcp_http import VERSION, McpHttpEmulator, tool
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
runner = CliRunner()
TIME = f"mcp:stdio:{shlex.quote(sys.executable)} -m mcp_server_time"
FAKE = Path(__file__).parent / "emulators" / "mcp_stdio.py"


def one(parameters: dict[str, Any], name: str = "t") -> Tool:
    return Tool(name, "A tool.", parameters)


def obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> Any:
    return {"type": "object", "properties": properties, "required": required or [], **more}


# -- smoke prompts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "wanted"),
    [
        pytest.param(obj({"q": {"type": "string", "examples": ["cats", "dogs"]}}, ["q"]),
                     [("q", Origin.EXAMPLE, "cats")], id="first-of-examples"),
        pytest.param(obj({"q": {"type": "string", "example": "cats"}}, ["q"]),
                     [("q", Origin.EXAMPLE, "cats")], id="openapi-singular-example"),
        pytest.param(obj({"n": {"type": "integer", "default": 10}}, ["n"]),
                     [("n", Origin.DEFAULT, 10)], id="default-of-a-required-field"),
        pytest.param(obj({"n": {"type": "integer", "default": 10}}),
                     [], id="optional-default-left-out-a-model-may-omit-it"),
        pytest.param(obj({"n": {"type": "integer", "examples": [3]}}),
                     [("n", Origin.EXAMPLE, 3)], id="optional-field-with-an-example-is-asked"),
        pytest.param(obj({"v": {"const": "v2"}}, ["v"]),
                     [("v", Origin.CONST, "v2")], id="const"),
        pytest.param(obj({"u": {"enum": ["c", "f"]}}, ["u"]),
                     [("u", Origin.ENUM, "c")], id="first-enum-value"),
        pytest.param(obj({"p": {"$ref": "#/$defs/P"}}, ["p"],
                         **{"$defs": {"P": {"type": "object", "examples": [{"x": 1}]}}}),
                     [("p", Origin.EXAMPLE, {"x": 1})], id="ref-to-a-definition-followed"),
        pytest.param(obj({"path": {"type": "string"}}, ["path"]),
                     [("path", Origin.MODEL, None)], id="no-value-the-model-chooses"),
        pytest.param({"type": "object"}, [], id="no-properties-no-arguments"),
    ],
)  # fmt: skip
def test_smoke_arguments_come_from_the_schema(schema: Any, wanted: list[Any]) -> None:
    [own] = own_matrix([("tools.yaml", [one(schema)])]).own
    assert own.smoke is not None
    assert [(a.name, a.origin, a.value) for a in own.smoke] == wanted


def test_smoke_prompt_asks_for_the_values_and_judges_them() -> None:
    schema = obj(
        {"city": {"type": "string", "examples": ["Oslo"]}, "days": {"type": "integer",
         "default": 3}, "note": {"type": "string"}}, ["city", "days", "note"],
    )  # fmt: skip
    matrix = own_matrix([("tools.yaml", [one(schema, "forecast")])])
    [prompt] = matrix.prompts
    assert prompt.id == "smoke-forecast" and prompt.tools == ("forecast",)
    assert prompt.user == (
        'Call the tool forecast with these arguments: {"city": "Oslo", "days": 3} and a value'
        " you choose for note. Make the call; don't describe it."
    )
    [call] = prompt.expect.calls
    assert [(a.name, a.matcher.kind, a.matcher.value) for a in call.arguments] == [
        ("city", MatcherKind.EQUALS_CI, "Oslo"),
        ("days", MatcherKind.EQUALS, 3),
        ("note", MatcherKind.ANY, None),
    ]
    [case] = matrix.schema_cases
    assert (case.id, case.feature, case.valid) == ("forecast", "your tool, from tools.yaml", True)


def test_a_schema_that_is_not_json_schema_is_sent_once_as_invalid() -> None:
    matrix = own_matrix([("tools.yaml", [one({"type": "objekt"}, "bad"), one(obj({}), "ok")])])
    bad = matrix.schema_cases[0]
    assert (bad.valid, bad.feature) == (
        False,
        "your tool, from tools.yaml (not valid JSON Schema: $.type: 'objekt' is not valid under"
        " any of the given schemas)",
    )
    assert [p.id for p in matrix.prompts] == ["smoke-ok"]  # no smoke prompt for a bad schema


@pytest.mark.parametrize(
    ("sourced", "message"),
    [
        pytest.param([("a.yaml", [one({}, "x")]), ("mcp:stdio:srv", [one({}, "x")])],
                     "--tools: two tools are named 'x' (a.yaml and mcp:stdio:srv).",
                     id="one-name-in-two-sources"),
        pytest.param([("a.yaml", [])], "--tools: the sources list no tools.", id="no-tools"),
        pytest.param([("a.yaml", [one({}, f"t{i}") for i in range(MAX_TOOLS + 1)])],
                     f"--tools: the sources list {MAX_TOOLS + 1} tools, more than {MAX_TOOLS}.",
                     id="too-many-tools"),
        pytest.param([("mcp:stdio:srv", [one({}, "n" * 100_000)])],
                     "--tools: mcp:stdio:srv lists a tool whose name is 100000 characters long"
                     f" ('{'n' * 40}…'), more than 128.", id="a-name-of-100000-characters"),
        pytest.param([("a.yaml", [one({}, "n" * 129)])],
                     "--tools: a.yaml lists a tool whose name is 129 characters long"
                     f" ('{'n' * 40}…'), more than 128.", id="one-past-mcps-128"),
    ],
)  # fmt: skip
def test_tool_sets_refused(sourced: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        own_matrix(sourced)
    assert str(caught.value) == message


# -- a --prompts file ------------------------------------------------------------------------

PROMPTS = """\
prompts:
  - id: find-open
    user: Find the open issues of octo/hello.
    tools: [search_issues, add_note]
    expect:
      calls:
        - tool: search_issues
          arguments: {repo: octo/hello}
"""
SEARCH = one(obj({"repo": {"type": "string"}}, ["repo"]), "search_issues")
NOTE = one(obj({"text": {"type": "string"}}, ["text"]), "add_note")


def test_prompts_file_replaces_the_smoke_prompts(tmp_path: Path) -> None:
    path = tmp_path / "prompts.yaml"
    path.write_text(PROMPTS)
    matrix = own_matrix([("t.yaml", [SEARCH, NOTE])], path)
    assert [(p.id, p.tools) for p in matrix.prompts] == [
        ("find-open", ("search_issues", "add_note"))
    ]
    assert all(t.smoke is None for t in matrix.own)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(PROMPTS.replace("[search_issues, add_note]", "[search_issue]"),
                     "4: $.prompts[0].tools[0]: no tool with id 'search_issue' among the --tools",
                     id="a-tool-the-sources-do-not-list"),
        pytest.param(PROMPTS.replace("arguments: {repo: octo/hello}", "arguments: {repository: x}"),
                     "8: $.prompts[0].expect.calls[0].arguments.repository: search_issues takes"
                     " no 'repository' (it takes repo)", id="an-argument-the-tool-lacks"),
        pytest.param("prompts: []\n", "1: $.prompts: expected at least 1 item, got []",
                     id="no-prompts"),
        pytest.param(PROMPTS + "  - id: find-open\n    user: again\n    tools: [add_note]\n"
                     "    expect: {no_call: true}\n",
                     "9: $.prompts[1].id: duplicate id 'find-open'; also at line 2",
                     id="an-id-twice"),
        pytest.param("tools: {}\n" + PROMPTS,
                     "1: $.tools: unknown key; expected one of version, prompts",
                     id="tools-belong-to-the-sources"),
    ],
)  # fmt: skip
def test_prompts_file_problems(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "prompts.yaml"
    path.write_text(text)
    with pytest.raises(MatrixError) as caught:
        own_matrix([("t.yaml", [SEARCH, NOTE])], path)
    assert caught.value.problems[0] == f"{path}:{problem}"
    assert "matrix validate" not in str(caught.value)


# -- what a dialect changes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "lines"),
    [
        pytest.param({"type": "string"}, {"type": "string"}, [], id="unchanged"),
        pytest.param({"type": "string", "format": "uri"}, {"type": "string"},
                     ['$.format: removed "uri"'], id="keyword-removed"),
        pytest.param({"type": ["string", "null"]}, {"type": "string", "nullable": True},
                     ['$.type: ["string","null"] → "string"', "$.nullable: added true"],
                     id="type-list-to-nullable"),
        pytest.param({"items": {"$ref": "#/$defs/a"}}, {"items": {"type": "string"}},
                     ['$.items: $ref "#/$defs/a" inlined'], id="ref-inlined-said-once"),
        pytest.param({"anyOf": [{"type": "integer"}, {"type": "null"}]},
                     {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                     ['$.anyOf[1].type: "null" → "string"'], id="union-walked-branch-by-branch"),
        pytest.param({"properties": {"a-b": {"minimum": 1}}}, {"properties": {"a-b": {}}},
                     ['$.properties."a-b".minimum: removed 1'], id="a-name-that-is-no-identifier"),
        pytest.param({"description": "x" * 100}, {},
                     [f'$.description: removed "{"x" * 78}… (102 characters)'],
                     id="a-long-value-cut"),
    ],
)  # fmt: skip
def test_schema_changes(before: Any, after: Any, lines: list[str]) -> None:
    shown, count = schema_changes(before, after)
    assert [c.line() for c in shown] == lines and count == len(lines)


def test_schema_changes_are_bounded() -> None:
    before = {"properties": {f"p{i}": {"format": "date"} for i in range(500)}}
    shown, count = schema_changes(before, to_dialect(before, "strict"), limit=30)
    # Each property: format removed, type and description added; and the root's type.
    assert (len(shown), count) == (30, 1501)
    assert {c.kind for c in shown} == {ChangeKind.REMOVED, ChangeKind.ADDED}


# -- the probe, end to end -------------------------------------------------------------------

OPENAPI = """\
openapi: 3.1.0
info: {title: Pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List the pets.
      parameters:
        - {name: limit, in: query, required: true, schema: {type: integer, default: 20}}
"""
TOOLS_FILE = """\
tools:
  - name: search_issues
    description: Search the issues of a repository.
    parameters:
      type: object
      properties:
        repo: {type: string, examples: ["octo/hello"]}
        state: {type: [string, "null"], enum: [open, closed, null], default: open}
      required: [repo, state]
      additionalProperties: false
"""


@pytest.fixture
def sources(serve: Serve, tmp_path: Path) -> list[str]:
    mcp = serve(McpHttpEmulator([tool("ping"), tool("echo", ["text"])]))
    (tmp_path / "pets.yaml").write_text(OPENAPI)
    (tmp_path / "tools.yaml").write_text(TOOLS_FILE)
    return [TIME, f"mcp:{mcp.url}/mcp", str(tmp_path / "pets.yaml"), str(tmp_path / "tools.yaml")]


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_probe_with_four_kinds_of_source(serve: Serve, tmp_path: Path, sources: list[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaEmulatedKey0123456789abcdef")
    matrix = own_matrix([(s, read_tools(s)) for s in sources])
    server = serve(OpenAIEmulator(oracle(matrix), flavour="gemini-openai"))
    out = tmp_path / "out"
    args = ["probe", "gemini-openai:gemini-x", "--base-url", f"{server.url}/v1", "--out",
            str(out), "--quiet", "--json"]  # fmt: skip
    for source in sources:
        args += ["--tools", source]
    done = cli(*args)
    assert done.exit_code == 0, done.stderr
    verdict = json.loads(done.stdout)["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"]) == ("gemini", "native")
    results = json.loads((out / "results.json").read_text())
    assert results["matrix"]["name"] == "own-tools"
    # Each MCP server's revision is the one it answered: mcp-server-time (SDK 1.30) agreed
    # on the version conchcheck asks for, the emulator on its older one; files have none.
    assert [(t["name"], t["source"], t["protocol"]) for t in results["own_tools"]] == [
        ("get_current_time", TIME, "2025-06-18"), ("convert_time", TIME, "2025-06-18"),
        ("ping", sources[1], VERSION), ("echo", sources[1], VERSION),
        ("listPets", sources[2], None), ("search_issues", sources[3], None),
    ]  # fmt: skip
    report = (out / "report.md").read_text()
    section = report[report.index("## Your tools") : report.index("## Prompts")]
    assert (
        f"6 tools from `{TIME}` (MCP 2025-06-18), `{sources[1]}` (MCP {VERSION}),"
        f" `{sources[2]}`, `{sources[3]}`." in section
    )
    # gemini carried every tool, so the less permissive strict was never needed.
    assert "| tool | permissive | anthropic | gemini | smoke (native) | smoke (words) |" in section
    assert "| search_issues | ❌ schema | ❌ schema | ✅ | pass | pass |" in section
    assert "| get_current_time | ✅ | ✅ | ✅ | pass | pass |" in section
    # One request carried every tool: its refusal names both tools it refused, verbatim.
    assert (
        "**schema** — `listPets` in permissive, anthropic; `search_issues` in permissive,"
        ' anthropic\n\n```text\nInvalid JSON payload received. Unknown name "default" at'
        " 'tools[0].function_declarations[4].parameters.properties[0].value': Cannot find field."
        in section
    )
    assert "`search_issues` as gemini: 8 changes" in section
    assert "`search_issues` as strict: 6 changes" in section
    assert "Sent unchanged in every dialect: `get_current_time`, `convert_time`, `echo`." in section
    assert '- `$.properties.state.type: ["string","null"] → "string"`' in section
    assert "- `listPets`: `limit = 20` (default)" in section
    assert "- `echo`: `text` chosen by the model (the schema gives no value)" in section
    assert "- `ping`: no arguments" in section
    # Every request went to the provider: the MCP server was only asked for its list.
    assert all(r.path.startswith("/v1/") for r in server.received)
    # The capability file keeps the matrix verdict apps read: a probe of your tools is not one.
    assert not Path(os.environ["CONCHCHECK_CACHE"]).exists()
    # CI gates on your tools by name: the schema case is the tool, the prompt smoke-<tool>.
    expect = tmp_path / "expect.yaml"
    expect.write_text(
        'targets:\n  "*":\n    dialect: gemini\n    accepted: [search_issues, listPets, echo]\n'
        "    passes: [native/smoke-search_issues, words/smoke-convert_time]\n"
    )
    gated = cli("check", str(out / "results.json"), "--expect", str(expect))
    assert (gated.exit_code, gated.stdout) == (
        0,
        "conchcheck check: passed. 1 target: 6 of 6 expectations met.\n",
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--tools", "mcp:stdio:no-such-mcp-server"],
                     "The MCP server `no-such-mcp-server` could not be started: No such file or"
                     " directory. Check the command and that it is installed.",
                     id="a-command-that-does-not-start"),
        pytest.param(["--tools", f"mcp:stdio:{shlex.quote(sys.executable)} {FAKE} silent",
                      "--timeout", "1"],
                     f"The MCP server `{sys.executable} {FAKE} silent` did not answer"
                     " server/discover or initialize within the deadline; it was stopped. Check"
                     " that the command or URL starts"
                     " an MCP server that answers tools/list.", id="a-server-that-never-answers"),
        pytest.param(["--tools", "{tmp}/bad.yaml"],
                     "{tmp}/bad.yaml:1: $.openapi: expected an OpenAPI 3 version such as"
                     " '3.1.0', got 2.0.", id="malformed-openapi"),
        pytest.param(["--tools", "{tmp}/tools.yaml", "--tools", "{tmp}/tools.yaml"],
                     "--tools: two tools are named 'search_issues' ({tmp}/tools.yaml and"
                     " {tmp}/tools.yaml). A request can't offer two tools of one name; give one"
                     " of the sources.", id="one-source-twice"),
        pytest.param(["--prompts", "{tmp}/prompts.yaml"],
                     "--prompts: prompts files are for your own tools, and no --tools was given."
                     " Add --tools SOURCE, or put the prompts in a matrix (--matrix).",
                     id="prompts-without-tools"),
        pytest.param(["--tools", "{tmp}/tools.yaml", "--use-cache"],
                     "--tools and --use-cache: the capability file holds matrix verdicts, not"
                     " verdicts on your tools, so there is nothing to reuse. Drop --use-cache.",
                     id="tools-and-the-cache"),
        pytest.param(["--tools", "{tmp}/tools.yaml", "--matrix", "default-lite"],
                     "--tools and --matrix: give one; --tools makes the matrix from your tools."
                     " Use --prompts FILE for prompts written for your tools.",
                     id="tools-and-a-matrix"),
    ],
)  # fmt: skip
def test_bad_sources_are_one_line_before_any_request(
    serve: Serve, tmp_path: Path, extra: list[str], message: str
) -> None:
    (tmp_path / "bad.yaml").write_text("openapi: 2.0\npaths: {}\n")
    (tmp_path / "tools.yaml").write_text(TOOLS_FILE)
    (tmp_path / "prompts.yaml").write_text(PROMPTS)
    server = serve(OpenAIEmulator(oracle(own_matrix([("t", [SEARCH])]))))
    out = tmp_path / "out"
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    done = cli("probe", "vllm:m", "--base-url", f"{server.url}/v1", "--out", str(out), *args)
    assert done.exit_code == 2
    assert done.stderr == f"conchcheck: {message.replace('{tmp}', str(tmp_path))}\n"
    assert server.received == [] and not out.exists()
