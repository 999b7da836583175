"""The verdict from cells: dialect choice, mode choice, rates, findings."""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.results import Cell, CellMode, Mode, NativeFacts, Outcome, Rates, Stage
from conchcheck.verdict import chain_for, decide, decide_dialect, decide_mode
from conchcheck.wire.exchange import WireErrorKind


def dialect_cell(
    case: str, dialect: str, outcome: Outcome, kind: str | None = None, keyword: str | None = None
) -> Cell:
    refusal = Refusal(RefusalKind(kind), 400, f"{case} refused", keyword=keyword) if kind else None
    return Cell(f"dialect/{dialect}/{case}", Stage.DIALECT, case, outcome, dialect=dialect,
                refusal=refusal)  # fmt: skip


def prompt_cell(
    mode: str,
    n: int,
    outcome: Outcome,
    *,
    kind: str | None = None,
    repairs: tuple[str, ...] = (),
    calls: int = 0,
) -> Cell:
    return Cell(
        f"{mode}/p{n}",
        Stage(mode),
        f"p{n}",
        outcome,
        mode=CellMode(mode),
        refusal=Refusal(RefusalKind(kind), 400, "refused") if kind else None,
        repairs=repairs,
        facts=NativeFacts(calls, False),
    )


A, R = Outcome.ACCEPTED, Outcome.REFUSED


@pytest.mark.parametrize(
    ("family", "chain"),
    [
        pytest.param(
            "permissive", ("permissive", "anthropic", "gemini", "strict"), id="permissive-family"
        ),
        pytest.param(
            "gemini", ("permissive", "gemini", "anthropic", "strict"), id="family-dialect-second"
        ),
        pytest.param(
            "strict", ("permissive", "strict", "anthropic", "gemini"), id="strict-family-second"
        ),
    ],
)
def test_chain(family: str, chain: tuple[str, ...]) -> None:
    assert chain_for(family) == chain


@pytest.mark.parametrize(
    ("cells", "family", "dialect", "carriers"),
    [
        pytest.param(
            [dialect_cell("a", "permissive", A), dialect_cell("b", "permissive", A)],
            "permissive",
            "permissive",
            {},
            id="accepts-everything",
        ),
        pytest.param(
            [
                dialect_cell("a", "permissive", A),
                dialect_cell("b", "permissive", R, "schema", "const"),
                dialect_cell("a", "gemini", A),
                dialect_cell("b", "gemini", A),
            ],
            "gemini",
            "gemini",
            {},
            id="gemini-style-refusals-need-the-gemini-dialect",
        ),
        pytest.param(
            [
                dialect_cell("a", "permissive", A),
                dialect_cell("b", "permissive", R, "context_length"),
                dialect_cell("a", "strict", A),
                dialect_cell("b", "strict", R, "context_length"),
            ],
            "permissive",
            "permissive",
            {},
            id="a-limit-is-not-a-schema-refusal",
        ),
        pytest.param(
            # llama.cpp with a tool-use template refuses type lists in every dialect that keeps them.
            [
                dialect_cell("a", "permissive", A),
                dialect_cell("typelist", "permissive", R, "schema"),
                dialect_cell("a", "strict", A),
                dialect_cell("typelist", "strict", A),
            ],
            "permissive",
            "strict",
            {},
            id="only-strict-carries-everything",
        ),
        pytest.param(
            [
                dialect_cell("a", "permissive", R, "schema"),
                dialect_cell("a", "gemini", R, "schema"),
                dialect_cell("a", "strict", R, "schema"),
                dialect_cell("a", "anthropic", A),
            ],
            "gemini",
            "anthropic",
            {},
            id="a-dialect-outside-the-family-chain-that-carries-everything-wins",
        ),
        pytest.param(
            [dialect_cell("a", "permissive", A), dialect_cell("bad", "permissive", R, "schema")],
            "permissive",
            "permissive",
            {},
            id="an-invalid-case-refused-does-not-count",
        ),
        pytest.param(
            [dialect_cell("a", "permissive", R, "tools"), dialect_cell("a", "strict", R, "tools")],
            "permissive",
            None,
            {"a": ()},
            id="an-endpoint-without-tools-carries-no-dialect",
        ),
    ],
)
def test_decide_dialect(
    cells: list[Cell], family: str, dialect: str | None, carriers: dict[str, Any]
) -> None:
    verdict = decide_dialect(cells, family, invalid=("bad",))
    assert (verdict.dialect, dict(verdict.carriers)) == (dialect, carriers)


