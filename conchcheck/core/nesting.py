"""How deep a JSON text or value nests, found in one pass with no recursion.

Python's ``json`` and PyYAML parse by recursion, so a 2 KB body of ``[[[[…`` raises
``RecursionError`` from deep inside the parser, and a value a few thousand levels deep
breaks every recursive walk after it (the schema converter, the reports). Everything from
outside (a reply, a catalogue, a file) is measured here first: a reply nested too deep is a
failed request, a file one an input error.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 128
"""Deeper than any real tool schema or reply (the deepest MCP schema in tests/data is 9)."""
MAX_CONTAINERS = 300_000
"""The most objects and lists one file may hold. Parsed, each costs Python 60 to 250 bytes:
16 MB of ``{},`` would be 5.6 million dicts and 430 MB. A probe's results.json holds about
11 per KB (6,600 in 586 KB), so one at the 16 MB cap is some 180,000."""
CROWDED = f"holds more than {MAX_CONTAINERS} objects and lists, the most conchcheck reads"
"""What a file past ``MAX_CONTAINERS`` is told."""

# A string (escapes skipped, an unclosed one runs to the end) or a bracket: strings are
# stepped over whole, so a bracket inside one is never counted. Unrolled, so linear.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')


def text_too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The offset in JSON ``text`` where nesting first passes ``limit``; None if it never does.

    Brackets are counted outside strings only; the text need not be valid JSON.
    """
    if text.count("[") + text.count("{") <= limit:
        return None  # counted in C: most texts are settled here without a token read
    depth = 0
    for match in _TOKEN.finditer(text):
        char = text[match.start()]
        if char in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif char in "]}":
            depth = max(0, depth - 1)
    return None


def value_too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed value (dicts and lists) nests deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def depth_of(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0, ``[]`` is 1)."""
    # Level by level, keeping only containers: about half the cost of json.loads itself
    # (bench/reader.py), and only paid by text with more brackets than the limit.
    if type(value) is not dict and type(value) is not list:
        return 0
    level, depth = [value], 0
    while level:
        depth += 1
        deeper = []
        for node in level:
            for child in node.values() if type(node) is dict else node:
                kind = type(child)
                if kind is dict or kind is list:
                    deeper.append(child)
        level = deeper
    return depth
