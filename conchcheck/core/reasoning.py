"""Reasoning written in a reply's content: each family's markers, the split of the visible text
from the reasoning, and what fixes a server that lost a call in the reasoning (issue 21, 7).

A server that parses reasoning moves it to its own channel (``Reply.reasoning``); one that
doesn't leaves it in the content, between the model's own markers. What is inside is never a
call and never the reply's words. ``split_reasoning`` reads the content once, left to right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conchcheck.core.leaks import Server
from conchcheck.core.names import Name


class ThinkFormat(Name):
    """A model family's way of marking its reasoning in the content."""

    THINK = "think"
    """``<think>…</think>``: Qwen3, DeepSeek-R1 and V3.1+, GLM 4.5+, Kimi K2 Thinking, MiniMax."""
    KIMI = "kimi"
    """``◁think▷…◁/think▷``: Kimi-VL and Kimi K1.5 Thinking."""
    MISTRAL = "mistral"
    """``[THINK]…[/THINK]``: Magistral, Ministral 3 reasoning."""
    SEED_OSS = "seed_oss"
    """``<seed:think>…</seed:think>``: ByteDance Seed-OSS."""
    HARMONY = "harmony"
    """``<|channel|>analysis<|message|>…<|end|>``: gpt-oss."""
    GEMMA4 = "gemma4"
    """``<|channel>thought…<channel|>``: Gemma 4."""
    KIMI_K3 = "kimi_k3"
    """``<|open|>think<|sep|>…<|close|>think<|sep|>``: Kimi K3."""
    COHERE = "cohere"
    """``<|START_THINKING|>…<|END_THINKING|>``: Cohere Command R7B and A."""


@dataclass(frozen=True, slots=True)
class ThinkMarkers:
    """How one format opens and ends a reasoning block."""

    format: ThinkFormat
    opener: str
    closer: str
    bare_closer: bool
    """A closer with no opener before it ends reasoning that began at the content's start:
    the chat template wrote the opener into the generation prompt."""
    stops: tuple[str, ...] = ()
    """Markers that end an unclosed block and stay in the visible text (the next message)."""


MARKERS: tuple[ThinkMarkers, ...] = (
    # Qwen3 and DeepSeek-R1: vLLM vllm/reasoning/qwen3_reasoning_parser.py ("Starting with
    # Qwen3.5, the chat template places <think> in the prompt so only </think> appears") and
    # deepseek_r1_reasoning_parser.py; SGLang python/sglang/srt/parser/reasoning_parser.py
    # DeepSeekR1Detector ("DeepSeek-R1: Always generates thinking content without <think>
    # start tag"); docs/research/call-formats-deepseek-glm-kimi.md 1.5, 2.4, 3.1.
    ThinkMarkers(ThinkFormat.THINK, "<think>", "</think>", bare_closer=True),
    # SGLang reasoning_parser.py KimiDetector: "◁think▷*(.*)◁/think▷" (the opener optional).
    ThinkMarkers(ThinkFormat.KIMI, "◁think▷", "◁/think▷", bare_closer=True),
    # vLLM vllm/reasoning/mistral_reasoning_parser.py (mistral_common SpecialTokens.begin_think
    # and end_think); docs/research/call-formats-harmony-gemma-mistral-llama-qwen.md 3. vLLM
    # reads a lone [/THINK] as content, but the words reader (core.words.blocks
    # REASONING_ENDS) takes it as the end of reasoning the prompt opened; so does this.
    ThinkMarkers(ThinkFormat.MISTRAL, "[THINK]", "[/THINK]", bare_closer=True),
    # vLLM vllm/reasoning/seedoss_reasoning_parser.py: "<seed:think>...</seed:think> ...
    # supports cases where the model doesn't generate the start token"; llama.cpp
    # common_chat_params_init_seed_oss puts <seed:think> in the prompt.
    ThinkMarkers(ThinkFormat.SEED_OSS, "<seed:think>", "</seed:think>", bare_closer=True),
    # openai/harmony docs/format.md: "<|start|>{header}<|message|>{content}<|end|>", analysis
    # is the chain of thought; llama.cpp with --reasoning-format none leaves it in the content
    # (docs/research/call-formats-harmony-gemma-mistral-llama-qwen.md 1(c)). A message never
    # runs into the next one's <|start|>.
    ThinkMarkers(
        ThinkFormat.HARMONY,
        "<|channel|>analysis<|message|>",
        "<|end|>",
        bare_closer=False,
        stops=("<|start|>",),
    ),
    # Gemma 4's template writes "<|channel>thought\n…<channel|>" and ends a prompt after a
    # tool result with "<|channel>thought\n" (docs/research/call-formats-harmony-gemma-
    # mistral-llama-qwen.md 2; llama.cpp PEG_GEMMA4, Ollama model/parsers/gemma4.go).
    ThinkMarkers(ThinkFormat.GEMMA4, "<|channel>thought", "<channel|>", bare_closer=True),
    # Kimi K3's template: "<|open|>think<|sep|>…<|close|>think<|sep|>", its generation prompt
    # ending with the opener when thinking (llama.cpp models/templates/Kimi-K3.jinja; vLLM
    # kimi_k3_reasoning_parser.py; docs/research/call-formats-deepseek-glm-kimi.md 3.2).
    ThinkMarkers(
        ThinkFormat.KIMI_K3, "<|open|>think<|sep|>", "<|close|>think<|sep|>", bare_closer=True
    ),
    # Cohere Command R7B / A plan in a thinking block their template writes in the reply, not
    # the prompt (docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-
    # react-mistral.md 4; llama.cpp's Command R7B parser, vLLM's cohere_command parsers).
    ThinkMarkers(ThinkFormat.COHERE, "<|START_THINKING|>", "<|END_THINKING|>", bare_closer=False),
)

