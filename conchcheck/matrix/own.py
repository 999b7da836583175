"""A matrix made of the user's own tools (``probe --tools``): each tool a schema case, and
either the prompts of a ``--prompts`` file or one smoke prompt per tool.

A smoke prompt asks for a call of one tool with arguments the schema itself supplies (an
example, a default, a const or the first enum value), and says which; an argument the
schema gives no value for is left to the model and only has to be present.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from jsonschema import SchemaError

from conchcheck.core.matching import (
    ArgumentMatcher,
    Expectation,
    ExpectedCall,
    Matcher,
    MatcherKind,
)
from conchcheck.core.schemas import resolve_ref
from conchcheck.core.tools import Tool
from conchcheck.core.usertools import (
    MAX_NAME,
    MAX_TOOLS,
    SMOKE_PREFIX,
    Origin,
    OwnTool,
    SmokeArgument,
)
from conchcheck.errors import InputError
from conchcheck.files import read_text
from conchcheck.matrix.loader import MatrixChecker, MatrixError, build_prompt
from conchcheck.matrix.model import Matrix, Prompt, SchemaCase, digest
from conchcheck.matrix.schemawalk import metaschema
from conchcheck.yamlevents import json_path

OWN_MATRIX = "own-tools"
"""The name of a matrix made of the user's tools."""


def own_matrix(
    sourced: Sequence[tuple[str, Sequence[Tool]]],
    prompts: Path | None = None,
    *,
    protocols: Mapping[str, str] | None = None,
) -> Matrix:
    """The matrix of the tools read from each source (``(source, tools)`` pairs);
    ``protocols`` names the MCP revision each MCP source was read in.

    ``InputError`` for no tools, too many, or one name twice; ``MatrixError`` for a
    ``--prompts`` file with problems (``file:line: $.path: message``).
    """
    named: dict[str, tuple[str, Tool]] = {}
    for source, listed in sourced:
        for tool in listed:
            if len(tool.name) > MAX_NAME:
                raise InputError(
                    f"--tools: {source} lists a tool whose name is {len(tool.name)} characters"
                    f" long ('{tool.name[:40]}…'), more than {MAX_NAME}.",
                    hint=f"MCP tool names are at most {MAX_NAME} characters; providers take 64.",
                )
            if tool.name in named:
                raise InputError(
                    f"--tools: two tools are named '{tool.name}' ({named[tool.name][0]} and "
                    f"{source}).",
                    hint="A request can't offer two tools of one name; give one of the sources.",
                )
            named[tool.name] = (source, tool)
    if not named:
        raise InputError("--tools: the sources list no tools.", hint="Check the sources.")
    if len(named) > MAX_TOOLS:
        raise InputError(
            f"--tools: the sources list {len(named)} tools, more than {MAX_TOOLS}.",
            hint="Probe the sources one at a time.",
        )
    spoken = protocols or {}
    own = [
        _own(source, tool, smoke=prompts is None, protocol=spoken.get(source))
        for source, tool in named.values()
    ]
    tools = {name: tool for name, (_, tool) in named.items()}
    cases = tuple(
        SchemaCase(
            t.case_id,
            f"your tool, from {t.source}"
            + (f" (not valid JSON Schema: {t.problem})" if t.problem else ""),
            tools[t.name],
            valid=t.problem is None,
        )
        for t in own
    )
    if prompts is None:
        written = tuple(_smoke_prompt(t) for t in own if t.smoke is not None and t.problem is None)
        prompt_data: list[Any] = [{"smoke": t.name} for t in own if t.problem is None]
    else:
        written, prompt_data = load_prompts(prompts, tools)
    data = {
        "version": 1,
        "name": OWN_MATRIX,
        "tools": [
            {
                "source": t.source,
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            }
            for t in own
        ],
        "prompts": prompt_data,
    }
    return Matrix(
        name=OWN_MATRIX,
        description="The tools of " + ", ".join(dict.fromkeys(t.source for t in own)),
        tools=MappingProxyType(tools),
        schema_cases=cases,
        prompts=written,
        path=str(prompts) if prompts is not None else "(--tools)",
        source=data,
        digest=digest(data),
        own=tuple(own),
    )


def _own(source: str, tool: Tool, *, smoke: bool, protocol: str | None) -> OwnTool:
    problem = _schema_problem(dict(tool.parameters))
    arguments = _smoke_arguments(tool.parameters) if smoke and problem is None else None
    return OwnTool(
        tool.name, source, tool.description, tool.parameters, problem, arguments, protocol
    )


