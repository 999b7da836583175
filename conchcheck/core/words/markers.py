"""The markers the words reader looks for (every family's block openers, code fences and
reasoning closers) and the searches it runs for them, each in C over the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from conchcheck.core.words.blocks import BY_OPENER, REASONING_ENDS, Block
from conchcheck.core.words.lexer import trie

FENCE = "```"
MARKERS = tuple(sorted((*BY_OPENER, FENCE, *REASONING_ENDS), key=len, reverse=True))
"""Every marker, longest first."""
MARKER_RE = re.compile(trie(MARKERS))
# The longest end of a text that could begin a marker, searched in its last few characters.
_PART_RE = re.compile(trie(MARKERS, prefixes=True) + r"\Z")
LONGEST = max(len(m) for m in MARKERS)
assert {m[0] for m in MARKERS} <= set("<[`"), "the reader's fast path knows only these"


def _maybe_pattern(markers: Iterable[str]) -> str:
    """Where a marker could begin: its first three characters, or its first one or two at
    the end of the text. Grouped by first character, so the search skips other text in C."""
    nexts: dict[str, set[str]] = {}
    for marker in markers:
        nexts.setdefault(marker[0], set()).add(marker[1:3])
    branches = []
    for first, rests in sorted(nexts.items()):
        whole = sorted(re.escape(r) for r in rests if len(r) == 2)
        ends = sorted({re.escape(r[:k]) for r in rests for k in (0, 1)})
        branches.append(f"{re.escape(first)}(?:{'|'.join(whole)}|(?:{'|'.join(ends)})\\Z)")
    return "|".join(branches)


MAYBE_RE = re.compile(_maybe_pattern(MARKERS))
"""Finds the first place a marker could begin (None: no marker can begin in the text)."""

TOKEN = 32
"""Deltas up to this long are remembered by ``harmless``: the cache holds at most 4096 of
them, so a hostile stream of long deltas can't make it large."""


@functools.lru_cache(maxsize=4096)
def harmless(delta: str) -> bool:
    """No marker can begin in ``delta``. Deltas are tokens, and a model's tokens repeat (its
    "<b>", "`", "</" come back again and again): the answer is kept, the search run once."""
    return MAYBE_RE.search(delta) is None


Search = Callable[..., "re.Match[str] | None"]
ANGLE: Search = re.compile("<").search


@functools.lru_cache(maxsize=64)
def triggers(block: Block) -> tuple[Search, str]:
    """A search for a first character of ``block``'s closers, and that character if alone."""
    firsts = "".join(sorted({"<", *(m[0] for m in (*block.closers, *block.reopen))}))
    return re.compile("[" + re.escape(firsts) + "]").search, firsts if len(firsts) == 1 else ""


def partial_start(text: str, start: int) -> int:
    """Where the longest end of ``text`` (from ``start``) that could begin a marker starts."""
    match = _PART_RE.search(text, start)
    return len(text) if match is None else match.start()
