"""What the HTML reports share: the statuses a mark can have, fonts every Debian Chromium
has, a colour for each status (beside its shape, so colour is never the only sign), and
escaping. No web fonts, no emoji."""

from __future__ import annotations

import html
from enum import Enum

from conchcheck.core.escaping import visible


class Status(str, Enum):
    """How a mark reads: each has a word and a shape, so colour is never the only sign."""

    PASS = "pass"
    PARTIAL = "partial"
    FAIL = "fail"
    NONE = "none"

    @property
    def shape(self) -> str:
        """A geometric shape every common font has (DejaVu, Liberation): no emoji."""
        return _SHAPES[self]

    @property
    def rank(self) -> int:
        """Better is higher: for sorting and for the diff."""
        return _RANKS[self]


_SHAPES = {Status.PASS: "■", Status.PARTIAL: "▲", Status.FAIL: "×", Status.NONE: "○"}
_RANKS = {Status.NONE: 0, Status.FAIL: 1, Status.PARTIAL: 2, Status.PASS: 3}


SANS = 'system-ui,"DejaVu Sans","Liberation Sans",sans-serif'
"""Text: the system's face, then the two families Debian's Chromium brings (fontconfig's
fonts-dejavu-core, and fonts-liberation, which chromium recommends); both have every shape."""
MONO = '"DejaVu Sans Mono","Liberation Mono",monospace'
"""Code and a provider's words, from the same two families."""

STATUS = (
    ".s-pass{background:#dafbe1}.s-partial{background:#fff8c5}.s-fail{background:#ffebe9}\n"
    ".s-none{color:#656d76}"
)
"""Each status's colour, for the element holding its shape and word (``s-pass`` …)."""


def escape(text: str) -> str:
    """``text`` as element content: markup escaped, controls shown as escapes, never sent."""
    return html.escape(visible(text), quote=False)
