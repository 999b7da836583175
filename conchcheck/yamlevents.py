"""YAML (and JSON, which YAML reads) walked as the parser's events, never composed: the
hazards a load must not meet, and the line where a path starts.

Composing builds every node, and PyYAML's composer recurses, so a deep or aliased file
would crash or hang it (``conchcheck/files.py`` says why); events need neither.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from conchcheck.core.nesting import CROWDED, MAX_CONTAINERS, MAX_DEPTH

# libyaml scans and composes far faster than the pure parser; the events and marks are the same.
FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class YamlHazard:
    """Something in a YAML text that must not be composed: where it is and what it is."""

    line: int
    path: list[str | int]
    message: str

    def located(self, name: str) -> str:
        """``file:line: $.path: message``."""
        return f"{name}:{self.line}: {json_path(self.path)}: {self.message}"


NO_ALIASES = "YAML anchors and aliases (&name, *name) are not allowed; write the value out"


def yaml_hazard(text: str, limit: int = MAX_DEPTH) -> YamlHazard | None:
    """The first anchor, alias, nesting past ``limit``, object or list past
    ``MAX_CONTAINERS``, or number JSON can't hold (``.inf``, ``.nan``, ``1.0e+400``) in YAML
    ``text``; None if none.

    Reads parser events, which need no recursion and are read only up to the hazard. A text
    that is not YAML has no hazard here: the load that follows reports it in its own words.
    """
    try:
        return _scan(text, FAST_LOADER, limit)
    except yaml.MarkedYAMLError as exc:
        if exc.problem == "exceeded maximum nesting depth" and exc.problem_mark is not None:
            # libyaml's own limit (1000), met while it looks ahead for keys: past ours too.
            return YamlHazard(
                exc.problem_mark.line + 1, [], f"nested more than {limit} levels deep"
            )
    except yaml.YAMLError:
        pass
    # libyaml stops early where it looks ahead; the pure parser yields every event up to its
    # own error, and those are the only ones a load could compose.
    try:
        return _scan(text, yaml.SafeLoader, limit)
    except yaml.YAMLError:
        return None


def _scan(text: str, loader: Any, limit: int) -> YamlHazard | None:
    stack: list[_Frame] = []
    containers = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            stack.pop()
            if stack:
                stack[-1].done(None)
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        path = stack[-1].child() if stack else []
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        if isinstance(event, yaml.AliasEvent) or event.anchor is not None:
            return YamlHazard(line, path, NO_ALIASES)
        if isinstance(event, yaml.CollectionStartEvent):
            containers += 1
            if containers > MAX_CONTAINERS:
                return YamlHazard(line, [], CROWDED)
            stack.append(_Frame(path, isinstance(event, yaml.MappingStartEvent)))
            if len(stack) > limit:
                # The path would be `limit` steps long: the line says where, the root what.
                return YamlHazard(line, [], f"nested more than {limit} levels deep")
        else:
            odd = _non_finite(event)
            if odd is not None:
                return YamlHazard(line, path, f"{odd} is not a finite number; JSON has none")
            if stack:
                stack[-1].done(event.value if isinstance(event, yaml.ScalarEvent) else None)
    return None


# YAML 1.1's floats as PyYAML resolves them (resolver.py): `.inf`, `.nan`, and decimals whose
# exponent can pass a double's range (`1.0e+400` is read as infinity). Sexagesimal ones
# (`1:30.5`) are always finite.
_INFINITE = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_DECIMAL = re.compile(r"[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?")
_FLOAT_TAG = "tag:yaml.org,2002:float"


def _non_finite(event: yaml.NodeEvent) -> str | None:
    """The text of a scalar a load would make infinity or NaN; None for any other node.

    Python reads them, but no JSON writer can (a request body, results.json, a digest)."""
    if not isinstance(event, yaml.ScalarEvent):
        return None
    if not (event.implicit[0] or event.tag == _FLOAT_TAG):
        return None  # quoted, or tagged as something else: text
    value = event.value
    if _INFINITE.fullmatch(value):
        return value
    if _DECIMAL.fullmatch(value) and any(c.isdigit() for c in value):
        return None if math.isfinite(float(value.replace("_", ""))) else value
    return None


class _Frame:
    """One open mapping or sequence while events are read: the path of its next child."""

    def __init__(self, path: list[str | int], mapping: bool) -> None:
        self.path, self.mapping = path, mapping
        self.index, self.key, self.on_key = 0, "?", True

    def child(self) -> list[str | int]:
        if not self.mapping:
            return [*self.path, self.index]
        return self.path if self.on_key else [*self.path, self.key]

    def done(self, scalar: str | None) -> None:
        if not self.mapping:
            self.index += 1
        elif self.on_key:
            self.key, self.on_key = ("?" if scalar is None else scalar), False
        else:
            self.on_key = True


def json_path(path: list[str | int]) -> str:
    """``$.tools[2].name`` for ``["tools", 2, "name"]``."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def locate(text: str, path: list[str | int]) -> int | None:
    """The 1-based line where ``path`` starts in JSON or YAML ``text``; None if unknown.

    Walks the parser's events and stops at the node: nothing is composed, so a 16 MB
    document costs no node graph, one near its start costs almost nothing, and neither
    nesting nor aliases can recurse.
    """
    events = yaml.parse(_SURROGATE.sub(_unpaired, text), Loader=FAST_LOADER)
    try:
        node: yaml.Event = next(e for e in events if isinstance(e, yaml.NodeEvent))
        line = _line(node)
        for part in path:
            if isinstance(node, yaml.MappingStartEvent):
                found = _key(events, part)
                if found is None:
                    return line
                line, node = _line(found), next(events)
            elif isinstance(node, yaml.SequenceStartEvent) and isinstance(part, int):
                for _ in range(part):
                    if _skip(events) is None:
                        return line
                item = next(events)
                if isinstance(item, yaml.SequenceEndEvent):
                    return line
                line, node = _line(item), item
            else:
                return line
        return line
    except (yaml.YAMLError, StopIteration):
        return None


def _key(events: Iterator[yaml.Event], part: str | int) -> yaml.Event | None:
    """The key event of ``part`` in the mapping being read, its value next; None if absent."""
    while True:
        key = next(events)
        if isinstance(key, yaml.MappingEndEvent):
            return None
        if isinstance(key, yaml.ScalarEvent) and key.value == part:
            return key
        _skip(events, key)
        _skip(events)


def _skip(events: Iterator[yaml.Event], first: yaml.Event | None = None) -> yaml.Event | None:
    """Read one whole node (starting at ``first`` when given); None at its parent's end."""
    event = first or next(events)
    if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
        return None
    depth = int(isinstance(event, yaml.CollectionStartEvent))
    while depth:
        inner = next(events)
        if isinstance(inner, yaml.CollectionStartEvent):
            depth += 1
        elif isinstance(inner, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return event


def _line(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 1


# JSON escapes a character past U+FFFF as a surrogate pair (json.dumps does by default, an
# emoji's `\ud83c\udf6e`), and YAML refuses both halves: each becomes `\u003f`, the same
# length, so lines and columns stay. Only where the backslashes before it are odd in number
# is it an escape: `\\ud83c` is a backslash, then text.
_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _unpaired(match: re.Match[str]) -> str:
    return match.group(1) + "\\u003f"
