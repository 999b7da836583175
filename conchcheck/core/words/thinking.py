"""Calls written inside a ``<think>`` block: which end the reasoning there, and which stay
calls once the block is closed after them (docs/research/call-reading-reasoning-and-several-
calls.md §3, whose table says which engine each rule follows).

A call's opener inside reasoning is reasoning text, except where a family's special tokens (or
Qwen3.5's ``<function=`` right after ``<tool_call>``) make it a call beyond doubt and an engine
reads it so. Such a call ends the reasoning where it opens, and the reasoning resumes after it:
if the block then closes, the call was a thought after all (it is counted in ``in_reasoning``),
unless its family keeps calls made in reasoning (Kimi K2).
"""

from __future__ import annotations

import functools

from conchcheck.core.words.forms import CallForm

_TOOL_CALL = "<tool_call>"
_KIMI_SECTION = "<|tool_calls_section_begin|>"

CALLS_IN_REASONING: dict[str, str] = {
    # Kimi K2: the section and call openers are special tokens Moonshot's template writes only
    # for calls. llama.cpp reads a call inside an unclosed think (common/parsers/kimi-k2.cpp
    # @5204e210, "it can call tools at the end of reasoning without closing reasoning"), as do
    # vLLM's kimi_k2 reasoning parser and SGLang's KimiK2Detector. A section named in prose,
    # with no call right after it, stays reasoning (vLLM, llama.cpp L2).
    _KIMI_SECTION + "<|tool_call_begin|>": _KIMI_SECTION,
    # DeepSeek V3.2 / V4 / V4.1: a DSML calls block ends the reasoning (llama.cpp common/
    # parsers/deepseek.cpp @a838fb4d, thinking_end_tags = {THINK_END, FC_START}).
    "<｜DSML｜function_calls>": "<｜DSML｜function_calls>",
    "<｜DSML｜tool_calls>": "<｜DSML｜tool_calls>",
    "<｜DSML｜ calls>": "<｜DSML｜ calls>",
    # Qwen3.5's XML: vLLM's qwen3 reasoning parser ends unclosed reasoning at a <tool_call>
    # followed by "<function" ("Qwen3.5 models may emit <tool_call> inside the thinking
    # block", vllm/reasoning/qwen3_reasoning_parser.py @00a4c6a1); llama.cpp's qwen3-coder
    # parser too. A JSON Hermes block never does (every engine keeps it as reasoning).
    _TOOL_CALL + "\n<function=": _TOOL_CALL,
    _TOOL_CALL + "<function=": _TOOL_CALL,
}
"""Markers that, inside ``<think>``, open a call: each with the opener of the block read."""

KEPT_IN_REASONING = frozenset({CallForm.KIMI_K2})
"""Forms whose calls stay calls when a ``</think>`` closes the reasoning after them: llama.cpp
L2 reads Kimi K2 calls in thinking (``allow_toolcall_in_think``), and SGLang's later
KimiK2Detector ends reasoning at the section even in a closed block. vLLM disagrees; the rule
follows the more forgiving engines, since the markers are never prose."""


@functools.lru_cache(maxsize=64)
def calls_in_reasoning(names: tuple[str, ...]) -> dict[str, str]:
    """``CALLS_IN_REASONING`` and GLM's ``<tool_call>NAME<arg_key>`` for each offered tool.

    GLM 4.5+ writes the name right after ``<tool_call>`` (a Hermes block never does), and
    SGLang's glm45 detector ends unclosed reasoning at ``<tool_call>`` (its tool start token);
    GLM 4.7's template opens ``<think>`` in the prompt, so such a reply is the common shape.
    Kept per tool set (a reader is made per reply): never change the dict returned.
    """
    glm = {
        f"{_TOOL_CALL}{name}{then}": _TOOL_CALL
        for name in names
        # What follows the name tells GLM's block from HY-V3's "<tool_call>NAME<tool_sep>",
        # which Hunyuan keeps as reasoning (docs/research/call-formats-minimax-lfm2-granite-
        # seed-hunyuan-ernie.md 6).
        for then in ("<arg_key>", "\n<arg_key>", "</tool_call>")
    }
    return {**CALLS_IN_REASONING, **glm}
