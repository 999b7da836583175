"""The markers the words reader looks for (every family's block openers, code fences,
reasoning closers and the start of a call's JSON after words) and the searches it runs for
them, each in C over the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from conchcheck.core.words.blocks import BY_OPENER, FENCE, HARMONY_ROLE, REASONING_ENDS, Block
from conchcheck.core.words.wrappers import BARE, BARE_PARTS, BARE_REACH


def trie(words: Iterable[str], *, prefixes: bool = False, extra: Iterable[str] = ()) -> str:
    """A regex for ``words`` with common starts factored out, so a search tries each
    position once, not once per word; ``prefixes``: any start of a word instead; ``extra``:
    more branches, each a regex that begins with a literal character. Every branch is at the
    top, so ``re`` skips in C to where one of their first characters is."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any], top: bool = False) -> str:
        branches = [re.escape(c) + emit(sub) for c, sub in sorted(node.items()) if c]
        branches += extra if top else ()
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if not top and (prefixes or "" in node) else body

    return emit(root, top=True)


STRAY_CLOSERS = frozenset(
    {
        # Hermes, Qwen, GLM, Granite 4; Hunyuan; Seed-OSS; MiniMax-M2; the Claude-style form.
        "</tool_call>",
        "</tool_calls>",
        "</seed:tool_call>",
        "</minimax:tool_call>",
        "</function_calls>",
        "]<]minimax[>[</tool_call>",
        # Kimi K2 (and LFM2's <|tool_call_end|>); Kimi K3.
        "<|tool_calls_section_end|>",
        "<|tool_call_section_end|>",
        "<|tool_call_end|>",
        "<|close|>tools<|sep|>",
        "<|close|>call<|sep|>",
        # DeepSeek V3 / V3.1, V3.2 / V4.
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁end｜>",
        "</｜DSML｜function_calls>",
        "</｜DSML｜tool_calls>",
        "</｜DSML｜invoke>",
        # Harmony's stop tokens; Gemma 4; Llama 3 and 4; Cohere; FunctionGemma.
        "<|call|>",
        "<|return|>",
        "<tool_call|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_end|>",
        "<|END_ACTION|>",
        "<|END_OF_TURN_TOKEN|>",
        "<end_function_call>",
    }
)
"""Closers that, with no opener before them and outside every value and code fence, are
never words: special tokens (or Hermes's added token) no answer means to show. Dropped, and
counted in ``WordsReading.stray_closers``. The engines differ (only SGLang's streaming drops
them); the rule and the closers per family are in
docs/research/call-reading-reasoning-and-several-calls.md §4. Closers a person could write
in prose (``</function>``, ``</parameter>``, ``</invoke>``) are left as words."""
_LITERALS = (*(o for o in BY_OPENER if o not in BARE), FENCE, *REASONING_ENDS, *STRAY_CLOSERS)
MARKERS = tuple(sorted(_LITERALS, key=len, reverse=True))
"""Every marker written as it is, longest first (``BARE``'s are found by what follows them)."""
_NAME = r"[A-Za-z_][\w.\-]{0,63}"
PYTHONIC = r"\[" + _NAME + r"\("
"""A pythonic list opening with a call, ``[name(``, anywhere in the words: SGLang's pythonic
detector reads one with prose before and after it (docs/research/call-reading-reasoning-and-
several-calls.md §5.2). Any name matches, so the block holding it is words again unless the
list is calls naming an offered tool (``blocks.PYTHONIC_LIST``)."""
MARKER_RE = re.compile(trie(MARKERS, extra=(*BARE.values(), PYTHONIC)))
# The longest end of a text that could begin a marker, searched in its last few characters.
_PART_RE = re.compile(trie(MARKERS, prefixes=True, extra=(*BARE_PARTS, r"\[" + _NAME)) + r"\Z")
LONGEST = max(*(len(m) for m in MARKERS), 66)
"""The longest marker: a literal, or ``PYTHONIC`` with a name of 64 characters."""
assert {m[0] for m in MARKERS} | set(BARE) <= set("<[`{]"), "the reader's fast path knows these"
assert BARE_REACH <= LONGEST, "a call's JSON after words begins within a partial's reach"


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


MAYBE_RE = re.compile(
    "|".join(
        (
            _maybe_pattern(MARKERS),
            *BARE.values(),
            *(p + r"\Z" for p in BARE_PARTS),
            r"\[" + _NAME + r"(?:\(|\Z)",
        )
    )
)
"""Finds the first place a marker could begin (None: no marker can begin in the text)."""

