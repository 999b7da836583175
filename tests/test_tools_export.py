"""``conchcheck tools export``: results of real probes against loopback emulators of targets
that take different dialects (an OpenAI-like server takes any schema, a gateway in front of
Gemini its OpenAPI subset, a backend only the strict dialect's six keywords), then the
export: the dialect chosen, every change with the targets that forced it, the file written,
and that file read back by ``probe --tools`` and probed again. Bad input is one line, exit 2,
and nothing written.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import to_dialect
from conchcheck.matrix import load_matrix
from conchcheck.matrix.own import own_matrix
from conchcheck.sources import read_tools
from tests.emulators import profiles
from tests.emulators.model import Behaviour
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.sources import servers
from tests.sources.test_mcp_sdk import SEARCH_MAIL, SET_ORDER

Serve = Callable[[Handler], EmulatorServer]
runner = CliRunner()

TOOLS = """\
tools:
  - name: search_issues
    description: Search the issues of a repository.
    parameters:
      type: object
      properties:
        repo: {type: string, format: uri}
        state: {type: [string, "null"], enum: [open, closed, null], default: open}
        limit: {type: integer, minimum: 1, maximum: 50}
      required: [repo, state]
      additionalProperties: false
  - name: label_issue
    description: Label an issue.
    parameters:
      type: object
      properties:
        label: {$ref: "#/$defs/label"}
      required: [label]
      $defs:
        label: {type: string, minLength: 1}
  - name: ping
    description: Ping the tracker.
"""


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def tools_file(tmp_path: Path, text: str = TOOLS) -> Path:
    path = tmp_path / "tools.yaml"
    path.write_text(text)
    return path


def probed(serve: Serve, tmp_path: Path, name: str, make: Callable[[Behaviour], Handler],
           source: str, *extra: str, code: int = 0) -> Path:  # fmt: skip
    """The results folder of a probe of ``source``'s tools (the dialect stage only) at an
    emulator ``make`` builds, as target ``vllm:<name>``."""
    server = serve(make(oracle(own_matrix([(source, read_tools(source))]))))
    out = tmp_path / name
    done = cli("probe", f"vllm:{name}", "--base-url", f"{server.url}/v1", "--out", str(out),
               "--tools", source, "--checks", "dialect", "--quiet", *extra)  # fmt: skip
    assert done.exit_code == code, done.stderr
    return out


def export(source: str | Path, results: list[Path], out: Path, *extra: str) -> Any:
    args = ["tools", "export", "--tools", str(source), "--out", str(out), *extra]
    for path in results:
        args += ["--from", str(path)]
    return cli(*args)


def valid_in(dialect: str, written: Path) -> list[Any]:
    """The tools ``probe --tools`` reads from ``written``, each checked: valid JSON Schema,
    and already in ``dialect`` (converting it again changes nothing)."""
    tools = read_tools(str(written))
    for tool in tools:
        schema = dict(tool.parameters)
        Draft202012Validator.check_schema(schema)
        assert not schema or to_dialect(schema, dialect) == schema, tool.name
    return tools


# -- three targets, three dialects -----------------------------------------------------------


def test_three_targets_get_the_strict_dialect_each_change_named(
    serve: Serve, tmp_path: Path
) -> None:
    source = str(tools_file(tmp_path))
    results = [
        probed(serve, tmp_path, "open", OpenAIEmulator, source),
        probed(serve, tmp_path, "gem", profiles.gemini_gateway, source),
        probed(serve, tmp_path, "six", profiles.strict_only, source),
    ]
    out = tmp_path / "fleet.yaml"
    done = export(source, results, out)
    assert (done.exit_code, done.stderr) == (0, "")
    at = {r.name: r / "results.json" for r in results}
    assert done.stdout == f"""\
