"""The compatibility table: one row an endpoint (a target and the API it spoke there), one
column a feature, each mark a status with the short value shown, why, and the cells it
stands on (their request, reply and reading, trimmed).

Built from the probe results ``results.reader`` reads; pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.trials import PERMISSIVENESS
from conchcheck.report.compatibility.knobs import (
    GROUP,
    LOSSES,
    TITLES,
    knob_marks,
    streaming_mark,
)
from conchcheck.report.compatibility.marks import Mark, evidence_of
from conchcheck.report.markup import Status
from conchcheck.results import (
    PASSING,
    Cell,
    CellMode,
    DialectVerdict,
    Outcome,
    ProbeResult,
    Stage,
    Verdict,
)

GOOD_RATE = 0.8
"""A rate at or above this is a pass; above zero but below it, partial."""
CHAIN = tuple(d.value for d in PERMISSIVENESS)
"""The dialects from most to least permissive (DESIGN.md rule 4)."""
PARALLEL = "parallel-calls"
FORCED = "forced-choice"
"""The built-in matrix's prompts for parallel calls and a forced tool choice."""
CASES = "schema cases"
"""The group of the per-case columns: a table of their own."""


@dataclass(frozen=True, slots=True)
class Column:
    """One feature of the table."""

    key: str
    title: str
    group: str


@dataclass(frozen=True, slots=True)
class Row:
    """One endpoint: the target, where and in which API it was probed, when, and a mark for
    each column key."""

    target: str
    endpoint: str
    api: str
    """The API family spoken (``openai``, ``responses``, ``anthropic``, …): its own column."""
    matrix: str
    digest: str
    probed: str
    version: str
    marks: Mapping[str, Mark]
    name: str = ""
    """How the table shows the target: its label, with the endpoint's host when another
    row of the same API has the same label (one model behind two servers)."""

    @property
    def shown(self) -> str:
        """``vllm:m (openai)``: the name and the API, one of a kind in the table."""
        return f"{self.name} ({self.api})"


