"""The knobs-and-losses section as every output shows it: a word and a status for each knob
state, the report's "Knobs and losses" block, and the terminal's one line.

Nothing measured (``untested``, None, no streamed pair) reads "not measured", never as fine:
its status is ``none``, never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from conchcheck.core.knobs import Fidelity, Ids, Knob, KnobsAndLosses, KnobState, Streaming
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Marks,
    Para,
    Table,
    words,
)
from conchcheck.report.markup import Status
from conchcheck.results import Cell, KnobFacts, Outcome, Stage

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult

NOT_MEASURED = "not measured"

SHORT = {
    Knob.TOOL_CHOICE_NONE: "none",
    Knob.TOOL_CHOICE_REQUIRED: "required",
    Knob.TOOL_CHOICE_NAMED: "named",
    Knob.PARALLEL_FALSE: "parallel",
    Knob.STRICT: "strict",
}
"""Each knob in a word, for a line or a column title (every knob is in the dict)."""

_SIGNS = {Status.PASS: "✅", Status.FAIL: "❌", Status.PARTIAL: "⚠️", Status.NONE: "—"}
"""A status in Markdown (GitHub shows emoji): never a tick for what was not measured."""
_IDS = ("present", "unique_in_reply", "unique_across_rounds", "round_trip")


def state_status(state: KnobState) -> Status:
    """Only honoured passes; a refusal is loud (an app sees the error), so it is partial;
    ignored and failing open are silent failures; not offered and untested say nothing."""
    match state:
        case KnobState.HONOURED:
            return Status.PASS
        case KnobState.REFUSED:
            return Status.PARTIAL
        case KnobState.IGNORED | KnobState.FAILS_OPEN:
            return Status.FAIL
        case KnobState.NOT_OFFERED | KnobState.UNTESTED:
            return Status.NONE
        case _:
            _never(state)


def state_word(state: KnobState) -> str:
    """``honoured``, ``fails open``, ``not offered``, ``not measured`` (for untested)."""
    return NOT_MEASURED if state is KnobState.UNTESTED else words(state.value)


def knob_word(cell: Cell) -> str | None:
    """A knob cell's state as its mark's word (the refusal's kind or the failure kept where
    there was one); None for any other cell."""
    facts = cell.facts
    if not isinstance(facts, KnobFacts):
        return None
    if facts.state is KnobState.REFUSED:
        return words(cell.label)
    if facts.state is KnobState.UNTESTED and cell.outcome in (Outcome.ERROR, Outcome.REFUSED):
        return f"{NOT_MEASURED} ({words(cell.label)})"
    return state_word(facts.state)


def knob_cell(cells: Sequence[Cell], knob: Knob) -> Cell | None:
    """The cell a knob's state stands on, if it ran."""
    return next((c for c in cells if isinstance(c.facts, KnobFacts) and c.facts.knob is knob), None)


def flag(value: bool | None) -> str:
    """``yes``, ``no`` or ``not measured``."""
    return NOT_MEASURED if value is None else "yes" if value else "no"


def ids_summary(ids: Ids) -> str:
    """``ok``; ``broken (unique across rounds)``; ``ok, not measured: unique in reply``; or
    ``not measured``."""
    values = {name: getattr(ids, name) for name in _IDS}
    broken = [words(n) for n, v in values.items() if v is False]
    unknown = [words(n) for n, v in values.items() if v is None]
    if broken:
        return f"broken ({', '.join(broken)})"
    if len(unknown) == len(values):
        return NOT_MEASURED
    return "ok" + (f", {NOT_MEASURED}: {', '.join(unknown)}" if unknown else "")


def ids_status(ids: Ids) -> Status:
    """Fail when any id fact is false, pass when all are true, partial when some are not
    measured, none when nothing is."""
    values = [getattr(ids, name) for name in _IDS]
    if False in values:
        return Status.FAIL
    if all(v is None for v in values):
        return Status.NONE
    return Status.PASS if None not in values else Status.PARTIAL


