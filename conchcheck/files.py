"""Files given to conchcheck: read them, parse them, and say exactly where one is wrong.

Every problem becomes an ``InputError`` whose message is ``file:line: path: message``, one
line, so the CLI can print it and exit 2. The line comes from YAML's own parser, which also
reads JSON and keeps the position of every node.

Every file is read within limits before it is parsed: at most ``MAX_FILE_BYTES``, nested at
most ``MAX_DEPTH`` deep, and YAML without anchors or aliases. Python's ``json`` and PyYAML's
composer parse by recursion, and an alias reused inside aliases grows exponentially when it
is walked ("billion laughs"), so each of these would otherwise crash or hang the reader.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from conchcheck.core.nesting import CROWDED, MAX_CONTAINERS, MAX_DEPTH, text_too_deep
from conchcheck.core.tools import Tool, as_tool
from conchcheck.errors import InputError
from conchcheck.yamlevents import FAST_LOADER, json_path, locate, yaml_hazard

MAX_FILE_BYTES = 16 << 20
"""The largest file conchcheck reads (16 MB); a matrix or capability file is a few KB."""


def read_bytes(path: Path) -> bytes:
    """A file's bytes, ``InputError`` past ``MAX_FILE_BYTES``; other OSErrors pass through.

    The size is checked before reading and again while reading, so a device or a file that
    grows (``/dev/zero``) stops at the limit too.
    """
    # Asked before opening: opening a named pipe waits for a writer that may never come.
    kind = _not_regular(os.stat(path).st_mode)
    if kind is not None:
        raise InputError(f"{path}: is {kind}, not a regular file.", hint="Give a file's path.")
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
            raise too_large(str(path))
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise too_large(str(path))
    return data


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None  # a folder: open() says so, in the words callers already use
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def too_large(name: str) -> InputError:
    """The error for a file past ``MAX_FILE_BYTES``."""
    return InputError(
        f"{name}: larger than {MAX_FILE_BYTES >> 20} MB, the most conchcheck reads.",
        hint="Check that this is the file you meant.",
    )


def read_text(source: Path | str | None) -> tuple[str, str]:
    """The text of a file, or of stdin for None or ``-``, with the name to report it by."""
    if source is None or str(source) == "-":
        # Counted in characters: stdin is already text, and that bounds it all the same.
        text = sys.stdin.read(MAX_FILE_BYTES + 1)
        if len(text) > MAX_FILE_BYTES:
            raise too_large("<stdin>")
        return text, "<stdin>"
    path = Path(source)
    try:
        return _decode(read_bytes(path), str(path)), str(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file.", hint="Check the path.") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a file.") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror}).") from None


def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start}).") from None


def load_json(source: Path | str) -> tuple[Any, str, str]:
    """Parse a JSON file strictly: (value, text, name). A config file is not mended."""
    return parse_json(*read_text(source))


def parse_json(text: str, name: str) -> tuple[Any, str, str]:
    """``load_json`` of a text already read, reported as the file ``name``."""
    # Counted first: it costs a count in C, and bounds the token walk of the depth check.
    crowded = _crowded(text)
    if crowded is not None:
        line, column = _position(text, crowded)
        raise InputError(f"{name}:{line}: $: {CROWDED} (column {column}).")
    deep = text_too_deep(text)
    if deep is not None:
        line, column = _position(text, deep)
        raise InputError(
            f"{name}:{line}: $: nested more than {MAX_DEPTH} levels deep (column {column})."
        )
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
        return value, text, name
    except _Infinite as exc:
        line, column = _position(text, _constant_at(text, exc.literal))
        raise InputError(
            f"{name}:{line}: {exc.literal} is not a finite number; it reads as infinity"
            f" (column {column})."
        ) from None
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            line, column = _position(text, _constant_at(text))
            raise InputError(f"{name}:{line}: not JSON: {exc} (column {column}).") from None
        raise InputError(
            f"{name}:{exc.lineno}: not JSON: {exc.msg} (column {exc.colno})."
        ) from None
    except RecursionError:  # the depth check above stops this; a last resort all the same
        raise InputError(f"{name}:1: $: nested too deep to read.") from None


# Python's json reads NaN and Infinity, which JSON has not: a strict file refuses them.
_STRING = r'"(?:[^"\\]|\\.)*"'
_CONSTANT = re.compile(_STRING + "|(-?Infinity|NaN)")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _Infinite(ValueError):
    """A JSON number past a double's range (``1e400``): JSON, but Python reads infinity,
    which no JSON writer takes (a request, results.json)."""

    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _finite(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Infinite(literal)
    return value


_OPENER = re.compile(r"[{\[]")


def _crowded(text: str) -> int | None:
    """Where JSON ``text`` opens its ``MAX_CONTAINERS + 1``th object or list; None if it
    doesn't. Brackets inside strings count too: the bound errs toward refusing."""
    if text.count("{") + text.count("[") <= MAX_CONTAINERS:
        return None
    found = _OPENER.finditer(text)
    return next(m for i, m in enumerate(found) if i == MAX_CONTAINERS).start()


