"""Loading matrices: the schema cases and tool prompts a probe sends, read from YAML and checked.

A matrix is checked by ``jsonschemas/matrix.schema.json``, then for what a schema can't say
(unique ids, tools that exist and are offered, tool schemas valid by their own draft, no key a
YAML comma split off a text); each problem is ``file:line: $.path: message``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from jsonschema import SchemaError

from conchcheck import jsonschemas
from conchcheck.core.matching import ArgumentMatcher, Expectation, ExpectedCall, as_matcher
from conchcheck.core.schemas import resolve_ref
from conchcheck.core.tools import ChoiceMode, Tool, ToolChoice
from conchcheck.errors import InputError
from conchcheck.files import read_text
from conchcheck.matrix.document import MAX_DEPTH, DocumentChecker
from conchcheck.matrix.model import (
    MAX_COPIES,
    FollowUp,
    Matrix,
    Prompt,
    SchemaCase,
    copy_names,
    digest,
)
from conchcheck.matrix.schemawalk import metaschema, schema_nodes, stray_keys
from conchcheck.yamlevents import json_path

_Path = list[str | int]
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class MatrixError(InputError):
    """A matrix that can't be used; the message lists every problem, one a line."""

    def __init__(self, source: str, problems: Sequence[str], *, prompts: bool = False) -> None:
        # One line, however many problems: `matrix validate` is the command that lists them.
        more = len(problems) - 1
        lists = "" if prompts else f": `conchcheck matrix validate {source}` lists every one"
        rest = f" ({more} more problem{'' if more == 1 else 's'}{lists})" if more else ""
        hint = (
            "A prompts file is {prompts: [...]}, each prompt as in a matrix, offering the"
            " --tools by name; `conchcheck matrix show default` has prompts to copy."
            if prompts
            else "`conchcheck matrix show default` prints a complete matrix."
        )
        super().__init__(f"{problems[0]}{rest}.", hint=hint)
        self.problems = tuple(problems)


def builtin_matrices() -> list[str]:
    """The names of the matrices shipped with conchcheck."""
    found = (entry.name for entry in (files("conchcheck") / "matrices").iterdir())
    return sorted(name.removesuffix(".yaml") for name in found if name.endswith(".yaml"))


def load_matrix(path_or_name: Path | str) -> Matrix:
    """A matrix from a YAML file or by built-in name; ``MatrixError`` lists every problem."""
    text, source = _read(path_or_name)
    checker = MatrixChecker(text, source)
    if checker.problems:
        raise MatrixError(source, checker.problems)
    return _build(checker.data, source)


def validate_file(path_or_name: Path | str) -> list[str]:
    """Every problem of a matrix as ``file:line: $.path: message``, sorted by line."""
    text, source = _read(path_or_name)
    return MatrixChecker(text, source).problems


def _read(path_or_name: Path | str) -> tuple[str, str]:
    name = str(path_or_name)
    if isinstance(path_or_name, str) and _NAME.fullmatch(name) and name in builtin_matrices():
        resource = files("conchcheck") / "matrices" / f"{name}.yaml"
        return resource.read_text(encoding="utf-8"), str(resource)
    try:
        return read_text(path_or_name)
    except InputError:
        if not _NAME.fullmatch(name):
            raise
        raise InputError(
            f"{name}: no such file, and no built-in matrix of that name.",
            hint=f"Built in: {', '.join(builtin_matrices())}.",
        ) from None


