"""Exceptions raised by conchcheck, and the exit codes the command ends with. ``str(exc)`` is
always a complete sentence for the user.

* ConchcheckError               base; the CLI prints it and exits with ``exit_code`` (2)
  x InputError                  a file or value given to conchcheck cannot be used
    + MatrixError               a matrix with problems, one ``file:line: path: message``
                                a line (``conchcheck.matrix``)
    + TargetsError              a targets file with problems, the same way
                                (``conchcheck.run.targets``)
  x UnknownDialectError         a schema dialect name conchcheck does not know (also ValueError)
  x Unreadable                  text the forgiving reader cannot read (also ValueError;
                                defined in ``conchcheck.core.repair``)
  x CacheError                  the capability file is unreadable, corrupt or locked
                                (``conchcheck.capabilities``)
  x CredentialsError            a provider's key variable is unset (exit 3;
                                ``conchcheck.wire.keys``)
  x UnusableError               the target can't be probed, found before any probe: a catalogue
                                that can't be read (exit 3)
  x StoppedError                stopped (a signal, Ctrl-C) before anything was probed (exit 4)

A provider's refusal is never an exception: it is a ``conchcheck.refusals.Refusal`` value.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """How a command ends; a run of many targets ends with the worst of theirs."""

    DONE = 0
    """Done, and everything checked holds."""
    FAILED = 1
    """A check or an expectation failed."""
    USAGE = 2
    """Bad usage or input; nothing was sent."""
    UNUSABLE = 3
    """The target can't be probed: unreachable, auth, unknown model, nothing but failures."""
    STOPPED = 4
    """Stopped early (budget, deadline, interrupt); the partial results are written."""

    def __str__(self) -> str:
        # The number, as the shell shows it (Python 3.10 would print "ExitCode.DONE").
        return str(self.value)


class ConchcheckError(Exception):
    """Base class for every error conchcheck raises on purpose."""

    exit_code: ClassVar[ExitCode] = ExitCode.USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InputError(ConchcheckError):
    """A file or value given to conchcheck cannot be used."""


class UnusableError(ConchcheckError):
    """The target can't be probed, and it is known before any probe begins: a provider's
    catalogue that can't be read for ``PROVIDER:*``."""

    exit_code = ExitCode.UNUSABLE


class StoppedError(ConchcheckError):
    """Stopped (a signal, Ctrl-C) before the probe began, most likely while an MCP server
    listed its tools: nothing was sent to the target, so there is nothing to write."""

    exit_code = ExitCode.STOPPED

    @classmethod
    def before_probe(cls, came: str, *, reading_tools: bool) -> StoppedError:
        """The error for a probe stopped by ``came`` (SIGTERM, Ctrl-C) while its inputs (and
        with ``reading_tools``, the tools of its sources) were read."""
        when = (
            "while the tools of --tools were read; the MCP servers started are stopped,"
            if reading_tools
            else "before the probe began;"
        )
        return cls(
            f"Stopped early: interrupted ({came}) {when} nothing was sent to the target and"
            " no results are written."
        )


class UnknownDialectError(ConchcheckError, ValueError):
    """A schema dialect name that conchcheck does not know."""
