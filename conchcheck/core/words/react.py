"""ReAct: ``Action: NAME`` then ``Action Input: {…}``, as Qwen-Agent's and LangChain's ReAct
prompts ask (docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-
mistral.md §7, whose (c) is the rule followed here).

No engine parses it; the agent frameworks do, and disagree: LangChain takes the first pair,
Qwen-Agent the last. The first pair is the call, since the stop word (``Observation:``) ends a
well-behaved turn there and a later pair follows a result the model made up. Its input runs to
the end of its JSON object, or for plain text to the next ``Observation:`` or ``Action:`` line.
Read only in a reply that opens with ``Thought:`` or ``Action:`` (``markers.opening``): the words
stream as they come, and "Action:" is everyday English.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from conchcheck.core.repairs import Repair
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer

OPENERS = ("Thought:", "Action:")
"""How a ReAct reply opens (the prompt's own labels)."""
# The first "Action:" line (at the reply's start or a line's) with an "Action Input:" after it.
_ACTION = re.compile(
    r"(?:\A|\n)[ \t]*Action[ \t]*:[ \t]*([^\n]{1,200}?)[ \t]*\n\s*Action[ \t]*Input[ \t]*:[ \t]*"
)
_INPUT_END = re.compile(r"\n[ \t]*(?:Observation|Action)[ \t]*:")
_STOP = "Observation:"


def react(reader: Reader, text: str, *, cut_off: bool) -> tuple[list[WordsCall], str] | None:
    """The first action's call and the words around it; None when the reply holds no action
    naming an offered tool (then it is read as words)."""
    match = _ACTION.search(text)
    if match is None or match.group(1) not in reader.tools:
        return None
    name, start = match.group(1), match.end()
    if text.startswith("{", start):
        found = Lexer((), balanced=True).find(text, start)
        end = len(text) if found is None else found[0]
    else:
        stop = _INPUT_END.search(text, start)
        end = len(text) if stop is None else stop.start()
    shown = match.start() + (text[match.start()] == "\n")
    raw, rest = text[shown:end], text[end:]
    if rest.strip() == _STOP:
        rest = ""  # the stop word, written out: the turn's end, never words
    given = text[start:end].strip()
    if given.startswith("{"):
        calls = reader.named(name, given, CallForm.REACT, raw, cut_off=cut_off)
    elif cut_off and not rest:
        calls = [cut_call(CallForm.REACT, raw)]
    else:
        calls = [_plain(reader, name, given, raw)]
    return calls, text[:shown] + rest


def _plain(reader: Reader, name: str, given: str, raw: str) -> WordsCall:
    """A plain-text input: the tool's one required text parameter, when it has exactly one
    (LangChain passes the text to the tool as it is), else a call that says what to write."""
    schema: Any = reader.tools[name].parameters
    required = schema.get("required") if isinstance(schema, Mapping) else None
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(required, list) and len(required) == 1 and isinstance(properties, Mapping):
        field = properties.get(required[0])
        if isinstance(field, Mapping) and field.get("type") == "string":
            text = given.strip('"')
            return reader.call(
                name, {required[0]: text}, CallForm.REACT, raw, (Repair.PLAIN_INPUT,)
            )
    problem = f"Your Action Input for {name} is not a JSON object of its arguments."
    return reader.failed(CallForm.REACT, raw, problem, name)
