"""Reasoning written in the content (issue 21, 7): every family's markers split from the
visible text, each quirk a row; linear however hostile the content; the fix per server.

Marker sources are cited in conchcheck/core/reasoning.py next to each row of ``MARKERS``.
"""

from __future__ import annotations

import time

import pytest

from conchcheck.core.leaks import Server
from conchcheck.core.reasoning import (
    MARKERS,
    Reasoned,
    ThinkFormat,
    reasoning_fix,
    split_reasoning,
)
from conchcheck.core.words.blocks import BLOCKS, REASONING_ENDS, BlockRole

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
THINK, KIMI, MISTRAL = ThinkFormat.THINK, ThinkFormat.KIMI, ThinkFormat.MISTRAL


@pytest.mark.parametrize(
    ("content", "want"),
    [
        pytest.param("Hello!", Reasoned("Hello!"), id="no-markers-content-unchanged"),
        pytest.param("<think>Greet back.</think>\n\nHello!",
                     Reasoned("\n\nHello!", "Greet back.", (THINK,)), id="think-block"),
        pytest.param("Greet back.</think>Hello!", Reasoned("Hello!", "Greet back.", (THINK,)),
                     id="closer-only-template-opened-think-qwen3-deepseek-r1"),
        pytest.param(f"<think>I will call it.\n{CALL}",
                     Reasoned("", f"I will call it.\n{CALL}", (THINK,)),
                     id="unclosed-think-runs-to-the-end"),
        pytest.param(f"<think>Weather: call it.\n{CALL}\n</think>",
                     Reasoned("", f"Weather: call it.\n{CALL}\n", (THINK,)),
                     id="call-inside-think-is-reasoning-vllm-39056"),
        pytest.param(f"<think>Need the tool.</think>\n{CALL}",
                     Reasoned(f"\n{CALL}", "Need the tool.", (THINK,)),
                     id="call-after-think-stays-visible"),
        pytest.param("<think>a</think>b<think>c</think>d", Reasoned("bd", "a\nc", (THINK,)),
                     id="two-blocks-joined-by-a-line"),
        pytest.param("<think>Say </think> twice?</think>x",
                     Reasoned(" twice?</think>x", "Say ", (THINK,)),
                     id="stray-closer-after-a-block-is-visible"),
        pytest.param("<think>a [THINK]b[/THINK] c</think>x",
                     Reasoned("x", "a [THINK]b[/THINK] c", (THINK,)),
                     id="other-markers-inside-a-block-are-its-text"),
        pytest.param("◁think▷Paris.◁/think▷Sunny.", Reasoned("Sunny.", "Paris.", (KIMI,)),
                     id="kimi-vl-triangles"),
        pytest.param("Paris.◁/think▷Sunny.", Reasoned("Sunny.", "Paris.", (KIMI,)),
                     id="kimi-closer-only"),
        pytest.param("[THINK]Need the tool.[/THINK][TOOL_CALLS]get_weather[ARGS]{}",
                     Reasoned("[TOOL_CALLS]get_weather[ARGS]{}", "Need the tool.", (MISTRAL,)),
                     id="magistral-think-then-call"),
        pytest.param("<seed:think>Hmm.</seed:think>Hi.",
                     Reasoned("Hi.", "Hmm.", (ThinkFormat.SEED_OSS,)), id="seed-oss"),
        pytest.param("Hmm.</seed:think>Hi.", Reasoned("Hi.", "Hmm.", (ThinkFormat.SEED_OSS,)),
                     id="seed-oss-closer-only"),
        pytest.param(
            "<|channel|>analysis<|message|>Need get_weather.<|end|><|start|>assistant<|channel|>"
            'commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
            Reasoned('<|start|>assistant<|channel|>commentary to=functions.get_weather '
                     '<|constrain|>json<|message|>{"city":"Paris"}<|call|>',
                     "Need get_weather.", (ThinkFormat.HARMONY,)),
            id="harmony-analysis-then-commentary-call-format-md"),
        pytest.param(
            "<|channel|>analysis<|message|>Simple.<|start|>assistant<|channel|>final<|message|>4",
            Reasoned("4", "Simple.", (ThinkFormat.HARMONY,)),
            id="harmony-unclosed-analysis-ends-at-next-start"),
        pytest.param("<|channel|>analysis<|message|>a<|start|>assistant",
                     Reasoned("<|start|>assistant", "a", (ThinkFormat.HARMONY,)),
                     id="harmony-header-cut-before-its-message-stays"),
        pytest.param("<think>a <|channel|>final<|message|>b</think>c",
                     Reasoned("c", "a <|channel|>final<|message|>b", (THINK,)),
                     id="harmony-header-inside-think-is-its-text"),
        pytest.param("<|start|>assistant<|channel|>final<|message|>Hi.<|end|>",
                     Reasoned("Hi."), id="harmony-final-with-start-and-end"),
        pytest.param("<|channel|>final <|constrain|>json<|message|>{}<|return|>",
                     Reasoned("{}"), id="harmony-final-with-constrain"),
        pytest.param("<|channel|>final<|message|>a<|channel|>final<|message|>b",
                     Reasoned("a\nb"), id="harmony-message-ends-at-next-channel-lines-joined"),
        pytest.param("<|channel|>commentary to=python<|message|>print(1)<|call|>",
                     Reasoned("<|channel|>commentary to=python<|message|>print(1)<|call|>"),
                     id="harmony-message-to-a-recipient-stays"),
        pytest.param("Say <|return|> here.", Reasoned("Say <|return|> here."),
                     id="harmony-return-alone-is-text"),
        pytest.param("Done.<|end|>", Reasoned("Done.<|end|>"),
                     id="harmony-end-alone-is-not-reasoning"),
        pytest.param("<|channel>thought\nCheck weather<channel|><|tool_call>call:get_weather{}",
                     Reasoned("<|tool_call>call:get_weather{}", "\nCheck weather",
                              (ThinkFormat.GEMMA4,)), id="gemma4-thought-channel"),
        pytest.param("<|open|>think<|sep|>Need weather.<|close|>think<|sep|><|open|>response",
                     Reasoned("<|open|>response", "Need weather.", (ThinkFormat.KIMI_K3,)),
                     id="kimi-k3-think-channel"),
        pytest.param("<think>a</think>[THINK]b[/THINK]c",
                     Reasoned("c", "a\nb", (THINK, MISTRAL)), id="two-formats-in-order"),
        pytest.param("<think></think>Hi.", Reasoned("Hi.", "", (THINK,)),
                     id="empty-think-still-a-format-seen"),
        pytest.param("<mm:think>Plan.</mm:think>Hi.",
                     Reasoned("Hi.", "Plan.", (ThinkFormat.MINIMAX_M3,)), id="minimax-m3-mm-think"),
        pytest.param("</mm:think>Hi.", Reasoned("Hi.", "", (ThinkFormat.MINIMAX_M3,)),
                     id="minimax-m3-bare-closer-turn-without-reasoning"),
        pytest.param("<answer>\nHi.\n</answer>", Reasoned("Hi."),
                     id="hunyuan-answer-thinking-off"),
        pytest.param("Wrap it in <answer>\nand</answer>.",
                     Reasoned("Wrap it in <answer>\nand</answer>."),
                     id="answer-tag-after-words-is-words"),
        pytest.param("<think>a</think>Yes.\n<answer>b</answer>",
                     Reasoned("Yes.\n<answer>b</answer>", "a", (THINK,)),
                     id="answer-tag-after-the-answer-began-is-words"),
        pytest.param("Done.</answer>", Reasoned("Done.</answer>"), id="answer-closer-alone-is-words"),
        pytest.param("<answer>a<answer>b</answer>", Reasoned("a<answer>b"),
                     id="answer-tag-inside-the-answer-is-words"),
        pytest.param("<answer>\n\nTwo lines.\n\n</answer>\n\n", Reasoned("\nTwo lines.\n\n"),
                     id="answer-tag-takes-one-line-break-each-side"),
        pytest.param("<think>x</think><response>Sunny.</response>",
                     Reasoned("Sunny.", "x", (THINK,)), id="granite33-response-tag"),
        pytest.param("Hmm.<|START_RESPONSE|>\nIt is 4.\n<|END_RESPONSE|>",
                     Reasoned("Hmm.\nIt is 4.\n"), id="cohere-response-tokens-anywhere-words-kept"),
        pytest.param("<|START_TEXT|>Hi.<|END_TEXT|>", Reasoned("Hi."),
                     id="cohere-north-text-tokens"),
        pytest.param("Here is my thought process:\nHmm.\nHere is my response:\nHi.",
                     Reasoned("Here is my thought process:\nHmm.\nHere is my response:\nHi."),
                     id="granite32-phrases-are-words-not-markers"),
    ],
)  # fmt: skip
def test_split_reasoning(content: str, want: Reasoned) -> None:
    assert split_reasoning(content) == want