def _constant_at(text: str, literal: str | None = None) -> int:
    """Where the first NaN or Infinity (or ``literal``) outside a string starts."""
    pattern = _CONSTANT if literal is None else re.compile(_STRING + f"|({re.escape(literal)})")
    found = next((m for m in pattern.finditer(text) if m.group(1)), None)
    return found.start(1) if found else 0


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def folder_problem(path: Path) -> str | None:
    """Why files can't be written in the folder ``path`` (made when missing); None if they can.

    Checked before a probe spends anything, and without changing the disk: a missing folder
    is judged by the nearest one that exists. ``os.access`` asks the kernel, so a read-only
    file system is caught even for root, whom permission bits don't stop.
    """
    existing = Path(path)
    try:
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        is_dir = existing.is_dir()
    except OSError as exc:
        return f"cannot be checked ({exc.strerror})"
    made = "" if existing == Path(path) else f"cannot be made: {existing} "
    if not is_dir:
        return f"{made}is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{made}is not writable"
    return None


def check_out_file(out: Path) -> None:
    """``InputError`` unless a file can be written at ``out`` (``--out``): not a symbolic
    link (never written through), not a folder, in a folder that takes files."""
    if out.is_symlink():
        raise InputError(
            f"--out: {out}: is a symbolic link; conchcheck never writes through one.",
            hint="Remove the link, or choose another file.",
        )
    if out.is_dir():
        raise InputError(f"--out: {out}: is a folder.", hint="Give the path of a file.")
    problem = folder_problem(out.parent)
    if problem is not None:
        raise InputError(f"--out: {out.parent}: {problem}.", hint="Choose another file.")


def link_inside(root: Path, folder: Path) -> Path | None:
    """The first symbolic link among the folders from ``root`` (not itself: the user's to
    choose) down to ``folder``; None when there is none, or ``folder`` is not inside ``root``.
    A file written there would land wherever the link points."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        return None
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def linked(link: Path, root: Path) -> InputError:
    """The error for a symbolic link found inside ``root`` where a file would be written."""
    return InputError(
        f"{link}: is a symbolic link inside {root}; conchcheck never writes through one.",
        hint="Remove the link, or choose another folder with --out.",
    )


def load_schema(source: Path | str) -> dict[str, Any]:
    """A JSON Schema from a file; it must be a JSON object."""
    value, _, name = load_json(source)
    if not isinstance(value, dict):
        raise InputError(f"{name}:1: $: a schema must be a JSON object, not {_kind(value)}.")
    return value


def load_tools(source: Path | str) -> list[Tool]:
    """Tools from a JSON or YAML file: a list, or an object with a ``tools`` list."""
    return tools_in(*load_document(source))


def load_document(source: Path | str) -> tuple[Any, str, str]:
    """A JSON (``.json``, strict) or YAML file parsed: (value, text, name)."""
    return parse_document(*read_text(source))


def parse_document(text: str, name: str) -> tuple[Any, str, str]:
    """``load_document`` of a text already read from the file ``name`` (its suffix says
    JSON or YAML)."""
    if name.endswith(".json"):
        return parse_json(text, name)
    hazard = yaml_hazard(text)
    if hazard is not None:
        raise InputError(hazard.located(name) + ".")
    try:
        return yaml.load(text, Loader=FAST_LOADER), text, name
    except yaml.YAMLError:
        pass
    # libyaml words its errors its own way; the pure loader's words are the same everywhere.
    try:
        return yaml.safe_load(text), text, name
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise InputError(f"{name}:{line}: $: not YAML: {exc.problem}.") from None
    except yaml.YAMLError:
        raise InputError(f"{name}:1: $: not YAML.") from None


def tools_in(value: Any, text: str, name: str) -> list[Tool]:
    """The tools of a parsed tools file (plain, OpenAI or Anthropic shape, mixed freely)."""
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


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false"}.get(
        type(value), "null" if value is None else "a number"
    )
