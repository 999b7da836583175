"""What a block of a reply's words is to the reader: where it opens, its head, what ends it,
what reads it, and its role (``blocks`` lists every family's).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from conchcheck.core.words.forms import CallForm, Reader, WordsCall
from conchcheck.core.words.lexer import GEMMA_QUOTE, Lexer
from conchcheck.core.words.values import Values

Read = Callable[[Reader, str, str, str, bool], list[WordsCall]]
"""(reader, head, body, raw, cut_off) -> the block's calls."""
Sift = Callable[[Reader, str, str, str, str, bool], tuple[list[WordsCall], str]]
"""(reader, opener, head, body, closer, cut_off) -> the block's calls, and its words (a
block that holds no call is words after all)."""


class BlockRole(str, Enum):
    """What a block is to the reader."""

    CALLS = "calls"
    """Held until it ends, then read into calls."""
    REASONING = "reasoning"
    """Shown as it comes; never read for calls."""
    RESPONSE = "response"
    """A tool result the model wrote itself: dropped, never believed."""
    WRAPPER = "wrapper"
    """Held until it ends: a call when it holds one naming an offered tool, otherwise words as
    written (a code fence, or a tag a person may write in prose too)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One framing: its opener, the head after it, what ends it and what reads it."""

    opener: str
    form: CallForm
    read: Read | None = None
    closers: tuple[str, ...] = ()
    reopen: tuple[str, ...] = ()
    """Markers that end an unclosed block and open the next one."""
    head_end: str | None = None
    head_limit: int = 0
    head_shape: re.Pattern[str] | None = None
    """What the head may hold so far, or the opener is words (by default: no newline, no second
    opener, and no tag in a name that ``>`` ends)."""
    strings: bool = True
    values: tuple[Values, ...] = ()
    again: tuple[str, ...] = ()
    to_end: bool = False
    """The reply's end ends it as the format writes it (no closer exists)."""
    calls_close: bool = False
    """Each call inside has a closer of its own, so a reply cut inside the block keeps the
    calls closed before the cut; the one being written is cut."""
    role: BlockRole = BlockRole.CALLS
    implied: str = ""
    """Head text the opener stands for (a Harmony reply opening with its recipient)."""
    balanced: bool = False
    """The end of the first bracketed value in it ends it (the format writes no closer)."""
    raw: str = GEMMA_QUOTE
    inert: tuple[str, ...] = ()
    """Literals that begin with a bracket but open no value (see ``Lexer``)."""
    depth: int = 0
    """Brackets open when the body begins (its opener or head ends with a JSON value's ``{``)."""
    sift: Sift | None = None
    """Reads a block that may hold no call (then it is words), in place of ``read``."""
    turn: Callable[[Block, str], Block] | None = None
    """What the block is once its head is read (a Harmony message is a call only ``to=`` one)."""
    calls_inside: bool = False
    """Reasoning some calls end where they open (``thinking``)."""

    def lexer(self) -> Lexer:
        """A fresh lexer for this block's body."""
        return Lexer(
            (*self.closers, *self.reopen),
            strings=self.strings,
            values=self.values,
            again=self.again,
            balanced=self.balanced,
            raw=self.raw,
            inert=self.inert,
            depth=self.depth,
        )

    def broken_head(self, seen: str, opener: str) -> bool:
        """Whether ``seen``, the head read so far, is none of this block's: its opener is words."""
        if self.head_shape is not None:
            return self.head_shape.fullmatch(seen) is None
        return "\n" in seen or opener in seen or (self.head_end == ">" and "<" in seen)

    def after_head(self, head: str) -> Block:
        """The block as its head makes it (``turn``)."""
        return self if self.turn is None else self.turn(self, head)
