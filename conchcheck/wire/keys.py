"""API keys: read from one variable, held so that no output can show them, scrubbed from text.

A key is read only from its provider's own variable or the one named with
``--api-key-env``, and it never appears in an output, log, report, error message or
recorded exchange: ``Secret`` prints as ``[redacted]`` and ``scrub`` removes it (and
anything shaped like a key) from any text a provider sends back.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from conchcheck.core.refusals import redact_keys
from conchcheck.errors import ConchcheckError
from conchcheck.wire.providers import Provider

REDACTED = "[redacted]"


class CredentialsError(ConchcheckError):
    """The provider needs a key and its variable is not set (exit 3: target unusable)."""

    exit_code = 3


class Secret:
    """A key. Its text is reached only through ``reveal()``; everything else shows a mask."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

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
    """The key for ``provider`` from its variable (or ``api_key_env``); None if it needs none."""
    env = os.environ if environ is None else environ
    name = api_key_env or provider.key_env
    if name is None:
        return None
    value = env.get(name, "").strip()
    if not value:
        raise CredentialsError(
            f"No API key for provider '{provider.name}': ${name} is not set.",
            hint=f"Export {name}, or name another variable with --api-key-env.",
        )
    return Secret(value)


def scrub(text: str, secrets: tuple[Secret | None, ...] = ()) -> str:
    """``text`` with every given key, and anything shaped like a key, replaced by a mask."""
    for secret in secrets:
        if secret is not None and secret.reveal():
            text = text.replace(secret.reveal(), REDACTED)
    # Keys a provider echoes that are not ours (another key, or ours masked in the middle:
    # OpenAI's "Incorrect API key provided: sk-abc***xyz") are masked by their shape.
    return redact_keys(text)
