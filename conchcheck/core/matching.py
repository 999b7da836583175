"""Judging a turn's tool calls, and a final answer, against what a matrix prompt expects.

Pure: no I/O. Every judgement comes with one line of evidence a report can quote as it is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any


class MatcherKind(str, Enum):
    """How an expected value is compared with what the model sent."""

    EQUALS = "equals"
    EQUALS_CI = "equals_ci"
    CONTAINS = "contains"
    ONE_OF = "one_of"
    NUMBER = "number"
    ANY = "any"
    ABSENT = "absent"
    ITEMS_CONTAIN = "items_contain"
    FIELDS = "fields"


@dataclass(frozen=True, slots=True)
class Matcher:
    """One matcher, as a matrix writes it (``{one_of: [c, celsius]}``)."""

    kind: MatcherKind
    value: Any = None
    """equals: the value; equals_ci/contains: the text; number: the number; one_of and
    items_contain: a tuple of values; fields: a tuple of (field, Matcher) pairs."""
    tolerance: float = 0
    """number only: how far from ``value`` a number may be."""


@dataclass(frozen=True, slots=True)
class ArgumentMatcher:
    """What one argument of an expected call must be."""

    name: str
    matcher: Matcher


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A call the prompt wants: the tool's name and matchers for the arguments it judges."""

    tool: str
    arguments: tuple[ArgumentMatcher, ...] = ()


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a correct turn is: these calls in any order, or no call at all."""

    calls: tuple[ExpectedCall, ...] = ()
    no_call: bool = False
    parallel: bool = False
    """All expected calls must come in one turn (the caller passes that turn's calls)."""

    @property
    def wants_call(self) -> bool:
        """Whether any call is wanted."""
        return bool(self.calls) and not self.no_call


class Judgement(str, Enum):
    """The outcome of one turn against its expectation."""

    PASS = "pass"
    WRONG_ARGUMENTS = "wrong_arguments"
    WRONG_TOOL = "wrong_tool"
    NO_CALL = "no_call"
    UNWANTED_CALL = "unwanted_call"


class Missing(Enum):
    """The type of ``MISSING``."""

    MISSING = "missing"


MISSING = Missing.MISSING
"""Stands for an argument the call did not send."""

SHOWN_CHARS = 60
"""Values longer than this are cut in evidence."""


def as_matcher(spec: Any) -> Matcher:
    """The ``Matcher`` a matrix spells as ``spec`` (already checked by the matrix schema).

    A plain value means ``equals``; otherwise ``spec`` is a mapping of one matcher kind.
    """
    if not isinstance(spec, Mapping):
        return Matcher(MatcherKind.EQUALS, _freeze(spec))
    ((key, value),) = spec.items()
    kind = MatcherKind(key)
    if kind is MatcherKind.NUMBER and isinstance(value, Mapping):
        return Matcher(kind, value["value"], value.get("tolerance", 0))
    if kind in (MatcherKind.ONE_OF, MatcherKind.ITEMS_CONTAIN):
        return Matcher(kind, tuple(_freeze(v) for v in value))
    if kind is MatcherKind.FIELDS:
        return Matcher(kind, tuple((k, as_matcher(v)) for k, v in value.items()))
    if kind in (MatcherKind.ANY, MatcherKind.ABSENT):
        return Matcher(kind)
    return Matcher(kind, _freeze(value))


def match(value: Any, matcher: Matcher) -> str | None:
    """None when ``value`` (or ``MISSING``) fits ``matcher``, else the reason it doesn't."""
    return _explain(value, matcher, "")


def judge_answer(text: str, matcher: Matcher) -> str | None:
    """None when a follow-up's final answer fits ``matcher``, else the reason it doesn't."""
    return _explain(text, matcher, "the answer")


def judge(
    calls: Sequence[tuple[str, Mapping[str, Any]]], expect: Expectation
) -> tuple[Judgement, str]:
    """Judge one turn's calls (tool name, normalised arguments) against ``expect``.

    Expected calls are matched in any order. A call beyond the expected ones is tolerated
    only when it repeats an expected call with arguments that fit as well.
    """
    got = [name for name, _ in calls]
    if not expect.wants_call:
        if calls:
            return Judgement.UNWANTED_CALL, f"expected no call; got {_names(got)}"
        return Judgement.PASS, "no call, as expected"
    wanted = [call.tool for call in expect.calls]
    if not calls:
        return Judgement.NO_CALL, f"expected {_names(wanted)}; got no call"
    fits = [
        [i for i, (name, args) in enumerate(calls) if name == e.tool and not _failures(e, args)]
        for e in expect.calls
    ]
    pairs = _assign(fits)
    used = set(pairs.values())
    for index, expected in enumerate(expect.calls):
        if index not in pairs:
            spare = [i for i, name in enumerate(got) if name == expected.tool and i not in used]
            if spare:
                pairs[index] = spare[0]
                used.add(spare[0])
    extras = [i for i in range(len(calls)) if i not in used]
    repeats = [
        i
        for i in extras
        if any(got[i] == e.tool and not _failures(e, calls[i][1]) for e in expect.calls)
    ]
    unwanted = [got[i] for i in extras if i not in repeats]
    if len(pairs) < len(expect.calls) or unwanted:
        detail = f"expected {_names(wanted)}; got {_names(got)}"
        if len(pairs) == len(expect.calls):
            extra = "an extra call" if len(unwanted) == 1 else "extra calls"
            detail += f" ({extra} to {_names(unwanted)})"
        return Judgement.WRONG_TOOL, detail
    several = len(expect.calls) > 1
    failures = [
        f"{expected.tool}: {failure}" if several else failure
        for index, expected in enumerate(expect.calls)
        for failure in _failures(expected, calls[pairs[index]][1])
    ]
    if failures:
        return Judgement.WRONG_ARGUMENTS, "; ".join(failures)
    detail = f"called {_names(wanted)} as expected"
    if repeats:
        again = _names([got[i] for i in repeats])
        detail += f" (a repeated {again} call with fitting arguments was tolerated)"
    return Judgement.PASS, detail


def _failures(expected: ExpectedCall, arguments: Any) -> list[str]:
    args = arguments if isinstance(arguments, Mapping) else {}
    reasons = (_explain(args.get(a.name, MISSING), a.matcher, a.name) for a in expected.arguments)
    return [reason for reason in reasons if reason is not None]


def _assign(fits: list[list[int]]) -> dict[int, int]:
    """The most expected calls (index → call index) that fitting calls can cover at once."""
    owner: dict[int, int] = {}

    def augment(expected: int, seen: set[int]) -> bool:
        for call in fits[expected]:
            if call not in seen:
                seen.add(call)
                if call not in owner or augment(owner[call], seen):
                    owner[call] = expected
                    return True
        return False

    for expected in range(len(fits)):
        augment(expected, set())
    return {expected: call for call, expected in owner.items()}


def _explain(value: Any, matcher: Matcher, where: str) -> str | None:
    prefix = f"{where}: " if where else ""
    if matcher.kind is MatcherKind.ABSENT:
        return None if value is MISSING else f"{prefix}wanted it left out, got {_show(value)}"
    if value is MISSING:
        return f"{prefix}wanted {_wanted(matcher)}, but it was not sent"
    if matcher.kind is MatcherKind.FIELDS and isinstance(value, Mapping):
        for field, inner in matcher.value:
            reason = _explain(
                value.get(field, MISSING), inner, f"{where}.{field}" if where else field
            )
            if reason is not None:
                return reason
        return None
    if _fits(value, matcher):
        return None
    got = _show(value)
    if matcher.kind is MatcherKind.ITEMS_CONTAIN and isinstance(value, (list, tuple)):
        lacking = [w for w in matcher.value if not any(_same_ci(item, w) for item in value)]
        got += f" (no {_listing(lacking)})"
    return f"{prefix}wanted {_wanted(matcher)}, got {got}"


def _fits(value: Any, matcher: Matcher) -> bool:
    want = matcher.value
    match matcher.kind:
        case MatcherKind.EQUALS:
            return _same(value, want)
        case MatcherKind.EQUALS_CI:
            return isinstance(value, str) and _fold(value) == _fold(want)
        case MatcherKind.CONTAINS:
            return isinstance(value, str) and _fold(want) in value.casefold()
        case MatcherKind.ONE_OF:
            return any(_same_ci(value, option) for option in want)
        case MatcherKind.NUMBER:
            number = _number(value)
            slack = matcher.tolerance + 1e-9 * max(1.0, abs(want))
            return number is not None and abs(number - want) <= slack
        case MatcherKind.ITEMS_CONTAIN:
            return isinstance(value, (list, tuple)) and all(
                any(_same_ci(item, w) for item in value) for w in want
            )
        case MatcherKind.FIELDS:
            return False  # not an object; _explain walks the fields of one
        case _:
            return True  # ANY (ABSENT is settled before)


def _wanted(matcher: Matcher) -> str:
    want = matcher.value
    match matcher.kind:
        case MatcherKind.EQUALS:
            return _show(want)
        case MatcherKind.EQUALS_CI:
            return f"{_show(want)} in any case"
        case MatcherKind.CONTAINS:
            return f"text containing {_show(want)}"
        case MatcherKind.ONE_OF:
            return f"one of {_listing(want)}"
        case MatcherKind.NUMBER:
            return _show(want) + (f" ± {_show(matcher.tolerance)}" if matcher.tolerance else "")
        case MatcherKind.ITEMS_CONTAIN:
            return f"a list containing {_listing(want)}"
        case MatcherKind.FIELDS:
            return f"an object with {_listing([field for field, _ in want], quote=False)}"
        case _:
            return "a value"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, lists and tuples alike."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _same_ci(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return _fold(a) == _fold(b)
    return _same(a, b)


def _fold(text: str) -> str:
    return text.strip().casefold()


_NUMERIC = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMERIC.fullmatch(value.strip()):
        return float(value)
    return None


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _listing(values: Sequence[Any], *, quote: bool = True) -> str:
    return ", ".join(_show(v) if quote else str(v) for v in values)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)
