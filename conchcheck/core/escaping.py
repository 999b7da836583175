"""What a provider's text may not do in an output: move a terminal's cursor or retitle it,
reorder a line (bidi controls), or leave a file that can't be encoded or parsed.

``visible`` writes every such character as an escape a person can read (``\\x1b``); the
writers build their own escaping (Markdown, HTML, XML, JSON) on it.
"""

from __future__ import annotations

import re

__all__ = ["encodable", "json_text", "one_line", "visible"]

# C0 controls but tab and line feed, DEL, C1 controls (0x9b is a one-byte CSI), the bidi and
# other invisible format controls ("Trojan Source"), the line and paragraph separators, the
# noncharacters XML forbids, and surrogates (a JSON "\ud800" decodes to one; UTF-8 can't
# write it).
_HIDDEN = re.compile(
    "\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069"
    "\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_HIDDEN = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\ufffe\uffff]"
)
_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def visible(text: str) -> str:
    """``text`` with every control character written as an escape; tabs and line feeds kept."""
    return _HIDDEN.sub(_shown, text)


def one_line(text: str) -> str:
    """``visible(text)`` on one line: each line break becomes a space."""
    return visible(_BREAKS.sub(" ", text))


def encodable(text: str) -> str:
    """``text`` that UTF-8 can write: a lone surrogate becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def json_text(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) safe to print and to write.

    Those characters only occur inside strings there, where ``\\uXXXX`` is the same value.
    """
    text = _JSON_HIDDEN.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return encodable(text)


def _shown(found: re.Match[str]) -> str:
    char = found.group(0)
    if char == "\r\n":
        return "\n"
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
