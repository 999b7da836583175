"""What a user sees of a reply whose reasoning and answer markers are written in its content:
the words reader takes the calls out, ``split_reasoning`` the reasoning and the answer's
markers; whole and streamed alike.

The Harmony rows are docs/research/call-reading-reasoning-and-several-calls.md 8.1; the
Hunyuan, Granite, ERNIE and MiniMax-M3 rows docs/research/call-formats-minimax-lfm2-granite-
seed-hunyuan-ernie.md 2(d), 4(d), 6(d), 7(d); the Cohere rows docs/research/call-formats-step3-
xlam-phi4-cohere-functiongemma-claude-react-mistral.md 4(d). Sources of each rule are cited in
conchcheck/core/reasoning.py.
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
PARIS = [("get_weather", {"city": "Paris"})]
HUNYUAN_CALL = '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>'

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
    # -- Hunyuan A13B: <answer> wraps the answer and the calls.
    pytest.param(
        "<think>\nNeed weather.\n</think>\n<answer>\n" + HUNYUAN_CALL + "\n</answer>",
        False, PARIS, "", "\nNeed weather.\n",
        id="hunyuan-think-answer-wraps-call",
    ),
    pytest.param(
        "<think>\nI could write " + HUNYUAN_CALL + "\n</think>\n<answer>\nNo tool needed.\n</answer>",
        False, [], "No tool needed.", "\nI could write " + HUNYUAN_CALL + "\n",
        id="hunyuan-call-inside-think-is-reasoning",
    ),
    pytest.param(
        "<answer>\nIt is sunny.\n</answer>", False, [], "It is sunny.", "",
        id="hunyuan-answer-thinking-off",
    ),
    pytest.param(
        "<think>\nHmm.\n</think>\n<answer>\nPartial", True, [], "Partial", "\nHmm.\n",
        id="hunyuan-answer-cut-shows-what-was-written",
    ),
    pytest.param(
        "Use <answer> tags.", False, [], "Use <answer> tags.", "",
        id="answer-tag-in-prose-is-words",
    ),
    # -- Granite 3.3 and ERNIE 4.5: <response> after the reasoning.
    pytest.param(
        "<think>Easy one.</think><response>Paris is sunny.</response>",
        False, [], "Paris is sunny.", "Easy one.",
        id="granite33-think-response-no-call",
    ),
    pytest.param(
        "Easy.\n</think>\n\n<response>\nParis is sunny.\n</response>\n",
        False, [], "Paris is sunny.", "Easy.\n",
        id="ernie45-response-after-prompt-opened-think",
    ),
    # -- Cohere Command R7B / A (and Command A 2026's <|START_TEXT|>).
    pytest.param(
        "<|START_THINKING|>No tool needed.<|END_THINKING|><|START_RESPONSE|>It is 4.<|END_RESPONSE|>",
        False, [], "It is 4.", "No tool needed.",
        id="cohere-response-only-is-text",
    ),
    pytest.param(
        "<|START_THINKING|>Plan.<|END_THINKING|><|START_TEXT|>Hi.<|END_TEXT|>",
        False, [], "Hi.", "Plan.",
        id="cohere-north-text-block",
    ),
    pytest.param(
        '<|START_THINKING|>I will look up Oslo.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": '
        '"0", "tool_name": "get_weather", "parameters": {"city": "Oslo", "days": 1}}]<|END_ACTION|>',
        False, [("get_weather", {"city": "Oslo", "days": 1})], "", "I will look up Oslo.",
        id="cohere-thinking-then-action",
    ),
    # -- MiniMax-M3 thinks in <mm:think>.
    pytest.param(
        "<mm:think>Need it.</mm:think>It is sunny.", False, [], "It is sunny.", "Need it.",
        id="minimax-m3-think-then-words",
    ),
    pytest.param(
        "Need it.</mm:think>It is sunny.", False, [], "It is sunny.", "Need it.",
        id="minimax-m3-prompt-opened-think",
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
