"""Call formats written as tags around each value: Qwen3-Coder's XML, GLM's key/value pairs,
DeepSeek V3.2 and V4's DSML, Kimi K3's argument tags, and Llama 3.1's ``<function=name>{…}``.

Values keep their exact text except the one newline the format puts after an opening tag and
before a closing one; a closing tag inside a value is the value's own text (``lexer``).
"""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from conchcheck.core.repair import Unreadable, read_json
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import Lexer
from conchcheck.core.words.values import (
    DSML41_VALUES,
    DSML_VALUES,
    GLM_VALUES,
    K3_VALUES,
    QWEN_VALUES,
    Values,
)

_FUNCTION = re.compile(r"<function=([^>\n]{0,200})>")
_PARAMETER_NAME = re.compile(r"<parameter=([^>\n]{1,200})>")
_ARG_KEY = re.compile(r"<arg_key>(.{0,400}?)</arg_key>", re.S)
_INVOKE = re.compile(r'<｜DSML｜invoke\s+name="([^"\n]{1,200})"\s*>')
_INVOKE41 = re.compile(r'<｜DSML｜ invoke\s+name="([^"\n]{1,200})"\s*>')
_DSML_PARAMETER = re.compile(r'name="([^"\n]{1,200})"(?:\s+string="(true|false)")?')
_K3_CALL = re.compile(r'<\|open\|>call\s+tool="([^"\n]{1,200})"[^<\n]{0,100}<\|sep\|>')
_K3_ARGUMENT = re.compile(r'key="([^"\n]{1,200})"(?:\s+type="(\w{1,20})")?')
_GLM_NAME = re.compile(r"\s*([^\s<]{1,200})\s*")


