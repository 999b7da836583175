"""Call formats that name each function in an opening tag and each argument in a tag of its
own, read like Qwen3-Coder's XML (``markup``): MiniMax-M2's ``<invoke name="f">`` with
``<parameter name="a">``, the same tags inside a bare ``<function_calls>`` (Claude-style),
Seed-OSS's ``<function=f>`` inside ``<seed:tool_call>``, Step3's ``<steptml:invoke>``, and
Hunyuan HY-V3's ``<tool_call>f<tool_sep>`` with GLM's key/value tags (``lists.hunyuan``
hands them over from its ``<tool_calls>`` block).

Every value is text (``forms.UNTYPED_FORMS``), typed by the tool's schema only; a closing tag
inside a value is its text unless the next tag or the end follows it (``lexer``).
docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md (sections 2 and 5) and
call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md (1 and 6) hold the
grammar of each, with the engines' parsers and their commits; HY-V3's is in the first (6).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer
from conchcheck.core.words.markup import _FUNCTION, _Invocations, exact_value, glm
from conchcheck.core.words.values import GLM_VALUES, Values, tagged

MINIMAX_BLOCK = ("<minimax:tool_call>", "</minimax:tool_call>")
INVOKE_BLOCK = ("<function_calls>", "</function_calls>")
SEED_BLOCK = ("<seed:tool_call>", "</seed:tool_call>")
STEP3_BLOCK = ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>")
"""Step3's section: U+FF5C FULLWIDTH VERTICAL LINE as DeepSeek's, but ASCII underscores where
DeepSeek writes U+2581, so it is a marker of its own (vLLM and SGLang step3 parsers)."""
STEP3_CALL_END = "<｜tool_call_end｜>"
HY_CALL, HY_CALL_END, HY_SEP = "<tool_call>", "</tool_call>", "<tool_sep>"

# MiniMax-M2's template writes '<parameter name="K">V</parameter>' on a line of its own, then
# the next parameter or "</invoke>" (the Unsloth copy of the template in llama.cpp
# models/templates/unsloth-MiniMax-M2.jinja; vLLM minimax_m2 and SGLang minimax-m2 parsers).
INVOKE_VALUES = tagged(
    '<parameter name="',
    '[^"\n]{1,200}',
    '">',
    "</parameter>",
    ('<parameter name="', "</invoke>", "<invoke", MINIMAX_BLOCK[1], INVOKE_BLOCK[1]),
    own_line=True,
)
# Seed-OSS's template writes "<parameter=K>V</parameter>" and a newline, then the next one or
# "</function>" (llama.cpp models/templates/ByteDance-Seed-OSS.jinja): Qwen3-Coder's tags.
SEED_VALUES = tagged(
    "<parameter=",
    "[^>\n]{1,200}",
    ">",
    "</parameter>",
    ("<parameter=", "</function>", SEED_BLOCK[1], "<function="),
    own_line=True,
)
# Step3: '<steptml:parameter name="K">V</steptml:parameter>', inline or one a line (vLLM
# step3_tool_parser constants; SGLang step3_detector docstring).
STEP3_VALUES = tagged(
    '<steptml:parameter name="',
    '[^"\n]{1,200}',
    '">',
    "</steptml:parameter>",
    ('<steptml:parameter name="', "</steptml:invoke>", STEP3_CALL_END, STEP3_BLOCK[1]),
)

_INVOKE = re.compile(r'<invoke\s+name="([^"\n]{1,200})"\s*>')
_PARAMETER = re.compile(r'<parameter\s+name="([^"\n]{1,200})"\s*>')
_STEP3_INVOKE = re.compile(r'<steptml:invoke\s+name="([^"\n]{1,200})"\s*>')
_STEP3_PARAMETER = re.compile(r'<steptml:parameter\s+name="([^"\n]{1,200})"\s*>')
_SEED_PARAMETER = re.compile(r"<parameter=([^>\n]{1,200})>")


def _named(pattern: re.Pattern[str]) -> Callable[[str, str], tuple[str, object] | None]:
    """An argument read from a value tag whose name ``pattern`` finds (group 1)."""

    def argument(tag: str, text: str) -> tuple[str, object] | None:
        match = pattern.fullmatch(tag)
        return None if match is None else (match.group(1).strip(), exact_value(text))

    return argument


def _invocations(form: CallForm) -> _Invocations:
    """The ``<invoke name="f">`` calls of ``form`` (MiniMax-M2 or Claude-style)."""
    return _Invocations(
        form,
        "<invoke",
        _INVOKE,
        INVOKE_VALUES,
        "</invoke>",
        ("<invoke",),
        _named(_PARAMETER),
        ("</invoke>",),
    )


# The value runs to its closing tag with the next tag or the end after it: SGLang's rule (the
# first "</parameter>"), so "a < b" and a "</invoke>" inside a value are its text. vLLM strips
# all whitespace and reads "null" as null for any type; the template writes strings raw, so
# only the one newline each side (SGLang's grammar writes them) goes, and text stays text.
_MINIMAX = _invocations(CallForm.MINIMAX_M2)
# No engine registers the bare <function_calls> wrapper (vLLM, SGLang and llama.cpp read only
# MiniMax's): its inside is MiniMax-M2's grammar, so it is read by MiniMax-M2's rules.
_INVOKE_XML = _invocations(CallForm.INVOKE_XML)
# Seed-OSS is Qwen3-Coder's XML in its own wrapper; vLLM's seed_oss parser is "adapted from
# qwen3coder". Unlike vLLM, a call cut mid-value is cut, never run with the value it has.
_SEED = _Invocations(
    CallForm.SEED_OSS,
    "<function=",
    _FUNCTION,
    SEED_VALUES,
    "</function>",
    ("<function=",),
    _named(_SEED_PARAMETER),
    ("</function>",),
)
# Step3: each call is "<｜tool_call_begin｜>function<｜tool_sep｜>" + an invoke +
# "<｜tool_call_end｜>"; a call whose own end is missing at a cut is cut (note section 1(c)).
_STEP3 = _Invocations(
    CallForm.STEP3,
    "<steptml:invoke",
    _STEP3_INVOKE,
    STEP3_VALUES,
    "</steptml:invoke>",
    ("<steptml:invoke",),
    _named(_STEP3_PARAMETER),
    (STEP3_CALL_END,),
)


def minimax(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """MiniMax-M2: ``<invoke name="f">`` calls with ``<parameter name="a">`` values."""
    return _MINIMAX.read(reader, text, raw, cut_off=cut_off)


def invoke_xml(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Claude-style: the same ``<invoke>`` calls inside ``<function_calls>``."""
    return _INVOKE_XML.read(reader, text, raw, cut_off=cut_off)