@dataclass(frozen=True, slots=True)
class CompatTable:
    """The whole table: columns in order, rows sorted by target."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    @property
    def matrices(self) -> tuple[str, ...]:
        """``default (sha256:85bebd52eb4b)`` for each matrix the rows were probed with."""
        return tuple(sorted({f"{r.matrix} ({r.digest[:19]})" for r in self.rows}))

    @property
    def dates(self) -> tuple[str, str]:
        """The first and last time a row was probed."""
        probed = sorted(r.probed for r in self.rows) or [""]
        return probed[0], probed[-1]


FEATURES = (
    Column("dialect", "dialect", "verdict"),
    Column("mode", "mode", "verdict"),
    Column("native", "native", "rates"),
    Column("native_clean", "native clean", "rates"),
    Column("words", "words", "rates"),
    Column("words_clean", "words clean", "rates"),
    Column("leaked", "leaked calls", "rates"),
    Column("streaming", "streaming", "follow-ups"),
    Column("parallel", "parallel", "follow-ups"),
    Column("forced", "forced choice", "follow-ups"),
    Column("round_trip", "round trip", "follow-ups"),
    Column("refusals", "refusals", "follow-ups"),
    Column("schemas", "schema cases", "verdict"),
)
KNOB_COLUMNS = (
    *(Column(f"knob:{knob.value}", title, GROUP) for knob, title in TITLES.items()),
    *(Column(key, title, GROUP) for key, title in LOSSES),
)
"""The knobs-and-losses table: a column each knob, then the losses (``compatibility.knobs``)."""


def build_table(results: Sequence[ProbeResult]) -> CompatTable:
    """The table of many probe results, a row each."""
    cases: dict[str, None] = {}
    for result in results:
        cases.update((c.case, None) for c in result.cells if c.stage is Stage.DIALECT)
    columns = (*FEATURES, *(Column(f"case:{case}", case, CASES) for case in cases))
    if any(r.verdict and r.verdict.knobs_and_losses for r in results):
        # Results before knobs and losses have none of these marks: their table is left out.
        columns += KNOB_COLUMNS
    rows = [_row(result, tuple(cases)) for result in results]
    # A server's APIs side by side.
    rows.sort(key=lambda r: (r.target, r.endpoint, r.api))
    return CompatTable(columns, tuple(_named(rows)))


def _named(rows: list[Row]) -> list[Row]:
    """Each row named by its target, with the endpoint's host (or, failing that, the
    endpoint) beside it where two rows would otherwise read the same: the same target in
    the same API (the API column tells one server's APIs apart)."""
    for shown in (lambda r: r.target, _with_host, lambda r: f"{r.target} ({r.endpoint})"):
        names = [shown(row) for row in rows]
        if len({(name, row.api) for name, row in zip(names, rows, strict=True)}) == len(rows):
            break
    return [replace(row, name=name) for row, name in zip(rows, names, strict=True)]


def _with_host(row: Row) -> str:
    return f"{row.target} ({urlsplit(row.endpoint).netloc or row.endpoint})"


def _row(result: ProbeResult, cases: tuple[str, ...]) -> Row:
    verdict, cells = result.verdict, result.cells
    marks: dict[str, Mark] = {}
    if verdict is None:
        why = result.unusable or result.stopped or "nothing ran"
        marks["dialect"] = Mark(Status.NONE, "—", f"No verdict: {why}.", -9.0)
        marks["mode"] = Mark(Status.FAIL, "unusable", f"No verdict: {why}.", -1.0)
    else:
        marks["dialect"] = _dialect(verdict.dialect, cells)
        marks["mode"] = _mode(verdict, result.stopped)
        for mode, stage, rates in (
            ("native", Stage.NATIVE, verdict.native),
            ("words", Stage.WORDS, verdict.words),
        ):
            mine = [c for c in cells if c.stage is stage]
            marks[mode] = _rate(rates.passed, rates.total, mine, lambda c: c.outcome in PASSING)
            marks[f"{mode}_clean"] = _rate(
                rates.clean, rates.total, mine, lambda c: c.outcome is Outcome.PASS
            )
        marks["leaked"] = _leaked(verdict.native.leaked, cells)
    prompts = [c for c in cells if c.stage in (Stage.NATIVE, Stage.WORDS)]
    follow = [c for c in cells if c.stage is Stage.FOLLOW_UP]
    section = verdict.knobs_and_losses if verdict else None
    streamed = [c for c in follow if c.mode is CellMode.STREAMING]
    marks["streaming"] = _share(streamed) if section is None else streaming_mark(section, streamed)
    if section is not None:
        marks.update(knob_marks(section, cells))
    marks["parallel"] = _share([c for c in prompts if c.case == PARALLEL])
    marks["forced"] = _share([c for c in prompts if c.case == FORCED])
    trips = (CellMode.ROUND_TRIP_NATIVE, CellMode.ROUND_TRIP_WORDS)
    marks["round_trip"] = _share([c for c in follow if c.mode in trips])
    # A knob's refusal is in the knobs table: strict mode refusing an open schema is honoured.
    asked = [c for c in cells if c.stage not in (Stage.DIALECT, Stage.KNOBS)]
    marks["refusals"] = _refusals(asked)
    chosen = verdict.dialect.dialect if verdict else None
    marks["schemas"] = _schemas(verdict, [c for c in cells if c.stage is Stage.DIALECT])
    for case in cases:
        marks[f"case:{case}"] = _case(
            [c for c in cells if c.stage is Stage.DIALECT and c.case == case], chosen
        )
    run = result.run
    return Row(
        target=result.target,
        endpoint=result.endpoint,
        api=result.api.value,
        matrix=result.matrix,
        digest=result.matrix_digest,
        probed=run.finished_at if run else "",
        version=run.conchcheck_version if run else "",
        marks=marks,
    )


def _dialect(verdict: DialectVerdict, cells: Sequence[Cell]) -> Mark:
    refused = [c for c in cells if c.stage is Stage.DIALECT and c.outcome is Outcome.REFUSED]
    shown = evidence_of(refused)
    chosen = verdict.dialect
    if chosen:
        rank = -CHAIN.index(chosen) if chosen in CHAIN else -len(CHAIN)
        if verdict.unsettled:
            unsettled = ", ".join(d.value for d in verdict.unsettled)
            why = f"Chosen, but {unsettled} could not be settled."
            return Mark(Status.PARTIAL, chosen.value, why, rank, shown)
        if verdict.excepted:
            text = f"{chosen.value} except {', '.join(r.case for r in verdict.excepted)}"
            why = (
                "Every other valid case was carried; refused in every dialect tried: "
                f"{verdict.exceptions}."
            )
            return Mark(Status.PARTIAL, text, why, rank, shown)
        text = chosen.value
        return Mark(Status.PASS, text, "Every valid schema case was carried.", rank, shown)
    best = verdict.best
    text = f"none ({best.value} best)" if best else "none"
    return Mark(Status.FAIL, text, "No dialect carried every valid case.", -9, shown)


def _mode(verdict: Verdict, stopped: str | None) -> Mark:
    mode = verdict.mode.value
    status = {"native": Status.PASS, "words": Status.PARTIAL}.get(mode, Status.FAIL)
    rank = {"native": 2, "words": 1}.get(mode, 0)
    text = f"{mode} (partial)" if stopped else mode
    return Mark(status, text, verdict.reason, rank)


def _rate(count: int, total: int, cells: Sequence[Cell], ok: Callable[[Cell], bool]) -> Mark:
    if not total:
        return Mark(Status.NONE, "—", "No prompt cell had an answer.", -1.0)
    rate = count / total
    status = Status.PASS if rate >= GOOD_RATE else Status.PARTIAL if count else Status.FAIL
    missed = [c for c in cells if not ok(c) and c.outcome is not Outcome.SKIPPED]
    note = f"{count} of {total} cells with an answer." + (
        f" First miss: {missed[0].id} ({missed[0].label})." if missed else ""
    )
    return Mark(status, f"{count}/{total} {rate:.0%}", note, rate, evidence_of(missed or cells))


def _leaked(count: int, cells: Sequence[Cell]) -> Mark:
    leaked = [c for c in cells if c.outcome is Outcome.LEAKED]
    if not count:
        return Mark(Status.PASS, "0", "No native call came back as text.", 0.0)
    note = f"{count} native cells' calls came back as text the server didn't parse."
    return Mark(Status.FAIL, str(count), note, -float(count), evidence_of(leaked))


def _share(cells: Sequence[Cell]) -> Mark:
    ran = [c for c in cells if c.outcome is not Outcome.SKIPPED]
    if not ran:
        return Mark(Status.NONE, "—", "Not run.", -1.0)
    passed = [c for c in ran if c.outcome in PASSING]
    missed = [c for c in ran if c.outcome not in PASSING]
    status = Status.PASS if not missed else Status.PARTIAL if passed else Status.FAIL
    note = ", ".join(f"{c.id}: {c.label}" for c in ran) + "."
    return Mark(
        status,
        f"{len(passed)}/{len(ran)}",
        note,
        len(passed) / len(ran),
        evidence_of(missed or ran),
    )


def _refusals(cells: Sequence[Cell]) -> Mark:
    refused = [c for c in cells if c.outcome is Outcome.REFUSED]
    if not refused:
        return Mark(Status.PASS, "none", "No refusal outside the dialect stage.", 0.0)
    kinds: dict[str, int] = {}
    for cell in refused:
        kind = (cell.refusal_kind or RefusalKind.OTHER).value
        kinds[kind] = kinds.get(kind, 0) + 1
    text = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
    note = f"{len(refused)} cells refused: {text}."
    return Mark(Status.PARTIAL, text, note, -float(len(refused)), evidence_of(refused))


def _schemas(verdict: Verdict | None, cells: Sequence[Cell]) -> Mark:
    """The schema cases in one line: ``26/29 in permissive; refused: dangling-ref,
    unknown-type, as expected; limit: many-tools``. The case table has each one."""
    dialect = verdict.dialect.dialect or verdict.dialect.best if verdict else None
    if dialect is None:
        return Mark(Status.NONE, "—", "No dialect carried a case.", -1.0)
    mine = [c for c in cells if c.dialect == dialect]
    # An invalid case is sent once, as written (permissive): it answers for every dialect.
    invalid = {c.case: c for c in cells if c.invalid_case}
    tried = {c.case: c for c in mine}
    for case, cell in invalid.items():
        tried.setdefault(case, cell)
    accepted = sorted(k for k, c in tried.items() if c.outcome is Outcome.ACCEPTED)
    refused = [c for c in tried.values() if c.outcome is Outcome.REFUSED]
    expected = sorted(c.case for c in refused if c.invalid_case)
    limits = sorted(
        c.case for c in refused if not c.invalid_case and c.refusal_kind is not RefusalKind.SCHEMA
    )
    schema = sorted(c.case for c in refused if not c.invalid_case and c.case not in limits)
    taken = sorted(k for k in accepted if k in invalid)
    parts = [f"{len(accepted)}/{len(tried)} in {dialect.value}"]
    parts += [f"refused: {', '.join(schema)}"] if schema else []
    parts += [f"refused: {', '.join(expected)}, as expected"] if expected else []
    parts += [f"invalid yet taken: {', '.join(taken)}"] if taken else []
    parts += [f"limit: {', '.join(limits)}"] if limits else []
    status = Status.FAIL if not accepted else Status.PARTIAL if schema or taken else Status.PASS
    rate = len(accepted) / len(tried) if tried else 0.0
    chosen = verdict is not None and verdict.dialect.dialect is not None
    note = f"In {dialect.value}, the dialect {'chosen' if chosen else 'that carried most'}."
    return Mark(status, "; ".join(parts), note, rate, evidence_of(refused, limit=3))


def _case(cells: Sequence[Cell], chosen: str | None) -> Mark:
    if not cells:
        return Mark(Status.NONE, "—", "Not tried.", -1.0)
    invalid = any(c.invalid_case for c in cells)
    accepted = [c.dialect or "" for c in cells if c.outcome is Outcome.ACCEPTED]
    accepted.sort(key=lambda d: CHAIN.index(d) if d in CHAIN else len(CHAIN))
    refused = [c for c in cells if c.outcome is Outcome.REFUSED]
    if invalid:
        if accepted:
            note = f"Invalid, yet accepted in {', '.join(accepted)}."
            return Mark(Status.PARTIAL, "accepted (invalid)", note, 0.5, evidence_of(cells))
        return Mark(
            Status.PASS,
            "refused (invalid)",
            "Invalid, and refused.",
            1.0,
            evidence_of(refused or cells),
        )
    if not accepted:
        if not refused:
            return Mark(
                Status.NONE, "failed", "Every request failed: no evidence.", 0.0, evidence_of(cells)
            )
        kinds = sorted({(c.refusal_kind or RefusalKind.OTHER).value for c in refused})
        note = f"Refused in every dialect tried ({', '.join(kinds)})."
        if "schema" not in kinds:
            # A window too small for 128 tools is the endpoint's limit, not its dialect's.
            note = f"Refused for a limit, not for its schema ({', '.join(kinds)})."
            text = f"limit: {', '.join(kinds)}"
            return Mark(Status.PARTIAL, text, note, 0.05, evidence_of(refused))
        return Mark(Status.FAIL, "refused", note, 0.0, evidence_of(refused))
    best = accepted[0]
    rank = (len(CHAIN) - CHAIN.index(best)) / len(CHAIN) if best in CHAIN else 0.1
    note = f"Accepted in {', '.join(accepted)}."
    if chosen is not None and chosen not in accepted:
        note += f" Not in the chosen dialect, {chosen}."
        return Mark(Status.PARTIAL, best, note, rank, evidence_of(refused or cells))
    shown = [c for c in cells if c.outcome is Outcome.ACCEPTED][:1]
    return Mark(Status.PASS, best, note, rank, evidence_of(shown))
