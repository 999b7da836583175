"""Reasoning written in a reply's content: each family's markers, the split of the visible text
from the reasoning, and what fixes a server that lost a call in the reasoning (issue 21, 7).

A server that parses reasoning moves it to its own channel (``Reply.reasoning``); one that
doesn't leaves it in the content, between the model's own markers. What is inside is never a
call and never the reply's words. Some families also wrap the answer itself (Harmony's final
channel, ``<answer>``, ``<|START_RESPONSE|>``): a user sees the words without the wrapper.
``split_reasoning`` reads the content once, left to right.
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
    MINIMAX_M3 = "minimax_m3"
    """``<mm:think>…</mm:think>``: MiniMax-M3."""


@dataclass(frozen=True, slots=True)
class ThinkMarkers:
    """How one format opens and ends a reasoning block."""

    format: ThinkFormat
    opener: str
    closer: str
    bare_closer: bool
    """A closer with no opener before it ends reasoning that began at the content's start:
    the chat template wrote the opener into the generation prompt."""
    ends: tuple[str, ...] = ()
    """Other markers that end the block and go with it."""
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
    # MiniMax-M3 thinks in "<mm:think>…</mm:think>", and a turn without reasoning may start
    # with a bare "</mm:think>" (llama.cpp common/parsers/minimax-m3.cpp @1107a742; docs/
    # research/call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md 1 and 2(a)).
    ThinkMarkers(ThinkFormat.MINIMAX_M3, "<mm:think>", "</mm:think>", bare_closer=True),
    # Not Granite 3.2's "Here is my thought process:" / "Here is my response:" (vLLM's granite
    # reasoning parser): they are plain English any model may write, and taking them for
    # markers would hide its words, and a call among them, as reasoning (same note, 4(c)).
)

# gpt-oss writes messages, "<|start|>{role}<|channel|>{channel}[ to={recipient}]
# [<|constrain|>{type}]<|message|>{text}<|end|>", its output starting at <|channel|> (the
# prompt ends "<|start|>assistant"; openai/harmony docs/format.md). vLLM's parse_chat_output
# (vllm/entrypoints/openai/parser/harmony_utils.py @6a22fe6f) puts the analysis channel in the
# reasoning and the other messages' text, without their control tokens and joined by lines, in
# the content; a later version (index id 66806705518) names the visible ones: "final channel"
# and "commentary channel without recipient (preambles)". llama.cpp's
# common_chat_parse_gpt_oss (common/chat-parser.cpp, index id 1047158291) adds a final or
# preamble message's text up to <|end|> to the content (consume_end); docs/research/call-
# reading-reasoning-and-several-calls.md 3.1. A message with a recipient is a call (the words
# reader's) and stays as it came. A message never runs into the next one's header, and an
# unfinished one shows what was written.
_HARMONY_NEXT = ("<|start|>", "<|channel|>")
_HARMONY_HEAD = (
    r"(?=<\|start\|>|<\|channel\|>)(?:<\|start\|>(?P<role>[^<]{0,200}))?"
    r"(?:<\|channel\|>(?P<channel>[^<]{0,400}))?(?:<\|constrain\|>[^<]{0,200})?<\|message\|>"
)
_RECIPIENT = re.compile(r"(?:^|\s)to=")
_HARMONY = ThinkMarkers(
    ThinkFormat.HARMONY,
    "<|channel|>analysis<|message|>",
    "<|end|>",
    bare_closer=False,
    ends=("<|return|>", "<|call|>"),
    stops=_HARMONY_NEXT,
)
"""The analysis channel: any header naming it opens it (``_HARMONY_HEAD``), not ``opener``."""


@dataclass(frozen=True, slots=True)
class AnswerMarkers:
    """How one format wraps the answer a user sees: the markers go, the words inside stay."""

    opener: str
    closers: tuple[str, ...]
    tag: bool = True
    """A tag a person could write, not a special token: it counts only where it opens the
    visible text (nothing but reasoning and space before it; the space goes with it), and one
    line break on each side of each tag is the template's and goes with it too."""