def test_refusals_and_limits_are_kept_with_their_words() -> None:
    cells = [
        dialect_cell("b", "permissive", R, "schema", "const"),
        dialect_cell("many", "permissive", R, "context_length"),
    ]
    verdict = decide_dialect(cells, "permissive")
    assert [(r.case, r.kind, r.message, r.keyword) for r in verdict.refused] == [
        ("b", "schema", "b refused", "const")
    ]
    assert [(r.case, r.kind) for r in verdict.limits] == [("many", "context_length")]


def test_invalid_case_accepted_is_a_finding() -> None:
    verdict = decide(
        [dialect_cell("bad", "permissive", A)], family="permissive", invalid_cases=("bad",)
    )
    assert verdict.findings == ("The deliberately invalid schema case bad was accepted.",)


def r(
    total: int, passed: int, clean: int | None = None, refused: int = 0, no_call: int = 0
) -> Rates:
    return Rates(total, passed, passed if clean is None else clean, refused, no_call)


@pytest.mark.parametrize(
    ("native", "words", "mode", "reason"),
    [
        pytest.param(
            r(10, 8),
            r(10, 6),
            Mode.NATIVE,
            "Native calling passed: native 8/10, words 6/10 (threshold 0.5).",
            id="native-passes",
        ),
        pytest.param(
            r(10, 6),
            r(10, 7),
            Mode.NATIVE,
            "Native calling passed: native 6/10, words 7/10 (threshold 0.5).",
            id="native-slightly-worse-still-native",
        ),
        pytest.param(
            r(10, 6),
            r(10, 9),
            Mode.WORDS,
            "Tools in words passed and native calling was clearly worse: native 6/10, words 9/10 (threshold 0.5).",
            id="native-clearly-worse",
        ),
        pytest.param(
            r(10, 0, refused=10),
            r(10, 7),
            Mode.WORDS,
            "Tools in words passed and native tools were refused: native 0/10, words 7/10 (threshold 0.5).",
            id="tools-refused",
        ),
        pytest.param(
            r(10, 0, no_call=10),
            r(10, 5),
            Mode.WORDS,
            "Tools in words passed and native calling never passed: native 0/10, words 5/10 (threshold 0.5).",
            id="tools-ignored",
        ),
        pytest.param(
            r(10, 3),
            r(10, 6),
            Mode.WORDS,
            "Tools in words passed and native calling fell below the threshold: native 3/10, words 6/10 (threshold 0.5).",
            id="native-below-threshold",
        ),
        pytest.param(
            r(10, 1),
            r(10, 2),
            Mode.NONE,
            "Neither mode reached the threshold 0.5: native 1/10, words 2/10.",
            id="cannot-call",
        ),
        pytest.param(
            r(0, 0),
            r(0, 0),
            Mode.NONE,
            "Neither mode reached the threshold 0.5: native 0/0, words 0/0.",
            id="nothing-ran",
        ),
    ],
)
def test_decide_mode(native: Rates, words: Rates, mode: Mode, reason: str) -> None:
    assert decide_mode(native, words, 0.5) == (mode, reason)


def test_rates_repairs_and_catalogue_disagreements() -> None:
    cells = [
        prompt_cell("native", 1, Outcome.PASS, calls=1),
        prompt_cell("native", 2, Outcome.PASS_AFTER_REPAIR, repairs=("trailing_comma",), calls=1),
        prompt_cell("native", 3, Outcome.WRONG_ARGUMENTS, calls=1),
        prompt_cell("native", 4, Outcome.SKIPPED),
        prompt_cell("words", 1, Outcome.PASS_AFTER_REPAIR, repairs=("single_quotes",)),
    ]
    verdict = decide(cells, family="permissive", tools_declared=False)
    assert (verdict.native.total, verdict.native.passed, verdict.native.clean) == (3, 2, 1)
    assert (round(verdict.native.rate, 3), round(verdict.native.clean_rate, 3)) == (0.667, 0.333)
    assert verdict.repairs_seen == ("single_quotes", "trailing_comma")
    assert (verdict.tools_observed, verdict.findings) == (
        True,
        ("The catalogue declares no tools, but the model called natively.",),
    )


