"""A whole reply read at once: the streaming reader fed one chunk."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from conchcheck.core.tools import Tool
from conchcheck.core.words.forms import WordsReading
from conchcheck.core.words.reader import WordsReader


def read_calls(
    text: str, tools: Iterable[Mapping[str, Any] | Tool], *, cut_off: bool = False
) -> WordsReading:
    """Read a whole reply. ``cut_off``: the reply hit its token limit (nothing is mended)."""
    reader = WordsReader(tools)
    words = reader.feed(text)
    end = reader.close(cut_off=cut_off)
    return replace(end, text=words + end.text)