_OPENERS = {m.opener: m for m in MARKERS}
_BARE = {m.closer: m for m in MARKERS if m.bare_closer}
_TOKENS = sorted(
    {t for m in MARKERS for t in (m.opener, m.closer, *m.stops)}, key=len, reverse=True
)
# One alternation of literals, longest first: one pass finds every marker in order.
_FIND = re.compile("|".join(re.escape(t) for t in _TOKENS))


@dataclass(frozen=True, slots=True)
class Reasoned:
    """A content split into what a user sees and the reasoning written in it."""

    text: str
    """The content with every reasoning block (markers and all) taken out."""
    reasoning: str = ""
    """The blocks' text, in order, one a line."""
    formats: tuple[ThinkFormat, ...] = ()
    """The formats whose markers were found, each once, in order."""


def split_reasoning(content: str) -> Reasoned:
    """``content`` split into its visible text and the reasoning written in it.

    A block runs from its opener to its closer; an unclosed one to the end (or to a marker
    that starts the next message); a closer before any other marker ends reasoning that began
    at the content's start. Markers inside a block are its text. Linear in ``content``.
    """
    visible: list[str] = []
    thoughts: list[str] = []
    formats: list[ThinkFormat] = []
    inside: ThinkMarkers | None = None
    pos, first = 0, True
    for found in _FIND.finditer(content):
        token, start = found.group(), found.start()
        if inside is None:
            opened = _OPENERS.get(token)
            bare = _BARE.get(token) if first else None
            if opened is not None:
                visible.append(content[pos:start])
                inside, pos = opened, found.end()
            elif bare is not None:
                thoughts.append(content[pos:start])
                formats.append(bare.format)
                pos = found.end()
            # A stray closer or a stop outside a block is the visible text's.
        elif token == inside.closer or token in inside.stops:
            thoughts.append(content[pos:start])
            formats.append(inside.format)
            pos = found.end() if token == inside.closer else start
            inside = None
        first = False
    if inside is not None:
        thoughts.append(content[pos:])
        formats.append(inside.format)
    else:
        visible.append(content[pos:])
    if not formats:
        return Reasoned(content)
    return Reasoned("".join(visible), "\n".join(thoughts), tuple(dict.fromkeys(formats)))


# What fixes a server whose reasoning parser kept a call in the reasoning, each with its source.
_FIXES = {
    # vllm-project/vllm#39056: the reasoning parser takes all before </think> and the tool
    # parser reads only the content, so a call inside <think> is lost. qwen3's parser ends
    # the reasoning at a <tool_call> that opens a call (vllm/reasoning/qwen3_reasoning_
    # parser.py, "treated as an implicit end of reasoning"), kimi_k2's at its tool section;
    # deepseek_r1 on a Qwen3 model with thinking off takes the whole reply as reasoning
    # (vllm-project/vllm#19017). Thinking off per request: chat_template_kwargs.
    Server.VLLM: (
        "start vLLM with the model's own --reasoning-parser (qwen3 for Qwen3 and Qwen3.5, "
        "kimi_k2 for Kimi K2: they end the reasoning where a call opens; not deepseek_r1, "
        "which keeps a whole reply as reasoning when thinking is off), or send "
        'chat_template_kwargs {"enable_thinking": false} with tools'
    ),
    # SGLang python/sglang/srt/parser/reasoning_parser.py: Qwen3Detector and KimiK2Detector
    # take <tool_call> and <|tool_calls_section_begin|> as the end of the reasoning
    # (tool_start_token); the deepseek-r1 detector does not.
    Server.SGLANG: (
        "start SGLang with the model's own --reasoning-parser (qwen3, kimi_k2: they end the "
        "reasoning where a call opens), or send "
        'chat_template_kwargs {"enable_thinking": false} with tools'
    ),
    # llama.cpp tools/server/README.md: --reasoning-format (none, deepseek, deepseek-legacy;
    # auto) and -rea/--reasoning off; its template-built parser ends Qwen-style reasoning at
    # <tool_call> (docs/research/call-formats-harmony-gemma-mistral-llama-qwen.md 5(c)).
    Server.LLAMACPP: (
        "start llama-server with --jinja and the model's own chat template, whose parser ends "
        "the reasoning where a call opens, or turn thinking off with --reasoning off"
    ),
    # docs.ollama.com/capabilities/thinking: "think": false asks the model not to think.
    Server.OLLAMA: (
        'send "think": false with tools, or use a model whose Ollama PARSER ends the '
        "reasoning where a call opens"
    ),
}


def reasoning_fix(server: Server) -> str:
    """One sentence: what makes ``server`` emit a call the model wrote in its reasoning."""
    lead = "The model wrote its call in its reasoning, and the server never emitted it"
    if server is Server.OTHER:
        named = "; ".join(
            f"{name}: {_FIXES[kind]}"
            for name, kind in (
                ("vLLM", Server.VLLM),
                ("SGLang", Server.SGLANG),
                ("llama.cpp", Server.LLAMACPP),
                ("Ollama", Server.OLLAMA),
            )
        )
        return f"{lead}. Which engine serves it is not known; each engine's fix: {named}."
    return f"{lead}: {_FIXES[server]}."