def test_split_is_linear_on_hostile_content() -> None:
    """Many unclosed openers and near-markers: one pass, bounded time (a quadratic scan of
    these 960k characters would take minutes; it takes about 0.02 s)."""
    hostile = ("<think" + "<thin" + "</thin" + "[THIN" + "<|channel|>analysis") * 20_000
    started = time.perf_counter()
    got = split_reasoning(hostile + "<think>" * 20_000)
    assert time.perf_counter() - started < 2.0
    assert got.text == hostile and got.formats == (THINK,)


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param("x<answer>" * 200_000, id="answer-tags-after-words"),
        pytest.param("<|start|>" + "a" * 199 + "<|channel|>" + "b" * 399 + "<|constrain|>" * 2000,
                     id="harmony-headers-that-never-reach-their-message"),
        pytest.param("<|channel|>final<|message|>" * 50_000, id="harmony-empty-messages"),
        pytest.param("<|START_TEXT|>" * 200_000, id="cohere-openers"),
    ],
)  # fmt: skip
def test_answers_and_headers_are_linear(hostile: str) -> None:
    """Answer tags and Harmony headers in bulk: one pass (about 0.2 s each; a slice per
    rejected tag took 9 s on the first of these)."""
    started = time.perf_counter()
    split_reasoning(hostile)
    assert time.perf_counter() - started < 2.0


