"""What an MCP server started over stdio is given to run with, and what it says, masked.

A server gets the small environment the MCP Python SDK's stdio client gives one
(``get_default_environment`` in mcp/client/stdio.py, SDK 2.3.0: on POSIX ``HOME``,
``LOGNAME``, ``PATH``, ``SHELL``, ``TERM`` and ``USER``; a value that is a shell function,
starting ``()``, left out), plus the variables the user names (``--tools-env NAME``). The
user's keys stay with conchcheck: a server that prints its environment, or names it in an
error or a tool description, has none of them to show.

Whatever a server says is masked before it goes anywhere (a message, a report, a request to
the provider): every key this process holds, the values of the variables passed to it, the
credentials written in its source or headers, and anything shaped like a provider key.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping

from conchcheck.core.credentials import redact_keys
from conchcheck.errors import InputError
from conchcheck.redaction import Redactor, held

DEFAULT_NAMES = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)
"""The variables a server inherits unasked: the SDK's ``DEFAULT_INHERITED_ENV_VARS``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HINT = "Name a variable of your environment (--tools-env GITHUB_TOKEN), not its value."


def default_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``DEFAULT_NAMES`` that are set (in ``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    return {
        name: env[name]
        for name in DEFAULT_NAMES
        if name in env and not env[name].startswith("()")  # a shell function, not a value
    }


def passed_environment(
    names: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables ``names`` (``--tools-env``) with their values; ``InputError`` for one
    that is no variable name, looks like a key, or is not set."""
    env = os.environ if environ is None else environ
    passed: dict[str, str] = {}
    for name in names:
        if not _NAME.fullmatch(name) or redact_keys(name) != name:
            raise InputError(
                "--tools-env takes the NAME of a variable; what was given is not a variable"
                " name (it is not shown, in case it is a key).",
                hint=HINT,
            )
        if name not in env:
            raise InputError(
                f"--tools-env {name}: the variable is not set, so the MCP server can't be"
                " given it.",
                hint=f"Export {name}, or leave --tools-env {name} out.",
            )
        passed[name] = env[name]
    return passed


def server_environment(passed: Mapping[str, str]) -> dict[str, str]:
    """The whole environment a stdio server starts with: the default one, then ``passed``."""
    return {**default_environment(), **passed}


def speech_mask(passed: Mapping[str, str], secrets: Iterable[str] = ()) -> Redactor:
    """Masks what a server says: the keys held, the values ``passed`` to it, the ``secrets``
    written in its source or headers, key shapes."""
    given = held().keys | frozenset(passed.values()) | frozenset(secrets)
    return Redactor(given, shapes=redact_keys)