Dialect: strict, the most permissive every target accepted.
Targets:
target     dialect     from
vllm:open  permissive  {at["open"]}
vllm:gem   gemini      {at["gem"]}
vllm:six   strict      {at["six"]}
Changes:
tool           place                           change                                             forced by
search_issues  $.properties.repo.format        removed "uri"                                      vllm:gem, vllm:six
search_issues  $.properties.repo.description   added "Format: uri."                               vllm:gem, vllm:six
search_issues  $.properties.state.type         ["string","null"] → "string"                       vllm:gem, vllm:six
search_issues  $.properties.state.default      removed "open"                                     vllm:gem, vllm:six
search_issues  $.properties.state.description  added "Default: \\"open\\". Also accepts: null."     vllm:gem, vllm:six
search_issues  $.properties.limit.minimum      removed 1                                          vllm:six
search_issues  $.properties.limit.maximum      removed 50                                         vllm:six
search_issues  $.additionalProperties          removed false                                      vllm:gem, vllm:six
label_issue    $.properties.label              $ref "#/$defs/label" inlined                       vllm:gem, vllm:six
label_issue    $.$defs                         removed {{"label":{{"type":"string","minLength":1}}}}  vllm:gem, vllm:six
search_issues: vllm:gem refused it in permissive and anthropic (schema: type).
label_issue: vllm:gem refused it in permissive and anthropic (schema: $ref).
search_issues: vllm:six refused it in permissive, anthropic and gemini (schema: additionalProperties; schema: nullable).
label_issue: vllm:six refused it in permissive (schema: $defs).
wrote {out}: 3 tools in the strict dialect
"""  # fmt: skip
    # Only the strict backend drops the bounds: gemini keeps minimum and maximum.
    assert (
        out.read_text()
        == """\
tools:
- name: search_issues
  description: Search the issues of a repository.
  parameters:
    type: object
    properties:
      repo:
        type: string
        description: 'Format: uri.'
      state:
        type: string
        description: 'Default: "open". Also accepts: null.'
        enum:
        - open
        - closed
        - null
      limit:
        type: integer
    required:
    - repo
    - state
- name: label_issue
  description: Label an issue.
  parameters:
    type: object
    properties:
      label:
        type: string
    required:
    - label
- name: ping
  description: Ping the tracker.
  parameters: {}
