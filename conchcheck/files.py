"""Files given to conchcheck: read them, parse them, and say exactly where one is wrong.

Every problem becomes an ``InputError`` whose message is ``file:line: path: message``, one
line, so the CLI can print it and exit 2. The line comes from YAML's own parser, which also
reads JSON and keeps the position of every node.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from conchcheck.core.tools import Tool, as_tool
from conchcheck.errors import InputError


def read_text(source: Path | str | None) -> tuple[str, str]:
    """The text of a file, or of stdin for None or ``-``, with the name to report it by."""
    if source is None or str(source) == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file.", hint="Check the path.") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a file.") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}).") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror}).") from None


def load_json(source: Path | str) -> tuple[Any, str, str]:
    """Parse a JSON file strictly: (value, text, name). A config file is not mended."""
    text, name = read_text(source)
    try:
        return json.loads(text), text, name
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{name}:{exc.lineno}: not JSON: {exc.msg} (column {exc.colno})."
        ) from None


def load_schema(source: Path | str) -> dict[str, Any]:
    """A JSON Schema from a file; it must be a JSON object."""
    value, _, name = load_json(source)
    if not isinstance(value, dict):
        raise InputError(f"{name}:1: $: a schema must be a JSON object, not {_kind(value)}.")
    return value


def load_tools(source: Path | str) -> list[Tool]:
    """Tools from a JSON file: a list, or an object with a ``tools`` list."""
    value, text, name = load_json(source)
    items = value.get("tools") if isinstance(value, dict) else value
    prefix = "$.tools" if isinstance(value, dict) else "$"
    if not isinstance(items, list):
        raise InputError(
            f"{name}:1: {prefix}: expected a list of tools, got {_kind(items)}.",
            hint='Write [{"name": "get_weather", "parameters": {…}}, …].',
        )
    tools = []
    for index, item in enumerate(items):
        path: list[str | int] = [*([] if prefix == "$" else ["tools"]), index]
        if not isinstance(item, Mapping):
            raise problem(name, text, path, f"expected a tool object, got {_kind(item)}")
        try:
            tools.append(as_tool(item))
        except InputError as exc:
            raise problem(name, text, path, str(exc).rstrip(".")) from None
    return tools


def problem(name: str, text: str, path: list[str | int], message: str) -> InputError:
    """An ``InputError`` reading ``file:line: $.path: message.``."""
    line = locate(text, path)
    where = f"{name}:{line}" if line else name
    return InputError(f"{where}: {json_path(path)}: {message}.")


def json_path(path: list[str | int]) -> str:
    """``$.tools[2].name`` for ``["tools", 2, "name"]``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def locate(text: str, path: list[str | int]) -> int | None:
    """The 1-based line where ``path`` starts in JSON or YAML ``text``; None if unknown."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if k.value == part]
            if not found:
                return line
            key, node = found[0]
            line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false"}.get(
        type(value), "null" if value is None else "a number"
    )
