"""An OpenAPI 3 document read as tools: each operation one tool.

The name is the ``operationId``, else the method and path made a valid tool name; the
parameters are the path and query parameters plus a JSON request body (as ``body``).
``$ref``s to the document's own components are inlined (a provider takes no ``$ref`` to a
document it never sees). A ``$ref`` met again inside its own expansion, or past
``MAX_REF_DEPTH`` chained ones, is cut: it takes any value, and its description names the
``$ref``. A tool whose schema would still pass ``MAX_NODES`` nodes or ``MAX_DEPTH`` levels is
a problem, as is a document of more operations than a probe takes tools. Any problem is one
``file:line: path: message`` line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from conchcheck.core.nesting import MAX_DEPTH
from conchcheck.core.schemas import resolve_ref
from conchcheck.core.tools import Tool
from conchcheck.core.usertools import MAX_TOOLS
from conchcheck.errors import InputError
from conchcheck.files import problem

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_REF_DEPTH = 8
"""``$ref``s followed inside one another before a schema is cut off as ``{}``."""
MAX_NODES = 10_000
"""Schema nodes one tool may take once its ``$ref``s are written out. Each ``$ref`` is
inlined where it is used, so refs that fan out (ten properties of one schema naming the next,
eight schemas deep) would be 10**8 nodes; real APIs' largest tools are a few thousand."""
MAX_NAME = 64
"""The longest tool name providers take (OpenAI, Anthropic, Gemini)."""
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
# Header and cookie parameters are the client's business (auth, tracing), not the model's.
_MODEL_PARAMETERS = ("path", "query")
Path = list[str | int]


def is_openapi(value: Any) -> bool:
    """Whether a parsed document claims to be OpenAPI (an ``openapi`` key at the root)."""
    return isinstance(value, Mapping) and "openapi" in value


def openapi_tools(document: Any, text: str, name: str) -> list[Tool]:
    """Every operation of an OpenAPI 3 document as a tool, in document order."""
    reader = _Reader(document, text, name)
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        raise reader.problem(
            ["openapi"], f"expected an OpenAPI 3 version such as '3.1.0', got {version!r}"
        )
    paths = document.get("paths")
    if not isinstance(paths, Mapping):
        raise reader.problem(["paths"] if "paths" in document else [], "expected a 'paths' object")
    operations = sum(
        method in item for item in paths.values() if isinstance(item, Mapping) for method in METHODS
    )
    if operations > MAX_TOOLS:
        # Counted before any is built: 100,000 operations would be 100,000 tools in memory.
        raise reader.problem(
            ["paths"], f"{operations} operations, more than the {MAX_TOOLS} tools a probe takes"
        )
    tools: list[Tool] = []
    taken: dict[str, int] = {}
    for route, item in paths.items():
        where: Path = ["paths", str(route)]
        if not isinstance(item, Mapping):
            raise reader.problem(where, "expected a path item object")
        shared = reader.parameters(item.get("parameters", []), [*where, "parameters"])
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            if not isinstance(operation, Mapping):
                raise reader.problem([*where, method], "expected an operation object")
            tool = reader.tool(str(route), method, operation, shared, [*where, method])
            tools.append(_unique(tool, taken))
    return tools


