"""The conversation and the tools as Anthropic's Messages API takes them: one user turn for
every tool result of an assistant turn, inputs as objects, a schema object on every tool."""

from __future__ import annotations

import json

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.tools import Tool
from conchcheck.wire.chat import Message, Role, ToolCall


def tool_of(tool: Tool, strict: bool) -> JsonObject:
    """A tool as the Messages API takes it."""
    # input_schema is required and must be an object schema (provider-facts S21:
    # "input_schema.type: Field required"), so a tool without arguments gets the empty object.
    # A schema that is set goes as it is: what the API refuses is what the probe measures.
    out: JsonObject = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = (
        dict(tool.parameters) if tool.parameters else {"type": "object", "properties": {}}
    )
    if strict:
        # Strict tool use: `strict: true` on the tool definition (Anthropic's structured
        # outputs docs); sent only when asked, as the field is new.
        out["strict"] = True
    return out


def turns_of(messages: tuple[Message, ...]) -> list[JsonValue]:
    """The conversation as ``messages`` (the system prompt goes apart)."""
    out: list[JsonValue] = []
    results: list[JsonValue] | None = None  # the blocks of the last turn, when it holds results
    for message in messages:
        if message.role is Role.SYSTEM:
            continue
        if message.role is Role.TOOL:
            # Every tool_result must sit in the user turn right after its tool_use turn
            # (provider-facts 4.2: "tool_use ids were found without tool_result blocks
            # immediately after"), so the results of parallel calls share one turn.
            if results is None:
                results = []
                out.append({"role": "user", "content": results})
            block: JsonObject = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            results.append(block)
            continue
        results = None
        if message.role is Role.ASSISTANT and message.tool_calls:
            # The API refuses an empty text block, so a turn of calls alone has none.
            content: list[JsonValue] = []
            if message.content:
                content.append({"type": "text", "text": message.content})
            content.extend(_tool_use(call) for call in message.tool_calls)
            out.append({"role": "assistant", "content": content})
            continue
        out.append({"role": message.role.value, "content": message.content})
    return out


def _tool_use(call: ToolCall) -> JsonObject:
    # `input` is a JSON object on this API (provider-facts 4.2): the argument text is read
    # back, and text that is not an object replays as {} so the conversation still has the
    # call its tool result answers.
    try:
        arguments: JsonValue = json.loads(call.arguments)
    except (ValueError, RecursionError):
        arguments = {}
    return {
        "type": "tool_use",
        "id": call.id,
        "name": call.name,
        "input": arguments if isinstance(arguments, dict) else {},
    }
