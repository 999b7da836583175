"""Judging a native reply whose call is in the reasoning (issue 21, 7): the reasoning is never
a call nor the reply's words; a call found only there is ``swallowed`` (never ``no_call``),
with a ``calls_in_reasoning`` finding naming the server's fix.

The replies are ``Reply`` values as the adapters read them (tests/wire/test_reasoning.py
shows each API's spelling becoming ``Reply.reasoning``).
"""

from __future__ import annotations

import json

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.core.leaks import Server
from conchcheck.core.reasoning import reasoning_fix
from conchcheck.matrix import load_matrix
from conchcheck.probe.judging import judge_native
from conchcheck.results import Cell, Outcome
from conchcheck.wire.chat import Finding, Finish, Reply, ToolCall
from conchcheck.wire.exchange import Exchange, Replied

MATRIX = load_matrix("default")
PROMPTS = {p.id: p for p in MATRIX.prompts}
WEATHER = PROMPTS["weather-enum"]
GREETING = PROMPTS["no-tool-needed"]
ARGS = {"city": "Paris", "unit": "celsius"}
HERMES = f'<tool_call>\n{{"name": "get_weather", "arguments": {json.dumps(ARGS)}}}\n</tool_call>'
PLAN = "The user wants the weather in Paris, in celsius. I will call get_weather."


def judged(reply: Reply, prompt_id: str = "weather-enum", server: Server = Server.VLLM) -> Cell:
    prompt = PROMPTS[prompt_id]
    tools = [MATRIX.tools[name] for name in prompt.tools]
    exchange = Exchange("POST", "http://127.0.0.1/v1/chat/completions", {}, {}, Replied(reply))
    return judge_native(
        f"native/{prompt_id}/1", prompt, exchange, tools, Dialect.PERMISSIVE, server=server
    )


def codes(cell: Cell) -> list[str]:
    return [f.code for f in cell.findings]


@pytest.mark.parametrize(
    ("reply", "where", "extra"),
    [
        pytest.param(Reply("", finish=Finish.STOP, reasoning=f"{PLAN}\n{HERMES}"),
                     "the reasoning channel", [], id="call-only-in-reasoning-content-vllm"),
        pytest.param(Reply(f"<think>{PLAN}\n{HERMES}\n</think>", finish=Finish.STOP),
                     "reasoning written in the text", ["reasoning_in_content"],
                     id="call-inside-think-in-content"),
        pytest.param(Reply(f"{PLAN}\n{HERMES}</think>\n\nLet me check.", finish=Finish.STOP),
                     "reasoning written in the text", ["reasoning_in_content"],
                     id="call-before-closer-the-template-opened"),
        pytest.param(Reply(f"<think>{PLAN}\n{HERMES}", finish=Finish.STOP),
                     "reasoning written in the text", ["reasoning_in_content"],
                     id="call-in-unclosed-think"),
        pytest.param(Reply("", finish=Finish.STOP,
                           reasoning='Need the weather.<|channel|>commentary to=functions.'
                                     'get_weather <|constrain|>json<|message|>'
                                     '{"city": "Paris", "unit": "celsius"}<|call|>'),
                     "the reasoning channel", [], id="harmony-call-in-reasoning"),
    ],
)  # fmt: skip
def test_a_call_only_in_the_reasoning_is_swallowed(
    reply: Reply, where: str, extra: list[str]
) -> None:
    cell = judged(reply)
    fix = reasoning_fix(Server.VLLM)
    assert cell.outcome is Outcome.SWALLOWED
    assert cell.detail == (
        f"The call to get_weather was written in {where} and never emitted; read from it, it "
        f"would be pass. {fix}"
    )
    assert codes(cell) == [*extra, "calls_in_reasoning"]
    assert cell.findings[-1] == Finding("calls_in_reasoning", f"get_weather in {where}: {fix}")
    assert cell.calls == ()
    assert cell.reading is not None
    assert [(c.name, c.ok, c.arguments) for c in cell.reading.calls] == [
        ("get_weather", True, ARGS)
    ]
    # The reasoning is never the reply's words: the reading's text is the visible text only.
    assert PLAN not in (cell.reading.text or "")
    assert "<tool_call>" not in (cell.reading.text or "")


def test_the_reasoning_is_never_the_replys_words_nor_a_call() -> None:
    """Reasoning that mentions a call's markers beside a native call: the native call passes,
    no marker finding, no swallowed finding, and the leak reader never sees the reasoning."""
    reply = Reply(
        "<think>I could write <tool_call> myself.</think>Checking.",
        (ToolCall("call_0", "get_weather", json.dumps(ARGS)),),
        Finish.TOOL_CALLS,
        reasoning=f"{PLAN}\n{HERMES}",
    )
    cell = judged(reply)
    assert cell.outcome is Outcome.PASS
    assert codes(cell) == ["reasoning_in_content"]


def test_visible_text_call_beside_reasoning_is_leaked_not_swallowed() -> None:
    """A call after the reasoning, in the visible text: the server didn't parse it (leaked);
    the reasoning's words are not in the reading's text."""
    cell = judged(Reply(f"<think>{PLAN}</think>\n{HERMES}", finish=Finish.STOP))
    assert cell.outcome is Outcome.LEAKED
    assert codes(cell) == ["reasoning_in_content", "calls_leaked_as_text"]
    assert cell.reading is not None and PLAN not in (cell.reading.text or "")


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        pytest.param(Reply("It is sunny.", finish=Finish.STOP, reasoning=PLAN),
                     Outcome.NO_CALL, id="reasoning-that-only-plans-a-call-is-no-call"),
        pytest.param(Reply("", finish=Finish.STOP,
                           reasoning='<tool_call>{"name": "book_flight", "arguments": {}}</tool_call>'),
                     Outcome.NO_CALL, id="a-tool-never-offered-is-not-swallowed"),
    ],
)  # fmt: skip
def test_no_readable_call_to_an_offered_tool_is_not_swallowed(
    reply: Reply, outcome: Outcome
) -> None:
    cell = judged(reply)
    assert cell.outcome is outcome
    assert "calls_in_reasoning" not in codes(cell)


def test_a_cut_reply_stays_cut_off_and_names_the_swallowed_call() -> None:
    cell = judged(Reply("", finish=Finish.LENGTH, reasoning=f"{PLAN}\n{HERMES}"))
    assert cell.outcome is Outcome.CUT_OFF
    assert codes(cell) == ["calls_in_reasoning"]


def test_a_greeting_whose_reasoning_calls_is_swallowed_and_says_it_was_unneeded() -> None:
    cell = judged(Reply("Hello!", finish=Finish.STOP, reasoning=HERMES), "no-tool-needed")
    assert cell.outcome is Outcome.SWALLOWED
    assert cell.detail.startswith(
        "The call to get_weather was written in the reasoning channel and never emitted; read "
        "from it, it would be unwanted_call. "
    )


@pytest.mark.parametrize(
    ("server", "named"),
    [
        pytest.param(Server.VLLM, "--reasoning-parser (qwen3", id="vllm"),
        pytest.param(Server.LLAMACPP, "--reasoning off", id="llamacpp"),
        pytest.param(Server.OTHER, "Which engine serves it is not known", id="unknown-server"),
    ],
)
def test_the_finding_names_the_servers_setting(server: Server, named: str) -> None:
    cell = judged(Reply("", finish=Finish.STOP, reasoning=HERMES), server=server)
    (finding,) = [f for f in cell.findings if f.code == "calls_in_reasoning"]
    assert named in finding.detail
