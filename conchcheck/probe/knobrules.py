"""How each knob's state is decided from what came back: honoured, ignored, refused, fails
open or untested, with the sentence that says why (``probe.knobs`` sends the requests).

A refusal is evidence only when it speaks of the request; a failed request, a refusal for
another reason and a call lost in the reasoning channel leave the knob untested.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from jsonschema import Draft202012Validator

from conchcheck.core.knobs import KNOB_REFUSALS, Knob, KnobState
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.matrix import Prompt
from conchcheck.results import Cell, Outcome
from conchcheck.wire.chat import ToolCall
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied, Unparsed
from conchcheck.wire.providers import ApiFamily


def spelling(knob: Knob, api: ApiFamily, name: str = "") -> str:
    """The knob as the API family writes it: ``tool_choice: none``, ``tool_choice: function
    remember``, ``disable_parallel_tool_use: true``."""
    if knob is Knob.PARALLEL_FALSE:
        if api is ApiFamily.ANTHROPIC:
            return "disable_parallel_tool_use: true"
        return "parallel_tool_calls: false"
    if knob is Knob.STRICT:
        return "strict: true"
    if api is ApiFamily.GEMINI:
        modes = {Knob.TOOL_CHOICE_NONE: "NONE", Knob.TOOL_CHOICE_REQUIRED: "ANY"}
        if knob in modes:
            return f"functionCallingConfig mode {modes[knob]}"
        return f"functionCallingConfig mode ANY, allowedFunctionNames [{name}]"
    anthropic = api is ApiFamily.ANTHROPIC
    match knob:
        case Knob.TOOL_CHOICE_NONE:
            return "tool_choice: none"
        case Knob.TOOL_CHOICE_REQUIRED:
            return f"tool_choice: {'any' if anthropic else 'required'}"
        case _:
            return f"tool_choice: {'tool' if anthropic else 'function'} {name}"


def choice_state(
    knob: Knob, prompt: Prompt, asked: str, calls: Sequence[str]
) -> tuple[KnobState, str]:
    """A tool_choice knob from the names of the calls that came back."""
    named = ", ".join(dict.fromkeys(calls))
    match knob:
        case Knob.TOOL_CHOICE_NONE if calls:
            return KnobState.IGNORED, f"{asked}, but the reply called {named}: it was ignored."
        case Knob.TOOL_CHOICE_NONE:
            return KnobState.HONOURED, f"{asked}: no call came back to a prompt that asks for one."
        case Knob.TOOL_CHOICE_REQUIRED if calls:
            return KnobState.HONOURED, f"{asked}: the reply called {named}, unasked."
        case Knob.TOOL_CHOICE_REQUIRED:
            return KnobState.IGNORED, f"{asked}, but no call came back: it was ignored."
        case _:
            forced = prompt.tool_choice.name or ""
            if calls and set(calls) == {forced}:
                return (
                    KnobState.HONOURED,
                    f"{asked}: the reply called {forced}, though the prompt points elsewhere.",
                )
            got = f"the reply called {named}" if calls else "no call came back"
            return KnobState.IGNORED, f"{asked}, but {got}: it was ignored."


def parallel_state(asked: str, calls: int, baseline: int | None) -> tuple[KnobState, str]:
    """Parallel control from the calls with the flag and without it (``baseline``)."""
    if calls > 1:
        return KnobState.IGNORED, f"{asked}, but {calls} calls came back: it was ignored."
    if baseline is not None and baseline > 1:
        return KnobState.HONOURED, f"{asked}: {_calls(calls)} came back, {baseline} without it."
    without = "no usable reply" if baseline is None else _calls(baseline)
    return (
        KnobState.UNTESTED,
        f"{asked}: {_calls(calls)}, but {without} without it: nothing to hold back.",
    )


def _calls(count: int) -> str:
    return f"{count} call{'s' * (count != 1)}"


def strict_state(
    broken: tuple[str, ...], calls: int | None, open_x: Exchange
) -> tuple[KnobState, str]:
    """Strict mode from why the closed schema's calls break it (``broken``), how many calls
    came, and what became of the open schema sent with strict on."""
    if broken:
        return (
            KnobState.FAILS_OPEN,
            f"strict: true was taken, and a call breaks the schema: {broken[0]}",
        )
    if not calls:
        return KnobState.UNTESTED, "strict: true was taken, but no call came back to check."
    match open_x.outcome:
        case Refused(refusal) if refusal.kind in KNOB_REFUSALS:
            return (
                KnobState.HONOURED,
                "strict: true: the calls conform, and a schema strict mode can't enforce was "
                "refused.",
            )
        case Replied() | Unparsed():
            return (
                KnobState.IGNORED,
                "strict: true: the calls conform, but a schema strict mode can't enforce (open, "
                "with an optional field) was taken too: the flag isn't read.",
            )
        case _:
            return (
                KnobState.UNTESTED,
                "strict: true: the calls conform; the open schema got no usable answer.",
            )


def broken_ids(rounds: list[tuple[str | None, ...]], round_trip: bool | None) -> list[str]:
    """What is wrong with the conversation's ids, a sentence each."""
    ids = [i for one in rounds for i in one]
    out = []
    if any(i is None for i in ids):
        out.append("A call came without an id.")
    if any(len(set(one)) < len(one) for one in rounds if None not in one):
        out.append("Two calls of one reply share an id.")
    elif len({i for i in ids if i}) < len([i for i in ids if i]):
        out.append("An id came back again in a later round.")
    if round_trip is False:
        out.append("The server refused its own ids carried back.")
    return out


