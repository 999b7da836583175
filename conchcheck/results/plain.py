"""Typed values as plain data (dicts, lists, strings, numbers) and back.

``to_plain`` writes any result value for JSON; ``from_plain`` is its inverse for the types
``results.json`` holds, guided by each dataclass's annotations. Input has been checked by the
file's JSON Schema first, so a shape this module doesn't expect is a bug, not bad input.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from enum import Enum
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


def to_plain(value: Any) -> Any:
    """Dataclasses become dicts of their fields (or their own ``as_data()``, the shape of their
    file), enums their values, tuples lists, paths text."""
    as_data = getattr(value, "as_data", None)
    if callable(as_data):
        # A capability entry is shown as its file writes it (the knobs section flat).
        return to_plain(as_data())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):  # a frozen matrix holds its tools in a mappingproxy
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if hasattr(value, "__fspath__"):
        return str(value)  # a written file's path
    return value


def from_plain(kind: type[T], data: Any) -> T:
    """``data`` (as ``to_plain`` wrote it) read back as a ``kind``.

    A dataclass takes the keys that name its fields (others, such as a derived ``label``,
    are skipped; a missing one takes its default); ``X | None``, enums, ``tuple[X, ...]``
    and ``Mapping[str, X]`` are read by their parts; anything else is kept as it is.
    """
    value: T = _read(kind, data)
    return value


def _read(kind: Any, data: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        branches = [b for b in typing.get_args(kind) if b is not type(None)]
        if data is None:
            return None
        if len(branches) == 1:
            return _read(branches[0], data)
        if all(isinstance(b, type) and issubclass(b, Enum) for b in branches):
            # Enums of disjoint values (a Dialect or an AsWritten): the one that has it.
            return next(b(data) for b in branches if data in {m.value for m in b})
        if any(_typed(b) for b in branches):
            raise TypeError(f"a union of {branches} can't be read without its tag")
        return data  # JSON as it was written (JsonValue): nothing to rebuild
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_read(item, x) for x in data)
    if origin in (dict, Mapping):
        value_kind = typing.get_args(kind)[1]
        return {str(k): _read(value_kind, v) for k, v in data.items()}
    if isinstance(kind, type) and issubclass(kind, Enum):
        return kind(data)
    if kind is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        hints = _hints(kind)
        given = {
            name: _read(hints[name], data[name]) for name in _init_fields(kind) if name in data
        }
        return kind(**given)
    return data


def _typed(kind: Any) -> bool:
    """Whether reading ``kind`` builds something: a dataclass or an enum."""
    origin = typing.get_origin(kind) or kind
    return isinstance(origin, type) and (
        dataclasses.is_dataclass(origin) or issubclass(origin, Enum)
    )


@cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


@cache
def _init_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind) if f.init)
