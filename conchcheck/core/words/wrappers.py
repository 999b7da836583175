"""Calls in wrappers no family owns, read as forgivingly as llama.cpp's Hermes 2 Pro parser reads
them (``common_chat_parse_hermes_2_pro``, common/chat-parser.cpp @05e5139a; docs/research/
call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md, section 9): the tags
``<tool>``, ``<tools>``, ``<response>``, ``<json>``, ``<xml>``, ``<JSON>`` and
``<function_call>`` around a call's JSON, ``<function name="f">{…}</function>``, a code
fence (```` ```xml ```` too) around a call or a wrapped one, and a call's JSON after words.

Each is held until it ends, and is a call only when it holds one naming an offered tool;
otherwise it is words, exactly as written (the tags are words a person writes about HTML or
XML). The wrapper is named as a repair, and so is a closer other than its own, or none
(``Repair.MISMATCHED_CLOSER``), where llama.cpp loses the call.
"""

from __future__ import annotations

import re
from dataclasses import replace

from conchcheck.core.repair import Repair, Unreadable, read_json
from conchcheck.core.words import lists
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call, names_offered_tool
from conchcheck.core.words.lexer import Lexer

TAGS: dict[str, Repair] = {
    "<tool>": Repair.WRAPPER_TOOL,
    "<tools>": Repair.WRAPPER_TOOLS,
    "<response>": Repair.WRAPPER_RESPONSE,
    "<json>": Repair.WRAPPER_JSON,
    "<JSON>": Repair.WRAPPER_JSON,
    "<xml>": Repair.WRAPPER_XML,
    "<function_call>": Repair.WRAPPER_FUNCTION_CALL,
}
"""The tags llama.cpp's Hermes 2 Pro parser takes around a call's JSON (its opener regex), and
the repair each is; the parser wants the closer built from the opener ("</" + tag[1:])."""
HERMES = "<tool_call>"
FUNCTION = '<function name="'
CLOSERS = tuple(f"</{tag[1:]}" for tag in (HERMES, *TAGS))
"""What ends a wrapper: its own closer, or another's (then ``MISMATCHED_CLOSER``)."""
REOPEN = (HERMES, *TAGS, FUNCTION, "<function=")
"""Openers that end a wrapper never closed: the next call begins there."""
TAG_HEAD = re.compile(r"\s*(?:\[\s*)?")
"""Between a tag and the ``{`` of its JSON, which ends the head: space (the regex's
``\\s*\\{``), or a list's ``[`` (a list of calls, which llama.cpp doesn't take), so a tag in
prose is words at once and nothing is held."""
FUNCTION_HEAD = re.compile(r'[^"<>\n]{0,200}(?:"(?:>\s{0,200})?)?')
"""``<function name="`` then a name, ``">`` and space, up to the ``{`` of the arguments."""
# A call's JSON after words: llama.cpp's opener regex searches the whole reply for
# '\s*\{\s*"name"'. The "{" (or the "[" of a list of calls) is the marker, and what must
# follow it is looked ahead for, with the space bounded so a marker fits in markers.LONGEST.
_NAME = '"name"'
_SPACE = 12
"""Space allowed between a "{" and its "name" (and 6 between a list's "[" and its "{")."""
_NAME_PART = '(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?'
_OBJECT_PART = rf"\{{\s{{0,{_SPACE}}}" + _NAME_PART
BARE = {
    "{": rf"\{{(?=\s{{0,{_SPACE}}}{_NAME})",
    "[": rf"\[(?=\s{{0,{_SPACE // 2}}}\{{\s{{0,{_SPACE}}}{_NAME})",
}
"""Where a call's JSON after words opens: the opener, and a regex that finds it."""
BARE_PARTS = (_OBJECT_PART, rf"\[\s{{0,{_SPACE // 2}}}(?:{_OBJECT_PART})?")
"""Regexes for any start of one of ``BARE``'s openers with what must follow it: a "{" that
code follows passes at once, and only one that may yet be a call waits."""
BARE_REACH = 1 + _SPACE // 2 + 1 + _SPACE + len(_NAME)
"""The most characters one of ``BARE``'s openers and what must follow it take."""
_FUNCTION_NAME = re.compile(r'([^"<>\n]{1,200})">\s*')
_FENCED = re.compile(r"\s*(" + "|".join(map(re.escape, (HERMES, *TAGS))) + r")\s*(?=[{\[])")


