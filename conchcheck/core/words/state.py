"""Where the words reader stands in a reply: the states of its machine (``reader``)."""

from __future__ import annotations

from enum import Enum


class ReaderState(str, Enum):
    """What the text read next is: the reply's opening, words, a reply read only whole, a
    block's head, its body, or a code fence's info string."""

    START = "start"
    TEXT = "text"
    WHOLE = "whole"
    HEAD = "head"
    BLOCK = "block"
    FENCE_INFO = "fence_info"
