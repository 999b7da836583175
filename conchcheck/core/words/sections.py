"""Call formats framed by special tokens, one reader per template generation: DeepSeek V3 and
V3.1, Kimi K2, gpt-oss Harmony, Gemma 4, Llama 3 ``<|python_tag|>``, Llama 4
``<|python_start|>`` and Mistral ``[TOOL_CALLS]``.

Each takes the text between a section's opening and closing tokens (``blocks`` finds those,
outside values) and reads its calls; a marker inside a JSON string is text (``lexer``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from conchcheck.core.words.forms import MAX_CALLS, CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer
from conchcheck.core.words.markup import function_tag, quoted

DS_CALL = "<｜tool▁call▁begin｜>"
DS_CALL_END = "<｜tool▁call▁end｜>"
DS_SEP = "<｜tool▁sep｜>"
KIMI_CALL = "<|tool_call_begin|>"
KIMI_CALL_END = "<|tool_call_end|>"
KIMI_ARGUMENTS = "<|tool_call_argument_begin|>"
GEMMA_QUOTE = '<|"|>'
FUNCTIONGEMMA_QUOTE = "<escape>"

_FENCED = re.compile(r"\A\s*```[A-Za-z]{0,10}\s*\n?(.*?)\n?\s*(?:```\s*)?\Z", re.S)
# A function's recipient is "functions.NAME"; "browser.search" or "python" are built-in tools,
# never the caller's (openai/harmony docs/format.md; vLLM openai_tool_parser).
_HARMONY_TO = re.compile(r"\bto=(?:functions\.([^\s<]{1,200})|([^\s<.]{1,200})(?=[\s<]|\Z))")
_GEMMA_NAME = re.compile(r"\s*(?:call:)?([A-Za-z_][\w.\-]{0,199})\s*")
_GEMMA_KEY = re.compile(
    r'("(?:[^"\\]|\\.)*")|([{,]\s*)([^\s:{}\[\],"][^:{}\[\],"\n]{0,200}?)\s*(?=:)'
)
_MISTRAL_NAME = re.compile(r"\s*([A-Za-z_][\w.\-]{0,199})\s*(?=\{)")
_KIMI_ID = re.compile(r"\s*(?:functions\.)?([^\s:]{1,200})(?::\d{1,6})?\s*\Z")


def deepseek(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """DeepSeek V3 / R1 (``function<｜tool▁sep｜>name`` + a fenced JSON) and V3.1
    (``name<｜tool▁sep｜>{…}``) calls inside a ``<｜tool▁calls▁begin｜>`` section.
    """
    calls: list[WordsCall] = []
    for inner, closed in _pieces(text, DS_CALL, DS_CALL_END):
        head, sep, arguments = inner.partition(DS_SEP)
        if cut_off and not closed:
            # The reply was cut inside this call: never mended, never run.
            calls.append(cut_call(CallForm.DEEPSEEK_V31, raw))
        elif not sep:
            calls.append(reader.failed(CallForm.DEEPSEEK_V31, raw, _NO_SEP))
        elif head.strip() == "function" and not arguments.lstrip().startswith("{"):
            # V3 and R1: the type, then the name on its line and the arguments in a fence
            # (deepseek-ai DeepSeek-V3 tokenizer_config.json chat_template).
            name, _, fenced = arguments.partition("\n")
            match = _FENCED.match(fenced)
            body = match.group(1) if match is not None else fenced
            calls += reader.named(name.strip(), body, CallForm.DEEPSEEK_V3, raw, cut_off=False)
        else:
            name = head.strip()
            calls += reader.named(name, arguments, CallForm.DEEPSEEK_V31, raw, cut_off=False)
    return calls or [reader.failed(CallForm.DEEPSEEK_V31, raw, "Your tool call is empty.")]


def kimi(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Kimi K2: ``<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}``."""
    calls: list[WordsCall] = []
    for inner, closed in _pieces(text, KIMI_CALL, KIMI_CALL_END):
        head, sep, arguments = inner.partition(KIMI_ARGUMENTS)
        match = _KIMI_ID.match(head)
        if cut_off and not closed:
            calls.append(cut_call(CallForm.KIMI_K2, raw))  # cut inside this call
        elif not sep or match is None:
            problem = "Your tool call has no function id before its arguments."
            calls.append(reader.failed(CallForm.KIMI_K2, raw, problem))
        else:
            calls += reader.named(match.group(1), arguments, CallForm.KIMI_K2, raw, cut_off=False)
    return calls or [reader.failed(CallForm.KIMI_K2, raw, "Your tool call is empty.")]


