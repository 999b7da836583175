"""A scripted model that knows the matrix: it answers each prompt the way a correct model would.

With tools passed natively it calls them (cleanly or with ``sloppy`` argument text); with
tools in words (no native tools) it writes the calls in ``form``; after a tool's result it
repeats the result, so follow-ups pass. The e2e tests build provider profiles from it.

It knows the knob prompts too (``knob_matrix()``, DESIGN stage 8), and obeys every knob the
request sets: no call under ``tool_choice: none``, a call under ``required``, the named tool
under a named choice, one call under ``parallel_tool_calls: false``, arguments that fit a
``strict`` schema; the call-id prompt gets Paris, then Tokyo, then Lima, one city a round.
Left to itself (a knob in ``ignores``, or not set) it does what the prompt tempts it to.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from conchcheck.core.matching import MISSING, Matcher, MatcherKind
from conchcheck.matrix import Matrix, Prompt, knob_matrix
from tests.emulators.model import SLOPPY, WORDS, Answer, Asked, Behaviour, Call, sample_arguments

KNOBS = knob_matrix()

_PROMPT = {p.id: p.user for p in KNOBS.prompts}
TEMPTED: dict[str, list[tuple[str, dict[str, Any]]]] = {
    _PROMPT["tool-choice-none"]: [("get_weather", {"city": "Paris"})],
    _PROMPT["tool-choice-named"]: [("get_weather", {"city": "Paris"})],
    _PROMPT["strict-closed"]: [("set_alarm", {"minutes": "ten", "label": "tea"})],
}
"""What a model does, left to itself, with the prompts a knob holds back (by their words): the
weather in Paris when asked for it (the default matrix's forced-choice prompt has the same
words as tool-choice-named), the alarm written the way the prompt tempts."""

ROUNDS = ("Paris", "Tokyo", "Lima")
"""The cities of the call-id conversation, one a round."""

IGNORABLE = frozenset({"none", "required", "named", "parallel"})
"""The knobs ``oracle(ignores=…)`` can ignore: the three tool choices and parallel control."""


def ideal(matcher: Matcher) -> Any:
    """A value that a correct model would send for ``matcher``."""
    if matcher.kind is MatcherKind.ONE_OF:
        return matcher.value[0]
    if matcher.kind is MatcherKind.ITEMS_CONTAIN:
        return list(matcher.value)
    if matcher.kind is MatcherKind.ANY:
        return "anything"
    if matcher.kind is MatcherKind.ABSENT:
        return MISSING
    if matcher.kind is MatcherKind.FIELDS:
        return {name: ideal(inner) for name, inner in matcher.value}
    return matcher.value


def ideal_calls(prompt: Prompt) -> list[tuple[str, dict[str, Any]]]:
    """The calls a correct model makes for ``prompt``."""
    calls = []
    for call in prompt.expect.calls:
        values = {a.name: ideal(a.matcher) for a in call.arguments}
        calls.append((call.tool, {k: v for k, v in values.items() if v is not MISSING}))
    return calls


def oracle(
    matrix: Matrix,
    *,
    native: bool = True,
    words: bool = True,
    sloppy: str | None = None,
    form: str = "hermes",
    leak: str | None = None,
    ignores: Collection[str] = (),
) -> Behaviour:
    """Answers every prompt of ``matrix`` and of the knob matrix correctly, natively and/or in
    words; with ``leak``, a native call comes back as text in that family's format (a server
    that didn't parse it); each knob in ``ignores`` (of ``IGNORABLE``) has no effect.
    """
    assert set(ignores) <= IGNORABLE, ignores
    # Three knob prompts have the words of a default prompt (tool-choice-required is
    # no-tool-needed, tool-choice-named is forced-choice, parallel is parallel-calls): the
    # probe's matrix's expectations hold for both.
    prompts = {p.user: p for p in (*KNOBS.prompts, *matrix.prompts)}

    def behave(asked: Asked) -> Answer:
        last = asked.messages[-1] if asked.messages else {"role": "user", "content": ""}
        user = next((m["content"] for m in reversed(asked.messages) if m["role"] == "user"), "")
        prompt = prompts.get(user)
        if prompt is not None and prompt.id == "ids-rounds" and asked.tools:
            done = sum(m["role"] == "tool" for m in asked.messages)
            if done >= len(ROUNDS):
                return Answer(text=f"Done: {last['content']} (Paris, Tokyo and Lima)")
            return Answer(
                calls=[Call("get_weather", json.dumps({"city": ROUNDS[done]}))],
                finish="tool_calls",
            )
        if last["role"] == "tool" or "<tool_response>" in last["content"]:
            return Answer(text=f"Done: {last['content']}")
        if prompt is None:
            return Answer(text="ok")
        calls = ideal_calls(prompt)
        if asked.tools and native:
            calls = _obeyed(prompt, asked, ignores)
        if not calls:
            return Answer(text="Happy to help with that in words.")
        if asked.tools:
            if not native:
                return Answer(text="I would rather not use tools.")
            if leak is not None:
                return Answer(text="\n".join(WORDS[leak](name, args) for name, args in calls))
            text = (lambda a: SLOPPY[sloppy](a)) if sloppy else json.dumps
            return Answer(
                calls=[Call(name, text(args)) for name, args in calls], finish="tool_calls"
            )
        if not words:
            return Answer(text="I can't do that.")
        return Answer(text="\n".join(WORDS[form](name, args) for name, args in calls))

    return behave


def _obeyed(
    prompt: Prompt, asked: Asked, ignores: Collection[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The calls for ``prompt`` with the request's knobs applied (unless ignored)."""
    calls = TEMPTED.get(prompt.user, ideal_calls(prompt))
    if prompt.user == _PROMPT["strict-closed"] and any(asked.strict.values()):
        calls = ideal_calls(prompt)  # held to the closed schema: the integer, nothing extra
    choice = asked.choice if asked.choice not in ignores else "auto"
    if choice == "none":
        calls = []
    elif choice == "required" and not calls:
        tool = asked.tools[0]
        calls = ideal_calls(prompt) or [(tool["name"], sample_arguments(tool["parameters"]))]
    elif choice == "named" and asked.named is not None:
        wanted = [c for c in ideal_calls(prompt) if c[0] == asked.named]
        calls = [c for c in calls if c[0] == asked.named] or wanted or [(asked.named, {})]
    if asked.parallel is False and "parallel" not in ignores:
        calls = calls[:1]
    return calls
