"""What a user sees of a reply whose reasoning and answer markers are written in its content:
the words reader takes the calls out, ``split_reasoning`` the reasoning and the answer's
markers; whole and streamed alike.

The Harmony rows are docs/research/call-reading-reasoning-and-several-calls.md 8.1. Sources of
each rule are cited in conchcheck/core/reasoning.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from conchcheck.core.reasoning import split_reasoning
from conchcheck.core.words import WordsReader, read_calls

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
]

CH, MSG, END, START = "<|channel|>", "<|message|>", "<|end|>", "<|start|>"
RET, CALL, CON = "<|return|>", "<|call|>", "<|constrain|>"
OSLO_CALL = (
    START + "assistant" + CH + "commentary to=functions.get_weather " + CON + "json" + MSG
    + '{"city":"Oslo"}' + CALL
)  # fmt: skip
OSLO = [("get_weather", {"city": "Oslo"})]

# (reply, cut_off, calls, visible, reasoning)
CASES = [
    # -- gpt-oss Harmony: analysis is reasoning; the final channel and a preamble (commentary
    # with no recipient) show their words without the markers; a call is a call.
    pytest.param(
        CH + "analysis" + MSG + "Simple sum." + END + START + "assistant" + CH + "final" + MSG
        + "2 + 2 = 4." + RET,
        False, [], "2 + 2 = 4.", "Simple sum.",
        id="harmony-final-channel-is-just-the-words",
    ),
    pytest.param(
        CH + "final" + MSG + "Hello." + RET, False, [], "Hello.", "",
        id="harmony-final-as-first-message",
    ),
    pytest.param(
        CH + "analysis" + MSG + "Need weather." + END + OSLO_CALL,
        False, OSLO, "", "Need weather.",
        id="harmony-call-after-analysis",
    ),
    pytest.param(
        CH + "commentary" + MSG + "Checking the forecast." + END + OSLO_CALL,
        False, OSLO, "Checking the forecast.", "",
        id="harmony-preamble-is-visible",
    ),
    pytest.param(
        CH + "analysis" + MSG + "Easy." + END + START + "assistant" + CH + "final" + MSG
        + "Partial ans",
        True, [], "Partial ans", "Easy.",
        id="harmony-final-cut-before-return",
    ),
    pytest.param(
        CH + "commentary" + MSG + "Let me see." + END + START + "assistant" + CH + "final" + MSG
        + "4." + RET,
        False, [], "Let me see.\n4.", "",
        id="harmony-preamble-and-final-joined-by-a-line-vllm",
    ),
    pytest.param(
        CH + "analysis to=browser.search code" + MSG + '{"query": "x"}' + CALL,
        False, [], "", '{"query": "x"}',
        id="harmony-built-in-tool-on-analysis-is-reasoning",
    ),
]  # fmt: skip


def _seen(text: str, calls: Any) -> tuple[list[Any], str, str]:
    shown = split_reasoning(text)
    return [(c.name, c.arguments) for c in calls], shown.text, shown.reasoning


@pytest.mark.parametrize(("reply", "cut_off", "calls", "visible", "reasoning"), CASES)
def test_visible_text_read_in_one_piece(
    reply: str, cut_off: bool, calls: list[Any], visible: str, reasoning: str
) -> None:
    reading = read_calls(reply, TOOLS, cut_off=cut_off)
    assert _seen(reading.text, reading.calls) == (calls, visible, reasoning)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("reply", "cut_off", "calls", "visible", "reasoning"), CASES)
def test_visible_text_streamed(
    reply: str, cut_off: bool, calls: list[Any], visible: str, reasoning: str, size: int
) -> None:
    reader = WordsReader(TOOLS)
    shown = "".join(reader.feed(reply[i : i + size]) for i in range(0, len(reply), size))
    end = reader.close(cut_off=cut_off)
    assert _seen(shown + end.text, end.calls) == (calls, visible, reasoning)
