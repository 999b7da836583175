"""From cells to a verdict: the dialect a provider accepts, the mode a model calls tools in.

Pure: cells in, a ``Verdict`` out, every part of it traceable to the cells it counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from conchcheck.advice import routes
from conchcheck.core.confidence import CONFIDENCE, Labels, PromptLabel, label_prompts
from conchcheck.core.dialects import Dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.trials import PERMISSIVENESS, AsWritten, Trial
from conchcheck.costs import tool_costs
from conchcheck.knobs import decide_knobs
from conchcheck.results import (
    CaseRefusal,
    Cell,
    DialectVerdict,
    Leak,
    Mode,
    NativeFacts,
    Outcome,
    Rates,
    Stage,
    StrictMode,
    Verdict,
)
from conchcheck.wire.providers import ApiFamily

CLEARLY_WORSE = 0.2
"""How far below words native must fall to count as clearly worse."""


STRICT_MODE = AsWritten.STRICT_MODE
"""Responses API only: the schemas as sent, with ``strict: true`` on every function tool.
Recorded beside the dialects; it never decides the dialect verdict."""


def exploration_order(family: Dialect) -> tuple[Dialect, ...]:
    """``permissive``, then the family's own dialect, then the rest from most permissive."""
    return tuple(dict.fromkeys((Dialect.PERMISSIVE, Dialect(family), *PERMISSIVENESS)))


def chain_for(family: Dialect) -> tuple[Dialect, ...]:
    """The dialects in the order a probe tries them (``exploration_order``)."""
    return exploration_order(family)


def _carries(cell: Cell | None) -> bool:
    # Accepted, or refused for a limit of the endpoint (a window too small for 128 tools),
    # which no dialect changes. A failed request carries nothing: it proves nothing.
    if cell is None:
        return False
    return cell.outcome is Outcome.ACCEPTED or (
        cell.outcome is Outcome.REFUSED and cell.refusal_kind is RefusalKind.CONTEXT_LENGTH
    )


def _dialect_cells(cells: Iterable[Cell]) -> dict[tuple[str, Trial], Cell]:
    return {
        (c.case, c.dialect): c for c in cells if c.stage is Stage.DIALECT and c.dialect is not None
    }


def carried_by(cells: Iterable[Cell], dialect: Trial, valid: Iterable[str]) -> bool:
    """Whether ``dialect`` was tried on every case of ``valid`` and carried all of them."""
    by = _dialect_cells(cells)
    wanted = list(valid)
    return bool(wanted) and all(_carries(by.get((case, dialect))) for case in wanted)


def decide_dialect(
    cells: Sequence[Cell],
    family: Dialect,
    invalid: Iterable[str] = (),
    valid: Iterable[str] | None = None,
) -> DialectVerdict:
    """The dialect verdict: the most permissive dialect tried on every valid case that carried
    all of them; failed requests are never counted for or against a dialect."""
    chain = chain_for(family)
    bad = set(invalid)
    by = _dialect_cells(cells)
    cases = list(dict.fromkeys(case for case, _ in by))
    good = list(valid) if valid is not None else [c for c in cases if c not in bad]
    refused: list[CaseRefusal] = []
    limits: list[CaseRefusal] = []
    for (case, dialect), cell in by.items():
        if cell.outcome is Outcome.REFUSED:
            item = CaseRefusal(
                case,
                dialect,
                cell.refusal_kind or RefusalKind.OTHER,
                _message(cell),
                _keyword(cell),
                cell.refusal.path if cell.refusal is not None else None,
            )
            (refused if item.kind is RefusalKind.SCHEMA else limits).append(item)
    chosen = next((d for d in PERMISSIVENESS if carried_by(cells, d, good)), None)
    accepted = {d: sum(_carries(by.get((c, d))) for c in good) for d in PERMISSIVENESS}
    best = None
    if chosen is None and any(accepted.values()):
        best = max(PERMISSIVENESS, key=lambda d: (accepted[d], -PERMISSIVENESS.index(d)))
    anchor = chosen or best
    unplaced = [c for c in good if anchor is None or not _carries(by.get((c, anchor)))]
    excepted = _excepted(unplaced, by, best) if best is not None else ()
    if excepted:
        chosen, best = best, None
    carriers = {
        case: tuple(
            d for (c, d), cell in by.items() if c == case and cell.outcome is Outcome.ACCEPTED
        )
        for case in unplaced
    }
    schema_ruled_out = {r.dialect for r in refused if r.case not in bad}
    unsettled = (
        tuple(
            d for d in PERMISSIVENESS[: PERMISSIVENESS.index(chosen)] if d not in schema_ruled_out
        )
        if chosen is not None
        else ()
    )
    accepted_invalid = tuple(
        c
        for c in cases
        if c in bad
        and any(cell.outcome is Outcome.ACCEPTED for (k, _), cell in by.items() if k == c)
    )
    return DialectVerdict(
        chosen,
        chain,
        tuple(refused),
        tuple(limits),
        carriers,
        accepted_invalid,
        best,
        unsettled,
        excepted,
    )


