"""The keys this process holds, and every form they take in written text, masked.

A ``Redactor`` knows each key's forms (as is, JSON-escaped once and twice, URL-encoded,
HTML/XML-escaped, Python-quoted) and masks them in a text or in every string of a value.
``hold`` is called for each key read (``conchcheck.wire.keys.Secret``), so any writer can
mask with ``held()`` what it was not handed explicitly; ``MaskedStream`` masks every write to
stdout or stderr.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from functools import lru_cache
from typing import Any, TextIO, TypeVar
from urllib.parse import quote, quote_plus

__all__ = ["MASK", "MIN_LENGTH", "MaskedStream", "Redactor", "forms", "held", "hold"]

MASK = "[redacted]"
MIN_LENGTH = 8
"""Keys shorter than this are placeholders a local server takes ("EMPTY", "ollama", "x"), not
secrets: masking them would rewrite ordinary words, and for one like "td", the HTML itself."""
PIECE = 12
"""Characters of a key that are masked wherever they stand, grown to all of the key they
border: a key cut short ("canary-7f3a…" in a trimmed message) is still a key."""
MAX_DEPTH = 200
"""Nesting a value may have to be walked; anything deeper is replaced, never passed on."""
TOO_DEEP = "[too deeply nested to check for keys]"

T = TypeVar("T")

_HELD: set[str] = set()


def hold(key: str) -> None:
    """Remember a key this process read: from now on ``held()`` masks it."""
    if len(key) >= MIN_LENGTH:
        _HELD.add(key)


def forget_held() -> None:
    """Forget every key held so far: for a process that runs unrelated probes one after
    another (the test suite), so one probe's key never masks another's text."""
    _HELD.clear()


def held() -> Redactor:
    """A redactor of every key this process has read."""
    return _redactor(frozenset(_HELD))


@lru_cache(maxsize=16)
def _redactor(keys: frozenset[str]) -> Redactor:
    return Redactor(keys)


def forms(key: str) -> frozenset[str]:
    """Every form ``key`` may take in text conchcheck writes or a provider sends back."""
    once = {json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1]}
    # Some servers (PHP's json_encode, Go's HTML-safe encoder) escape "/" as "\/".
    once |= {form.replace("/", "\\/") for form in once}
    twice = {json.dumps(form, ensure_ascii=flag)[1:-1] for form in once for flag in (True, False)}
    urls = {quote(key, safe=""), quote(key), quote_plus(key), quote_plus(key, safe="/")}
    urls |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), url) for url in urls}
    marked = {
        html.escape(key, quote=True),
        html.escape(key, quote=False),
        html.escape(key, quote=True).replace("&#x27;", "&#39;"),
        _xml_attribute(key),
    }
    found = {key, repr(key)[1:-1], *once, *twice, *urls, *marked}
    return frozenset(form for form in found if form)


def _grown(text: str, start: int, key: str, at: int) -> tuple[int, int]:
    """The span of ``text`` around ``text[start:start + PIECE] == key[at:at + PIECE]`` that
    matches the key further on either side."""
    stop, after = start + PIECE, at + PIECE
    while start > 0 and at > 0 and text[start - 1] == key[at - 1]:
        start, at = start - 1, at - 1
    while stop < len(text) and after < len(key) and text[stop] == key[after]:
        stop, after = stop + 1, after + 1
    return start, stop


def _xml_attribute(key: str) -> str:
    # What xml.etree writes for an attribute value (junit.xml's message attributes).
    text = key.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
    return text.replace("\t", "&#09;")


class Redactor:
    """Masks every form of the given keys; keys shorter than ``MIN_LENGTH`` are left alone.

    ``shapes``, when given, runs after: it masks what merely looks like a key (someone
    else's, or ours shown masked in the middle by the provider).
    """

    __slots__ = ("_keys", "_pattern", "_pieces", "_shapes")

    def __init__(
        self, keys: Iterable[str] = (), *, shapes: Callable[[str], str] | None = None
    ) -> None:
        self._keys = frozenset(key for key in keys if len(key) >= MIN_LENGTH)
        self._shapes = shapes
        found = {form for key in self._keys for form in forms(key)}
        # Longest first: a form inside another (the key inside its quoted form) loses.
        ordered = sorted(found, key=lambda form: (-len(form), form))
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        pieces = sorted(
            {key[i : i + PIECE] for key in self._keys for i in range(len(key) - PIECE + 1)}
        )
        self._pieces = re.compile("|".join(map(re.escape, pieces))) if pieces else None

    @property
    def keys(self) -> frozenset[str]:
        """The keys masked (only ever read by code that masks them too)."""
        return self._keys

    def __bool__(self) -> bool:
        return self._pattern is not None or self._shapes is not None

    def __or__(self, other: Redactor) -> Redactor:
        return Redactor(self._keys | other._keys, shapes=self._shapes or other._shapes)

    def __repr__(self) -> str:
        return f"Redactor({len(self._keys)} keys)"

    def text(self, text: str) -> str:
        """``text`` with every form of every key replaced by ``MASK``."""
        if self._pattern is not None:
            text = self._unpiece(self._pattern.sub(MASK, text))
        return text if self._shapes is None else self._shapes(text)

    def _unpiece(self, text: str) -> str:
        if self._pieces is None:
            return text
        spans: list[tuple[int, int]] = []
        for found in self._pieces.finditer(text):
            piece = found.group(0)
            for key in self._keys:
                at = key.find(piece)
                while at >= 0:
                    spans.append(_grown(text, found.start(), key, at))
                    at = key.find(piece, at + 1)
        if not spans:
            return text
        out, end = [], 0
        for start, stop in sorted(spans):
            if start > end:
                out += [text[end:start], MASK]
            elif not out:
                out.append(MASK)
            end = max(end, stop)
        return "".join([*out, text[end:]])

    def count(self, text: str) -> int:
        """How many times any form of a key appears in ``text``."""
        return 0 if self._pattern is None else len(self._pattern.findall(text))

    def value(self, value: T) -> T:
        """``value`` with every string in it masked: dataclasses, mappings, lists, tuples."""
        if not self:
            return value
        masked: T = self._walk(value, 0)
        return masked

    def _walk(self, value: Any, depth: int) -> Any:
        if isinstance(value, Enum) or value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self.text(value)
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        if isinstance(value, tuple):
            walked = tuple(self._walk(item, depth + 1) for item in value)
            if walked == value:
                return value
            return type(value)(*walked) if hasattr(value, "_fields") else type(value)(walked)
        if isinstance(value, list):
            return [self._walk(item, depth + 1) for item in value]
        if isinstance(value, Mapping):
            return {self._walk(k, depth + 1): self._walk(v, depth + 1) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {}
            for field in dataclasses.fields(value):
                if field.init:
                    before = getattr(value, field.name)
                    after = self._walk(before, depth + 1)
                    if after is not before and after != before:
                        changes[field.name] = after
            return dataclasses.replace(value, **changes) if changes else value
        return value


class MaskedStream:
    """``sys.stdout`` or ``sys.stderr`` as it is when written to, with every key held masked.

    The console's last guard: what it prints was made safe already, but a key must not
    reach a stream by any path, the error funnel's included.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def stream(self) -> TextIO:
        """The stream written to now (a test or rich may have replaced it)."""
        stream: TextIO = getattr(sys, self.name)
        # While a progress bar runs, rich puts a proxy printing through this very console
        # in sys.stdout and sys.stderr; writing to it would loop. rich's own default skips it.
        proxied: TextIO = getattr(stream, "rich_proxied_file", stream)
        return proxied

    def write(self, text: str) -> int:
        """Write ``text`` with every key held masked."""
        return self.stream.write(held().text(text))

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """The stream's file descriptor."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        """The stream's encoding (UTF-8 when it has none)."""
        return getattr(self.stream, "encoding", None) or "utf-8"
