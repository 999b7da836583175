"""Matchers and judging: every kind passes and fails with the exact evidence a report quotes."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.matching import (
    MISSING,
    ArgumentMatcher,
    Expectation,
    ExpectedCall,
    Judgement,
    Matcher,
    MatcherKind,
    as_matcher,
    judge,
    judge_answer,
    match,
)


@pytest.mark.parametrize(
    ("spec", "matcher"),
    [
        pytest.param("paris", Matcher(MatcherKind.EQUALS, "paris"), id="bare-scalar-equals"),
        pytest.param(None, Matcher(MatcherKind.EQUALS, None), id="bare-null-equals"),
        pytest.param(
            {"equals": [1, [2]]}, Matcher(MatcherKind.EQUALS, (1, (2,))), id="list-frozen"
        ),
        pytest.param(
            {"equals_ci": "paris"}, Matcher(MatcherKind.EQUALS_CI, "paris"), id="equals-ci"
        ),
        pytest.param({"contains": "x"}, Matcher(MatcherKind.CONTAINS, "x"), id="contains"),
        pytest.param({"one_of": ["c", 1]}, Matcher(MatcherKind.ONE_OF, ("c", 1)), id="one-of"),
        pytest.param({"number": 3}, Matcher(MatcherKind.NUMBER, 3, 0), id="number-short"),
        pytest.param(
            {"number": {"value": 3, "tolerance": 0.5}},
            Matcher(MatcherKind.NUMBER, 3, 0.5),
            id="number-tolerance",
        ),
        pytest.param(
            {"number": {"value": 3}}, Matcher(MatcherKind.NUMBER, 3, 0), id="number-exact"
        ),
        pytest.param({"any": True}, Matcher(MatcherKind.ANY), id="any"),
        pytest.param({"absent": True}, Matcher(MatcherKind.ABSENT), id="absent"),
        pytest.param(
            {"items_contain": ["a"]}, Matcher(MatcherKind.ITEMS_CONTAIN, ("a",)), id="items-contain"
        ),
        pytest.param(
            {"fields": {"city": "x", "n": {"any": True}}},
            Matcher(
                MatcherKind.FIELDS,
                (("city", Matcher(MatcherKind.EQUALS, "x")), ("n", Matcher(MatcherKind.ANY))),
            ),
            id="fields",
        ),
    ],
)
def test_as_matcher(spec: Any, matcher: Matcher) -> None:
    assert as_matcher(spec) == matcher


PARIS = {"equals_ci": "paris"}
UNIT = {"one_of": ["c", "celsius"]}
ADDRESS = {"fields": {"street": {"contains": "rose"}, "city": {"equals_ci": "lisbon"}}}


@pytest.mark.parametrize(
    ("value", "spec", "reason"),
    [
        pytest.param("celsius", "celsius", None, id="equals"),
        pytest.param("kelvin", "celsius", 'wanted "celsius", got "kelvin"', id="equals-differs"),
        pytest.param("Celsius", "celsius", 'wanted "celsius", got "Celsius"', id="equals-is-exact"),
        pytest.param(1, True, "wanted true, got 1", id="equals-true-is-not-1"),
        pytest.param(3.0, 3, None, id="equals-3-is-3.0"),
        pytest.param(["a", 1], {"equals": ["a", 1]}, None, id="equals-list"),
        pytest.param({"a": [1]}, {"equals": {"a": [1]}}, None, id="equals-object"),
        pytest.param(
            {"a": 1},
            {"equals": {"a": 1, "b": 2}},
            'wanted {"a": 1, "b": 2}, got {"a": 1}',
            id="equals-object-differs",
        ),
        pytest.param(MISSING, "paris", 'wanted "paris", but it was not sent', id="equals-missing"),
        pytest.param(" PARIS ", PARIS, None, id="equals-ci"),
        pytest.param(
            "Rome", PARIS, 'wanted "paris" in any case, got "Rome"', id="equals-ci-differs"
        ),
        pytest.param(3, PARIS, 'wanted "paris" in any case, got 3', id="equals-ci-not-text"),
        pytest.param("My dog is BISCUIT.", {"contains": "biscuit"}, None, id="contains"),
        pytest.param(
            "a cat",
            {"contains": "biscuit"},
            'wanted text containing "biscuit", got "a cat"',
            id="contains-absent",
        ),
        pytest.param(
            ["biscuit"],
            {"contains": "biscuit"},
            'wanted text containing "biscuit", got ["biscuit"]',
            id="contains-not-text",
        ),
        pytest.param("C", UNIT, None, id="one-of-any-case"),
        pytest.param(
            "kelvin", UNIT, 'wanted one of "c", "celsius", got "kelvin"', id="one-of-none-fits"
        ),
        pytest.param(2, {"one_of": [1, 2]}, None, id="one-of-numbers"),
        pytest.param(15, {"number": {"value": 15}}, None, id="number"),
        pytest.param("15", {"number": 15}, None, id="number-from-text"),
        pytest.param(15.0, {"number": 15}, None, id="number-float"),
        pytest.param(14, {"number": 15}, "wanted 15, got 14", id="number-differs"),
        pytest.param(
            2.9, {"number": {"value": 3, "tolerance": 0.2}}, None, id="number-within-tolerance"
        ),
        pytest.param(
            2.5,
            {"number": {"value": 3, "tolerance": 0.2}},
            "wanted 3 ± 0.2, got 2.5",
            id="number-outside-tolerance",
        ),
        pytest.param(True, {"number": 1}, "wanted 1, got true", id="number-true-is-not-1"),
        pytest.param("fifteen", {"number": 15}, 'wanted 15, got "fifteen"', id="number-words"),
        pytest.param(None, {"any": True}, None, id="any-null"),
        pytest.param(
            MISSING, {"any": True}, "wanted a value, but it was not sent", id="any-missing"
        ),
        pytest.param(MISSING, {"absent": True}, None, id="absent"),
        pytest.param("c", {"absent": True}, 'wanted it left out, got "c"', id="absent-sent"),
        pytest.param(
            ["ana", "BEN ", "Cy"], {"items_contain": ["Ana", "Ben"]}, None, id="items-contain"
        ),
        pytest.param(
            ["Ana"],
            {"items_contain": ["Ana", "Ben"]},
            'wanted a list containing "Ana", "Ben", got ["Ana"] (no "Ben")',
            id="items-contain-lacking",
        ),
        pytest.param(
            "Ana",
            {"items_contain": ["Ana"]},
            'wanted a list containing "Ana", got "Ana"',
            id="items-contain-not-a-list",
        ),
        pytest.param(
            {"street": "12 Rose St", "city": "Lisbon", "zip": "1"}, ADDRESS, None, id="fields"
        ),
        pytest.param(
            {"street": "Rose St", "city": "Porto"},
            ADDRESS,
            'city: wanted "lisbon" in any case, got "Porto"',
            id="fields-differ",
        ),
        pytest.param(
            {"city": "Lisbon"},
            ADDRESS,
            'street: wanted text containing "rose", but it was not sent',
            id="fields-missing",
        ),
        pytest.param(
            "Lisbon",
            ADDRESS,
            'wanted an object with street, city, got "Lisbon"',
            id="fields-not-an-object",
        ),
        pytest.param("x" * 100, "y", f'wanted "y", got "{"x" * 58}…', id="long-value-cut"),
    ],
)
def test_match(value: Any, spec: Any, reason: str | None) -> None:
    assert match(value, as_matcher(spec)) == reason


def test_judge_answer() -> None:
    code = as_matcher({"contains": "PELICAN-42"})
    assert judge_answer("The code word is pelican-42.", code) is None
    assert (
        judge_answer("I don't know.", code)
        == 'the answer: wanted text containing "PELICAN-42", got "I don\'t know."'
    )


def _call(tool: str, **arguments: Any) -> ExpectedCall:
    return ExpectedCall(
        tool, tuple(ArgumentMatcher(k, as_matcher(v)) for k, v in arguments.items())
    )


WEATHER = Expectation((_call("get_weather", city=PARIS, unit=UNIT),))
TWO_CITIES = Expectation(
    (_call("get_weather", city=PARIS), _call("get_weather", city={"equals_ci": "tokyo"})),
    parallel=True,
)
ANY_AND_PARIS = Expectation(
    (_call("get_weather", city={"any": True}), _call("get_weather", city=PARIS))
)
NO_CALL = Expectation(no_call=True)
OK = ("get_weather", {"city": "Paris", "unit": "celsius"})


@pytest.mark.parametrize(
    ("calls", "expect", "judgement", "detail"),
    [
        pytest.param([OK], WEATHER, Judgement.PASS, "called get_weather as expected", id="pass"),
        pytest.param(
            [("get_weather", {"city": "Paris", "unit": "kelvin"})],
            WEATHER,
            Judgement.WRONG_ARGUMENTS,
            'unit: wanted one of "c", "celsius", got "kelvin"',
            id="wrong-argument",
        ),
        pytest.param(
            [("get_weather", {"city": "Rome"})],
            WEATHER,
            Judgement.WRONG_ARGUMENTS,
            'city: wanted "paris" in any case, got "Rome"; '
            'unit: wanted one of "c", "celsius", but it was not sent',
            id="every-wrong-argument",
        ),
        pytest.param(
            [("get_weather", [])],
            WEATHER,
            Judgement.WRONG_ARGUMENTS,
            'city: wanted "paris" in any case, but it was not sent; '
            'unit: wanted one of "c", "celsius", but it was not sent',
            id="arguments-not-an-object",
        ),
        pytest.param(
            [("remember", {"fact": "x"})],
            WEATHER,
            Judgement.WRONG_TOOL,
            "expected get_weather; got remember",
            id="wrong-tool",
        ),
        pytest.param(
            [], WEATHER, Judgement.NO_CALL, "expected get_weather; got no call", id="no-call"
        ),
        pytest.param(
            [("remember", {})],
            NO_CALL,
            Judgement.UNWANTED_CALL,
            "expected no call; got remember",
            id="unwanted-call",
        ),
        pytest.param([], NO_CALL, Judgement.PASS, "no call, as expected", id="no-call-wanted"),
        pytest.param(
            [],
            Expectation(),
            Judgement.PASS,
            "no call, as expected",
            id="empty-calls-means-no-call",
        ),
        pytest.param(
            [OK, ("remember", {})],
            WEATHER,
            Judgement.WRONG_TOOL,
            "expected get_weather; got get_weather, remember (an extra call to remember)",
            id="extra-call",
        ),
        pytest.param(
            [("remember", {}), OK, ("get_time", {})],
            WEATHER,
            Judgement.WRONG_TOOL,
            "expected get_weather; got remember, get_weather, get_time (extra calls to remember, get_time)",
            id="extra-calls",
        ),
        pytest.param(
            [OK, OK],
            WEATHER,
            Judgement.PASS,
            "called get_weather as expected (a repeated get_weather call with fitting arguments was tolerated)",
            id="repeat-tolerated",
        ),
        pytest.param(
            [OK, ("get_weather", {"city": "Rome", "unit": "c"})],
            WEATHER,
            Judgement.WRONG_TOOL,
            "expected get_weather; got get_weather, get_weather (an extra call to get_weather)",
            id="extra-call-same-tool-other-arguments",
        ),
        pytest.param(
            [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "paris"})],
            TWO_CITIES,
            Judgement.PASS,
            "called get_weather, get_weather as expected",
            id="two-calls-any-order",
        ),
        pytest.param(
            [("get_weather", {"city": "Paris"})],
            TWO_CITIES,
            Judgement.WRONG_TOOL,
            "expected get_weather, get_weather; got get_weather",
            id="one-of-two-calls",
        ),
        pytest.param(
            [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
            TWO_CITIES,
            Judgement.WRONG_ARGUMENTS,
            'get_weather: city: wanted "tokyo" in any case, got "Rome"',
            id="two-calls-one-wrong",
        ),
        pytest.param(
            [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
            ANY_AND_PARIS,
            Judgement.PASS,
            "called get_weather, get_weather as expected",
            id="assignment-not-greedy",
        ),
    ],
)
def test_judge(
    calls: list[tuple[str, Any]], expect: Expectation, judgement: Judgement, detail: str
) -> None:
    assert judge(calls, expect) == (judgement, detail)


def test_judgement_values_are_snake_case() -> None:
    assert [j.value for j in Judgement] == [
        "pass",
        "wrong_arguments",
        "wrong_tool",
        "no_call",
        "unwanted_call",
    ]
