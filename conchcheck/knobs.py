"""Cells -> the knobs-and-losses section of a verdict (pure): what the endpoint did with each
knob, its call ids, its finish reasons, the arguments it altered, the calls it lost in the
reasoning channel, and whether its streams agree with its whole replies.

Every field stands on cells: a knob on its knob cell, ids on every native reply and the
three-round conversation, the finish reason on every reply. Nothing measured stays None or
``untested``: never fine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from conchcheck.core.fidelity import changes
from conchcheck.core.jsontypes import JsonValue
from conchcheck.core.knobs import (
    KNOB_REFUSALS,
    Agreement,
    Fidelity,
    Ids,
    Knob,
    Knobs,
    KnobsAndLosses,
    KnobState,
    Reasoning,
    Streaming,
)
from conchcheck.results.cells import Cell, CellMode, Outcome, Stage
from conchcheck.results.evidence import ReplyEvidence
from conchcheck.results.knobs import FidelityFacts, IdFacts, KnobFacts
from conchcheck.wire.chat import Finish
from conchcheck.wire.providers import ApiFamily

__all__ = ["decide_knobs", "id_format"]

TOOL_FINISH = frozenset({ApiFamily.OPENAI, ApiFamily.ANTHROPIC})
"""APIs whose finish reason names tool calls (``tool_calls``, ``tool_use``). The Responses API
has none (conchcheck derives it from the output), Gemini says ``STOP`` and Ollama ``stop``
for a reply with calls, as documented: there only a cut reply is checked."""
_REPLIES = (Stage.NATIVE, Stage.KNOBS, Stage.FOLLOW_UP)
_ID_SHAPE = re.compile(r"([A-Za-z]+[_\-.:])?([A-Za-z0-9]{6,})")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")

_KNOB_WORDS = {
    KnobState.IGNORED: "is ignored",
    KnobState.FAILS_OPEN: "fails open (a call broke the schema it was told to enforce)",
    KnobState.REFUSED: "is refused",
}


def decide_knobs(
    cells: Sequence[Cell], api: ApiFamily | None = None, *, words: bool = False
) -> KnobsAndLosses:
    """The section from a probe's cells; ``api`` decides which finish reasons must name calls,
    ``words`` (the verdict's mode is words) that fidelity is the words cell's."""
    knobs = Knobs(*(_state(cells, knob) for knob in Knob))
    ids = _ids(cells)
    finish, wrong = _finish(cells, api)
    # Fidelity as the app will get it: in words when that is how it will call the model.
    mode = CellMode.WORDS if words else CellMode.NATIVE
    fidelity_cells = [
        c.facts for c in cells if isinstance(c.facts, FidelityFacts) and c.mode is mode
    ]
    changed = tuple(x for facts in fidelity_cells for x in facts.changed)
    fidelity = (
        Fidelity.UNTESTED
        if not fidelity_cells
        else (Fidelity.ALTERED if changed else Fidelity.EXACT)
    )
    reasoning = Reasoning(
        # The channel, or reasoning markers in the content (judging's reasoning_in_content).
        seen=any(r.reasoning for r in _replies(cells) if r.reasoning is not None)
        or any(f.code == "reasoning_in_content" for c in cells for f in c.findings),
        swallowed=sum(c.outcome is Outcome.SWALLOWED and not _read_again(c) for c in cells),
    )
    pairs = [c for c in cells if c.mode is CellMode.STREAMING and c.outcome is not Outcome.ERROR]
    streaming = Streaming(
        agree=sum(c.outcome is Outcome.PASS for c in pairs),
        disagree=sum(c.outcome is not Outcome.PASS for c in pairs),
    )
    findings = [
        f"{knob.value} {_KNOB_WORDS[state]}: an app can't rely on it."
        for knob in Knob
        if (state := knobs.of(knob)) in _KNOB_WORDS
    ]
    findings += _id_findings(ids)
    if wrong:
        findings.append(f"The finish reason disagrees with the reply in {_cells(wrong)}.")
    if changed:
        said = ", ".join(f"{c.path} ({c.change.value})" for c in changed)
        findings.append(f"Exact arguments came back altered: {said}.")
    if reasoning.swallowed:
        findings.append(
            f"{reasoning.swallowed} repl{'ies' if reasoning.swallowed != 1 else 'y'} "
            "wrote the call only in the reasoning channel: the server never emitted it."
        )
    if streaming.disagree:
        findings.append(
            f"{streaming.disagree} streamed repl{'ies' if streaming.disagree != 1 else 'y'} "
            "disagreed with the whole reply to the same prompt."
        )
    return KnobsAndLosses(
        knobs,
        ids,
        finish,
        fidelity,
        changes(changed),
        reasoning,
        streaming,
        tuple(findings),
    )


def id_format(call_id: str) -> str:
    """What an id looks like: ``call_<24 alphanumerics>``, or the id itself (up to 40
    characters) when it has another shape (``functions.get_weather:0``), a UUID in it said
    ``<uuid>`` (llama-cpp-python's ``call__0_remember_cmpl-<uuid>``), so the fact is the same
    from one probe to the next."""
    match = _ID_SHAPE.fullmatch(call_id)
    if match is None:
        return _UUID.sub("<uuid>", call_id)[:40]
    return f"{match.group(1) or ''}<{len(match.group(2))} alphanumerics>"


def _state(cells: Sequence[Cell], knob: Knob) -> KnobState:
    for cell in cells:
        if isinstance(cell.facts, KnobFacts) and cell.facts.knob is knob:
            return cell.facts.state
    return KnobState.UNTESTED


def _replies(cells: Iterable[Cell]) -> list[ReplyEvidence]:
    """Every reply once: a knob read from another stage's request counts there."""
    return [
        c.reply for c in cells if c.stage in _REPLIES and c.reply is not None and not _read_again(c)
    ]


def _read_again(cell: Cell) -> bool:
    return isinstance(cell.facts, KnobFacts) and cell.facts.read_from is not None


def _ids(cells: Sequence[Cell]) -> Ids:
    replies = [r.calls for r in _replies(cells) if r.calls and r.text is not None]
    calls = [call for reply in replies for call in reply]
    present = all(call.id for call in calls) if calls else None
    many = [[c.id for c in reply if c.id] for reply in replies]
    many = [ids for ids in many if len(ids) > 1]
    unique = all(len(set(ids)) == len(ids) for ids in many) if many else None
    conversation = next((c.facts for c in cells if isinstance(c.facts, IdFacts)), None)
    across = None
    trips: list[bool] = []
    if conversation is not None:
        rounds = [[i for i in ids if i] for ids in conversation.rounds]
        rounds = [ids for ids in rounds if ids]
        if len(rounds) > 1:
            seen = [i for ids in rounds for i in ids]
            across = len(set(seen)) == len(seen)
        if conversation.round_trip is not None:
            trips.append(conversation.round_trip)
    for cell in cells:
        # The matrix's own round trips carry the server's ids back too.
        if cell.mode is CellMode.ROUND_TRIP_NATIVE and cell.outcome is not Outcome.ERROR:
            refused = cell.outcome is Outcome.REFUSED
            if not refused or cell.refusal_kind in KNOB_REFUSALS:
                trips.append(not refused)
    trip = None if not trips else all(trips)
    first = next((call.id for call in calls if call.id), None)
    return Ids(present, unique, across, trip, id_format(first) if first else None)


def _id_findings(ids: Ids) -> list[str]:
    out = []
    if ids.present is False:
        out.append("Some native calls came back without an id: an app can't answer them by id.")
    if ids.unique_in_reply is False:
        out.append("Two calls of one reply had the same id: their results can't be told apart.")
    if ids.unique_across_rounds is False:
        out.append(
            "A call id came back again in a later round: a multi-round chat mixes up results."
        )
    if ids.round_trip is False:
        out.append("A follow-up carrying the server's own call ids back was refused.")
    return out


def _finish(cells: Sequence[Cell], api: ApiFamily | None) -> tuple[Agreement | None, list[str]]:
    checked, wrong = 0, []
    for cell in cells:
        reply = cell.reply
        if cell.stage not in _REPLIES or reply is None or reply.text is None or _read_again(cell):
            continue
        if cell.outcome in (Outcome.ERROR, Outcome.REFUSED) or reply.finish in (
            None,
            Finish.UNKNOWN,
            Finish.ERROR,
        ):
            continue
        limit = _limit(cell.request.body if cell.request else None)
        spent = reply.completion_tokens
        if limit is not None and spent is not None and spent >= limit:
            # The reply used every token it was allowed: it was cut, whatever it says.
            checked += 1
            if reply.finish is not Finish.LENGTH:
                wrong.append(cell.id)
            continue
        cut = reply.finish is Finish.LENGTH
        if api in TOOL_FINISH and not cut:
            checked += 1
            says_calls = reply.finish is Finish.TOOL_CALLS
            if api is ApiFamily.OPENAI and _forced_function(
                cell.request.body if cell.request else None
            ):
                # A forced named function ends with "stop" on OpenAI's Chat Completions, as
                # documented (its function-calling guide; vLLM matches it: vllm#49496).
                says_calls = says_calls or (bool(reply.calls) and reply.finish is Finish.STOP)
            if bool(reply.calls) != says_calls:
                wrong.append(cell.id)
        elif cut:
            checked += 1
    return (None if not checked else (Agreement.WRONG if wrong else Agreement.AGREES)), wrong


def _forced_function(body: JsonValue) -> bool:
    """Whether a Chat Completions body forced one named function."""
    return isinstance(body, dict) and isinstance(body.get("tool_choice"), dict)


def _limit(body: JsonValue) -> int | None:
    """The output limit a request body set, in whichever API's spelling."""
    if not isinstance(body, dict):
        return None
    nested = [body.get("generationConfig"), body.get("options")]
    for node in (body, *(n for n in nested if isinstance(n, dict))):
        for key in ("max_tokens", "max_output_tokens", "maxOutputTokens", "num_predict"):
            value = node.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _cells(ids: list[str]) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