EXCEPTABLE = frozenset({RefusalKind.SCHEMA, RefusalKind.OTHER})
"""Refusals that speak of the case itself: a rate limit says "later", a refusal of the endpoint
(no tools, auth, quota, no such model) says nothing of one case."""


def _excepted(
    unplaced: Sequence[str], by: dict[tuple[str, Trial], Cell], anchor: Dialect
) -> tuple[CaseRefusal, ...]:
    """The verdict's exceptions, or none: every case ``anchor`` did not carry was refused in
    every dialect the stage tried, each for one reason (llama-cpp-python's 500 for a tool
    without ``parameters``, vector llamacpp-python-500-validation-error-names-the-tool-field).
    A case with a failed request, an acceptance or two reasons makes no exception."""
    tried = {d for _, d in by if d in PERMISSIVENESS}
    found: list[CaseRefusal] = []
    for case in unplaced:
        cells = {d: cell for (c, d), cell in by.items() if c == case and d in PERMISSIVENESS}
        if set(cells) != tried or anchor not in cells:
            return ()
        if any(c.outcome is not Outcome.REFUSED or c.refusal is None for c in cells.values()):
            return ()
        reasons = {_reason(c) for c in cells.values()}
        if len(reasons) != 1 or next(iter(reasons))[0] not in EXCEPTABLE:
            return ()
        cell = cells[anchor]
        refusal = cell.refusal
        assert refusal is not None
        found.append(
            CaseRefusal(case, anchor, refusal.kind, refusal.message, refusal.keyword, refusal.path)
        )
    return tuple(found)


def _reason(cell: Cell) -> tuple[RefusalKind, str | None, str | None, str | None]:
    """What a refusal says of its case: the kind, the keyword, the place without the tool's
    position in its request, and for an unclassified refusal its words."""
    refusal = cell.refusal
    assert refusal is not None
    place = re.sub(r"(?<=tools)(?:\[\d+\]|\.\d+)", "", refusal.path or "") or None
    words = refusal.message if refusal.kind is RefusalKind.OTHER else None
    return refusal.kind, refusal.keyword, place, words


