"""A bound on a rate or a count, as an expectations file writes it: ``">= 0.8"``, ``"<= 2"``."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}
_BOUND = re.compile(r"\s*(>=|<=|==|!=|>|<)\s*([0-9.]+)\s*")


@dataclass(frozen=True, slots=True)
class Bound:
    """A bound on a rate or a count: ``>= 0.8``, ``<= 0``."""

    op: str
    value: float

    def holds(self, value: float) -> bool:
        """Whether ``value`` is within the bound."""
        return _OPERATORS[self.op](value, self.value)

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"

    @classmethod
    def parse(cls, written: str | float) -> Bound:
        """A bound as written: ``">= 0.8"``, or a bare number meaning at least that."""
        if not isinstance(written, str):
            return cls(">=", float(written))
        found = _BOUND.fullmatch(written)
        if found is None:
            raise ValueError(f"not a bound: {written!r}")
        return cls(found.group(1), float(found.group(2)))