def unanswered(exchange: Exchange) -> tuple[KnobState | None, str]:
    """The state when no reply came (None when one did), and why."""
    match exchange.outcome:
        case Replied():
            return None, ""
        case Refused(refusal) if refusal.kind in KNOB_REFUSALS:
            return KnobState.REFUSED, f"Refused: {refusal.message}"
        case Refused(refusal) if refusal.kind is RefusalKind.TOOLS and _names_a_knob(refusal):
            # OpenRouter refuses a tool_choice no upstream supports with its "no endpoints
            # support tools" 404 (provider-facts N04): the knob, not the tools, was refused.
            return KnobState.REFUSED, f"Refused: {refusal.message}"
        case Refused(refusal) if refusal.kind is RefusalKind.TOOLS:
            return KnobState.UNTESTED, "The endpoint takes no tools: no knob can be tried."
        case Refused(refusal):
            return KnobState.UNTESTED, f"Refused ({refusal.kind.value}): nothing learnt."
        case Unparsed(failure):
            return KnobState.UNTESTED, f"The server couldn't parse the output: {failure.cause}"
        case Failed(error):
            return KnobState.UNTESTED, f"No usable reply: {error.detail}"


_KNOB_WORDS = ("tool_choice", "parallel_tool_calls", "disable_parallel_tool_use", "strict")


def _names_a_knob(refusal: Refusal) -> bool:
    return any(word in refusal.message for word in _KNOB_WORDS)


def lost(cell: Cell) -> tuple[KnobState | None, str]:
    """Untested when the reply's call was lost in the reasoning: what the knob did is unknown."""
    if cell.outcome is not Outcome.SWALLOWED:
        return None, ""
    return (
        KnobState.UNTESTED,
        "The call was written in the reasoning channel and never emitted: the knob can't be "
        "judged.",
    )


def breaking_calls(calls: Sequence[ToolCall], schema: dict[str, object]) -> tuple[str, ...]:
    """Why each call breaks ``schema``, read as JSON exactly as sent (nothing mended)."""
    validator = Draft202012Validator(schema)
    out: list[str] = []
    for call in calls:
        try:
            value = json.loads(call.arguments)
        except (ValueError, RecursionError):
            out.append(f"{call.name}: the arguments are not JSON: {call.arguments[:80]!r}.")
            continue
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in error.path) or "arguments"
            out.append(f"{call.name}: {where}: {error.message}.")
    return tuple(out)
