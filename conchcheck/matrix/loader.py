"""Loading matrices: the schema cases and tool prompts a probe sends, read from YAML and checked.

A matrix is checked by ``jsonschemas/matrix.schema.json``, then for what a schema can't say
(unique ids, tools that exist and are offered, tool schemas valid by their own draft, no key a
YAML comma split off a text); each problem is ``file:line: $.path: message``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import yaml
from jsonschema import SchemaError

from conchcheck import jsonschemas
from conchcheck.core.matching import ArgumentMatcher, Expectation, ExpectedCall, as_matcher
from conchcheck.core.schemas import resolve_ref
from conchcheck.core.tools import ChoiceMode, Tool, ToolChoice
from conchcheck.errors import InputError
from conchcheck.files import json_path, read_text, yaml_hazard
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

MAX_DEPTH = 64
"""Deeper YAML is reported, not read (it also stops recursive aliases)."""

_Path = list[str | int]
_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class MatrixError(InputError):
    """A matrix that can't be used; the message lists every problem, one a line."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        # One line, however many problems: `matrix validate` is the command that lists them.
        more = len(problems) - 1
        rest = (
            f" ({more} more problem{'' if more == 1 else 's'}: "
            f"`conchcheck matrix validate {source}` lists every one)"
            if more
            else ""
        )
        super().__init__(
            f"{problems[0]}{rest}.",
            hint="`conchcheck matrix show default` prints a complete matrix.",
        )
        self.problems = tuple(problems)


def builtin_matrices() -> list[str]:
    """The names of the matrices shipped with conchcheck."""
    found = (entry.name for entry in (files("conchcheck") / "matrices").iterdir())
    return sorted(name.removesuffix(".yaml") for name in found if name.endswith(".yaml"))


def load_matrix(path_or_name: Path | str) -> Matrix:
    """A matrix from a YAML file or by built-in name; ``MatrixError`` lists every problem."""
    text, source = _read(path_or_name)
    checker = DocumentChecker(text, source)
    if checker.problems:
        raise MatrixError(source, checker.problems)
    return _build(checker.data, source)


def validate_file(path_or_name: Path | str) -> list[str]:
    """Every problem of a matrix as ``file:line: $.path: message``, sorted by line."""
    text, source = _read(path_or_name)
    return DocumentChecker(text, source).problems


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


