"""Scripted "models" for the emulated providers: each decides an answer from the request.

A behaviour sees the request in neutral terms (the tools offered, the messages) and returns
an ``Answer``: text, calls with their raw argument text, and a finish reason. The emulators
render the same answer in each provider's wire format, streamed or not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Asked:
    """The request as a model sees it."""

    tools: list[dict[str, Any]]
    """Each ``{"name", "description", "parameters"}``."""
    messages: list[dict[str, Any]]
    """Each ``{"role", "content"}``; tool results have role ``tool``."""
    max_tokens: int | None = None


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str | dict[str, Any] | None
    """Raw argument text as the model wrote it (an object for APIs that send objects)."""


@dataclass(frozen=True)
class Answer:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    finish: str = "stop"
    """``stop``, ``tool_calls`` or ``length``."""
    reasoning: str = ""
    """What the model wrote in its reasoning channel: each API renders it in its own spelling."""


Behaviour = Callable[[Asked], Answer]

SAMPLES = {"string": "Paris", "integer": 3, "number": 2.5, "boolean": True}


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for a schema's required fields."""
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        node = properties.get(name, {})
        if "enum" in node:
            out[name] = node["enum"][0]
        elif node.get("type") == "array":
            out[name] = [SAMPLES.get((node.get("items") or {}).get("type", "string"), "x")]
        else:
            out[name] = SAMPLES.get(node.get("type", "string"), "x")
    return out


def _first_tool(asked: Asked, name: str | None) -> dict[str, Any]:
    for tool in asked.tools:
        if name is None or tool["name"] == name:
            return tool
    raise LookupError(name or "no tools offered")


def calls_cleanly(name: str | None = None, arguments: dict[str, Any] | None = None) -> Behaviour:
    """Calls a tool natively with well-formed arguments; after a tool result, repeats it."""

    def behave(asked: Asked) -> Answer:
        if asked.messages and asked.messages[-1]["role"] == "tool":
            return Answer(text=f"The tool said: {asked.messages[-1]['content']}")
        if not asked.tools:
            return Answer(text="I have no tools.")
        tool = _first_tool(asked, name)
        args = (
            arguments if arguments is not None else sample_arguments(tool.get("parameters") or {})
        )
        return Answer(calls=[Call(tool["name"], json.dumps(args))], finish="tool_calls")

    return behave


SLOPPY = {
    "number_as_text": lambda args: json.dumps(
        {k: str(v) if isinstance(v, int) else v for k, v in args.items()}
    ),
    "trailing_comma": lambda args: json.dumps(args)[:-1] + ",}",
    "fenced": lambda args: "```json\n" + json.dumps(args) + "\n```",
    "single_quotes": lambda args: json.dumps(args).replace('"', "'"),
}


def calls_sloppily(how: str, arguments: dict[str, Any]) -> Behaviour:
    """Calls natively, with the argument text broken the way ``how`` says."""

    def behave(asked: Asked) -> Answer:
        tool = _first_tool(asked, None)
        return Answer(calls=[Call(tool["name"], SLOPPY[how](arguments))], finish="tool_calls")

    return behave


def ignores_tools(text: str = "I can't look that up, but it is usually mild.") -> Behaviour:
    """Answers in words and never calls, whatever it is offered."""
    return lambda asked: Answer(text=text)


WORDS = {
    "hermes": lambda n, a: (
        f'<tool_call>\n{{"name": "{n}", "arguments": {json.dumps(a)}}}\n</tool_call>'
    ),
    "llama_function": lambda n, a: f"<function={n}>{json.dumps(a)}</function>",
    "fence": lambda n, a: f'```json\n{{"name": "{n}", "arguments": {json.dumps(a)}}}\n```',
    "bare_json": lambda n, a: json.dumps({"name": n, "arguments": a}),
    "qwen_xml": lambda n, a: (
        "<tool_call>\n<function="
        + n
        + ">\n"
        + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items())
        + "</function>\n</tool_call>"
    ),
}


# Family formats a server may leave unparsed in content (tests/test_families.py has their
# sources): DeepSeek V3.1, GLM 4.7, Kimi K2.
WORDS |= {
    "deepseek_v31": lambda n, a: (
        f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{json.dumps(a)}"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "glm47": lambda n, a: (
        f"<tool_call>{n}"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{_text(v)}</arg_value>" for k, v in a.items())
        + "</tool_call>"
    ),
    "kimi_k2": lambda n, a: (
        f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{n}:0"
        f"<|tool_call_argument_begin|>{json.dumps(a)}<|tool_call_end|><|tool_calls_section_end|>"
    ),
}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def answers_in_words(form: str, name: str, arguments: dict[str, Any]) -> Behaviour:
    """Writes its call as text in ``form`` (the provider sees plain content)."""
    return lambda asked: Answer(text=WORDS[form](name, arguments))


def rambles(words: int = 5000) -> Behaviour:
    """Writes until the token limit cuts it off."""

    def behave(asked: Asked) -> Answer:
        limit = asked.max_tokens or words
        return Answer(text=" ".join(["word"] * min(limit, words)), finish="length")

    return behave


def calls_without_need(name: str | None = None) -> Behaviour:
    """Calls a tool whatever the prompt asks, even a greeting that needs none."""

    def behave(asked: Asked) -> Answer:
        tool = _first_tool(asked, name)
        return Answer(
            text="Let me check.",
            calls=[Call(tool["name"], json.dumps(sample_arguments(tool.get("parameters") or {})))],
            finish="tool_calls",
        )

    return behave
