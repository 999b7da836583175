"""A scripted model that knows the matrix: it answers each prompt the way a correct model would.

With tools passed natively it calls them (cleanly or with ``sloppy`` argument text); with
tools in words (no native tools) it writes the calls in ``form``; after a tool's result it
repeats the result, so follow-ups pass. The e2e tests build provider profiles from it.
"""

from __future__ import annotations

import json
from typing import Any

from conchcheck.core.matching import MISSING, Matcher, MatcherKind
from conchcheck.matrix import Matrix, Prompt
from tests.emulators.model import SLOPPY, WORDS, Answer, Asked, Behaviour, Call


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
) -> Behaviour:
    """Answers every prompt of ``matrix`` correctly, natively and/or in words; with ``leak``,
    a native call comes back as text in that family's format (a server that didn't parse it).
    """
    prompts = {p.user: p for p in matrix.prompts}

    def behave(asked: Asked) -> Answer:
        last = asked.messages[-1] if asked.messages else {"role": "user", "content": ""}
        if last["role"] == "tool" or "<tool_response>" in last["content"]:
            return Answer(text=f"Done: {last['content']}")
        user = next((m["content"] for m in reversed(asked.messages) if m["role"] == "user"), "")
        prompt = prompts.get(user)
        if prompt is None:
            return Answer(text="ok")
        calls = ideal_calls(prompt)
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