def harmony(reader: Reader, head: str, body: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """gpt-oss: a message whose header says ``to=functions.name`` holds its JSON arguments."""
    match = _HARMONY_TO.search(head)
    if match is None:
        return []
    name = match.group(1) or match.group(2)
    return reader.named(name, body, CallForm.HARMONY, raw, cut_off=cut_off)


def is_harmony_call(head: str) -> bool:
    """Whether a Harmony message header addresses a function (else it is text)."""
    return _HARMONY_TO.search(head) is not None


def gemma4(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Gemma 4: ``call:name{key:<|"|>text<|"|>,n:3}``: bare keys, strings in ``<|"|>``."""
    match = _GEMMA_NAME.match(text)
    if match is None:
        return [reader.failed(CallForm.GEMMA4, raw, "Your tool call names no function.")]
    return reader.named(
        match.group(1), _gemma_json(text[match.end() :]), CallForm.GEMMA4, raw, cut_off=cut_off
    )


def functiongemma(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """FunctionGemma: ``call:name{key:<escape>text<escape>,n:3}``, Gemma 4's shape with
    ``<escape>`` around strings (Ollama's functiongemma renderer and parser)."""
    match = _GEMMA_NAME.match(text)
    if match is None:
        return [reader.failed(CallForm.FUNCTIONGEMMA, raw, "Your tool call names no function.")]
    body = _gemma_json(text[match.end() :], FUNCTIONGEMMA_QUOTE)
    return reader.named(match.group(1), body, CallForm.FUNCTIONGEMMA, raw, cut_off=cut_off)


def llama4(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Llama 4: a pythonic list between ``<|python_start|>`` and ``<|python_end|>``."""
    if cut_off:
        return [cut_call(CallForm.LLAMA4_PYTHONIC, raw)]
    calls = reader.pythonic(text.strip())
    if calls is None:
        return [
            replace(call, form=CallForm.LLAMA4_PYTHONIC)
            for call in reader.json_body(text, CallForm.LLAMA4_PYTHONIC, raw, cut_off=False)
        ]
    return [replace(call, form=CallForm.LLAMA4_PYTHONIC, raw=raw) for call in calls]


def mistral(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Mistral: a JSON list after ``[TOOL_CALLS]`` (before v11), or ``name[ARGS]{…}`` pieces,
    with ``[CALL_ID]id`` between them in some templates (v11 and later), or ``name{…}`` as
    vLLM's Mistral tokenizer decodes the same tokens (it drops ``[ARGS]``).
    """
    calls: list[WordsCall] = []
    pieces = [piece for piece in _split(text, "[TOOL_CALLS]") if piece.strip()]
    for i, piece in enumerate(pieces):
        cut = cut_off and i == len(pieces) - 1
        found = Lexer(("[ARGS]",)).find(piece)
        compact = _MISTRAL_NAME.match(piece)
        if found is not None:
            name = piece[: found[0]].partition("[CALL_ID]")[0].strip()
            arguments = piece[found[0] + len("[ARGS]") :]
            calls += function_tag(reader, name, arguments, raw, cut_off=cut)
        elif compact is not None:
            # vLLM's mistral parser: the name runs to the first "{" (mistral_tool_parser.py).
            body = piece[compact.end() :]
            calls += reader.named(compact.group(1), body, CallForm.MISTRAL, raw, cut_off=cut)
        elif cut and not piece.strip().startswith(("[", "{")):
            calls.append(cut_call(CallForm.MISTRAL, raw))  # cut before its arguments began
        else:
            calls += reader.json_body(piece, CallForm.MISTRAL, raw, cut_off=cut)
    return [replace(c, form=CallForm.MISTRAL) for c in calls] or [
        reader.failed(CallForm.MISTRAL, raw, "Your tool call is empty.")
    ]


def python_tag(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Llama 3: call objects after ``<|python_tag|>``, separated by ``;`` or new lines."""
    pieces = [p for part in _split(text, ";") for p in _values(part) if p.strip()]
    calls: list[WordsCall] = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        calls += reader.json_body(piece, CallForm.PYTHON_TAG, raw, cut_off=cut_off and last)
    return calls or [reader.failed(CallForm.PYTHON_TAG, raw, "Your tool call is empty.")]


def _values(text: str) -> list[str]:
    """``text`` cut before each JSON object that follows another after white space only:
    SGLang's llama3 detector reads calls joined by a new line after the tag (docs/research/
    call-reading-reasoning-and-several-calls.md §5.1, case llama3-python-tag-newline)."""
    pieces: list[str] = []
    pos = 0
    while len(pieces) < MAX_CALLS:  # past it, the rest is one piece (``forms.MAX_CALLS``)
        found = Lexer((), balanced=True).find(text, pos)
        after = found[0] if found is not None else len(text)
        while after < len(text) and text[after].isspace():
            after += 1
        if found is None or after == len(text) or text[after] != "{":
            return [*pieces, text[pos:]]
        pieces.append(text[pos : found[0]])
        pos = after
    return [*pieces, text[pos:]]


_NO_SEP = "Your tool call has no <｜tool▁sep｜> between its name and its arguments."


def _pieces(text: str, begin: str, end: str) -> list[tuple[str, bool]]:
    """The calls of a section: the text after each ``begin`` up to its ``end`` (outside JSON
    strings), and whether that ``end`` was there.
    """
    pieces: list[tuple[str, bool]] = []
    pos = text.find(begin)
    while pos >= 0:
        start = pos + len(begin)
        found = Lexer((end, begin)).find(text, start)
        if found is None:
            pieces.append((text[start:], False))
            break
        pieces.append((text[start : found[0]], found[1] == end))
        pos = text.find(begin, found[0] + (len(end) if found[1] == end else 0))
    return pieces


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` outside JSON strings."""
    pieces: list[str] = []
    pos = 0
    while (found := Lexer((separator,)).find(text, pos)) is not None:
        pieces.append(text[pos : found[0]])
        pos = found[0] + len(separator)
    pieces.append(text[pos:])
    return pieces


def _gemma_json(text: str, quote: str = GEMMA_QUOTE) -> str:
    """Gemma 4's argument object with each ``<|"|>``-quoted (or FunctionGemma's
    ``<escape>``-quoted) string written as JSON text."""
    out: list[str] = []
    pos = 0
    while (start := text.find(quote, pos)) >= 0:
        end = text.find(quote, start + len(quote))
        if end < 0:
            break
        out += [text[pos:start], quoted(text[start + len(quote) : end])]
        pos = end + len(quote)
    out.append(text[pos:])
    # Keys are written bare and may hold spaces ("Basic LLM Chain:{…}", ollama/ollama#18390;
    # the template's format_argument with escape_keys=False): quote every one.
    return _GEMMA_KEY.sub(_quote_key, "".join(out))


def _quote_key(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(1)  # a string, already JSON
    return match.group(2) + quoted(match.group(3).strip())