class _Reader:
    def __init__(self, document: Mapping[str, Any], text: str, name: str) -> None:
        self.document, self.text, self.name = document, text, name
        self.nodes = 0  # the schema nodes written out for the tool being read
        self.tool_name = ""

    def problem(self, path: Path, message: str) -> InputError:
        return problem(self.name, self.text, path, message)

    def tool(
        self,
        route: str,
        method: str,
        operation: Mapping[str, Any],
        shared: dict[tuple[str, str], Mapping[str, Any]],
        where: Path,
    ) -> Tool:
        own = self.parameters(operation.get("parameters", []), [*where, "parameters"])
        name = _name(operation.get("operationId"), method, route)
        self.nodes, self.tool_name = 0, name
        properties: dict[str, Any] = {}
        required: list[str] = []
        # An operation's parameter overrides the path item's one of the same name and place.
        for (place, pname), parameter in {**shared, **own}.items():
            if place not in _MODEL_PARAMETERS:
                continue
            schema = dict(self.inline(parameter.get("schema", {}), where))
            if isinstance(parameter.get("description"), str):
                schema.setdefault("description", parameter["description"])
            properties[pname] = schema
            if parameter.get("required") or place == "path":
                required.append(pname)
        body = self.body(operation.get("requestBody"), [*where, "requestBody"])
        if body is not None:
            properties["body"], body_required = body
            if body_required:
                required.append("body")
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        summary = operation.get("summary") or operation.get("description") or ""
        return Tool(name, str(summary), parameters)

    def parameters(self, raw: Any, where: Path) -> dict[tuple[str, str], Mapping[str, Any]]:
        if not isinstance(raw, list):
            raise self.problem(where, "expected a list of parameters")
        found = {}
        for index, item in enumerate(raw):
            parameter = self.deref(item, [*where, index])
            if not isinstance(parameter.get("name"), str) or not isinstance(
                parameter.get("in"), str
            ):
                raise self.problem([*where, index], "a parameter needs 'name' and 'in' (text)")
            found[(parameter["in"], parameter["name"])] = parameter
        return found

    def body(self, raw: Any, where: Path) -> tuple[Mapping[str, Any], bool] | None:
        if raw is None:
            return None
        body = self.deref(raw, where)
        content = body.get("content")
        if not isinstance(content, Mapping):
            raise self.problem(where, "a request body needs a 'content' object")
        # Only a JSON body is something a model can write as arguments.
        kind = next((k for k in content if str(k).split(";")[0].strip().endswith("json")), None)
        if kind is None:
            return None
        media = content[kind]
        if not isinstance(media, Mapping):
            raise self.problem([*where, "content", kind], "expected a media type object")
        schema = self.inline(media.get("schema", {}), [*where, "content", kind, "schema"])
        return schema, bool(body.get("required"))

    def deref(self, node: Any, where: Path) -> Mapping[str, Any]:
        """A parameter or request body, following its ``$ref`` chain."""
        for _ in range(MAX_REF_DEPTH + 1):
            if not isinstance(node, Mapping):
                raise self.problem(where, "expected an object")
            ref = node.get("$ref")
            if ref is None:
                return node
            node = self.target(ref, where)
        raise self.problem(where, f"$ref chain longer than {MAX_REF_DEPTH}")

    def target(self, ref: Any, where: Path) -> Any:
        found = resolve_ref(self.document, ref) if isinstance(ref, str) else None
        if found is None:
            raise self.problem(where, f"$ref {ref!r} names nothing in this document")
        return found

    def inline(self, node: Any, where: Path, refs: tuple[str, ...] = (), depth: int = 0) -> Any:
        """``node`` with every local ``$ref`` replaced by what it names; ``refs`` are the
        ``$ref``s being written out around it."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.problem(
                where,
                f"the schema of tool '{self.tool_name}' passes {MAX_NODES} nodes with each"
                " $ref written out",
            )
        if depth > MAX_DEPTH:
            raise self.problem(
                where,
                f"the schema of tool '{self.tool_name}' is nested more than {MAX_DEPTH} levels"
                " with each $ref written out",
            )
        if isinstance(node, list):
            return [self.inline(item, where, refs, depth + 1) for item in node]
        if not isinstance(node, Mapping):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            # Cut, the schema takes any value, and says which $ref was not written out.
            if ref in refs:
                return {"description": f"Any value: {ref} again, not written out inside itself."}
            if len(refs) >= MAX_REF_DEPTH:
                return {"description": f"Any value: {ref}, past {MAX_REF_DEPTH} $refs in a chain."}
            return self.inline(self.target(ref, where), where, (*refs, ref), depth)
        return {key: self.inline(value, where, refs, depth + 1) for key, value in node.items()}


def _name(operation_id: Any, method: str, route: str) -> str:
    if isinstance(operation_id, str) and _NAME.fullmatch(operation_id):
        return operation_id
    raw = operation_id if isinstance(operation_id, str) else f"{method} {route}"
    return (_NOT_NAME.sub("_", raw).strip("_") or method)[:MAX_NAME]


def _unique(tool: Tool, taken: dict[str, int]) -> Tool:
    """``tool``, renamed ``name_2``, ``name_3``… when its name is taken. ``taken`` maps each
    name to the last suffix tried for it, so a thousand operations of one ``operationId``
    cost a thousand steps, not half a million."""
    name, count = tool.name, taken.get(tool.name, 1)
    while name in taken:
        count += 1
        suffix = f"_{count}"
        name = tool.name[: MAX_NAME - len(suffix)] + suffix
    taken[tool.name] = count
    taken.setdefault(name, 1)
    return tool if name == tool.name else Tool(name, tool.description, tool.parameters)