def _schema_problem(schema: dict[str, Any]) -> str | None:
    if not schema:
        return None
    cls = metaschema(schema)
    if cls is None:
        return f"$schema {json.dumps(schema.get('$schema'))} is no draft conchcheck knows"
    try:
        cls.check_schema(schema)
    except SchemaError as error:
        return f"{json_path(list(error.absolute_path))}: {error.message}"
    return None


# -- smoke prompts ---------------------------------------------------------------------------


def _smoke_arguments(schema: Mapping[str, Any]) -> tuple[SmokeArgument, ...]:
    """A value for every required argument, and for each optional one with an example."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    out = []
    for name, node in properties.items():
        node = _resolved(schema, node)
        found = _value(node)
        if found is not None and (name in needed or found[0] is Origin.EXAMPLE):
            out.append(SmokeArgument(name, found[0], found[1]))
        elif name in needed:
            out.append(SmokeArgument(name, Origin.MODEL))
    return tuple(out)


def _resolved(root: Mapping[str, Any], node: Any) -> Mapping[str, Any]:
    # One local $ref is followed (a property that names a definition); no deeper.
    if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        target = resolve_ref(root, node["$ref"])
        return target if isinstance(target, Mapping) else {}
    return node if isinstance(node, Mapping) else {}


def _value(node: Mapping[str, Any]) -> tuple[Origin, Any] | None:
    examples = node.get("examples")
    if isinstance(examples, list) and examples:
        return Origin.EXAMPLE, examples[0]
    if "example" in node:  # OpenAPI 3.0's singular form
        return Origin.EXAMPLE, node["example"]
    if "default" in node:
        return Origin.DEFAULT, node["default"]
    if "const" in node:
        return Origin.CONST, node["const"]
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return Origin.ENUM, enum[0]
    return None


def _smoke_prompt(tool: OwnTool) -> Prompt:
    assert tool.smoke is not None
    given = {a.name: a.value for a in tool.smoke if a.origin is not Origin.MODEL}
    chosen = [a.name for a in tool.smoke if a.origin is Origin.MODEL]
    user = f"Call the tool {tool.name}"
    if given:
        user += " with these arguments: " + json.dumps(given, ensure_ascii=False)
    if chosen:
        user += (" and" if given else " with") + " a value you choose for " + ", ".join(chosen)
    user += ". Make the call; don't describe it."
    matchers = tuple(
        ArgumentMatcher(
            a.name, _matcher(a.value) if a.origin is not Origin.MODEL else Matcher(MatcherKind.ANY)
        )
        for a in tool.smoke
    )
    return Prompt(
        id=SMOKE_PREFIX + tool.name,
        user=user,
        tools=(tool.name,),
        expect=Expectation((ExpectedCall(tool.name, matchers),)),
    )


def _matcher(value: Any) -> Matcher:
    # Text is compared without case (a model may write "Paris" for "paris"); the rest exactly.
    if isinstance(value, str):
        return Matcher(MatcherKind.EQUALS_CI, value)
    return Matcher(MatcherKind.EQUALS, _frozen(value))


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


# -- a --prompts file ------------------------------------------------------------------------


class PromptsChecker(MatrixChecker):
    """A ``--prompts`` file: a matrix's prompts, offering the user's tools by name."""

    schema: ClassVar[str] = "prompts"
    where_tools: ClassVar[str] = "among the --tools"

    def __init__(self, text: str, source: str, tools: Mapping[str, Tool]) -> None:
        self.tools = {
            name: {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
            for name, t in tools.items()
        }
        super().__init__(text, source)

    def semantics(self, data: dict[str, Any]) -> None:
        """Unique ids, and tools (by name) that the sources listed."""
        # The tools' own schemas are judged by the probe, not reported against this file.
        self.checked.update(f"$.tools.{name}" for name in self.tools)
        self.unique_ids(data, ("prompts",))
        prompts = data.get("prompts")
        for index, prompt in enumerate(prompts if isinstance(prompts, list) else []):
            if isinstance(prompt, dict):
                self.prompt(["prompts", index], prompt, self.tools)


def load_prompts(path: Path, tools: Mapping[str, Tool]) -> tuple[tuple[Prompt, ...], list[Any]]:
    """The prompts of a ``--prompts`` file and their data; ``MatrixError`` lists problems."""
    text, source = read_text(path)
    checker = PromptsChecker(text, source, tools)
    if checker.problems:
        raise MatrixError(source, checker.problems, prompts=True)
    data = checker.data["prompts"]
    return tuple(build_prompt(spec) for spec in data), data
