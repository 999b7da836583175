"""Each API family's own spelling of every knob, as ``build`` puts it in the body.

Sources: OpenAI's Chat Completions and Responses references (``tool_choice``,
``parallel_tool_calls``, ``function.strict`` / the flat tool's ``strict``), Anthropic's Messages
reference (``tool_choice`` ``auto|any|tool|none``, ``disable_parallel_tool_use`` inside it,
``strict`` on the tool), Gemini's ``toolConfig.functionCallingConfig`` (``AUTO|ANY|NONE``,
``allowedFunctionNames``), Ollama's ``api.ChatRequest`` (none of them).
"""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.knobs import Knob
from conchcheck.core.tools import ChoiceMode, Tool, ToolChoice
from conchcheck.wire.adapter import ChatAdapter
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.gemini import GeminiAdapter
from conchcheck.wire.ollama import OllamaAdapter
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.responses import ResponsesAdapter

TOOL = Tool(
    "get_weather", "Weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)
NONE = ToolChoice(ChoiceMode.NONE)
REQUIRED = ToolChoice(ChoiceMode.REQUIRED)
NAMED = ToolChoice(ChoiceMode.TOOL, "get_weather")


def body(adapter: ChatAdapter, **knobs: Any) -> dict[str, Any]:
    request = ChatRequest("m", (Message(Role.USER, "hi"),), tools=(TOOL,), **knobs)
    sent = adapter.build("http://127.0.0.1:1/v1", request, None).body
    assert isinstance(sent, dict)
    return sent


def pick(sent: dict[str, Any], *path: str | int) -> Any:
    node: Any = sent
    for step in path:
        node = node[step] if isinstance(node, list) or step in node else None
        if node is None:
            return None
    return node


OPENAI, RESPONSES, ANTHROPIC = OpenAIAdapter(), ResponsesAdapter(), AnthropicAdapter()
GEMINI, OLLAMA = GeminiAdapter(), OllamaAdapter()
CONFIG = ("toolConfig", "functionCallingConfig")

CASES = [
    # (adapter, knobs, path into the body, value there)
    (OPENAI, {"tool_choice": NONE}, ("tool_choice",), "none"),
    (OPENAI, {"tool_choice": REQUIRED}, ("tool_choice",), "required"),
    (
        OPENAI,
        {"tool_choice": NAMED},
        ("tool_choice",),
        {"type": "function", "function": {"name": "get_weather"}},
    ),
    (OPENAI, {"parallel": False}, ("parallel_tool_calls",), False),
    (OPENAI, {}, ("parallel_tool_calls",), None),
    (OPENAI, {"strict": True}, ("tools", 0, "function", "strict"), True),
    (OPENAI, {}, ("tools", 0, "function", "strict"), None),
    (RESPONSES, {"tool_choice": NONE}, ("tool_choice",), "none"),
    (RESPONSES, {"tool_choice": REQUIRED}, ("tool_choice",), "required"),
    (
        RESPONSES,
        {"tool_choice": NAMED},
        ("tool_choice",),
        {"type": "function", "name": "get_weather"},
    ),
    (RESPONSES, {"parallel": False}, ("parallel_tool_calls",), False),
    (RESPONSES, {"strict": True}, ("tools", 0, "strict"), True),
    (RESPONSES, {}, ("tools", 0, "strict"), False),
    (ANTHROPIC, {"tool_choice": NONE}, ("tool_choice",), {"type": "none"}),
    (ANTHROPIC, {"tool_choice": REQUIRED}, ("tool_choice",), {"type": "any"}),
    (ANTHROPIC, {"tool_choice": NAMED}, ("tool_choice",), {"type": "tool", "name": "get_weather"}),
    (
        ANTHROPIC,
        {"parallel": False},
        ("tool_choice",),
        {"type": "auto", "disable_parallel_tool_use": True},
    ),
    (
        ANTHROPIC,
        {"parallel": False, "tool_choice": REQUIRED},
        ("tool_choice",),
        {"type": "any", "disable_parallel_tool_use": True},
    ),
    (ANTHROPIC, {"strict": True}, ("tools", 0, "strict"), True),
    (ANTHROPIC, {}, ("tools", 0, "strict"), None),
    (GEMINI, {"tool_choice": NONE}, CONFIG, {"mode": "NONE"}),
    (GEMINI, {"tool_choice": REQUIRED}, CONFIG, {"mode": "ANY"}),
    (
        GEMINI,
        {"tool_choice": NAMED},
        CONFIG,
        {"mode": "ANY", "allowedFunctionNames": ["get_weather"]},
    ),
    (OLLAMA, {"tool_choice": REQUIRED, "parallel": False, "strict": True}, ("tool_choice",), None),
    (OLLAMA, {"parallel": False}, ("parallel_tool_calls",), None),
    (OLLAMA, {"strict": True}, ("tools", 0, "function", "strict"), None),
]
IDS = [
    "openai-none",
    "openai-required",
    "openai-named",
    "openai-parallel-false",
    "openai-parallel-unset-sends-nothing",
    "openai-strict-in-function",
    "openai-strict-unset-sends-nothing",
    "responses-none",
    "responses-required",
    "responses-named-flat",
    "responses-parallel-false",
    "responses-strict-on-tool",
    "responses-strict-false-always-explicit",
    "anthropic-none",
    "anthropic-required-is-any",
    "anthropic-named-is-tool",
    "anthropic-parallel-false-inside-auto-choice",
    "anthropic-parallel-false-inside-any",
    "anthropic-strict-on-tool",
    "anthropic-strict-unset-sends-nothing",
    "gemini-none",
    "gemini-required-is-any",
    "gemini-named-is-any-with-allowed-names",
    "ollama-no-tool-choice",
    "ollama-no-parallel-control",
    "ollama-no-strict",
]


@pytest.mark.parametrize(("adapter", "knobs", "path", "value"), CASES, ids=IDS)
def test_each_family_spells_each_knob(
    adapter: ChatAdapter, knobs: dict[str, Any], path: tuple[str | int, ...], value: Any
) -> None:
    assert pick(body(adapter, **knobs), *path) == value


@pytest.mark.parametrize(
    ("adapter", "offered"),
    [
        (OPENAI, set(Knob)),
        (RESPONSES, set(Knob)),
        (ANTHROPIC, set(Knob)),
        (
            GEMINI,
            {Knob.TOOL_CHOICE_NONE, Knob.TOOL_CHOICE_REQUIRED, Knob.TOOL_CHOICE_NAMED},
        ),
        (OLLAMA, set()),
    ],
    ids=["openai-all", "responses-all", "anthropic-all", "gemini-choice-only", "ollama-none"],
)
def test_what_each_family_offers(adapter: ChatAdapter, offered: set[Knob]) -> None:
    assert set(adapter.knobs) == offered
