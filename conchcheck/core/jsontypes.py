"""The types of JSON-shaped values: what ``json.loads`` gives back and ``json.dumps`` takes.

``JsonObject`` is a JSON object whose values are checked before use: reading a field gives a
``JsonValue``, which ``isinstance`` narrows (a string, a list, an object, ...).
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""Any JSON value."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object."""
