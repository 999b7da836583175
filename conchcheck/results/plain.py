"""Typed values as plain data (dicts, lists, strings, numbers) and back.

``to_plain`` writes any result value for JSON; ``from_plain`` is its inverse for the types
``results.json`` holds, guided by each dataclass's annotations. Input has been checked by the
file's JSON Schema first; whatever the schema lets through that doesn't fit a type (a field
a dataclass needs, a value no enum has) is a ``PlainError`` naming the place, never a
``TypeError`` or ``ValueError`` from deep inside, so the reader can say where in one line.
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

Place = tuple[str | int, ...]
"""Where a value is: keys and indices from the document's root."""


class PlainError(Exception):
    """``data`` doesn't fit the type read from it: where, and why (in jsonschema's words)."""

    def __init__(self, path: Place, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


_SCALARS: dict[Any, tuple[str, tuple[type, ...]]] = {
    str: ("string", (str,)),
    int: ("integer", (int,)),
    float: ("number", (int, float)),
    bool: ("boolean", (bool,)),
}
"""The JSON type of each scalar annotation, and the Python types that fit it."""


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


def from_plain(kind: type[T], data: Any, at: Place = ()) -> T:
    """``data`` (as ``to_plain`` wrote it) read back as a ``kind``; ``at`` is where it is.

    A dataclass takes the keys that name its fields (others, such as a derived ``label``,
    are skipped; a missing one takes its default); ``X | None``, enums, ``tuple[X, ...]``
    and ``Mapping[str, X]`` are read by their parts; text, numbers and booleans are checked
    for their type; anything else is kept as it is. ``PlainError`` where ``data`` doesn't fit.
    """
    value: T = _read(kind, data, at)
    return value


def _read(kind: Any, data: Any, at: Place) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        branches = [b for b in typing.get_args(kind) if b is not type(None)]
        if data is None:
            return None
        if len(branches) == 1:
            return _read(branches[0], data, at)
        if all(isinstance(b, type) and issubclass(b, Enum) for b in branches):
            # Enums of disjoint values (a Dialect or an AsWritten): the one that has it.
            return _member([m for b in branches for m in b], data, at)
        if any(_typed(b) for b in branches):
            raise TypeError(f"a union of {branches} can't be read without its tag")
        return data  # JSON as it was written (JsonValue): nothing to rebuild
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_read(item, x, (*at, i)) for i, x in enumerate(_typed_as(list, data, at)))
    if origin in (dict, Mapping):
        value_kind = typing.get_args(kind)[1]
        items = _typed_as(dict, data, at).items()
        return {str(k): _read(value_kind, v, (*at, str(k))) for k, v in items}
    if isinstance(kind, type) and issubclass(kind, Enum):
        return _member(list(kind), data, at)
    if kind in _SCALARS:
        return _scalar(kind, data, at)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        data = _typed_as(dict, data, at)
        hints = _hints(kind)
        missing = next((name for name in _required(kind) if name not in data), None)
        if missing is not None:
            raise PlainError(at, f"{missing!r} is a required property")
        given = {
            name: _read(hints[name], data[name], (*at, name))
            for name in _init_fields(kind)
            if name in data
        }
        return kind(**given)
    return data


def _scalar(kind: Any, data: Any, at: Place) -> Any:
    name, fits = _SCALARS[kind]
    value: Any = data
    if kind is int and isinstance(value, float) and value.is_integer():
        return int(value)  # 3.0 is an integer to JSON Schema too
    if not isinstance(value, fits) or (kind is not bool and isinstance(value, bool)):
        raise PlainError(at, f"{_shown(value)} is not of type {name!r}")
    return float(typing.cast(float, value)) if kind is float else value


def _shown(data: Any) -> str:
    """``data`` as jsonschema quotes it, cut short: a whole cell may be where a word belongs."""
    text = repr(data)
    return text if len(text) <= 80 else text[:77] + "..."


def _member(members: list[Enum], data: Any, at: Place) -> Enum:
    """The member whose value ``data`` is; ``PlainError`` naming them all if none is."""
    found = next((m for m in members if type(data) is str and m.value == data), None)
    if found is None:
        raise PlainError(at, f"{_shown(data)} is not one of {[m.value for m in members]!r}")
    return found


def _typed_as(kind: type[Any], data: Any, at: Place) -> Any:
    if not isinstance(data, kind):
        shape = "array" if kind is list else "object"
        raise PlainError(at, f"{_shown(data)} is not of type {shape!r}")
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


@cache
def _required(kind: type) -> tuple[str, ...]:
    """The fields of ``kind`` with no default: a document must give them."""
    none = dataclasses.MISSING
    return tuple(
        f.name
        for f in dataclasses.fields(kind)
        if f.init and f.default is none and f.default_factory is none
    )