def seed_oss(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Seed-OSS: ``<function=f>`` calls with ``<parameter=a>`` values."""
    return _SEED.read(reader, text, raw, cut_off=cut_off)


def step3(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Step3: ``<steptml:invoke name="f">`` calls with ``<steptml:parameter>`` values."""
    return _STEP3.read(reader, text, raw, cut_off=cut_off)


def hy_v3(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """HY-V3: ``<tool_call>f<tool_sep>`` then ``<arg_key>k</arg_key><arg_value>v</arg_value>``
    pairs (GLM's tags, read as GLM's), each call closed by ``</tool_call>``.

    The grammar is vLLM's hy_v3 parser's (vllm/tool_parsers/hy_v3_tool_parser.py @7a24fbb3)
    and SGLang's newer hunyuan detector's; no HY-V3 template was read. vLLM reads a call left
    unclosed at the end; a cut one is cut here, as in every family.
    """
    calls: list[WordsCall] = []
    pos = text.find(HY_CALL)
    while pos >= 0:
        start = pos + len(HY_CALL)
        lexer = Lexer((HY_CALL_END, HY_CALL), strings=False, values=(GLM_VALUES,), again=(HY_CALL,))
        found = lexer.find(text, start)
        end = found[0] if found is not None else len(text)
        closed = found is not None and found[1] == HY_CALL_END
        name, sep, arguments = text[start:end].partition(HY_SEP)
        if cut_off and not closed:
            calls.append(cut_call(CallForm.HY_V3, raw))
        elif not sep:
            problem = f"Your tool call has no {HY_SEP} after its function's name."
            calls.append(reader.failed(CallForm.HY_V3, raw, problem))
        else:
            read = glm(reader, name + arguments, raw, cut_off=False)
            calls += [replace(call, form=CallForm.HY_V3) for call in read]
        pos = text.find(HY_CALL, end + (len(HY_CALL_END) if closed else 0))
    return calls or [reader.failed(CallForm.HY_V3, raw, "Your tool call names no function.")]


Read = Callable[..., list[WordsCall]]
SECTIONS: tuple[tuple[str, str, CallForm, Read, Values], ...] = (
    (*MINIMAX_BLOCK, CallForm.MINIMAX_M2, minimax, INVOKE_VALUES),
    (*INVOKE_BLOCK, CallForm.INVOKE_XML, invoke_xml, INVOKE_VALUES),
    (*SEED_BLOCK, CallForm.SEED_OSS, seed_oss, SEED_VALUES),
    (*STEP3_BLOCK, CallForm.STEP3, step3, STEP3_VALUES),
)
"""Each section's opener and closer, its form, its reader and its values' tags."""
