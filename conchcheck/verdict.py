"""From cells to a verdict: the dialect a provider accepts, the mode a model calls tools in.

Pure: cells in, a ``Verdict`` out, every part of it traceable to the cells it counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from conchcheck.results import (
    Cell,
    DialectVerdict,
    Mode,
    Outcome,
    Rates,
    Refused,
    Stage,
    Verdict,
)

CLEARLY_WORSE = 0.2
"""How far below words native must fall to count as clearly worse."""


def chain_for(family: str) -> tuple[str, ...]:
    """``permissive`` → the family's dialect → ``strict``, without repeats."""
    return tuple(dict.fromkeys(("permissive", family, "strict")))


def decide_dialect(
    cells: Sequence[Cell], family: str, invalid: Iterable[str] = ()
) -> DialectVerdict:
    """The dialect verdict from the dialect cells (one per case and dialect)."""
    chain = chain_for(family)
    bad = set(invalid)
    by: dict[tuple[str, str], Cell] = {}
    for cell in cells:
        if cell.stage is Stage.DIALECT and cell.dialect is not None:
            by[(cell.case, cell.dialect)] = cell
    cases = list(dict.fromkeys(case for case, _ in by))
    refused: list[Refused] = []
    limits: list[Refused] = []
    for (case, dialect), cell in by.items():
        if cell.outcome is Outcome.REFUSED:
            item = Refused(
                case, dialect, cell.refusal_kind or "other", _message(cell), _keyword(cell)
            )
            (refused if item.kind == "schema" else limits).append(item)
    schema_refused = {(r.case, r.dialect) for r in refused}
    # A schema refusal says the dialect can't carry the case; a tools refusal says the endpoint
    # takes no tools at all, so no dialect carries anything there; other refusals (a window
    # too small for 128 tools) are limits of the endpoint, not of the dialect.
    blocked = schema_refused | {(r.case, r.dialect) for r in limits if r.kind == "tools"}

    def carries(dialect: str) -> bool:
        return all(
            (case, dialect) in by and (case, dialect) not in blocked
            for case in cases
            if case not in bad
        )

    chosen = next((d for d in chain if carries(d)), None)
    unplaced = [
        c for c in cases if c not in bad and (chosen is None or (c, chosen) in schema_refused)
    ]
    carriers = {
        case: tuple(
            d for (c, d), cell in by.items() if c == case and cell.outcome is Outcome.ACCEPTED
        )
        for case in unplaced
    }
    accepted_invalid = tuple(
        c for c in cases if c in bad and any(
            cell.outcome is Outcome.ACCEPTED for (k, _), cell in by.items() if k == c
        )
    )  # fmt: skip
    return DialectVerdict(chosen, chain, tuple(refused), tuple(limits), carriers, accepted_invalid)


def rates(cells: Sequence[Cell], mode: str) -> Rates:
    """The rates of the prompt cells of ``mode`` (``native`` or ``words``)."""
    mine = [c for c in cells if c.stage.value == mode and c.outcome is not Outcome.SKIPPED]
    return Rates(
        total=len(mine),
        passed=sum(c.outcome in (Outcome.PASS, Outcome.PASS_AFTER_REPAIR) for c in mine),
        clean=sum(c.outcome is Outcome.PASS for c in mine),
        refused_tools=sum(c.outcome is Outcome.REFUSED and c.refusal_kind == "tools" for c in mine),
        no_call=sum(c.outcome is Outcome.NO_CALL for c in mine),
    )


def decide_mode(native: Rates, words: Rates, threshold: float) -> tuple[Mode, str]:
    """``native``, ``words`` or ``none``, with the reason in one sentence."""
    shown = f"native {native.passed}/{native.total}, words {words.passed}/{words.total}"
    native_ok = native.total > 0 and native.rate >= threshold
    if native_ok and native.rate >= words.rate - CLEARLY_WORSE:
        return Mode.NATIVE, f"Native calling passed: {shown} (threshold {threshold:g})."
    refused = native.total > 0 and native.refused_tools == native.total
    if words.total > 0 and words.rate >= threshold:
        if refused:
            why = "native tools were refused"
        elif native.passed == 0:
            why = "native calling never passed"
        elif not native_ok:
            why = "native calling fell below the threshold"
        else:
            why = "native calling was clearly worse"
        return Mode.WORDS, f"Tools in words passed and {why}: {shown} (threshold {threshold:g})."
    return Mode.NONE, f"Neither mode reached the threshold {threshold:g}: {shown}."


def decide(
    cells: Sequence[Cell],
    *,
    family: str,
    threshold: float = 0.5,
    invalid_cases: Iterable[str] = (),
    tools_declared: bool | None = None,
) -> Verdict:
    """The whole verdict from a probe's cells."""
    invalid_cases = tuple(invalid_cases)
    dialect = decide_dialect(cells, family, invalid_cases)
    native, words = rates(cells, "native"), rates(cells, "words")
    mode, reason = decide_mode(native, words, threshold)
    repairs = tuple(
        sorted({r for c in cells if c.stage in (Stage.NATIVE, Stage.WORDS) for r in c.repairs})
    )
    # A deliberately invalid case is refused by design: its keyword says nothing of the provider.
    bad = set(invalid_cases)
    keywords = tuple(
        sorted({r.keyword for r in dialect.refused if r.keyword and r.case not in bad})
    )
    observed = _tools_observed(cells)
    findings = []
    if tools_declared is False and observed:
        findings.append("The catalogue declares no tools, but the model called natively.")
    if tools_declared is True and observed is False:
        refused = native.total > 0 and native.refused_tools == native.total
        findings.append(
            "The catalogue declares tools, but they were refused."
            if refused
            else "The catalogue declares tools, but the model never called natively."
        )
    for case in dialect.invalid_accepted:
        findings.append(f"The deliberately invalid schema case {case} was accepted.")
    return Verdict(
        dialect, mode, reason, native, words, repairs, keywords, tools_declared, observed,
        tuple(findings),
    )  # fmt: skip


def _tools_observed(cells: Sequence[Cell]) -> bool | None:
    native = [c for c in cells if c.stage is Stage.NATIVE and c.outcome is not Outcome.SKIPPED]
    if not native:
        return None
    return any(c.extra.get("native_calls", 0) for c in native)


def _message(cell: Cell) -> str:
    refusal = cell.refusal or {}
    return str(refusal.get("message", cell.detail))


def _keyword(cell: Cell) -> str | None:
    keyword = (cell.refusal or {}).get("keyword")
    return keyword if isinstance(keyword, str) else None
