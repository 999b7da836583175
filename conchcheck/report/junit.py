"""``junit.xml``: a test suite per stage and a test case per cell, for CI test views.

A deliberately invalid schema case passes when it is refused; a knob cell is what its knob's
state says (``results.status``), and names the state and what it stands on.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from conchcheck.core.escaping import visible
from conchcheck.core.refusals import RefusalKind
from conchcheck.results import Cell, FidelityFacts, IdFacts, KnobFacts, Outcome, Stage
from conchcheck.results.facts import CellFacts
from conchcheck.results.status import CiStatus, expected_refusal, judge

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult, RunInfo

# XML 1.0 has no way to write most control characters; a model's reply can hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render(result: ProbeResult, info: RunInfo) -> str:
    """``junit.xml`` as text."""
    chosen = result.verdict.dialect.dialect if result.verdict else None
    carried = frozenset(
        c.case
        for c in result.cells
        if c.stage is Stage.DIALECT and c.dialect == chosen and c.outcome is Outcome.ACCEPTED
    )
    judged = [(cell, judge(cell, carried)) for cell in result.cells]
    # Cells of a stage run concurrently: a stage's wall time, not the sum of its cells.
    total = sum(result.stage_ms.values()) if result.stage_ms else None
    root = ET.Element("testsuites", _counts(f"conchcheck {result.target}", judged, total))
    root.set("timestamp", info.started_at)
    for stage in Stage:
        mine = [(cell, j) for cell, j in judged if cell.stage is stage]
        if not mine:
            continue
        suite = ET.SubElement(
            root, "testsuite", _counts(stage.value, mine, result.stage_ms.get(stage.value))
        )
        suite.set("timestamp", info.started_at)
        for cell, judgement in mine:
            _case(suite, cell, judgement)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _counts(name: str, judged: list[tuple[Cell, CiStatus]], ms: float | None) -> dict[str, str]:
    def count(which: CiStatus) -> str:
        return str(sum(j is which for _, j in judged))

    return {
        "name": _clean(name),
        "tests": str(len(judged)),
        "failures": count(CiStatus.FAILED),
        "errors": count(CiStatus.ERROR),
        "skipped": count(CiStatus.SKIPPED),
        "time": _seconds(ms if ms is not None else sum(cell.latency_ms for cell, _ in judged)),
    }


def _case(suite: ET.Element, cell: Cell, judgement: CiStatus) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        {"classname": cell.stage.value, "name": _clean(cell.id), "time": _seconds(cell.latency_ms)},
    )
    if judgement is CiStatus.FAILED:
        failure = ET.SubElement(case, "failure", {"message": _clean(_message(cell))})
        failure.set("type", cell.outcome.value)
        failure.text = _clean(cell.detail) or None
    elif judgement is CiStatus.ERROR:
        error = ET.SubElement(case, "error", {"message": _clean(cell.label)})
        error.set("type", cell.error_kind.value if cell.error_kind else "other")
        error.text = _clean(cell.detail) or None
    elif judgement is CiStatus.SKIPPED:
        ET.SubElement(case, "skipped", {"message": _clean(cell.detail or cell.label)})
    ET.SubElement(case, "system-out").text = _clean(_detail(cell))


def _message(cell: Cell) -> str:
    """The label, with a knob's state: ``not_honoured (fails_open)``, ``refused:other
    (refused)``."""
    if isinstance(cell.facts, KnobFacts):
        return f"{cell.label} ({cell.facts.state.value})"
    return cell.label


def _knob_lines(facts: CellFacts | None) -> list[str]:
    """What a knobs-stage cell knows beyond its outcome, a line each."""
    match facts:
        case KnobFacts(knob, state, calls, baseline, breaking):
            lines = [f"knob: {knob.value}", f"state: {state.value}"]
            lines += [f"calls: {calls}"] if calls is not None else []
            lines += [f"calls without the flag: {baseline}"] if baseline is not None else []
            return lines + [f"breaks the schema: {why}" for why in breaking]
        case IdFacts(rounds, round_trip):
            said = "; ".join(", ".join(i or "(none)" for i in ids) or "no call" for ids in rounds)
            trip = "not measured" if round_trip is None else "accepted" if round_trip else "refused"
            return [f"ids by round: {said}", f"ids sent back: {trip}"]
        case FidelityFacts(changed):
            return [f"altered: {c.path} ({c.change.value})" for c in changed]
        case _:
            return []


def _detail(cell: Cell) -> str:
    lines = [f"outcome: {cell.label}"]
    if cell.detail:
        lines.append(f"detail: {cell.detail}")
    if expected_refusal(cell):
        lines.append("expected: a deliberately invalid schema case, refused as it should be")
    elif cell.stage is Stage.DIALECT and cell.refusal_kind is RefusalKind.SCHEMA:
        lines.append("note: passes when the chosen dialect carried this case")
    lines += _knob_lines(cell.facts)
    lines.append(f"case: {cell.case}")
    for name, value in (
        ("dialect", cell.dialect),
        ("mode", cell.mode.value if cell.mode else None),
    ):
        if value:
            lines.append(f"{name}: {value}")
    if cell.attempt != 1:
        lines.append(f"attempt: {cell.attempt}")
    if cell.repairs:
        lines.append(f"repairs: {', '.join(cell.repairs)}")
    refusal = cell.refusal
    if refusal is not None:
        if refusal.message and refusal.message != cell.detail:
            lines.append(f"refusal: {refusal.message}")
        for key, value in (("keyword", refusal.keyword), ("path", refusal.path)):
            if value:
                lines.append(f"refused {key}: {value}")
    lines += [f"finding {f.code}: {f.detail}" for f in cell.findings]
    if len(cell.cases) > 1:
        lines.append(f"sent with: {', '.join(c for c in cell.cases if c != cell.case)}")
    lines.append(f"requests: {cell.requests}")
    if cell.prompt_tokens is not None or cell.completion_tokens is not None:
        lines.append(f"tokens: {cell.prompt_tokens or 0} + {cell.completion_tokens or 0}")
    return "\n".join(lines)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _clean(text: str) -> str:
    # Controls are shown as escapes; anything XML 1.0 still can't write becomes U+FFFD.
    return _NOT_XML.sub("\ufffd", visible(text))