def fidelity_text(section: KnobsAndLosses) -> str:
    """``exact``, ``altered (newlines_stripped, cut_at_marker)`` or ``not measured``."""
    changes = ", ".join(c.value for c in section.fidelity_changes)
    untested = section.fidelity is Fidelity.UNTESTED
    shown = NOT_MEASURED if untested else section.fidelity.value
    return f"{shown} ({changes})" if changes else shown


def streaming_text(streaming: Streaming) -> str:
    """``4 agree, 1 disagrees`` or ``not measured`` (no pair was compared)."""
    if not streaming.agree + streaming.disagree:
        return NOT_MEASURED
    verb = "disagrees" if streaming.disagree == 1 else "disagree"
    return f"{streaming.agree} agree, {streaming.disagree} {verb}"


def reasoning_text(section: KnobsAndLosses) -> str:
    """``seen, 2 swallowed``, or ``not seen, 0 swallowed``."""
    reasoning = section.reasoning
    return f"{'seen' if reasoning.seen else 'not seen'}, {reasoning.swallowed} swallowed"


def summary_line(section: KnobsAndLosses) -> str:
    """The section in one line, for the terminal: ``knobs: none honoured · required ignored
    · …; ids ok; finish_reason agrees; fidelity altered (newlines_stripped); reasoning not
    seen, 0 swallowed; streaming 4 agree, 1 disagrees``."""
    knobs = " · ".join(f"{SHORT[k]} {state_word(section.knobs.of(k))}" for k in Knob)
    return (
        f"knobs: {knobs}; ids {ids_summary(section.ids)}; finish_reason {_finish(section)}; "
        f"fidelity {fidelity_text(section)}; reasoning {reasoning_text(section)}; "
        f"streaming {streaming_text(section.streaming)}"
    )


def knobs_section(result: ProbeResult) -> list[Block]:
    """The report's "Knobs and losses" block; nothing for results written before it."""
    section = result.verdict.knobs_and_losses if result.verdict else None
    if section is None:
        return []
    cells = [c for c in result.cells if c.stage is Stage.KNOBS]
    blocks: list[Block] = [Heading(2, "Knobs and losses")]
    if not cells:
        blocks.append(Para(("No knob cell ran: every knob is not measured.",)))
    rows = []
    for knob in Knob:
        state = section.knobs.of(knob)
        cell = knob_cell(cells, knob)
        word = knob_word(cell) if cell is not None else None
        shown = f"{_SIGNS[state_status(state)]} {word or state_word(state)}"
        if cell is None:
            rows.append((knob.value, Marks(shown), "—", "No knob cell ran."))
        else:
            rows.append((knob.value, Marks(shown, (cell,)), cell.id, cell.detail))
    blocks.append(Table(("knob", "state", "cell", "why"), tuple(rows)))
    ids = section.ids
    said: list[Inline] = [
        (
            Bold("ids"),
            f": {ids_summary(ids)} — ",
            " · ".join(f"{words(name)} {flag(getattr(ids, name))}" for name in _IDS),
            *((" · format ", Code(ids.format)) if ids.format else ()),
        ),
        (Bold("finish_reason"), ": ", _finish(section)),
        (Bold("fidelity"), ": ", fidelity_text(section)),
        (Bold("reasoning"), ": ", reasoning_text(section)),
        (Bold("streaming"), ": ", streaming_text(section.streaming)),
    ]
    blocks.append(Bullets(tuple(said)))
    if section.findings:
        found = Bullets(tuple((finding,) for finding in section.findings))
        blocks += [Heading(3, "What an app must know"), found]
    return blocks


def _finish(section: KnobsAndLosses) -> str:
    return section.finish_reason.value if section.finish_reason else NOT_MEASURED


def _never(value: NoReturn) -> NoReturn:
    # typing.assert_never is 3.11+; conchcheck supports 3.10.
    raise AssertionError(f"unhandled value: {value!r}")
