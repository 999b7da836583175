"""The compatibility table's knobs and losses: a column for each knob, the call ids, the finish
reason, argument fidelity and the reasoning channel (a table of their own), and streaming
parity in the features' streaming column; each mark in words, not only a shape, and standing
on the knob cells it was read from. Results written before the section have no such marks.
"""

from __future__ import annotations

from collections.abc import Sequence

from conchcheck.core.knobs import Agreement, Fidelity, Knob, KnobsAndLosses, KnobState
from conchcheck.report.compatibility.marks import Mark, evidence_of
from conchcheck.report.knobs import (
    NOT_MEASURED,
    fidelity_text,
    flag,
    ids_status,
    ids_summary,
    knob_cell,
    reasoning_text,
    state_status,
    state_word,
)
from conchcheck.report.markup import Status
from conchcheck.results import Cell, CellMode, FidelityFacts, IdFacts, Outcome, Stage

GROUP = "knobs and losses"
"""The group of the knobs' columns: a table of their own."""
TITLES = {
    Knob.TOOL_CHOICE_NONE: "tool_choice none",
    Knob.TOOL_CHOICE_REQUIRED: "tool_choice required",
    Knob.TOOL_CHOICE_NAMED: "tool_choice named",
    Knob.PARALLEL_FALSE: "parallel false",
    Knob.STRICT: "strict",
}
LOSSES = (
    ("ids", "call ids"),
    ("finish", "finish reason"),
    ("fidelity", "fidelity"),
    ("reasoning", "reasoning"),
)
"""The loss columns: key and title."""
_SORT = {Status.PASS: 1.0, Status.PARTIAL: 0.5, Status.FAIL: 0.0, Status.NONE: -1.0}


def knob_marks(section: KnobsAndLosses, cells: Sequence[Cell]) -> dict[str, Mark]:
    """A mark for each knob and loss column, by column key."""
    mine = [c for c in cells if c.stage is Stage.KNOBS]
    marks = {f"knob:{knob.value}": _knob(section, knob, mine) for knob in Knob}
    ids = section.ids
    said = "; ".join(
        f"{name.replace('_', ' ')}: {flag(getattr(ids, name))}"
        for name in ("present", "unique_in_reply", "unique_across_rounds", "round_trip")
    )
    said += f"; format: {ids.format or NOT_MEASURED}."
    status = ids_status(ids)
    rounds = [c for c in mine if isinstance(c.facts, IdFacts)]
    marks["ids"] = Mark(status, ids_summary(ids), said, _SORT[status], evidence_of(rounds))
    finish = section.finish_reason
    if finish is None:
        marks["finish"] = Mark(Status.NONE, NOT_MEASURED, "No reply's finish reason checked.", -1)
    else:
        ok = finish is Agreement.AGREES
        why = (
            "Every reply checked said why it stopped."
            if ok
            else "A finish reason disagreed with its reply: calls without tool_calls (or "
            "tool_use), or a cut reply without length."
        )
        marks["finish"] = Mark(Status.PASS if ok else Status.FAIL, finish.value, why, float(ok))
    marks["fidelity"] = _fidelity(section, mine)
    swallowed = [c for c in cells if c.outcome is Outcome.SWALLOWED]
    reasoning = section.reasoning
    status = Status.FAIL if reasoning.swallowed else Status.PASS
    note = (
        f"{reasoning.swallowed} repl{'ies' if reasoning.swallowed != 1 else 'y'} wrote the "
        "only call in the reasoning channel."
        if reasoning.swallowed
        else "No call was lost in the reasoning channel."
    )
    marks["reasoning"] = Mark(
        status, reasoning_text(section), note, -float(reasoning.swallowed), evidence_of(swallowed)
    )
    return marks


def streaming_mark(section: KnobsAndLosses, cells: Sequence[Cell]) -> Mark:
    """Streaming parity: the streamed replies that agreed with the whole reply to the same
    prompt (a failed request is in neither count; a repaired stream disagrees)."""
    streaming = section.streaming
    pairs = streaming.agree + streaming.disagree
    if not pairs:
        return Mark(Status.NONE, NOT_MEASURED, "No streamed reply was compared.", -1.0)
    status = (
        Status.PASS
        if not streaming.disagree
        else Status.FAIL
        if not streaming.agree
        else Status.PARTIAL
    )
    streamed = [c for c in cells if c.mode is CellMode.STREAMING and c.outcome is not Outcome.ERROR]
    missed = [c for c in streamed if c.outcome is not Outcome.PASS]
    note = f"{streaming.agree} of {pairs} streamed replies agreed with the whole reply."
    text = f"{streaming.agree}/{pairs} agree"
    return Mark(status, text, note, streaming.agree / pairs, evidence_of(missed or streamed))


def _knob(section: KnobsAndLosses, knob: Knob, cells: Sequence[Cell]) -> Mark:
    state = section.knobs.of(knob)
    status = state_status(state)
    cell = knob_cell(cells, knob)
    # Its own cell, then what it stands on too: the run without the flag, the open schema.
    shown = [] if cell is None else [cell, *(c for c in cells if c.id.startswith(f"{cell.id}/"))]
    note = cell.detail if cell is not None else "No knob cell ran."
    if state is KnobState.UNTESTED and cell is not None:
        note = f"Not measured: {note}"
    return Mark(status, state_word(state), note, _SORT[status], evidence_of(shown, limit=2))


def _fidelity(section: KnobsAndLosses, cells: Sequence[Cell]) -> Mark:
    facts = [c for c in cells if isinstance(c.facts, FidelityFacts)]
    text = fidelity_text(section)
    if section.fidelity is Fidelity.UNTESTED:
        return Mark(Status.NONE, text, "No call to compare came back.", -1.0)
    if section.fidelity is Fidelity.EXACT:
        return Mark(Status.PASS, text, "Every argument came back byte for byte.", 1.0)
    changed = [
        f"{change.path} ({change.change.value})"
        for cell in facts
        if isinstance(cell.facts, FidelityFacts)
        for change in cell.facts.changed
    ]
    note = f"Altered: {', '.join(changed)}."
    return Mark(Status.FAIL, text, note, -float(len(changed)), evidence_of(facts))
