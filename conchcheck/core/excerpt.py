"""Bounded excerpts of what a provider sent, so evidence stays readable and small.

A reply, an argument or a catalogue can be megabytes (a 7 MB tool argument once gave two
477 MB reports, since every cell kept it whole). Evidence keeps a prefix and a suffix of any
long text, and says in between how long the whole was and its sha256, so two excerpts can
still be told apart and checked against a recording. Values (parsed arguments) keep their
shape: long strings inside are excerpted, long lists and objects keep their first items.
"""

from __future__ import annotations

import hashlib
from typing import Any

TEXT_LIMIT = 4000
"""Characters of one text kept in evidence; past this, a head, a tail and the marker."""
ITEMS_LIMIT = 200
"""Items of one list or object kept in evidence."""
HASHED = 1000
"""Excerpts at least this long name the whole text's sha256."""
VALUE_LIMIT = 64_000
"""Characters of strings kept across a whole value: a wide value is cut, not only a long one."""


def excerpt(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` if it fits ``limit``; else its head and tail around a note of the whole.

    The excerpt is never longer than ``limit`` (for any limit past the note's own length),
    so excerpting an excerpt changes nothing. Below ``HASHED`` characters (a snippet inside
    a message) the note gives the length only.
    """
    if len(text) <= limit:
        return text
    if limit < HASHED:
        marker = f" … [{len(text):,} characters in all] … "
    else:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        marker = f" … [{len(text):,} characters in all; sha256 {digest}] … "
    room = max(limit - len(marker), 16)
    head = room * 3 // 4
    return text[:head] + marker + text[len(text) - (room - head) :]


def bounded(value: Any, limit: int = TEXT_LIMIT) -> Any:
    """``value`` (JSON-like) with long strings excerpted and long containers cut.

    Walks without recursion: a value is only as deep as its parser allowed, but evidence
    must never be the thing that fails. A cut container ends with a note of what it lost.
    """
    budget = [VALUE_LIMIT]

    def leaf(item: Any) -> Any:
        if not isinstance(item, str):
            return item
        kept = excerpt(item, max(min(limit, budget[0]), 256))
        budget[0] -= min(len(item), len(kept))
        return kept

    if not isinstance(value, dict | list | tuple):
        return leaf(value)
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = list(source.items()) if isinstance(source, dict) else list(enumerate(source))
        for index, (key, item) in enumerate(items):
            if index >= ITEMS_LIMIT or budget[0] <= 0:
                note = f"… [{len(items) - index:,} more items left out]"
                if isinstance(target, dict):
                    target["…"] = note
                else:
                    target.append(note)
                break
            child: Any
            if isinstance(item, dict | list | tuple):
                child = {} if isinstance(item, dict) else []
                stack.append((item, child))
            else:
                child = leaf(item)
            if isinstance(target, dict):
                target[excerpt(str(key), 200) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return root