def test_every_words_reasoning_block_has_its_format() -> None:
    """The words reader's reasoning blocks and closers (core.words.blocks) are formats here
    too: a reply's reasoning is the same thing to both readers."""
    openers = [b.opener for b in BLOCKS if b.role is BlockRole.REASONING]
    for opener in openers:
        assert any(m.opener.startswith(opener) for m in MARKERS), opener
    bare = {m.closer for m in MARKERS if m.bare_closer}
    assert set(REASONING_ENDS) <= bare


@pytest.mark.parametrize(
    ("server", "part"),
    [
        pytest.param(Server.VLLM, "start vLLM with the model's own --reasoning-parser (qwen3 "
                     "for Qwen3 and Qwen3.5, kimi_k2 for Kimi K2", id="vllm-reasoning-parser"),
        pytest.param(Server.SGLANG, "start SGLang with the model's own --reasoning-parser "
                     "(qwen3, kimi_k2", id="sglang-reasoning-parser"),
        pytest.param(Server.LLAMACPP, "turn thinking off with --reasoning off",
                     id="llamacpp-reasoning-off"),
        pytest.param(Server.OLLAMA, 'send "think": false with tools', id="ollama-think-false"),
    ],
)  # fmt: skip
def test_reasoning_fix_names_the_servers_setting(server: Server, part: str) -> None:
    fix = reasoning_fix(server)
    assert fix.startswith(
        "The model wrote its call in its reasoning, and the server never emitted it: "
    )
    assert part in fix


def test_reasoning_fix_for_an_unknown_server_says_so_and_names_every_engine() -> None:
    fix = reasoning_fix(Server.OTHER)
    assert "Which engine serves it is not known; each engine's fix: vLLM: " in fix
    for part in ("SGLang: start SGLang", "llama.cpp: start llama-server", 'Ollama: send "think"'):
        assert part in fix, part
