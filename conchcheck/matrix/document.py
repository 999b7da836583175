"""Checking a YAML document that a shipped JSON Schema describes: read it without anchors or
aliases, keep the line of every value, and report each problem as ``file:line: $.path: message``.
"""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

import yaml

from conchcheck import jsonschemas
from conchcheck.yamlevents import json_path, yaml_hazard

MAX_DEPTH = 64
"""Deeper YAML is reported, not read (it also stops recursive aliases)."""

_Path = list[str | int]


class DocumentChecker:
    """Reads a YAML document's text and collects every problem with the line it is on: the
    shipped ``schema``'s, then a subclass's ``semantics`` (a matrix, a targets file, …)."""

    schema: ClassVar[str]
    """The name of the shipped JSON Schema the document follows."""

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
        """What the schema can't say about the document (nothing, unless a subclass says)."""


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """``line: YAML: problem (context at line n)`` for a YAML error."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return f"1: YAML: {exc}"
    where = exc.context_mark
    context = f" ({exc.context} at line {where.line + 1})" if exc.context and where else ""
    return f"{exc.problem_mark.line + 1}: YAML: {exc.problem}{context}"
