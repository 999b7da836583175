"""Calls written inside a ``<think>`` block, per family, as the engines read them (issue 22).

Each case is written from docs/research/call-reading-reasoning-and-several-calls.md §3 and §8.1,
which name the engine every rule follows: a call whose opener is beyond doubt (Kimi K2's
section, DeepSeek's DSML block, Qwen3.5's ``<tool_call><function=``, GLM's ``<tool_call>NAME``)
ends unclosed reasoning and is a call; a closer after it makes it a thought again, but for Kimi
K2; a JSON Hermes block in reasoning is never a call. Read whole, in chunks and as deltas.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from conchcheck.core.reasoning import split_reasoning
from conchcheck.core.words import WordsReader, WordsReading, read_calls
from tests.test_families import TOOLS

K2B, K2E = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
K2C, K2A, K2CE = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
OSLO = '{"city": "Oslo"}'
K2CALL = K2B + K2C + "functions.get_weather:0" + K2A + OSLO + K2CE + K2E
HR = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
QX = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n"
    "</tool_call>"
)
DSML = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" '
    'string="true">Oslo</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
)
GLM = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>"
GLM_LINES = (
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n</tool_call>"
)
IN_OSLO = [("get_weather", {"city": "Oslo"})]
IN_ROME = [("get_weather", {"city": "Rome"})]

# (reply, calls, visible text, reasoning, calls counted as made in reasoning)
CASES = [
    # vLLM kimi_k2, SGLang KimiK2Detector, llama.cpp kimi-k2: the section ends unclosed reasoning.
    pytest.param(
        "<think>Need the forecast." + K2CALL,
        IN_OSLO,
        "",
        "Need the forecast.",
        0,
        id="kimi-k2-call-ends-unclosed-think",
    ),
    # llama.cpp L2 allow_toolcall_in_think, SGLang's later detector; vLLM disagrees.
    pytest.param(
        "<think>Need it." + K2CALL + "</think>Sent.",
        IN_OSLO,
        "Sent.",
        "Need it.",
        0,
        id="kimi-k2-call-inside-closed-think-stays-a-call",
    ),
    pytest.param(
        "Need it." + K2CALL + "</think>Sent.",
        IN_OSLO,
        "Sent.",
        "Need it.",
        0,
        id="kimi-k2-call-before-a-bare-closer-stays-a-call",
    ),
    # No whole call after the section opener: a mention (vLLM, llama.cpp L2).
    pytest.param(
        "<think>I could use " + K2B + " here.</think>It is sunny.",
        [],
        "It is sunny.",
        "I could use " + K2B + " here.",
        0,
        id="kimi-k2-section-named-in-reasoning-is-text",
    ),
    # Every engine keeps a JSON Hermes block inside reasoning as reasoning, closed or not.
    pytest.param(
        "<think>Maybe " + HR + "</think>\nIt is sunny in Rome.",
        [],
        "\nIt is sunny in Rome.",
        "Maybe " + HR,
        0,
        id="hermes-call-in-closed-think-is-reasoning",
    ),
    pytest.param(
        "<think>I should call it.\n" + HR,
        [],
        "",
        "I should call it.\n" + HR,
        0,
        id="hermes-call-in-unclosed-think-is-reasoning",
    ),
    pytest.param(
        "<think>Need Rome.</think>\n" + HR,
        IN_ROME,
        "\n",
        "Need Rome.",
        0,
        id="hermes-call-after-think",
    ),
    # vLLM qwen3's "<function" lookahead; llama.cpp qwen3-coder's thinking_end_tags.
    pytest.param(
        "<think>\nNeed Rome.\n" + QX,
        IN_ROME,
        "",
        "\nNeed Rome.\n",
        0,
        id="qwen35-xml-call-ends-unclosed-think",
    ),
    # vLLM and SGLang split at the first </think>: the call was a thought. Its text is not
    # kept in the reasoning (the reader read it as a call before the closer came).
    pytest.param(
        "<think>\nTry " + QX + "\n</think>\n\nDone.",
        [],
        "\n\nDone.",
        "\nTry \n",
        1,
        id="qwen35-xml-call-inside-closed-think-is-reasoning",
    ),
    pytest.param(
        "<think>\nThe format uses <tool_call> tags.\n</think>\n\nOK.",
        [],
        "\n\nOK.",
        "\nThe format uses <tool_call> tags.\n",
        0,
        id="qwen35-tool-call-mention-stays-reasoning",
    ),
    # llama.cpp deepseek.cpp: thinking_end_tags = {THINK_END, FC_START}.
    pytest.param(
        "<think>Need Oslo.\n\n" + DSML,
        IN_OSLO,
        "",
        "Need Oslo.\n\n",
        0,
        id="deepseek-v32-dsml-block-ends-unclosed-think",
    ),
    # SGLang glm45's tool start token; GLM 4.7 opens <think> in the prompt.
    pytest.param(
        "<think>Need Oslo." + GLM,
        IN_OSLO,
        "",
        "Need Oslo.",
        0,
        id="glm47-call-ends-unclosed-think",
    ),
    pytest.param(
        "<think>Maybe " + GLM_LINES + "</think>\nSunny.",
        [],
        "\nSunny.",
        "Maybe ",
        1,
        id="glm45-call-inside-closed-think-is-reasoning",
    ),
    pytest.param(
        "<think>Two." + GLM + "\n" + GLM.replace("Oslo", "Rome"),
        IN_OSLO + IN_ROME,
        "",
        "Two.\n",
        0,
        id="glm-two-calls-in-unclosed-think",
    ),
    # HY-V3 writes "<tool_call>NAME<tool_sep>" inside its own block: not GLM's call.
    pytest.param(
        "<think>Maybe <tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>"
        "\n<arg_value>Oslo</arg_value>\n</tool_call>\n</tool_calls>",
        [],
        "",
        "Maybe <tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>"
        "\n<arg_value>Oslo</arg_value>\n</tool_call>\n</tool_calls>",
        0,
        id="hy-v3-call-in-unclosed-think-is-reasoning",
    ),
    pytest.param(
        "<think>Need Oslo." + K2CALL + "Then the answer.",
        IN_OSLO,
        "",
        "Need Oslo.Then the answer.",
        0,
        id="kimi-k2-reasoning-goes-on-after-the-call",
    ),
]


def outcome(reading: WordsReading) -> tuple[Any, ...]:
    shown = split_reasoning(reading.text)
    calls = [(c.name, c.arguments) for c in reading.calls]
    return calls, shown.text, shown.reasoning, reading.in_reasoning


CASE_NAMES = ("reply", "calls", "text", "reasoning", "in_reasoning")


@pytest.mark.parametrize(CASE_NAMES, CASES)
def test_calls_in_reasoning_read_whole(
    reply: str, calls: list[Any], text: str, reasoning: str, in_reasoning: int
) -> None:
    assert outcome(read_calls(reply, TOOLS)) == (calls, text, reasoning, in_reasoning)


@pytest.mark.parametrize(CASE_NAMES, CASES)
def test_calls_in_reasoning_read_as_a_stream(
    reply: str, calls: list[Any], text: str, reasoning: str, in_reasoning: int
) -> None:
    rng = random.Random(reply)
    for size in (1, 2, 3, 5, 8, 0):
        reader, shown, i = WordsReader(TOOLS), [], 0
        while i < len(reply):
            step = size or rng.randint(1, 8)
            shown.append(reader.feed_bytes(reply[i : i + step].encode()))
            i += step
        end = reader.close()
        whole = WordsReading(
            end.calls, "".join(shown) + end.text, end.fake_responses, end.in_reasoning
        )
        assert outcome(whole) == (calls, text, reasoning, in_reasoning), size
