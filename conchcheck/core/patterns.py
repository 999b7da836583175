"""A schema's ``pattern`` checked in time linear in the argument, whatever the pattern.

jsonschema checks ``pattern`` and ``patternProperties`` with Python's backtracking ``re``, so
a schema's ``^(a+)+$`` against 30 characters of a model's argument takes minutes, and a
hostile tool or model stalls the reader. Here patterns run on RE2 (google-re2), whose
matching is linear in the text. A pattern RE2 can't run (a backreference, a lookaround: legal
in ECMA-262, rare in tool schemas) is not checked at all, so it never refuses a call: the
same rule as for a schema jsonschema can't use (``problems.check``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import re2  # type: ignore[import-untyped]
from jsonschema import ValidationError

from conchcheck.core.excerpt import excerpt

Keyword = Callable[[Any, Any, Any, Mapping[str, Any]], Iterator[ValidationError]]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every pattern it can't parse on stderr
_OPTIONS.max_mem = 8 << 20  # a pattern whose automaton needs more is not checked


@functools.lru_cache(maxsize=512)
def matcher(pattern: str) -> Callable[[str], bool] | None:
    """A linear-time search for ``pattern``; None when RE2 can't run it."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except (re2.error, TypeError, ValueError):
        return None

    def search(text: str) -> bool:
        return compiled.search(text) is not None

    return search


def matches(pattern: str, text: str) -> bool:
    """Whether ``text`` matches; a pattern that can't be run matches everything."""
    found = matcher(pattern)
    return True if found is None else found(text)


def pattern(
    validator: Any, patrn: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's ``pattern`` keyword, on RE2."""
    text = validator.is_type(instance, "string") and isinstance(patrn, str)
    if text and not matches(patrn, instance):
        yield ValidationError(f"{excerpt(instance, 200)!r} does not match {patrn!r}")


def pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's ``patternProperties`` keyword, on RE2."""
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for patrn, subschema in patterns.items():
        found = matcher(patrn)
        if found is None:
            continue  # not checked: which keys it names is unknown
        for key, value in instance.items():
            if found(key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's ``additionalProperties`` keyword, its ``patternProperties`` on RE2."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties") or {}
    patterns = [p for p in schema.get("patternProperties") or {} if isinstance(p, str)]
    extras = [
        key
        for key in instance
        if key not in properties and not any(matches(p, key) for p in patterns)
    ]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        # jsonschema's own wording, so messages read the same as before.
        listed = ", ".join(repr(extra) for extra in sorted(extras, key=str))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(p) for p in sorted(patterns))
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


KEYWORDS: dict[str, Keyword] = {
    "pattern": pattern,
    "patternProperties": pattern_properties,
    "additionalProperties": additional_properties,
}
"""The keywords a validator class is extended with (``jsonschema.validators.extend``)."""