ANSWERS: tuple[AnswerMarkers, ...] = (
    # Hunyuan A13B: "<think>\n…\n</think>\n<answer>\n…\n</answer>"; vLLM's hunyuan_a13b
    # reasoning parser takes "\n</think>\n<answer>\n" and "\n</answer>" for its markers
    # (vllm/reasoning/hunyuan_a13b_reasoning_parser.py @98b137c6); with thinking off the
    # prompt ends with the empty think, so the reply may open with <answer> (docs/research/
    # call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md 6(a), 6(c)).
    AnswerMarkers("<answer>", ("</answer>",)),
    # Granite 3.3: "write your response between <response></response>" (its template, a copy
    # in ye-NX/llama.cpp models/templates/ibm-granite-granite-3.3-2B-Instruct.jinja @b354d7c9;
    # llama.cpp common_chat_parse_granite, common/chat-parser.cpp @05e5139a); ERNIE 4.5:
    # "abc\n</think>\n\n<response>\ndef\n</response>\n" (vLLM vllm/reasoning/ernie45_reasoning_
    # parser.py @391c1585, whose streaming path drops the line break after </think> and after
    # </response>). Same note, 4(a), 4(b), 7(b).
    AnswerMarkers("<response>", ("</response>",)),
    # Cohere Command R7B / A answer in "<|START_RESPONSE|>…<|END_RESPONSE|>", Command A 2026
    # ("North") in "<|START_TEXT|>…<|END_TEXT|>". llama.cpp's common_chat_parse_command_r7b
    # (common/chat-parser.cpp @05e5139a) and cohere_melody 0.15.3 (which vLLM's cohere_command
    # parsers call) read the inside as content; Ollama's cohere parser (ollama/ollama
    # model/parsers/cohere.go @32a21308) takes either pair as content wherever a block may
    # start. docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-
    # mistral.md 4(b), 4(c) 6.
    AnswerMarkers("<|START_RESPONSE|>", ("<|END_RESPONSE|>",), tag=False),
    AnswerMarkers("<|START_TEXT|>", ("<|END_TEXT|>",), tag=False),
)
_MESSAGE = AnswerMarkers("<|message|>", ("<|end|>", "<|return|>", "<|call|>"), tag=False)
"""A visible Harmony message: its header is the opener."""

_OPENERS = {m.opener: m for m in MARKERS}
_BARE = {m.closer: m for m in MARKERS if m.bare_closer}
_ANSWER_OPENERS = {a.opener: a for a in ANSWERS}
_TOKENS = sorted(
    {
        *(t for m in (*MARKERS, _HARMONY) for t in (m.opener, m.closer, *m.ends, *m.stops)),
        *(t for a in (*ANSWERS, _MESSAGE) for t in (a.opener, *a.closers)),
    }
    - {_HARMONY.opener, _MESSAGE.opener},
    key=len,
    reverse=True,
)
# A Harmony header first, then one alternation of literals, longest first: one pass finds
# every marker in order. A header's parts are bounded and stop at "<", so a failed one costs
# at most the run up to its next "<".
_FIND = re.compile(f"(?P<head>{_HARMONY_HEAD})|" + "|".join(re.escape(t) for t in _TOKENS))


@dataclass(frozen=True, slots=True)
class Reasoned:
    """A content split into what a user sees and the reasoning written in it."""

    text: str
    """The content without its reasoning blocks (markers and all) and its answer markers."""
    reasoning: str = ""
    """The blocks' text, in order, one a line."""
    formats: tuple[ThinkFormat, ...] = ()
    """The formats whose reasoning markers were found, each once, in order."""


def split_reasoning(content: str) -> Reasoned:
    """``content`` split into its visible text and the reasoning written in it.

    A block runs from its opener to its closer; an unclosed one to the end (or to a marker
    that starts the next message); a closer before any other marker ends reasoning that began
    at the content's start. Markers inside a block are its text. An answer's markers go and
    its words stay (``ANSWERS``, Harmony's final and preamble messages). Linear in ``content``.
    """
    split = _Split(content)
    for found in _FIND.finditer(content):
        split.take(found)
    return split.end()