def rates(cells: Sequence[Cell], stage: Stage) -> Rates:
    """The rates of the prompt cells of ``stage`` (``NATIVE`` or ``WORDS``)."""
    ran = [c for c in cells if c.stage is stage and c.outcome is not Outcome.SKIPPED]
    # A request that failed is neither a pass nor a miss: it is left out, and counted apart.
    mine = [c for c in ran if c.outcome is not Outcome.ERROR]
    return Rates(
        total=len(mine),
        passed=sum(c.outcome in (Outcome.PASS, Outcome.PASS_AFTER_REPAIR) for c in mine),
        clean=sum(c.outcome is Outcome.PASS for c in mine),
        refused_tools=sum(
            c.outcome is Outcome.REFUSED and c.refusal_kind is RefusalKind.TOOLS for c in mine
        ),
        no_call=sum(c.outcome is Outcome.NO_CALL for c in mine),
        failed=len(ran) - len(mine),
        leaked=sum(c.outcome is Outcome.LEAKED for c in mine),
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
        elif native.leaked:
            why = "native calls leaked as text (the server didn't parse them)"
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
    family: Dialect,
    threshold: float = 0.5,
    invalid_cases: Iterable[str] = (),
    tools_declared: bool | None = None,
    valid_cases: Iterable[str] | None = None,
    strict_breakers: Iterable[str] = (),
    api: ApiFamily | None = None,
    confidence: float = CONFIDENCE,
) -> Verdict:
    """The whole verdict from a probe's cells (``valid_cases``: every valid case of the
    matrix, so a case that never got an answer still counts as not carried;
    ``strict_breakers``: the valid cases whose schema strict mode must refuse; ``api``: the
    endpoint's API family, for the finish reasons of the knobs section)."""
    invalid_cases = tuple(invalid_cases)
    dialect = decide_dialect(cells, family, invalid_cases, valid_cases)
    native, words = rates(cells, Stage.NATIVE), rates(cells, Stage.WORDS)
    mode, reason = decide_mode(native, words, threshold)
    repairs = tuple(
        sorted({r for c in cells if c.stage in (Stage.NATIVE, Stage.WORDS) for r in c.repairs})
    )
    # A deliberately invalid case is refused by design: its keyword says nothing of the provider.
    bad = set(invalid_cases)
    keywords = tuple(
        sorted(
            {
                r.keyword
                for r in dialect.refused
                if r.keyword and r.case not in bad and r.dialect in PERMISSIVENESS
            }
        )
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
    for unsettled in dialect.unsettled:
        findings.append(
            f"No schema refusal ruled out the more permissive {unsettled} dialect (it was not "
            "tried, or its requests failed): the verdict stands on the dialects settled."
        )
    strict, said = _strict_mode(cells, bad, set(strict_breakers))
    findings += said
    leaks = _leaks(cells)
    for leak in leaks:
        count = len(leak.cells)
        findings.append(
            f"Native calls leaked as text in {count} cell{'s' * (count != 1)} "
            f"({leak.family} format): {leak.fix}"
        )
    escaped = _escaped_openers(cells)
    if escaped:
        findings.append(
            f"{len(escaped)} repl{'ies' if len(escaped) != 1 else 'y'} held an HTML-escaped call "
            "opener (&lt;tool_call&gt;): the server rendered the prompt with HTML escaping, so "
            "the model copied the escaped form, which no parser reads (llama-cpp-python's "
            "chatml-function-calling handler renders its Jinja template with autoescape on)."
        )
    findings += _unparsed(cells)
    for rates_, name in ((native, "native"), (words, "words")):
        if rates_.failed:
            findings.append(
                f"{rates_.failed} {name} prompt{'s' * (rates_.failed != 1)} got no usable "
                "reply and are left out of the rates."
            )
    options = routes(native, words, cells, leaks)
    if options:
        best = options[0]
        reason += f" Best measured: {best.route.phrase}, {best.share}."
    return Verdict(
        dialect,
        mode,
        reason,
        native,
        words,
        repairs,
        keywords,
        tools_declared,
        observed,
        tuple(findings),
        leaks,
        strict,
        options,
        decide_knobs(cells, api, words=mode is Mode.WORDS),
        prompt_labels(cells, threshold, confidence),
        tool_costs(cells),
    )


def prompt_labels(cells: Sequence[Cell], threshold: float, confidence: float) -> Labels:
    """Each prompt's label in each mode, from the cells its mode's rate counts."""
    found: list[PromptLabel] = []
    for stage in (Stage.NATIVE, Stage.WORDS):
        answered = [
            (c.case, c.outcome in (Outcome.PASS, Outcome.PASS_AFTER_REPAIR))
            for c in cells
            if c.stage is stage and c.outcome not in (Outcome.ERROR, Outcome.SKIPPED)
        ]
        found += label_prompts(stage.value, answered, threshold, confidence)
    return Labels(confidence, threshold, tuple(found))


def _escaped_openers(cells: Sequence[Cell]) -> list[str]:
    """The prompt cells whose reply held an HTML-escaped call opener."""
    return [
        c.id
        for c in cells
        if c.stage in (Stage.NATIVE, Stage.WORDS)
        and c.reply is not None
        and any(f.code == "html_escaped_call_markers" for f in c.reply.findings)
    ]


def _unparsed(cells: Sequence[Cell]) -> list[str]:
    """A finding for each mode whose prompts got output the server couldn't parse, naming the
    cause in the server's words (llama-server's peg-native 500)."""
    found = []
    for stage in (Stage.NATIVE, Stage.WORDS):
        mine = [c for c in cells if c.stage is stage and c.outcome is Outcome.UNPARSED_BY_SERVER]
        if mine:
            count = len(mine)
            found.append(
                f"{count} {stage.value} prompt{'s' * (count != 1)} got output the server "
                f"couldn't parse, so no call reached the client. {mine[0].detail}"
            )
    return found


def _leaks(cells: Sequence[Cell]) -> tuple[Leak, ...]:
    """The native cells whose calls came back as text, by family, with the fix named."""
    found: dict[str, tuple[list[str], str]] = {}
    for cell in cells:
        facts = cell.facts
        if cell.stage is not Stage.NATIVE or not isinstance(facts, NativeFacts) or not facts.leak:
            continue
        found.setdefault(facts.leak.family, ([], facts.leak.fix))[0].append(cell.id)
    # Cells finish in any order under concurrency: sorted, so the verdict is deterministic.
    return tuple(
        Leak(family, tuple(sorted(ids)), fix) for family, (ids, fix) in sorted(found.items())
    )


def _strict_mode(
    cells: Sequence[Cell], bad: set[str], breakers: set[str]
) -> tuple[StrictMode | None, list[str]]:
    """What ``strict: true`` did to the valid schema cases (Responses API only), and the
    finding that says so: a case strict mode must refuse that was taken shows it ignored."""
    tried = [
        c
        for c in cells
        if c.stage is Stage.DIALECT and c.dialect == STRICT_MODE and c.case not in bad
    ]
    if not tried:
        return None, []
    trial = StrictMode(
        tuple(sorted(c.case for c in tried if c.outcome is Outcome.ACCEPTED)),
        tuple(sorted(c.case for c in tried if c.outcome is Outcome.REFUSED)),
    )
    answered = len(tried) - sum(c.outcome is Outcome.ERROR for c in tried)
    ignored = [case for case in trial.accepted if case in breakers]
    if ignored:
        shown = ", ".join(ignored[:5]) + (
            f" and {len(ignored) - 5} more" if len(ignored) > 5 else ""
        )
        return trial, [
            f"Strict mode (strict: true) is ignored: the endpoint took {len(ignored)} schema "
            f"case{'s' * (len(ignored) != 1)} that strict mode must refuse ({shown}: an open "
            "object or an optional property), so its calls are not held to the schema."
        ]
    if not trial.refused:
        return trial, [
            f"Strict mode (strict: true) took all {answered} schema cases it was asked about."
            if answered
            else "Strict mode (strict: true) got no usable reply."
        ]
    return trial, [
        f"Strict mode (strict: true) refused {len(trial.refused)} of {answered} schema cases"
        f" ({', '.join(trial.refused)}); the probe's other requests send strict: false."
    ]


def _tools_observed(cells: Sequence[Cell]) -> bool | None:
    native = [
        c
        for c in cells
        if c.stage is Stage.NATIVE and c.outcome not in (Outcome.SKIPPED, Outcome.ERROR)
    ]
    if not native:
        return None
    return any(isinstance(c.facts, NativeFacts) and c.facts.native_calls for c in native)


def _message(cell: Cell) -> str:
    return cell.refusal.message if cell.refusal is not None else cell.detail


def _keyword(cell: Cell) -> str | None:
    return cell.refusal.keyword if cell.refusal is not None else None