"""
    )
    assert [t.name for t in valid_in("strict", out)] == ["search_issues", "label_issue", "ping"]


# -- the gemini fleet: JSON out, --json, and the file probed again ---------------------------

GEMINI_CHANGES = [
    ("search_issues", "$.properties.repo.format", "removed", '"uri"', None, ["vllm:gem"]),
    ("search_issues", "$.properties.repo.description", "added", None, '"Format: uri."',
     ["vllm:gem"]),
    ("search_issues", "$.properties.state.type", "changed", '["string","null"]', '"string"',
     ["vllm:gem"]),
    ("search_issues", "$.properties.state.enum", "changed", '["open","closed",null]',
     '["open","closed"]', ["vllm:gem"]),
    ("search_issues", "$.properties.state.default", "removed", '"open"', None, ["vllm:gem"]),
    ("search_issues", "$.properties.state.nullable", "added", None, "true", ["vllm:gem"]),
    ("search_issues", "$.properties.state.description", "added", None, '"Default: \\"open\\"."',
     ["vllm:gem"]),
    ("search_issues", "$.additionalProperties", "removed", "false", None, ["vllm:gem"]),
    ("label_issue", "$.properties.label", "inlined", '"#/$defs/label"', None, ["vllm:gem"]),
    ("label_issue", "$.$defs", "removed", '{"label":{"type":"string","minLength":1}}', None,
     ["vllm:gem"]),
]  # fmt: skip
GEMINI_PARAMETERS = [
    {
        "type": "object",
        "properties": {
            "repo": {"type": "string", "description": "Format: uri."},
            "state": {"type": "string", "nullable": True, "description": 'Default: "open".',
                      "enum": ["open", "closed"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "required": ["repo", "state"],
    },
    {"type": "object", "properties": {"label": {"type": "string", "minLength": 1}},
     "required": ["label"]},
    {},
]  # fmt: skip
GEMINI_TOOLS = [
    {"name": name, "description": description, "parameters": parameters}
    for (name, description), parameters in zip(
        [("search_issues", "Search the issues of a repository."),
         ("label_issue", "Label an issue."), ("ping", "Ping the tracker.")],
        GEMINI_PARAMETERS, strict=True,
    )
]  # fmt: skip


def test_json_file_and_data_for_a_gemini_fleet_probe_again_as_written(
    serve: Serve, tmp_path: Path
) -> None:
    source = str(tools_file(tmp_path))
    results = [
        probed(serve, tmp_path, "open", OpenAIEmulator, source),
        probed(serve, tmp_path, "gem", profiles.gemini_gateway, source),
    ]
    out = tmp_path / "fleet.json"
    done = export(source, results, out, "--json")
    assert (done.exit_code, done.stderr) == (0, "")
    data = json.loads(done.stdout)
    assert (data["out"], data["dialect"], data["notes"]) == (str(out), "gemini", [])
    assert data["targets"] == [
        {"name": "vllm:open", "dialect": "permissive", "results": str(results[0] / "results.json"),
         "note": None},
        {"name": "vllm:gem", "dialect": "gemini", "results": str(results[1] / "results.json"),
         "note": None},
    ]  # fmt: skip
    assert [(c["tool"], c["path"], c["kind"], c["before"], c["after"], c["forced_by"])
            for c in data["changes"]] == GEMINI_CHANGES  # fmt: skip
    assert data["refusals"] == [
        {"tool": "search_issues", "target": "vllm:gem", "dialects": ["permissive", "anthropic"],
         "reason": "schema: type"},
        {"tool": "label_issue", "target": "vllm:gem", "dialects": ["permissive", "anthropic"],
         "reason": "schema: $ref"},
    ]  # fmt: skip
    written = json.loads(out.read_text())
    assert written == {"tools": [{k: t[k] for k in ("name", "description", "parameters")}
                                 for t in data["tools"]]}  # fmt: skip
    assert written["tools"] == GEMINI_TOOLS
    assert out.read_text() == json.dumps(written, indent=2, ensure_ascii=False) + "\n"
    assert [t.name for t in valid_in("gemini", out)] == ["search_issues", "label_issue", "ping"]
    # Probed again as written, the gateway takes every tool in the first dialect it is sent.
    again = probed(serve, tmp_path, "gem-again", profiles.gemini_gateway, str(out))
    verdict = json.loads((again / "results.json").read_text())["verdict"]["dialect"]
    assert (verdict["dialect"], verdict["refused"]) == ("permissive", [])


# -- an MCP server's tools -------------------------------------------------------------------


def test_the_tools_of_a_real_mcp_server(serve: Serve, tmp_path: Path) -> None:
    source = servers.sdk_stdio()
    results = [
        probed(serve, tmp_path, "open", OpenAIEmulator, source),
        probed(serve, tmp_path, "gem", profiles.gemini_gateway, source),
    ]
    out = tmp_path / "mail.yaml"
    done = export(source, results, out)
    assert (done.exit_code, done.stderr) == (0, "")
    at = {r.name: r / "results.json" for r in results}
    assert (
        done.stdout
        == f"""\