class MatrixChecker(DocumentChecker):
    """Reads a matrix's text and collects every problem with the line it is on."""

    schema: ClassVar[str] = "matrix"
    where_tools: ClassVar[str] = "in $.tools"
    """Where a prompt's tool ids are looked up, for the message when one isn't there."""

    def semantics(self, data: dict[str, Any]) -> None:
        """What the schema can't say about a matrix: unique ids, tools that exist, …"""
        tools = data["tools"] if isinstance(data.get("tools"), dict) else {}
        cases, prompts = _items(data, "schema_cases"), _items(data, "prompts")
        if not data.get("schema_cases") and not data.get("prompts"):
            self.add([], "a matrix needs at least one schema case or prompt")
        self.unique_ids(data, ("schema_cases", "prompts"))
        for ident, tool in tools.items():
            self.stray(["tools", ident], tool)
        for index, case in cases:
            if isinstance(case.get("tool"), dict):
                self.stray(["schema_cases", index, "tool"], case["tool"])
        names: dict[str, str] = {}
        for index, case in cases:
            self._case(["schema_cases", index], case, tools, names)
        for index, prompt in prompts:
            self.prompt(["prompts", index], prompt, tools)

    def unique_ids(self, data: dict[str, Any], keys: Sequence[str]) -> None:
        """A problem for each id used twice among the items of ``keys``."""
        first: dict[str, int] = {}
        for key in keys:
            for index, item in _items(data, key):
                ident = item.get("id")
                if isinstance(ident, str) and ident in first:
                    self.add(
                        [key, index, "id"], f"duplicate id '{ident}'; also at line {first[ident]}"
                    )
                elif isinstance(ident, str):
                    first[ident] = self.line([key, index, "id"])

    def _case(
        self, where: _Path, case: dict[str, Any], tools: dict[str, Any], names: dict[str, str]
    ) -> None:
        spec, copies = case.get("tool"), case.get("copies")
        valid = case.get("valid", True) is not False
        if "copies" in case and not valid:
            self.add([*where, "copies"], "copies is only for valid cases, not valid: false")
        if isinstance(spec, str) and not isinstance(tools.get(spec), dict):
            self.add([*where, "tool"], f"no tool with id '{spec}' in $.tools")
        tool_path: _Path = ["tools", spec] if isinstance(spec, str) else [*where, "tool"]
        tool = tools.get(spec) if isinstance(spec, str) else spec
        if valid and isinstance(tool, dict):
            self.parameters(tool_path, tool, " (set valid: false if that is the point)")
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return
        name = tool["name"]
        # The count is checked before anything is expanded: the schema reports one out of
        # range, and a name list of 10**20 copies would never finish being made.
        counted = isinstance(copies, int) and 1 <= copies <= MAX_COPIES
        if counted and len(name) > 60:
            self.add([*where, "copies"], f"copies add _NNN, so keep '{name}' to 60 characters")
        expanded = copy_names(name, copies if counted else None)
        clash = next((n for n in expanded if n in names), None)
        if clash is not None:
            self.add([*where, "tool"], f"case '{names[clash]}' has a tool named '{clash}' too")
        names.update(dict.fromkeys(expanded, str(case.get("id"))))

    def prompt(self, where: _Path, prompt: dict[str, Any], tools: dict[str, Any]) -> None:
        """What the schema can't say about one prompt: its tools exist, its expectation fits."""
        offered: dict[str, dict[str, Any]] = {}
        ids: list[Any] = prompt["tools"] if isinstance(prompt.get("tools"), list) else []
        complete = bool(ids)
        for index, ident in enumerate(ids):
            if ident in ids[:index]:
                continue  # the schema reports a repeated id
            tool = tools.get(ident) if isinstance(ident, str) else None
            if isinstance(tool, dict):
                self.parameters(["tools", ident], tool, "")
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                complete = False
                if isinstance(ident, str) and not isinstance(tools.get(ident), dict):
                    self.add(
                        [*where, "tools", index], f"no tool with id '{ident}' {self.where_tools}"
                    )
                continue
            if tool["name"] in offered:
                self.add([*where, "tools", index], f"a second tool named '{tool['name']}'")
            offered.setdefault(tool["name"], tool)
        choice = prompt.get("tool_choice", "auto")
        forced = choice.get("tool") if isinstance(choice, dict) else None
        offer = f"is not offered by this prompt (offered: {', '.join(offered)})"
        if complete and isinstance(forced, str) and forced not in offered:
            self.add([*where, "tool_choice", "tool"], f"'{forced}' {offer}")
        expect = prompt.get("expect")
        if not isinstance(expect, dict):
            return
        calls = _items(expect, "calls")
        wants = bool(calls) and expect.get("no_call") is not True
        if "calls" not in expect and "no_call" not in expect:
            self.add([*where, "expect"], "list the calls wanted, or set no_call: true")
        if expect.get("no_call") is True and calls:
            self.add([*where, "expect", "no_call"], "no_call is true, but calls are listed")
        if expect.get("parallel") is True and len(calls) < 2:
            self.add([*where, "expect", "parallel"], "parallel needs at least two expected calls")
        if choice == "none" and wants:
            self.add([*where, "tool_choice"], "tool_choice none forbids the calls expected")
        said = "calls" in expect or "no_call" in expect
        if (choice == "required" or isinstance(forced, str)) and said and not wants:
            self.add([*where, "tool_choice"], "forces a call, but no call is expected")
        if isinstance(forced, str) and wants and forced not in [c.get("tool") for _, c in calls]:
            self.add([*where, "tool_choice", "tool"], f"forces '{forced}', which no call expects")
        for index, call in calls:
            name, path = call.get("tool"), [*where, "expect", "calls", index]
            if not complete or not isinstance(name, str):
                continue
            if name not in offered:
                self.add([*path, "tool"], f"'{name}' {offer}")
            elif isinstance(call.get("arguments"), dict):
                self._arguments([*path, "arguments"], call["arguments"], offered[name])
        if "follow_up" in prompt and not wants:
            self.add([*where, "follow_up"], "a follow-up needs an expected call to answer")

    def _arguments(self, path: _Path, arguments: dict[str, Any], tool: dict[str, Any]) -> None:
        params = tool.get("parameters")
        if not isinstance(params, dict) or params.get("additionalProperties") not in (None, False):
            return
        props = params.get("properties")
        if not isinstance(props, dict):
            return
        for name, matcher in arguments.items():
            if name not in props and not (isinstance(matcher, dict) and "absent" in matcher):
                takes = ", ".join(props) or "nothing"
                self.add([*path, name], f"{tool['name']} takes no '{name}' (it takes {takes})")

    def parameters(self, path: _Path, tool: dict[str, Any], hint: str) -> None:
        """A schema the matrix calls valid must be one by its own draft, its local ``$ref``s
        resolving."""
        params = tool.get("parameters")
        if not isinstance(params, dict) or json_path(path) in self.checked:
            return
        self.checked.add(json_path(path))
        where: _Path = [*path, "parameters"]
        cls = metaschema(params)
        if cls is None:
            self.add(
                [*where, "$schema"],
                f"{jsonschemas.show(params['$schema'])} is no draft conchcheck knows, so it"
                " can't be checked; write the draft's own URI, such as"
                ' "https://json-schema.org/draft/2020-12/schema" or'
                f' "http://json-schema.org/draft-07/schema#"{hint}',
            )
        else:
            try:
                cls.check_schema(params)
            except SchemaError as error:
                if error.validator == "anyOf" and list(error.absolute_path)[-1:] == ["type"]:
                    error.message = f"unknown type {jsonschemas.show(error.instance)}"
                self.add([*where, *error.absolute_path], f"not JSON Schema: {error.message}{hint}")
        for node_path, node in schema_nodes(params, where, MAX_DEPTH):
            ref = node.get("$ref")
            if isinstance(ref, str) and resolve_ref(params, ref) is None:
                self.add([*node_path, "$ref"], f"{jsonschemas.show(ref)} points at nothing{hint}")

    def stray(self, path: _Path, tool: Any) -> None:
        """Refuse keys a YAML comma split off a text, in any tool, valid or not."""
        params = tool.get("parameters") if isinstance(tool, dict) else None
        for node_path, node in schema_nodes(params, [*path, "parameters"], MAX_DEPTH):
            strays, left = set(stray_keys(node)), ""
            for key, value in node.items():
                if key not in strays:
                    # What is left of the split text shows the author where the comma is.
                    left = (
                        f" ({key} reads {jsonschemas.show(value)})"
                        if isinstance(value, str)
                        else ""
                    )
                    continue
                self.add(
                    [*node_path, key],
                    f"'{key}' is not a JSON Schema keyword and has no value; a comma in an"
                    f" unquoted YAML flow mapping splits the text{left}: quote it",
                )