@pytest.mark.parametrize(
    ("cells", "finding"),
    [
        pytest.param(
            [prompt_cell("native", 1, Outcome.REFUSED, kind="tools")],
            "The catalogue declares tools, but they were refused.",
            id="declared-but-refused",
        ),
        pytest.param(
            [prompt_cell("native", 1, Outcome.NO_CALL)],
            "The catalogue declares tools, but the model never called natively.",
            id="declared-but-ignored",
        ),
    ],
)
def test_declared_tools_not_observed(cells: list[Cell], finding: str) -> None:
    verdict = decide(cells, family="permissive", tools_declared=True)
    assert (verdict.tools_observed, verdict.findings) == (False, (finding,))


def test_cell_labels() -> None:
    assert prompt_cell("native", 1, Outcome.REFUSED, kind="schema").label == "refused:schema"
    assert (
        Cell("x", Stage.NATIVE, "x", Outcome.ERROR, error_kind=WireErrorKind.TIMEOUT).label
        == "error:timeout"
    )
    assert prompt_cell("native", 1, Outcome.PASS).label == "pass"


DIALECTS = ("permissive", "anthropic", "gemini", "strict")
E = Outcome.ERROR


def everywhere(
    case: str, outcome: Outcome = R, kind: str | None = "schema", **by: Any
) -> list[Cell]:
    """``case`` in every dialect: ``outcome`` and ``kind``, or per dialect ``(outcome, kind,
    keyword)`` in ``by``."""
    cells = []
    for dialect in DIALECTS:
        got, what, keyword = by.get(dialect, (outcome, kind, None))
        cells.append(dialect_cell(case, dialect, got, what if got is R else None, keyword))
    return cells


@pytest.mark.parametrize(
    ("odd", "dialect", "excepted", "best"),
    [
        pytest.param(everywhere("no-params"), "permissive", ["no-params"], None,
                     id="one-case-refused-everywhere-for-one-reason"),
        pytest.param([*everywhere("no-params"), *everywhere("no-desc")], "permissive",
                     ["no-desc", "no-params"], None, id="two-such-cases-both-excepted"),
        pytest.param(everywhere("no-params", gemini=(R, "schema", "$ref")), None, [],
                     "permissive", id="different-keywords-are-different-reasons"),
        pytest.param(everywhere("no-params", strict=(R, "other", None)), None, [],
                     "permissive", id="different-kinds-are-different-reasons"),
        pytest.param(everywhere("no-params", anthropic=(E, None, None)), None, [], "permissive",
                     id="a-failed-request-is-never-evidence"),
        pytest.param(everywhere("no-params", kind="rate_limit"), None, [], "permissive",
                     id="a-rate-limit-everywhere-says-later-not-except"),
        pytest.param([*everywhere("no-params"), *everywhere("n2", anthropic=(E, None, None))],
                     None, [], "permissive", id="every-uncarried-case-must-qualify"),
    ],
)  # fmt: skip
def test_the_almost_verdict(
    odd: list[Cell], dialect: str | None, excepted: list[str], best: str | None
) -> None:
    carried = [dialect_cell(case, d, A) for case in ("a", "b") for d in DIALECTS]
    verdict = decide_dialect([*carried, *odd], family="permissive")
    assert (verdict.dialect, sorted(r.case for r in verdict.excepted), verdict.best) == (
        dialect,
        excepted,
        best,
    )
    assert all(r.dialect == "permissive" and r.kind is RefusalKind.SCHEMA for r in verdict.excepted)


def test_an_exception_names_its_reason_without_the_tools_position() -> None:
    refusal = Refusal(
        RefusalKind.SCHEMA, 500, "1 validation error", path="tools[19].function.parameters"
    )
    cells = [dialect_cell("a", d, A) for d in DIALECTS] + [
        Cell(f"dialect/{d}/np", Stage.DIALECT, "np", R, dialect=d, refusal=refusal)
        for d in DIALECTS
    ]
    verdict = decide_dialect(cells, family="permissive")
    assert verdict.exceptions == "np (schema: function.parameters)"
