"""The headers sent with every request to an MCP server over HTTP (``--tools-header``).

Each is written ``Name: value``. The name is an HTTP field name (RFC 9110's token); the value
holds no line break or other control character, and ``${VAR}`` in it is the value of the
variable VAR, read when the probe is built, so a token never has to be written on the
command line. Every variable's value and every whole header value is held
(``conchcheck.redaction``): nothing conchcheck writes can show it.

A message never shows a value, nor a name that could be a key.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping

from conchcheck.core.credentials import redact_keys
from conchcheck.errors import InputError
from conchcheck.redaction import hold

__all__ = ["check_headers", "header_values"]

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PROTOCOL_HEADERS = frozenset(
    {
        "accept",
        "content-length",
        "content-type",
        "host",
        "mcp-method",
        "mcp-protocol-version",
        "mcp-session-id",
        "transfer-encoding",
    }
)
"""Headers conchcheck writes itself for the MCP protocol over HTTP: not the user's to set."""
EXAMPLE = "--tools-header 'Authorization: Bearer ${MCP_TOKEN}'"
HINT = f"Write {EXAMPLE}, with the token in $MCP_TOKEN."


def check_headers(headers: Iterable[str]) -> list[tuple[str, str]]:
    """Each ``Name: value`` as ``(name, value)``, unexpanded; ``InputError`` for one that is
    not written so, names a protocol header or one given before, or refers to no variable."""
    parsed: list[tuple[str, str]] = []
    seen: set[str] = set()
    for text in headers:
        name, colon, value = text.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _TOKEN.fullmatch(name) or redact_keys(name) != name:
            raise InputError(
                "--tools-header takes `Name: value`, the name in letters, digits and"
                " !#$%&'*+-.^_`|~; what was given is not that (it is not shown, in case it"
                " holds a key).",
                hint=HINT,
            )
        if _unsendable(value):
            raise InputError(
                f"--tools-header {name}: the value holds a line break or another control"
                " character, so it can't be sent; it is not shown here.",
                hint="Write the value on one line.",
            )
        if name.lower() in PROTOCOL_HEADERS:
            raise InputError(
                f"--tools-header {name}: conchcheck sets this header itself, as the MCP"
                " protocol over HTTP asks.",
                hint="Leave it out.",
            )
        if name.lower() in seen:
            raise InputError(f"--tools-header {name}: given twice.", hint="Give each header once.")
        seen.add(name.lower())
        for found in _REFERENCE.finditer(value):
            if not _VARIABLE.fullmatch(found[1]) or redact_keys(found[1]) != found[1]:
                raise InputError(
                    f"--tools-header {name}: a ${{…}} in the value does not name a variable"
                    " (it is not shown, in case it holds a key).",
                    hint=HINT,
                )
        parsed.append((name, value))
    return parsed


def header_values(
    headers: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The headers ``--tools-header`` gives, each ``${VAR}`` expanded from ``environ``
    (``os.environ`` by default), every value held; ``InputError`` for a variable that is
    not set, or whose value can't be sent."""
    env = os.environ if environ is None else environ
    expanded: dict[str, str] = {}
    for name, value in check_headers(headers):
        for variable in dict.fromkeys(found[1] for found in _REFERENCE.finditer(value)):
            given = env.get(variable, "").strip()
            if not given:
                raise InputError(
                    f"--tools-header {name}: ${variable} is not set, so the header can't be sent.",
                    hint=f"Export {variable}, or leave --tools-header {name} out.",
                )
            if _unsendable(given):
                raise InputError(
                    f"--tools-header {name}: ${variable} holds a line break or another"
                    " control character, so it can't be sent; it is not shown here.",
                    hint=f"Set {variable} again without them.",
                )
            hold(given)
        whole = _REFERENCE.sub(lambda found: env[found[1]].strip(), value)
        hold(whole)
        expanded[name] = whole
    return expanded


def _unsendable(value: str) -> bool:
    # A tab is the one control character a field value may hold (RFC 9110, 5.5).
    return any(unicodedata.category(char) == "Cc" and char != "\t" for char in value)