def _items(data: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    items = data.get(key)
    if not isinstance(items, list):
        return []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


def _build(data: dict[str, Any], path: str) -> Matrix:
    tools = {ident: _tool(spec) for ident, spec in data.get("tools", {}).items()}
    cases = tuple(_case(spec, tools) for spec in data.get("schema_cases", []))
    prompts = tuple(build_prompt(spec) for spec in data.get("prompts", []))
    return Matrix(
        name=data["name"],
        description=data.get("description", ""),
        tools=MappingProxyType(tools),
        schema_cases=cases,
        prompts=prompts,
        path=path,
        source=data,
        digest=digest(data),
        version=data["version"],
    )


def _tool(spec: dict[str, Any]) -> Tool:
    return Tool(spec["name"], spec.get("description", ""), spec.get("parameters", {}))


def _case(spec: dict[str, Any], tools: dict[str, Tool]) -> SchemaCase:
    tool = tools[spec["tool"]] if isinstance(spec["tool"], str) else _tool(spec["tool"])
    return SchemaCase(
        spec["id"], spec["feature"], tool, spec.get("valid", True), spec.get("copies")
    )


def build_prompt(spec: dict[str, Any]) -> Prompt:
    """The ``Prompt`` of a checked prompt's data."""
    choice = spec.get("tool_choice", "auto")
    expect, follow = spec["expect"], spec.get("follow_up")
    calls = tuple(
        ExpectedCall(
            call["tool"],
            tuple(ArgumentMatcher(k, as_matcher(v)) for k, v in call.get("arguments", {}).items()),
        )
        for call in expect.get("calls", [])
    )
    return Prompt(
        id=spec["id"],
        user=spec["user"],
        tools=tuple(spec["tools"]),
        expect=Expectation(calls, expect.get("no_call", False), expect.get("parallel", False)),
        system=spec.get("system"),
        tool_choice=(
            ToolChoice(ChoiceMode.TOOL, choice["tool"])
            if isinstance(choice, dict)
            else ToolChoice(ChoiceMode(choice))
        ),
        follow_up=FollowUp(follow["result"], as_matcher(follow["answer"])) if follow else None,
    )


@lru_cache(maxsize=1)
def knob_matrix() -> Matrix:
    """The knob prompts of stage 8 (``matrices/knobs/knobs.yaml``), sent with the knobs set
    whatever matrix the probe uses; not a matrix a user picks, so not listed as built in."""
    resource = files("conchcheck") / "matrices" / "knobs" / "knobs.yaml"
    text, source = resource.read_text(encoding="utf-8"), str(resource)
    checker = MatrixChecker(text, source)
    if checker.problems:
        raise MatrixError(source, checker.problems)
    return _build(checker.data, source)
