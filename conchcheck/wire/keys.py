"""API keys: read from one variable, held so that no output can show them, scrubbed from text.

A key is read only from its provider's own variable or the one named with
``--api-key-env``, and it never appears in an output, log, report, error message or
recorded exchange: ``Secret`` prints as ``[redacted]``, and ``scrub``, ``scrub_value`` and
``scrub_reply`` remove it in every form (and anything shaped like a key) from what a
provider sends back, as it arrives. The writers mask it once more (``conchcheck.redaction``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import unicodedata
from collections.abc import Mapping
from typing import TypeVar

from conchcheck.core.credentials import redact_keys
from conchcheck.errors import ConchcheckError, ExitCode, InputError
from conchcheck.redaction import MASK, Redactor, held, hold
from conchcheck.wire.chat import Reply
from conchcheck.wire.providers import Provider

REDACTED = MASK
T = TypeVar("T")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOWN_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}")
"""A name shown in a message: the conventional upper-case kind, which no key looks like."""


class CredentialsError(ConchcheckError):
    """The provider needs a key and its variable is not set (exit 3: target unusable)."""

    exit_code = ExitCode.UNUSABLE


class Secret:
    """A key. Its text is reached only through ``reveal()``; everything else shows a mask."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        hold(value)

    def reveal(self) -> str:
        """The key itself, for the one header that carries it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED})"

    def __str__(self) -> str:
        return REDACTED

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def resolve_key(
    provider: Provider,
    *,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Secret | None:
    """The key for ``provider`` from its variable (or ``api_key_env``); None if it needs none.

    A name that is no variable name, or looks like a key, and a key holding a control
    character are refused without showing either.
    """
    env = os.environ if environ is None else environ
    if api_key_env is not None:
        _check_name(api_key_env)
    name = api_key_env or provider.key_env
    if name is None:
        return None
    value = env.get(name, "").strip()
    if not value:
        raise CredentialsError(
            f"No API key for provider '{provider.name}': {_shown(name)} is not set.",
            hint=f"Export {_shown(name, 'it')}, or name another variable with --api-key-env.",
        )
    if any(unicodedata.category(char) == "Cc" for char in value):
        raise InputError(
            f"The key in {_shown(name)} holds a control character (a line break, tab, NUL or "
            "escape), so it can't be sent; it is not shown here.",
            hint="Copy the key again without them.",
        )
    return Secret(value)


def _check_name(name: str) -> None:
    if _NAME.fullmatch(name) and redact_keys(name) == name:
        return
    raise InputError(
        "--api-key-env takes the NAME of a variable, not a key; what was given is not a "
        "variable name (it is not shown, in case it is a key).",
        hint="Export the key (export MY_KEY=...) and pass --api-key-env MY_KEY.",
    )


def _shown(name: str, otherwise: str = "the variable named with --api-key-env") -> str:
    return f"${name}" if _SHOWN_NAME.fullmatch(name) else otherwise


def redactor(secrets: tuple[Secret | None, ...] = ()) -> Redactor:
    """Masks the given keys and every key this process holds, in every form; nothing else."""
    return _redactor(_values(secrets), shaped=False)


def _scrubber(secrets: tuple[Secret | None, ...]) -> Redactor:
    # Keys a provider echoes that are not ours (another key, or ours masked in the middle:
    # OpenAI's "Incorrect API key provided: sk-abc***xyz") are masked by their shape.
    return _redactor(_values(secrets), shaped=True)


def _values(secrets: tuple[Secret | None, ...]) -> frozenset[str]:
    return frozenset(s.reveal() for s in secrets if s is not None) | held().keys


@functools.lru_cache(maxsize=32)
def _redactor(keys: frozenset[str], *, shaped: bool) -> Redactor:
    # Every reply is scrubbed: build each key's forms and their pattern once.
    return Redactor(keys, shapes=redact_keys if shaped else None)


def scrub(text: str, secrets: tuple[Secret | None, ...] = ()) -> str:
    """``text`` with every given key, and anything shaped like a key, replaced by a mask."""
    return _scrubber(secrets).text(text)


def scrub_value(value: T, secrets: tuple[Secret | None, ...] = ()) -> T:
    """``value`` (a reply, a refusal, decoded JSON) with every string in it scrubbed."""
    return _scrubber(secrets).value(value)


def scrub_reply(reply: Reply, body: str, secrets: tuple[Secret | None, ...]) -> tuple[Reply, str]:
    """A reply and the body it came in, scrubbed: its text, reasoning, calls, refusal, findings
    and raw.

    A stream can carry a key in pieces, a few characters an event, that no mask matches: when
    the text, reasoning and calls held more keys than the raw events show whole, the raw and
    the body are withheld.
    """
    exact = redactor(secrets)
    read = exact.count(reply.text) + exact.count(reply.reasoning)
    read += sum(exact.count(c.arguments) for c in reply.tool_calls)
    clean = scrub_value(reply, secrets)
    if read > exact.count(reply.raw):
        note = f"[withheld: the reply carried a key in pieces; {len(reply.raw)} characters]"
        return dataclasses.replace(clean, raw=note), note
    return clean, scrub(body, secrets)