def tag_calls(
    reader: Reader, opener: str, head: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """A wrapper tag's calls and words: ``head`` is the space (and a list's ``[``) before the
    ``{`` that ``body`` follows."""
    raw = f"{opener}{head}{{{body}{closer}"
    calls = _wrapped(reader, f"{head.lstrip()}{{{body}", raw, CallForm.TOOL_CALL, cut_off=cut_off)
    if calls is None:
        return [], raw
    mismatched = (Repair.MISMATCHED_CLOSER,) if closer != f"</{opener[1:]}" else ()
    return _repaired(calls, TAGS[opener], *mismatched), ""


def function_calls(
    reader: Reader, opener: str, head: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """``<function name="f">{…}</function>``'s call and words: a call only when ``f`` is an
    offered tool and the body its arguments' JSON (``FUNCTION_TAG``, as Llama's
    ``<function=f>``)."""
    raw = f"{opener}{head}{{{body}{closer}"
    named = _FUNCTION_NAME.fullmatch(head)
    if named is None or named.group(1) not in reader.tools:
        return [], raw
    text = "{" + body
    found = Lexer((), balanced=True).find(text)
    if found is None and cut_off:
        return [cut_call(CallForm.FUNCTION_TAG, raw)], ""
    end = len(text) if found is None else found[0]
    try:
        reading = read_json(text[:end])
    except Unreadable:
        return [], raw
    if text[end:].strip() or not isinstance(reading.value, dict):
        return [], raw
    if cut_off:
        return [cut_call(CallForm.FUNCTION_TAG, raw)], ""
    mismatched = () if closer else (Repair.MISMATCHED_CLOSER,)
    repairs = (Repair.FUNCTION_ATTRIBUTE, *mismatched, *reading.repairs)
    return [reader.call(named.group(1), reading.value, CallForm.FUNCTION_TAG, raw, repairs)], ""


def fence_calls(
    reader: Reader, opener: str, info: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """A held fence's calls, and its words: a wrapped call naming an offered tool, a ``tool…``
    fence (always a call), or a JSON one naming an offered tool; any other is words after all."""
    raw = f"{opener}{info}\n{body}{closer}"
    kind = info.strip().lower()
    # llama.cpp's opener regex takes ```, ```json and ```xml before a wrapper; ```xml around
    # JSON is a slip of its own, named.
    xml = (Repair.FENCE_XML,) if kind == "xml" else ()
    wrapped = _fenced(reader, body, raw, xml or (Repair.FENCE,), cut_off=cut_off)
    if wrapped is not None:
        return wrapped, ""
    if kind.startswith("tool"):
        form = CallForm.TOOL_CALL_FENCE
    elif names_offered_tool(body, reader.tools):
        form = CallForm.FENCE
    elif lists.is_cohere_action(body, reader.tools):
        # Command R+ writes "Action:" and its list in a json fence (its tool_use template).
        return lists.cohere(reader, body.rstrip("`"), raw, cut_off=cut_off), ""
    else:
        return [], raw
    return _repaired(reader.json_body(body.rstrip("`"), form, raw, cut_off=cut_off), *xml), ""


def bare_calls(
    reader: Reader, opener: str, head: str, body: str, closer: str, cut_off: bool
) -> tuple[list[WordsCall], str]:
    """A call's JSON after words (``BARE``), and its words: calls only by ``Reader.whole``'s
    rule (call-shaped, naming an offered tool), as if it were the whole reply."""
    raw = opener + body
    if cut_off:  # the reply ended inside the value
        named = names_offered_tool(raw, reader.tools)
        return ([cut_call(CallForm.BARE_JSON, raw)], "") if named else ([], raw)
    calls, words = reader.whole(raw, cut_off=False)
    return (calls, "") if calls and not words else ([], raw)


def _fenced(
    reader: Reader, body: str, raw: str, fence: tuple[Repair, ...], *, cut_off: bool
) -> list[WordsCall] | None:
    """The calls of a fence whose body is one wrapped call, or None."""
    match = _FENCED.match(body)
    if match is None:
        return None
    tag, rest = match.group(1), body[match.end() :]
    found = Lexer(CLOSERS).find(rest)
    closer = "" if found is None else found[1]
    end = len(rest) if found is None else found[0]
    if rest[end + len(closer) :].strip():
        return None
    # A wrapper closed inside a fence the cut left open is whole: the cut came after it.
    calls = _wrapped(reader, rest[:end], raw, CallForm.TOOL_CALL, cut_off=cut_off and not closer)
    if calls is None:
        return None
    wrapper = (TAGS[tag],) if tag in TAGS else ()
    mismatched = (Repair.MISMATCHED_CLOSER,) if closer != f"</{tag[1:]}" else ()
    return _repaired(calls, *fence, *wrapper, *mismatched)


def _wrapped(
    reader: Reader, text: str, raw: str, form: CallForm, *, cut_off: bool
) -> list[WordsCall] | None:
    """The calls in a wrapper's ``text``, one JSON value from its ``{``, or None when it holds
    no call to an offered tool (the wrapper is words then). ``cut_off``: the reply was cut
    before the wrapper closed, so a call in it is cut, never mended."""
    if '"' not in text and "'" not in text:
        return None  # no name in quotes, so no call: "<json>{" in prose costs no JSON read
    found = Lexer((), balanced=True).find(text)
    end = len(text) if found is None else found[0]
    if text[end:].strip() or not names_offered_tool(text[:end], reader.tools):
        return None
    if cut_off:
        return [cut_call(form, raw)]
    return reader.json_body(text[:end], form, raw, cut_off=False)


def _repaired(calls: list[WordsCall], *repairs: Repair) -> list[WordsCall]:
    """``calls`` with ``repairs`` named first on each one whose arguments were read."""
    return [
        replace(c, repairs=tuple(dict.fromkeys((*repairs, *c.repairs))))
        if c.reading is not None
        else c
        for c in calls
    ]
