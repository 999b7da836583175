"""Call formats written as tags around each value: Qwen3-Coder's XML, GLM's key/value pairs,
DeepSeek V3.2's DSML, and Llama 3.1's ``<function=name>{…}``.

Values keep their exact text except the one newline the format puts after an opening tag and
before a closing one; a closing tag inside a value is the value's own text (``lexer``).
"""

from __future__ import annotations

import contextlib
import html
import json
import re

from conchcheck.core.repair import Unreadable, read_json
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call
from conchcheck.core.words.lexer import DSML_VALUES, GLM_VALUES, K3_VALUES, QWEN_VALUES, Lexer

_FUNCTION = re.compile(r"<function=([^>\n]{0,200})>")
_PARAMETER_NAME = re.compile(r"<parameter=([^>\n]{1,200})>")
_ARG_KEY = re.compile(r"<arg_key>(.{0,400}?)</arg_key>", re.S)
_INVOKE = re.compile(r'<｜DSML｜invoke\s+name="([^"\n]{1,200})"\s*>')
_DSML_PARAMETER = re.compile(r'name="([^"\n]{1,200})"(?:\s+string="(true|false)")?')
_K3_CALL = re.compile(r'<\|open\|>call\s+tool="([^"\n]{1,200})"[^<\n]{0,100}<\|sep\|>')
_K3_ARGUMENT = re.compile(r'key="([^"\n]{1,200})"(?:\s+type="(\w{1,20})")?')
_GLM_NAME = re.compile(r"\s*([^\s<]{1,200})\s*")


