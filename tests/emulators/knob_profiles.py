"""Endpoint profiles for knobs and losses (issue 21, DESIGN stage 8): one OpenAI-compatible
server per behaviour that breaks an app while the call itself looks fine.

Each is an ``OpenAIEmulator`` around the oracle (which answers every prompt correctly and
obeys every knob), spoiled in exactly one way, the way a real server spoils it:

- a tool choice or parallel control taken and ignored (Ollama's OpenAI layer, vLLM with
  gpt-oss, SGLang): the oracle with ``ignores``;
- strict mode that fails open (llama.cpp's grammar: the flag taken, the model free) or is
  ignored (every schema taken, the model held anyway): ``strict_mode``;
- call ids constant (``call_0`` always), restarting each round (Kimi through vLLM,
  llama.cpp), or issued in a shape the server can't take back (omlx's ``call_<8 hex>`` and
  the Mistral tokenizer, jundot/omlx#1995): ``ids`` and ``takes_ids``;
- ``finish_reason: "stop"`` on a reply with calls: the ``finish_stop`` quirk;
- arguments altered on the way out (newlines stripped, a value cut at a call marker, an
  integer above 2^53 read as a double): ``altered``;
- calls written only in the reasoning channel or inside ``<think>`` in the content (vLLM's
  reasoning parsers with DeepSeek, Qwen3, Kimi): ``profiles.swallows_calls``;
- stream deltas with the arguments before the call's id and name: the ``args_first`` quirk.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conchcheck.core.fidelity import CALL_ENDS
from conchcheck.matrix import Matrix
from tests.emulators.model import Answer, Asked, Behaviour, Call
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.profiles import swallows_calls

MISTRAL_IDS = r"[a-zA-Z0-9]{9}"
"""The only tool call ids the Mistral tokenizer takes back (refusals.yaml vector
mistral-400-tool-call-id-must-be-nine-alphanumerics)."""

Change = Callable[[dict[str, Any]], dict[str, Any]]


def strip_newlines(arguments: dict[str, Any]) -> dict[str, Any]:
    """Every newline of a string value gone (a server that reads arguments line by line)."""
    return {k: v.replace("\n", "") if isinstance(v, str) else v for k, v in arguments.items()}


def cut_at_marker(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call ends where a string value holds a call marker (``</tool_call>``,
    ``<|im_end|>``): the value is cut there and the fields after it are lost, and the server
    closes what was open (a parser that takes the first end marker as the call's end)."""
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if isinstance(value, str):
            at = min((value.find(m) for m in CALL_ENDS if m in value), default=-1)
            if at != -1:
                out[key] = value[:at]
                return out
        out[key] = value
    return out


def round_big_integers(arguments: dict[str, Any]) -> dict[str, Any]:
    """An integer above 2^53 sent as the nearest double (a server that reads JSON numbers as
    doubles, as JavaScript does)."""
    return {
        k: float(v) if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53 else v
        for k, v in arguments.items()
    }


def altered(model: Behaviour, change: Change) -> Behaviour:
    """``model`` whose native calls' arguments go out through ``change``."""

    def behave(asked: Asked) -> Answer:
        answer = model(asked)
        calls = [
            Call(c.name, json.dumps(change(json.loads(c.arguments))))
            if isinstance(c.arguments, str)
            else c
            for c in answer.calls
        ]
        return Answer(answer.text, calls, answer.finish)

    return behave


def profiles(matrix: Matrix) -> dict[str, Callable[[], OpenAIEmulator]]:
    """Each knob profile by the quirk it shows, built around ``oracle(matrix)``."""
    correct = oracle(matrix)
    return {
        "honest": lambda: OpenAIEmulator(correct),
        "ignores-tool-choice-none": lambda: OpenAIEmulator(oracle(matrix, ignores={"none"})),
        "ignores-tool-choice-required": lambda: OpenAIEmulator(
            oracle(matrix, ignores={"required"})
        ),
        "ignores-named-tool-choice": lambda: OpenAIEmulator(oracle(matrix, ignores={"named"})),
        "ignores-parallel-false": lambda: OpenAIEmulator(oracle(matrix, ignores={"parallel"})),
        "strict-fails-open": lambda: OpenAIEmulator(correct, strict_mode="fails_open"),
        "strict-ignored": lambda: OpenAIEmulator(correct, strict_mode="ignored"),
        "one-constant-id": lambda: OpenAIEmulator(correct, ids="constant"),
        "ids-restart-each-round": lambda: OpenAIEmulator(correct, ids="per_reply"),
        "own-ids-refused-back": lambda: OpenAIEmulator(correct, ids="hex8", takes_ids=MISTRAL_IDS),
        "finish-stop-with-calls": lambda: OpenAIEmulator(correct, quirks={"finish_stop"}),
        "strips-newlines": lambda: OpenAIEmulator(altered(correct, strip_newlines)),
        "cuts-at-a-marker": lambda: OpenAIEmulator(altered(correct, cut_at_marker)),
        "rounds-big-integers": lambda: OpenAIEmulator(altered(correct, round_big_integers)),
        "calls-swallowed-in-reasoning-content": lambda: OpenAIEmulator(swallows_calls(correct)),
        "calls-in-think-in-content": lambda: OpenAIEmulator(swallows_calls(correct, in_text=True)),
        "stream-arguments-before-id": lambda: OpenAIEmulator(correct, quirks={"args_first"}),
    }
