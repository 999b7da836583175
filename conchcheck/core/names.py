"""The base of conchcheck's named values: a ``str`` enum that reads as its value."""

from __future__ import annotations

from enum import Enum


class Name(str, Enum):
    """A ``str`` enum whose members print as their values on every Python.

    Python 3.12 made ``str()`` and ``format()`` of a plain ``(str, Enum)`` member print
    ``Dialect.STRICT``; a value that lands in an id, a message or a report must read
    ``strict`` wherever it runs.
    """

    def __str__(self) -> str:
        return str(self.value)
