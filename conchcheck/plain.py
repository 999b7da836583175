"""Result values as plain data (dicts, lists, strings, numbers) for JSON output."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum
from typing import Any


def to_plain(value: Any) -> Any:
    """Dataclasses become dicts of their fields, enums their values, tuples lists, paths text."""
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
