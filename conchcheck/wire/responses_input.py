"""The conversation and the tools as the Responses API takes them: ``input`` items (messages,
``function_call`` and ``function_call_output``) and flat function tools."""

from __future__ import annotations

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.tools import Tool
from conchcheck.wire.chat import Message, Role


def tool_of(tool: Tool, strict: bool) -> JsonObject:
    """A flat function tool, ``strict`` always explicit (the endpoint defaults it to true)."""
    function: JsonObject = {"type": "function", "name": tool.name}
    if tool.description:
        function["description"] = tool.description
    if tool.parameters:
        function["parameters"] = dict(tool.parameters)
    function["strict"] = strict
    return function


def input_of(messages: tuple[Message, ...]) -> list[JsonValue]:
    """The conversation as ``input`` items: messages, function calls and their outputs."""
    items: list[JsonValue] = []
    for message in messages:
        if message.role is Role.TOOL:
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            )
            continue
        if message.content or not message.tool_calls:
            items.append({"role": message.role.value, "content": message.content})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
            for call in message.tool_calls
        )
    return items