Dialect: gemini, the most permissive every target accepted.
Targets:
target     dialect     from
vllm:open  permissive  {at["open"]}
vllm:gem   gemini      {at["gem"]}
Changes:
tool         place                           change                          forced by
search_mail  $.properties.query.title        removed "Query"                 vllm:gem
search_mail  $.properties.limit.default      removed 10                      vllm:gem
search_mail  $.properties.limit.title        removed "Limit"                 vllm:gem
search_mail  $.properties.limit.description  added "Default: 10."            vllm:gem
search_mail  $.title                         removed "search_mailArguments"  vllm:gem
set_order    $.properties.order.title        removed "Order"                 vllm:gem
set_order    $.title                         removed "set_orderArguments"    vllm:gem
search_mail: vllm:gem refused it in permissive and anthropic (schema: default).
wrote {out}: 2 tools in the gemini dialect
"""
    )
    # The SDK's pydantic schemas (tests/sources/test_mcp_sdk.py), in Gemini's subset.
    assert [(t.name, dict(t.parameters)) for t in valid_in("gemini", out)] == [
        ("search_mail", to_dialect(SEARCH_MAIL, "gemini")),
        ("set_order", to_dialect(SET_ORDER, "gemini")),
    ]
    assert to_dialect(SEARCH_MAIL, "gemini") == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "description": "Default: 10."},
        },
        "required": ["query"],
    }


# -- a --targets run's folder, probed with a matrix -------------------------------------------


def test_a_fleet_folder_of_matrix_probes(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix("default")
    first = serve(OpenAIEmulator(oracle(matrix)))
    second = serve(profiles.gemini_gateway(oracle(matrix)))
    (tmp_path / "targets.yaml").write_text(
        f"targets:\n  - {{target: vllm:open, base_url: {first.url}/v1}}\n"
        f"  - {{target: vllm:gem, base_url: {second.url}/v1}}\n"
    )
    fleet = tmp_path / "fleet"
    done = cli("probe", "--targets", str(tmp_path / "targets.yaml"), "--out", str(fleet),
               "--checks", "dialect", "--quiet")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert (fleet / "index.json").is_file()
    source = tools_file(tmp_path)
    # Written into the results folder, and again: a file beside the results is no input.
    out = fleet / "tools.yaml"
    assert export(source, [fleet], out).exit_code == 0
    done = export(source, [fleet], out, "--json")
    assert (done.exit_code, done.stderr) == (0, "")
    data = json.loads(done.stdout)
    # A matrix probe's verdict speaks for any tool; it holds no refusal of these tools.
    assert [(t["name"], t["dialect"], Path(t["results"]).parent.parent) for t in data["targets"]
            ] == [("vllm:gem", "gemini", fleet), ("vllm:open", "permissive", fleet)]  # fmt: skip
    assert [(c["tool"], c["path"], c["kind"], c["before"], c["after"], c["forced_by"])
            for c in data["changes"]] == GEMINI_CHANGES  # fmt: skip
    assert (data["dialect"], data["refusals"], data["notes"]) == ("gemini", [], [])
    assert [dict(t.parameters) for t in valid_in("gemini", out)] == GEMINI_PARAMETERS


# -- what a target's verdict may lack ---------------------------------------------------------


def doomed(tools: list[dict[str, Any]]) -> Response | None:
    """A backend that refuses ``search_issues`` in every dialect, naming a keyword that
    differs with each dialect's schema (so no one reason excepts it), and takes the rest."""
    for index, tool in enumerate(tools):
        if tool["function"]["name"] == "search_issues":
            size = len(json.dumps(tool["function"].get("parameters")))
            return profiles.unknown_name(f"k{size}", index)
    return None


def doomed_alike(tools: list[dict[str, Any]]) -> Response | None:
    """The same, for one reason in every dialect: the verdict excepts the tool."""
    for index, tool in enumerate(tools):
        if tool["function"]["name"] == "search_issues":
            return profiles.unknown_name("x-internal", index)
    return None


