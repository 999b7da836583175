"""MiniMax-M3: every structural tag behind the namespace marker ``]<]minimax[>[``, several
``<invoke name="f">`` calls in one block, and arguments nested as elements named by their keys
(``<item>`` for a list's members).

The grammar is llama.cpp's (common/parsers/minimax-m3.cpp @1107a742) and vLLM's description
of it (vllm/tool_parsers/minimax_m3_tool_parser.py @c6088cb1: "M3 is not M2 with renamed
tags"); the M3 template itself was not read (docs/research/call-formats-minimax-lfm2-granite-
seed-hunyuan-ernie.md §2). Text leaves are raw; the others are JSON, so each leaf is typed by
the tool's schema (DESIGN rule 6): text where only text is wanted, JSON where it reads as such.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conchcheck.core.repairs import Repair
from conchcheck.core.words.forms import CallForm, Reader, WordsCall, cut_call

NS = "]<]minimax[>["
BLOCK = (NS + "<tool_call>", NS + "</tool_call>")
_TAG = re.compile(re.escape(NS) + r"<(/?)([^<>\n]{1,200})>")
_INVOKE = re.compile(r'invoke\s+name="([^"\n]{1,200})"\s*')
_MAX_DEPTH = 64


@dataclass(slots=True)
class _Element:
    """An element being read: its tag, its schema, where its text starts, what it holds."""

    tag: str
    schema: Mapping[str, Any]
    start: int
    members: dict[str, Any] | list[Any] | None = None
    raw_start: int = 0
    name: str = field(default="")


def minimax_m3(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    """The calls of one M3 block: ``NS<invoke name="f">NS<a>1NS</a>NS</invoke>`` each."""
    calls: list[WordsCall] = []
    stack: list[_Element] = []
    for tag in _TAG.finditer(text):
        closing, name = tag.group(1) == "/", tag.group(2).strip()
        if not stack:
            invoke = _INVOKE.fullmatch(name)
            if invoke is not None and not closing:
                tool = reader.tools.get(invoke.group(1))
                schema = tool.parameters if tool is not None else {}
                stack.append(
                    _Element("invoke", schema, tag.end(), {}, tag.start(), invoke.group(1))
                )
            continue
        if not closing:
            if len(stack) >= _MAX_DEPTH:
                problem = "Your tool call's arguments are nested too deep."
                calls.append(reader.failed(CallForm.MINIMAX_M3, raw, problem, stack[0].name))
                stack.clear()
                continue
            parent = stack[-1]
            if parent.members is None:
                parent.members = [] if name == "item" else {}
            stack.append(_Element(name, _member_schema(parent, name), tag.end()))
            continue
        # A closing tag ends the element it names; one naming no open element is text.
        depth = next((i for i in range(len(stack) - 1, -1, -1) if stack[i].tag == name), None)
        if depth is None:
            continue
        while len(stack) > depth + 1:
            _attach(stack, _value(stack.pop(), text, tag.start()))
        element = stack.pop()
        if stack:
            _attach(stack, _value(element, text, tag.start()))
        else:
            arguments = element.members if isinstance(element.members, dict) else {}
            call_raw = text[element.raw_start : tag.end()]
            calls.append(reader.call(element.name, arguments, CallForm.MINIMAX_M3, call_raw))
    if stack and cut_off:
        calls.append(cut_call(CallForm.MINIMAX_M3, raw))
    elif stack:
        # Not cut: the model stopped inside its call, so what it wrote is read, and said so.
        while len(stack) > 1:
            _attach(stack, _value(stack.pop(), text, len(text)))
        top = stack[0]
        arguments = top.members if isinstance(top.members, dict) else {}
        calls.append(
            reader.call(
                top.name, arguments, CallForm.MINIMAX_M3, text[top.raw_start :], (Repair.UNCLOSED,)
            )
        )
    return calls or [reader.failed(CallForm.MINIMAX_M3, raw, "Your tool call names no function.")]


def _member_schema(parent: _Element, name: str) -> Mapping[str, Any]:
    schema = parent.schema
    if isinstance(parent.members, list):
        items = schema.get("items")
        return items if isinstance(items, Mapping) else {}
    properties = schema.get("properties")
    member = properties.get(name) if isinstance(properties, Mapping) else None
    return member if isinstance(member, Mapping) else {}


def _attach(stack: list[_Element], pair: tuple[str, Any]) -> None:
    members = stack[-1].members
    if isinstance(members, list):
        members.append(pair[1])
    elif isinstance(members, dict):
        members[pair[0]] = pair[1]


def _value(element: _Element, text: str, end: int) -> tuple[str, Any]:
    """An element's key and value: its members, or its text typed by its schema."""
    if element.members is not None:
        return element.tag, element.members
    # Raw up to the closing tag, as llama.cpp's grammar reads it: no space is the format's.
    return element.tag, _leaf(text[element.start : end], element.schema)


def _leaf(text: str, schema: Mapping[str, Any]) -> Any:
    """A leaf's text as the schema wants it: text stays text where only text is wanted; else
    the JSON it spells (M3 writes what isn't text as JSON), or the text when it spells none."""
    kinds = schema.get("type")
    if kinds == "string" or kinds == ["string"]:
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, str) or (isinstance(kinds, list) and "string" in kinds and value is None):
        return text if isinstance(kinds, (str, list)) and "string" in kinds else value
    return value
