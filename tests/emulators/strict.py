"""OpenAI's strict mode as its servers apply it to a tool's schema, with OpenAI's own words.

Strict mode (structured outputs) can enforce a schema only when every object is closed
(``additionalProperties: false``) and lists every property in ``required``; a function sent
with ``strict: true`` and any other schema is refused before the model runs. The words are
OpenAI's, copied from real refusals (tests/data/refusals.yaml):

- ``'additionalProperties' is required to be supplied and to be false.``: S24,
  bytedance/trae-agent#173 (Chat Completions).
- ``'required' is required to be supplied and to be an array including every key in
  properties. Missing 'params'.``: S25, kevinwatt/mysql-mcp#5 (Responses); the same words
  from Chat Completions with gpt-4o in ash-project/ash_ai#155 ("Invalid schema for function
  'analyze_photos': In context=(), 'required' is required to be supplied and to be an array
  including every key in properties. Missing 'id'.").

The Chat Completions envelope (``param: tools[0].function.parameters``, ``code:
invalid_function_parameters``) is vector openai-strict-default-is-not-permitted
(livekit/agents#1987); the Responses one is S25's.
"""

from __future__ import annotations

import json
from typing import Any

from tests.emulators.server import Response
from tests.emulators.vectors import vector


def strict_problem(schema: Any, context: tuple[str, ...] = ()) -> str | None:
    """Strict mode's rules on one schema (objects closed, every property required), worded
    as OpenAI words them; None when the schema keeps them."""
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    where = f"In context={context!r}"
    if schema.get("type") == "object" or isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return f"{where}, 'additionalProperties' is required to be supplied and to be false."
        missing = [name for name in properties or {} if name not in (schema.get("required") or [])]
        if missing:
            return (
                f"{where}, 'required' is required to be supplied and to be an array including"
                f" every key in properties. Missing '{missing[0]}'."
            )
    children = (
        [(("properties", k), v) for k, v in (properties or {}).items()]
        if isinstance(properties, dict)
        else []
    )
    if isinstance(schema.get("items"), dict):
        children.append((("items",), schema["items"]))
    for step, child in children:
        found = strict_problem(child, (*context, *step))
        if found is not None:
            return found
    return None


def responses_refusal(name: str, problem: str) -> Response:
    """The S25 refusal's envelope, naming the refused function and its problem as OpenAI
    does ("Invalid schema for function 'mysql_execute': In context=(), …")."""
    body = json.loads(vector("openai-responses-strict-required-every-key")["body"])
    body["error"]["message"] = f"Invalid schema for function '{name}': {problem}"
    return Response.json(body, 400)


def chat_refusal(tools: list[dict[str, Any]]) -> Response | None:
    """Chat Completions' 400 for the first function sent with ``strict: true`` whose schema
    strict mode can't enforce, or None (a function without the flag is never checked)."""
    for index, tool in enumerate(tools):
        function = tool.get("function") or {}
        if function.get("strict") is not True:
            continue
        problem = strict_problem(function.get("parameters") or {})
        if problem is None:
            continue
        body = json.loads(vector("openai-strict-default-is-not-permitted")["body"])
        body["error"]["message"] = f"Invalid schema for function '{function['name']}': {problem}"
        body["error"]["param"] = f"tools[{index}].function.parameters"
        return Response.json(body, 400)
    return None