@pytest.mark.parametrize(
    ("check", "note"),
    [
        pytest.param(doomed, "vllm:odd: no dialect carried every schema case; permissive, which"
                     " carried the most, is used.", id="no-dialect-carried-all-best-is-used"),
        pytest.param(doomed_alike, "search_issues: vllm:odd refused it in every dialect tried"
                     " (schema: x-internal); it is written all the same, and that target won't"
                     " take it.", id="one-tool-refused-in-every-dialect"),
    ],
)  # fmt: skip
def test_a_target_that_refuses_one_tool_everywhere(
    serve: Serve, tmp_path: Path, check: Callable[..., Response | None], note: str
) -> None:
    source = str(tools_file(tmp_path))

    def make(model: Behaviour) -> Handler:
        return OpenAIEmulator(model, check_tools=check)

    results = [probed(serve, tmp_path, "odd", make, source)]
    out = tmp_path / "out.yaml"
    done = export(source, results, out, "--json")
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["dialect"], data["changes"], data["notes"]) == ("permissive", [], [note])


# -- bad input: one line, exit 2, nothing written ---------------------------------------------


def refuse_all(tools: list[dict[str, Any]]) -> Response | None:
    return profiles.unknown_name("x-internal", 0) if tools else None


OTHER_TOOLS = TOOLS.replace("name: ping", "name: pong")
CHANGED = TOOLS.replace("minimum: 1", "minimum: 2")
INVALID = TOOLS.replace("type: integer, minimum: 1", "type: integer, minimum: one")


OTHER = "--tools {tools} --from {other} --out {tmp}/out.yaml"
GOOD = "--tools {tools} --from {open} --out {tmp}/out.yaml"
REFUSE_ALL = ("other", lambda m: OpenAIEmulator(m, check_tools=refuse_all), TOOLS, 0)