TOKEN = 32
"""Deltas up to this long are remembered in ``SAFE`` and ``SHOWN``."""
KEPT = 4096
"""The most deltas ``SAFE`` or ``SHOWN`` hold, so a hostile stream of distinct deltas can't
make them large. Full, ``SAFE`` takes a plain delta (three quick checks find it plain) only
when ``shown`` has made room, and ``shown``, whose answers cost a search, makes room: a
table full of a past stream's deltas never keeps the next stream's costly ones out."""
assert min(len(m) for m in MARKERS) >= 3, "MAYBE_RE judges a marker by its first three"

SAFE: set[str] = set()
"""Deltas in which no marker can begin. Deltas are tokens, and a model's tokens repeat (its
"<b>", "`code", "</" come back again and again): one look in a set answers most of them.
Shared by every reader in the process, as the tokens of the model it reads are."""
SHOWN: dict[str, tuple[str, ...]] = {}
"""``shown``'s other answers, by delta."""
WAIT: tuple[str, ...] = ()
"""``shown``'s answer when a marker may begin inside the delta: it is gathered."""


def shown(delta: str) -> tuple[str, ...]:
    """``delta`` cut in two: the words that can be shown now and the end that waits for the
    next delta to decide (a "<", "{", "]" or "`" that may begin a marker, or nothing);
    ``WAIT`` when a marker may begin inside it. Remembered in ``SAFE`` or ``SHOWN``."""
    match = None
    if "<" in delta or "[" in delta or "`" in delta or "{" in delta or "]" in delta:
        match = MAYBE_RE.search(delta)
    if match is None:
        cut: tuple[str, ...] = (delta, "")
    elif match.end() == len(delta) and match.end() - match.start() < 3:
        cut = (delta[: match.start()], delta[match.start() :])
    else:
        cut = WAIT
    if len(delta) > TOKEN:
        return cut
    if match is None:
        if len(SAFE) >= KEPT:
            SAFE.pop()
        SAFE.add(delta)
    else:
        if len(SHOWN) >= KEPT:
            SHOWN.clear()  # a dict has no cheap way to drop one old entry
        SHOWN[delta] = cut
    return cut


Search = Callable[..., "re.Match[str] | None"]
ANGLE: Search = re.compile("<").search


@functools.lru_cache(maxsize=64)
def triggers(block: Block) -> tuple[Search, str]:
    """A search for a first character of ``block``'s closers, and that character if alone."""
    ends = (*block.closers, *block.reopen, *(("]", "}") if block.balanced else ()))
    firsts = "".join(sorted({"<", *(m[0] for m in ends)}))
    return re.compile("[" + re.escape(firsts) + "]").search, firsts if len(firsts) == 1 else ""


def partial_start(text: str, start: int) -> int:
    """Where the longest end of ``text`` (from ``start``) that could begin a marker starts."""
    match = _PART_RE.search(text, start)
    return len(text) if match is None else match.start()


class Opening(str, Enum):
    """How a reply opens, judged from its first characters after any space."""

    WAIT = "wait"
    """Too few characters yet: they may begin a marker, a tool's name or Harmony's header."""
    HARMONY = "harmony"
    """gpt-oss's header recipient, "to=functions.": the prompt ends "<|start|>assistant"."""
    WHOLE = "whole"
    """JSON, or an offered tool's name and "(": only the whole reply can say if it's a call."""
    WORDS = "words"


_MAX_NAME = 200


def opening(lead: str, openers: tuple[str, ...]) -> Opening:
    """How a reply opens: ``lead`` is its start without the space before, ``openers`` each
    offered tool's name and "(", and the other openings read whole (ReAct's labels). A reply
    that opens with a marker is read as words."""
    if len(lead) < LONGEST and any(m.startswith(lead) and m != lead for m in MARKERS):
        return Opening.WAIT
    if HARMONY_ROLE.opener.startswith(lead[: len(HARMONY_ROLE.opener)]):
        return Opening.WAIT if len(lead) < len(HARMONY_ROLE.opener) else Opening.HARMONY
    if lead.startswith(MARKERS):
        return Opening.WORDS
    if lead[0] in "{[" or lead.startswith(openers):
        return Opening.WHOLE
    if len(lead) < _MAX_NAME and any(o.startswith(lead) for o in openers):
        return Opening.WAIT
    return Opening.WORDS
