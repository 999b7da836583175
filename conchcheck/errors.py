"""Exceptions raised by conchcheck. ``str(exc)`` is always a complete sentence for the user.

* ConchcheckError               base; the CLI prints it and exits with ``exit_code`` (2)
  x InputError                  a file or value given to conchcheck cannot be used
    + MatrixError               a matrix with problems, one ``file:line: path: message``
                                a line (``conchcheck.matrix``)
  x UnknownDialectError         a schema dialect name conchcheck does not know (also ValueError)
  x Unreadable                  text the forgiving reader cannot read (also ValueError;
                                defined in ``conchcheck.core.repair``)
  x CacheError                  the capability file is unreadable, corrupt or locked
                                (``conchcheck.capabilities``)
  x CredentialsError            a provider's key variable is unset (exit 3;
                                ``conchcheck.wire.keys``)

A provider's refusal is never an exception: it is a ``conchcheck.refusals.Refusal`` value.
"""

from __future__ import annotations

from typing import ClassVar


class ConchcheckError(Exception):
    """Base class for every error conchcheck raises on purpose."""

    exit_code: ClassVar[int] = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InputError(ConchcheckError):
    """A file or value given to conchcheck cannot be used."""


class UnknownDialectError(ConchcheckError, ValueError):
    """A schema dialect name that conchcheck does not know."""