class _Split:
    """``split_reasoning``'s state as it reads the content's markers in order."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.visible: list[str] = []
        self.thoughts: list[str] = []
        self.formats: list[ThinkFormat] = []
        self.inside: ThinkMarkers | None = None
        self.answer: AnswerMarkers | None = None
        self.pos, self.first, self.said, self.messages, self.changed = 0, True, False, 0, False

    def take(self, found: re.Match[str]) -> None:
        """Read one marker."""
        token, start, head = found.group(), found.start(), found.group("head")
        inside = self.inside
        if inside is not None:
            if token == inside.closer or token in inside.ends:
                self.think(start, found.end())
                return
            if not (token in inside.stops or (head and inside.stops)):
                return  # the block's text
            self.think(start, start)
        if self.answer is _MESSAGE and (head or token in _HARMONY_NEXT):
            self.show(start, start)  # a message never runs into the next one's header
        if head:
            self.harmony(found)
        elif (opened := _OPENERS.get(token)) is not None:
            self.show(start, found.end())
            self.inside = opened
        elif self.first and (bare := _BARE.get(token)) is not None:
            self.thoughts.append(self.content[self.pos : start])
            self.formats.append(bare.format)
            self.pos = found.end()
        elif self.answer is not None and token in self.answer.closers:
            self.close_answer(start, found.end())
        elif self.answer is None and (wrapper := _ANSWER_OPENERS.get(token)) is not None:
            self.open_answer(wrapper, start, found.end())
        # A stray closer, or a stop outside a block, is the visible text's.
        self.first = False

    def harmony(self, found: re.Match[str]) -> None:
        """A Harmony message's header: analysis is reasoning, a call stays, the rest shows."""
        channel = found.group("channel") or ""
        if channel.split()[:1] == ["analysis"]:
            self.show(found.start(), found.end())
            self.inside = _HARMONY
        elif not _RECIPIENT.search(f"{found.group('role') or ''} {channel}"):
            self.show(found.start(), found.end())
            if self.messages:
                self.visible.append("\n")
            self.answer, self.changed = _MESSAGE, True

    def think(self, start: int, end: int) -> None:
        """The open block's text runs to ``start``; reading goes on from ``end``."""
        assert self.inside is not None
        self.thoughts.append(self.content[self.pos : start])
        self.formats.append(self.inside.format)
        self.inside, self.pos = None, end

    def show(self, start: int, end: int) -> None:
        """The text up to ``start`` is visible (closing an open Harmony message there);
        reading goes on from ``end``."""
        self.see(self.content[self.pos : start])
        if self.answer is _MESSAGE:
            self.answer, self.messages = None, self.messages + 1
        self.pos = end

    def see(self, piece: str) -> None:
        """``piece`` is visible."""
        self.visible.append(piece)
        self.said = self.said or (piece != "" and not piece.isspace())

    def open_answer(self, wrapper: AnswerMarkers, start: int, end: int) -> None:
        """An answer's opener: a tag only where it opens the visible text."""
        if wrapper.tag:
            if self.said:
                return
            self.show(start, start)
            if self.said:
                return  # words before it: a tag in the words
            self.visible.clear()  # nothing but space: the template's
            end += self.content.startswith("\n", end)
        else:
            self.show(start, end)
        self.answer, self.pos, self.changed = wrapper, end, True

    def close_answer(self, start: int, end: int) -> None:
        """The open answer's closer."""
        assert self.answer is not None
        if self.answer is _MESSAGE:
            self.show(start, end)
            return
        piece = self.content[self.pos : start]
        if self.answer.tag:
            piece = piece.removesuffix("\n")
            end += self.content.startswith("\n", end)
        self.see(piece)
        self.answer, self.pos = None, end

    def end(self) -> Reasoned:
        """What was read: the rest is the open block's, or visible."""
        if self.inside is not None:
            self.think(len(self.content), len(self.content))
        else:
            self.visible.append(self.content[self.pos :])
        if not (self.formats or self.changed):
            return Reasoned(self.content)
        text = "".join(self.visible)
        return Reasoned(text, "\n".join(self.thoughts), tuple(dict.fromkeys(self.formats)))


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