@dataclass(frozen=True, slots=True)
class _Invocations:
    """A format whose calls each open with a tag naming the function, hold one tagged value
    per argument, and close with ``closer`` (an outer tag may hold several)."""

    form: CallForm
    opener: str
    head: re.Pattern[str]
    """The opening tag, which starts with ``opener``; group 1 is the function's name."""
    values: Values
    closer: str
    again: tuple[str, ...]
    """What, after an unclosed value, still ends the call (see ``Lexer``)."""
    argument: Callable[[str, str], tuple[str, object] | None]
    """(a value's opening tag, its text) -> (the argument's name, its value)."""
    ends: tuple[str, ...]
    """What a reply that was not cut inside the last call ends with."""
    escaped: bool = False
    """Names are written with ``&amp;`` and ``&quot;``."""

    def read(self, reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
        """Every call in ``text``; the last one cut when the reply was cut inside it."""
        calls: list[WordsCall] = []
        pos = 0
        while (match := self.head.search(text, pos)) is not None:
            lexer = Lexer(
                (self.closer, self.opener),
                strings=False,
                values=(self.values,),
                again=self.again,
            )
            found = lexer.find(text, match.end())
            end = found[0] if found is not None else len(text)
            arguments: dict[str, object] = {}
            for tag, start, stop in lexer.spans:
                if start >= end:
                    break
                item = self.argument(tag, text[start : min(stop, end)])
                if item is not None:
                    arguments[item[0]] = item[1]
            name = match.group(1).strip()
            name = html.unescape(name) if self.escaped else name
            calls.append(reader.call(name, arguments, self.form, raw))
            pos = end + (len(self.closer) if found and found[1] == self.closer else 0)
        if not calls:
            return [reader.failed(self.form, raw, "Your tool call names no function.")]
        if cut_off and not text.rstrip().endswith(self.ends):
            calls[-1] = cut_call(self.form, raw)
        return calls


def _qwen_argument(tag: str, text: str) -> tuple[str, object] | None:
    name = _PARAMETER_NAME.fullmatch(tag)
    return None if name is None else (name.group(1).strip(), exact_value(text))


def _dsml_argument(tag: str, text: str) -> tuple[str, object] | None:
    # string="true" marks text; string="false" a JSON value, left as text when unreadable
    # (the schema check then says what was wanted).
    named = _DSML_PARAMETER.search(tag)
    return None if named is None else (named.group(1), _typed(text, named.group(2) == "false"))


def _k3_argument(tag: str, text: str) -> tuple[str, object] | None:
    named = _K3_ARGUMENT.search(tag)
    if named is None:
        return None
    return html.unescape(named.group(1)), _typed(text, named.group(2) != "string")


def _typed(text: str, json_value: bool) -> object:
    if json_value:
        with contextlib.suppress(Unreadable):
            return read_json(text.strip()).value
    return text


# Qwen3-Coder: closers are often missing (vLLM qwen3coder_tool_parser reads them optional;
# vllm#21571): a value then ends at the next <parameter=, at a </function> that ends the
# call, or at the end of the block.
_QWEN = _Invocations(
    CallForm.XML_PARAMETERS,
    "<function=",
    _FUNCTION,
    QWEN_VALUES,
    "</function>",
    ("</tool_call>", "<tool_call>", "<function="),
    _qwen_argument,
    ("</function>", "</parameter>"),
)
# DeepSeek V3.2 and V4 (DeepSeek-V3.2 encoding_dsv32.py as vendored in vLLM; vLLM
# deepseekv32 and deepseekv4 tool parsers).
_DSML = _Invocations(
    CallForm.DEEPSEEK_DSML,
    "<｜DSML｜invoke",
    _INVOKE,
    DSML_VALUES,
    "</｜DSML｜invoke>",
    ("</｜DSML｜function_calls>", "</｜DSML｜tool_calls>", "<｜DSML｜invoke"),
    _dsml_argument,
    ("</｜DSML｜invoke>",),
    escaped=True,
)
# DeepSeek V4.1: the same with a space before each tag's name (vLLM
# vllm/tokenizers/deepseek_v41_encoding.py, adapted from the V4.1 reference encoder).
_DSML41 = _Invocations(
    CallForm.DEEPSEEK_V41,
    "<｜DSML｜ invoke",
    _INVOKE41,
    DSML41_VALUES,
    "</｜DSML｜ invoke>",
    ("</｜DSML｜ calls>", "<｜DSML｜ invoke"),
    _dsml_argument,
    ("</｜DSML｜ invoke>",),
    escaped=True,
)
# Kimi K3 (the Kimi-K3 template as copied in llama.cpp models/templates; vLLM
# kimi_k3_tool_parser): attribute values escape & and " as entities.
_K3 = _Invocations(
    CallForm.KIMI_K3,
    "<|open|>call ",
    _K3_CALL,
    K3_VALUES,
    "<|close|>call<|sep|>",
    ("<|close|>tools<|sep|>", "<|open|>call "),
    _k3_argument,
    ("<|close|>call<|sep|>",),
    escaped=True,
)


def qwen_xml(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Qwen3-Coder's ``<function=f><parameter=a>\nvalue\n</parameter></function>`` calls."""
    return _QWEN.read(reader, text, raw, cut_off=cut_off)


def glm(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """GLM 4.5-4.7: ``name<arg_key>k</arg_key><arg_value>v</arg_value>…`` inside a block.

    GLM 4.5/4.6 put a newline after the name and after each tag; 4.7 writes none (zai-org
    chat templates). Values are text, typed by the schema (vLLM glm4_moe_tool_parser).
    """
    head = _GLM_NAME.match(text)
    if head is None or not head.group(1):
        return [reader.failed(CallForm.GLM, raw, "Your tool call names no function.")]
    lexer = Lexer((), strings=False, values=(GLM_VALUES,))
    lexer.find(text, head.end())
    arguments: dict[str, str] = {}
    previous = head.end()
    for _tag, start, stop in lexer.spans:
        key = _ARG_KEY.search(text, previous, start)
        if key is not None:
            arguments[key.group(1).strip()] = text[start:stop]
        previous = stop
    if cut_off and not text.rstrip().endswith("</arg_value>"):
        return [cut_call(CallForm.GLM, raw)]
    return [reader.call(head.group(1), arguments, CallForm.GLM, raw)]


def dsml(
    reader: Reader, text: str, raw: str, *, cut_off: bool, form: CallForm = CallForm.DEEPSEEK_DSML
) -> list[WordsCall]:
    """DeepSeek V3.2 and V4: ``<｜DSML｜invoke name="f">`` with one parameter tag per value,
    ``string="true"`` kept as text and ``string="false"`` a JSON value; V4 writes the same
    inside ``<｜DSML｜tool_calls>``."""
    return replace(_DSML, form=form).read(reader, text, raw, cut_off=cut_off)


def dsml41(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """DeepSeek V4.1: ``<｜DSML｜ invoke name="f">`` with ``<｜DSML｜ parameter …>`` tags."""
    return _DSML41.read(reader, text, raw, cut_off=cut_off)


def kimi_k3(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Kimi K3: ``<|open|>call tool="f" index="1"<|sep|>`` then one argument tag per value,
    ``type="string"`` kept as text and any other type a JSON value."""
    return _K3.read(reader, text, raw, cut_off=cut_off)


def function_tag(
    reader: Reader, name: str, body: str, raw: str, *, cut_off: bool
) -> list[WordsCall]:
    """Llama 3.1's ``<function=name>{…}</function>``, or Qwen3-Coder lines after the tag."""
    if "<parameter=" in body:
        return qwen_xml(reader, f"<function={name}>{body}", raw, cut_off=cut_off)
    return reader.named(name, body, CallForm.FUNCTION_TAG, raw, cut_off=cut_off)


def exact_value(text: str) -> str:
    """A tagged value's text without the one newline the format puts on each side."""
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def quoted(text: str) -> str:
    """``text`` as a JSON string (for formats that write strings their own way)."""
    return json.dumps(text, ensure_ascii=False)