class DocumentChecker:
    """Reads a matrix's text and collects every problem with the line it is on; a subclass
    names another shipped ``schema`` and its own ``semantics`` (``conchcheck.targets``)."""

    schema: ClassVar[str] = "matrix"

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.found: list[tuple[_Path, str, int | None]] = []
        self.data: Any = None
        self.checked: set[str] = set()
        # Anchors, aliases and deep nesting are refused before anything is composed: an alias
        # reused inside aliases grows exponentially when walked, and the composer recurses.
        hazard = yaml_hazard(text)
        if hazard is not None:
            self.problems = [hazard.located(source)]
            return
        # yaml.safe_load, split open to keep the nodes: they know the line of every value.
        try:
            loader = yaml.SafeLoader(text)
        except yaml.reader.ReaderError as exc:  # a NUL or another control character
            line = text.count("\n", 0, exc.position) + 1
            self.problems = [f"{source}:{line}: YAML: character {exc.character:#x}: {exc.reason}"]
            return
        try:
            self.root = loader.get_single_node()
            self.duplicate_keys(self.root, [], 0)
            raw = loader.construct_document(self.root) if self.root is not None else None
        except yaml.YAMLError as exc:
            self.problems = [f"{source}:{_yaml_problem(exc)}"]
            return
        except RecursionError:  # yaml_hazard stops this; a last resort all the same
            self.problems = [f"{source}:1: $: nested too deep to read"]
            return
        finally:
            loader.dispose()
        self.data = self.plain(raw, [], 0)
        for path, message in jsonschemas.problems(self.schema, self.data):
            self.add(path, message)
        if isinstance(self.data, dict):
            self.semantics(self.data)
        lines = {
            (self.line(path, line), json_path(path), message) for path, message, line in self.found
        }
        self.problems = [f"{source}:{n}: {where}: {message}" for n, where, message in sorted(lines)]

    def add(self, path: _Path, message: str, line: int | None = None) -> None:
        """A problem at ``path`` (on ``line``, when the path can't find it)."""
        self.found.append((path, message, line))

    def line(self, path: _Path, line: int | None = None) -> int:
        """The line ``path`` starts on, or the nearest enclosing one that exists."""
        if line is not None:
            return line
        node, found = self.root, 1 if self.root is None else self.root.start_mark.line + 1
        for part in path:
            if isinstance(node, yaml.MappingNode):
                # The last of equal keys is the one read; merged (<<) keys come first.
                pairs = [(key, value) for key, value in node.value if key.value == part]
                if not pairs:
                    break
                found, node = pairs[-1][0].start_mark.line + 1, pairs[-1][1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    break
                node = node.value[part]
                found = node.start_mark.line + 1
            else:
                break
        return found

    def duplicate_keys(self, node: yaml.Node | None, path: _Path, depth: int) -> None:
        """A problem for each key a mapping under ``node`` has twice."""
        if depth > MAX_DEPTH:
            return
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                line = key.start_mark.line + 1
                if key.value in seen:
                    self.add(
                        [*path, key.value], f"duplicate key; also at line {seen[key.value]}", line
                    )
                seen.setdefault(key.value, line)
                self.duplicate_keys(value, [*path, key.value], depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.duplicate_keys(item, [*path, index], depth + 1)

    def plain(self, value: Any, path: _Path, depth: int) -> Any:
        """``value`` as JSON data, with a problem for each thing YAML made that JSON has not."""
        if depth > MAX_DEPTH:
            self.add(path, f"nested more than {MAX_DEPTH} levels deep")
            return None
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    self.add(
                        [*path, str(key)],
                        f"a key must be text, got {jsonschemas.kind(key)}; quote it",
                    )
                out[str(key)] = self.plain(item, [*path, str(key)], depth + 1)
            return out
        if isinstance(value, list):
            return [self.plain(item, [*path, i], depth + 1) for i, item in enumerate(value)]
        if isinstance(value, datetime.date):
            self.add(path, f'an unquoted date is not text; write "{value.isoformat()}" in quotes')
            return value.isoformat()
        if value is None or isinstance(value, (str, int, float)):
            return value
        self.add(path, f"expected plain YAML data, got a {type(value).__name__}")
        return str(value)

    def semantics(self, data: dict[str, Any]) -> None:
        """What the schema can't say about a matrix: unique ids, tools that exist, …"""
        tools = data["tools"] if isinstance(data.get("tools"), dict) else {}
        cases, prompts = _items(data, "schema_cases"), _items(data, "prompts")
        if not data.get("schema_cases") and not data.get("prompts"):
            self.add([], "a matrix needs at least one schema case or prompt")
        first: dict[str, int] = {}
        for key, items in (("schema_cases", cases), ("prompts", prompts)):
            for index, item in items:
                ident = item.get("id")
                if isinstance(ident, str) and ident in first:
                    self.add(
                        [key, index, "id"], f"duplicate id '{ident}'; also at line {first[ident]}"
                    )
                elif isinstance(ident, str):
                    first[ident] = self.line([key, index, "id"])
        for ident, tool in tools.items():
            self.stray(["tools", ident], tool)
        for index, case in cases:
            if isinstance(case.get("tool"), dict):
                self.stray(["schema_cases", index, "tool"], case["tool"])
        names: dict[str, str] = {}
        for index, case in cases:
            self._case(["schema_cases", index], case, tools, names)
        for index, prompt in prompts:
            self._prompt(["prompts", index], prompt, tools)

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

    def _prompt(self, where: _Path, prompt: dict[str, Any], tools: dict[str, Any]) -> None:
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
                    self.add([*where, "tools", index], f"no tool with id '{ident}' in $.tools")
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


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """``line: YAML: problem (context at line n)`` for a YAML error."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return f"1: YAML: {exc}"
    where = exc.context_mark
    context = f" ({exc.context} at line {where.line + 1})" if exc.context and where else ""
    return f"{exc.problem_mark.line + 1}: YAML: {exc.problem}{context}"


def _items(data: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    items = data.get(key)
    if not isinstance(items, list):
        return []
    return [(index, item) for index, item in enumerate(items) if isinstance(item, dict)]


def _build(data: dict[str, Any], path: str) -> Matrix:
    tools = {ident: _tool(spec) for ident, spec in data.get("tools", {}).items()}
    cases = tuple(_case(spec, tools) for spec in data.get("schema_cases", []))
    prompts = tuple(_prompt(spec) for spec in data.get("prompts", []))
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


def _prompt(spec: dict[str, Any]) -> Prompt:
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