def qwen_xml(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Qwen3-Coder's ``<function=f><parameter=a>\\nvalue\\n</parameter></function>`` calls.

    Closers are often missing (vLLM qwen3coder_tool_parser reads them optional; vllm#21571):
    a value then ends at the next ``<parameter=``, at a ``</function>`` that ends the call,
    or at the end of the block.
    """
    calls: list[WordsCall] = []
    pos = 0
    while (match := _FUNCTION.search(text, pos)) is not None:
        lexer = Lexer(
            ("</function>", "<function="),
            strings=False,
            values=(QWEN_VALUES,),
            again=("</tool_call>", "<tool_call>", "<function="),
        )
        found = lexer.find(text, match.end())
        end = found[0] if found is not None else len(text)
        arguments: dict[str, str] = {}
        for tag, start, stop in lexer.spans:
            if start >= end:
                break
            name = _PARAMETER_NAME.fullmatch(tag)
            if name is not None:
                arguments[name.group(1).strip()] = exact_value(text[start : min(stop, end)])
        calls.append(reader.call(match.group(1).strip(), arguments, CallForm.XML_PARAMETERS, raw))
        pos = end + (len("</function>") if found and found[1] == "</function>" else 0)
    if not calls:
        return [reader.failed(CallForm.XML_PARAMETERS, raw, "Your tool call names no function.")]
    if cut_off and not text.rstrip().endswith(("</function>", "</parameter>")):
        calls[-1] = cut_call(CallForm.XML_PARAMETERS, raw)
    return calls


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
    """DeepSeek V3.2 and V4: ``<｜DSML｜invoke name="f">`` with one parameter tag per value.

    ``string="true"`` marks a value kept as text; ``string="false"`` a JSON value
    (DeepSeek-V3.2 encoding_dsv32.py as vendored in vLLM; vLLM deepseekv32_tool_parser).
    V4 writes the same inside ``<｜DSML｜tool_calls>`` (vLLM deepseekv4_tool_parser).
    """
    calls: list[WordsCall] = []
    pos = 0
    while (match := _INVOKE.search(text, pos)) is not None:
        lexer = Lexer(
            ("</｜DSML｜invoke>", "<｜DSML｜invoke"),
            strings=False,
            values=(DSML_VALUES,),
            again=("</｜DSML｜function_calls>", "</｜DSML｜tool_calls>", "<｜DSML｜invoke"),
        )
        found = lexer.find(text, match.end())
        end = found[0] if found is not None else len(text)
        arguments: dict[str, object] = {}
        repairs = ()
        for tag, start, stop in lexer.spans:
            if start >= end:
                break
            named = _DSML_PARAMETER.search(tag)
            if named is None:
                continue
            value: object = text[start : min(stop, end)]
            if named.group(2) == "false":
                # Left as text when unreadable: the schema check says what was wanted.
                with contextlib.suppress(Unreadable):
                    value = read_json(str(value).strip()).value
            arguments[named.group(1)] = value
        name = html.unescape(match.group(1))
        calls.append(reader.call(name, arguments, form, raw, repairs))
        pos = end + (len("</｜DSML｜invoke>") if found and found[1] == "</｜DSML｜invoke>" else 0)
    if not calls:
        return [reader.failed(form, raw, "Your tool call names no function.")]
    if cut_off and not text.rstrip().endswith("</｜DSML｜invoke>"):
        calls[-1] = cut_call(form, raw)
    return calls


def kimi_k3(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """Kimi K3: ``<|open|>call tool="f" index="1"<|sep|>`` then one argument tag per value,
    ``type="string"`` kept as text and any other type a JSON value (the Kimi-K3 template as
    copied in llama.cpp models/templates; vLLM kimi_k3_tool_parser). Attribute values escape
    ``&`` and ``"`` as entities.
    """
    calls: list[WordsCall] = []
    pos = 0
    while (match := _K3_CALL.search(text, pos)) is not None:
        lexer = Lexer(
            ("<|close|>call<|sep|>", "<|open|>call "),
            strings=False,
            values=(K3_VALUES,),
            again=("<|close|>tools<|sep|>", "<|open|>call "),
        )
        found = lexer.find(text, match.end())
        end = found[0] if found is not None else len(text)
        arguments: dict[str, object] = {}
        for tag, start, stop in lexer.spans:
            if start >= end:
                break
            attributes = _K3_ARGUMENT.search(tag)
            if attributes is None:
                continue
            value: object = text[start : min(stop, end)]
            if attributes.group(2) != "string":
                with contextlib.suppress(Unreadable):
                    value = read_json(str(value).strip()).value
            arguments[html.unescape(attributes.group(1))] = value
        name = html.unescape(match.group(1))
        calls.append(reader.call(name, arguments, CallForm.KIMI_K3, raw))
        pos = end + (
            len("<|close|>call<|sep|>") if found and found[1].startswith("<|close|>") else 0
        )
    if not calls:
        return [reader.failed(CallForm.KIMI_K3, raw, "Your tool call names no function.")]
    if cut_off and not text.rstrip().endswith("<|close|>call<|sep|>"):
        calls[-1] = cut_call(CallForm.KIMI_K3, raw)
    return calls


def function_tag(
    reader: Reader, name: str, body: str, raw: str, *, cut_off: bool
) -> list[WordsCall]:
    """Llama 3.1's ``<function=name>{…}</function>``, or Qwen3-Coder lines after the tag."""
    if "<parameter=" in body:
        return qwen_xml(reader, f"<function={name}>{body}", raw, cut_off=cut_off)
    if not body.strip():
        return [reader.call(name, {}, CallForm.FUNCTION_TAG, raw)]
    try:
        reading = read_json(body.strip(), mend_unclosed=not cut_off)
    except Unreadable as exc:
        if exc.reason.startswith("cut off"):
            return [cut_call(CallForm.FUNCTION_TAG, raw)]
        problem = f"The arguments of your call to {name} could not be read ({exc.reason})."
        return [reader.failed(CallForm.FUNCTION_TAG, raw, problem, name)]
    return [reader.call(name, reading.value, CallForm.FUNCTION_TAG, raw, reading.repairs)]


def exact_value(text: str) -> str:
    """A tagged value's text without the one newline the format puts on each side."""
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


def quoted(text: str) -> str:
    """``text`` as a JSON string (for formats that write strings their own way)."""
    return json.dumps(text, ensure_ascii=False)