@pytest.mark.parametrize(
    ("args", "make", "message"),
    [
        pytest.param("--tools {tools} --out {tmp}/out.yaml", None,
                     "--from: required, but not given. See `root tools export --help`.",
                     id="no-from"),
        pytest.param("--from {open} --out {tmp}/out.yaml", None,
                     "--tools: required, but not given. See `root tools export --help`.",
                     id="no-tools"),
        pytest.param("--tools {tools} --from {tmp}/nowhere --out {tmp}/out.yaml", None,
                     "{tmp}/nowhere: no such file or folder.", id="missing-results"),
        pytest.param("--tools {tools} --from {tools} --out {tmp}/out.yaml", None,
                     "{tools}:1: not JSON: Expecting value (column 1).", id="not-results"),
        pytest.param(GOOD + " --from {tmp}/copy", None,
                     "{tmp}/copy/results.json: target vllm:open at {open_url} (openai) is also in"
                     " {open}/results.json; each target may come once in each API of an"
                     " endpoint. Remove one of the two, or give shards that split the targets.",
                     id="one-target-twice"),
        pytest.param(OTHER, ("other", OpenAIEmulator, OTHER_TOOLS, 0),
                     "--from: {other}/results.json: vllm:other was probed with other tools; ping"
                     " is not among them. Probe it again with these --tools, or give results of"
                     " a matrix probe.", id="results-of-other-tools"),
        pytest.param(OTHER, ("other", OpenAIEmulator, CHANGED, 0),
                     "--from: {other}/results.json: vllm:other was probed with other tools;"
                     " search_issues had another schema then. Probe it again with these --tools,"
                     " or give results of a matrix probe.", id="results-of-another-schema"),
        pytest.param(OTHER, ("other", profiles.html_200, TOOLS, 3),
                     "--from: {other}/results.json: vllm:other was unusable (connect: The request"
                     " failed: Server disconnected without sending a response.), so no dialect"
                     " of it is known. Probe it again once it answers, or leave it out of"
                     " --from.", id="an-unusable-target"),
        pytest.param(OTHER, ("other", OpenAIEmulator, TOOLS, 4),
                     "--from: {other}/results.json: the probe of vllm:other stopped early (the"
                     " request budget (1) is spent), so its dialect verdict is not settled."
                     " Finish it with `conchcheck probe … --resume {other}/results.json`, or"
                     " leave it out.", id="a-probe-stopped-early"),
        pytest.param(OTHER, REFUSE_ALL,
                     "--from: {other}/results.json: no dialect carried a schema case of"
                     " vllm:other, so no tools file fits it. Leave it out of --from, or give it"
                     " the tools in words.", id="no-dialect-carried-anything"),
        pytest.param("--tools {invalid} --from {open} --out {tmp}/out.yaml", None,
                     "--tools: {invalid}: the schema of search_issues is not valid JSON Schema"
                     " ($.properties.limit.minimum: 'one' is not of type 'number'), so it has no"
                     " conversion. Fix the schema; a probe sends it once as written and judges"
                     " nothing.", id="a-schema-that-is-no-json-schema"),
        pytest.param("--tools {tools} --from {open} --out {tmp}/out.txt", None,
                     "--out: {tmp}/out.txt: the name must end in .json, .yaml or .yml, which"
                     " says how the tools are written. Name the file tools.json or tools.yaml.",
                     id="out-of-no-known-format"),
        pytest.param("--tools {tools} --from {open} --out {tmp}/link.yaml", None,
                     "--out: {tmp}/link.yaml: is a symbolic link; conchcheck never writes"
                     " through one. Remove the link, or choose another file.",
                     id="out-a-symbolic-link"),
        pytest.param("--tools {tools} --from {open} --out {tmp}/folder.yaml", None,
                     "--out: {tmp}/folder.yaml: is a folder. Give the path of a file.",
                     id="out-a-folder"),
        pytest.param("--tools {tools} --from {open} --out {tools}", None,
                     "--out: {tools}: is one of the inputs; writing it would replace what was"
                     " read. Choose another file.", id="out-the-tools-file-itself"),
        pytest.param("--tools {tools} --from {open} --out {open}/results.json", None,
                     "--out: {open}/results.json: is one of the inputs; writing it would"
                     " replace what was read. Choose another file.", id="out-a-results-file"),
        pytest.param(GOOD + " --tools-header 'Authorization: Bearer x'", None,
                     "--tools-header: it is sent to MCP servers over HTTP, and no --tools source"
                     " is one. Add --tools mcp:https://<server>/mcp, or leave --tools-header"
                     " out.", id="a-header-and-no-mcp-url"),
        pytest.param(GOOD + " --tools-env NO_SUCH_VARIABLE_SET", None,
                     "--tools-env NO_SUCH_VARIABLE_SET: the variable is not set, so the MCP"
                     " server can't be given it. Export NO_SUCH_VARIABLE_SET, or leave"
                     " --tools-env NO_SUCH_VARIABLE_SET out.", id="a-variable-that-is-not-set"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_nothing_is_written(
    serve: Serve, tmp_path: Path, args: str, make: Any, message: str
) -> None:
    tools = tools_file(tmp_path)
    (tmp_path / "invalid.yaml").write_text(INVALID)
    (tmp_path / "elsewhere.yaml").write_text("kept\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    names = {"tmp": str(tmp_path), "tools": str(tools), "invalid": str(tmp_path / "invalid.yaml")}
    opened = probed(serve, tmp_path, "open", OpenAIEmulator, str(tools))
    names["open"] = str(opened)
    names["open_url"] = json.loads((opened / "results.json").read_text())["endpoint"]
    shutil.copytree(opened, tmp_path / "copy")
    (tmp_path / "folder.yaml").mkdir()
    if make is not None:
        name, handler, text, code = make
        other = tmp_path / "other.yaml"
        other.write_text(text)
        stop = ("--max-requests", "1") if code == 4 else ()
        names["other"] = str(probed(serve, tmp_path, name, handler, str(other), *stop, code=code))
    before = tools.read_text()
    done = cli("tools", "export", *[a.format(**names) for a in shlex.split(args)])
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == f"conchcheck: {message.format(**names)}\n"
    assert not (tmp_path / "out.yaml").exists() and not (tmp_path / "out.txt").exists()
    assert (tmp_path / "open" / "results.json").read_text().startswith("{")
    assert (tmp_path / "elsewhere.yaml").read_text() == "kept\n" and tools.read_text() == before
