"""The blocks a reply's words may hold: where each opens, what ends it, and what reads it.

One row per family framing (DESIGN.md rule 6): Hermes/Qwen/GLM ``<tool_call>``, Llama and
Qwen3-Coder ``<function=``, Llama 3 ``<|python_tag|>``, Llama 4 ``<|python_start|>``, Mistral
``[TOOL_CALLS]``, DeepSeek V3/V3.1 and V3.2 sections, Kimi K2 sections, gpt-oss Harmony
messages, Gemma 4 ``<|tool_call>``, Kimi K3 tools channels; llama.cpp's lenient wrappers and
a call's JSON after words (``wrappers``), calls only when they name an offered tool; then the
blocks that are never calls: reasoning (``<think>``, ``[THINK]``, Gemma 4 and Kimi K3
channels) and a ``<tool_response>`` the model wrote itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from conchcheck.core.words import invocations, lists, markup, namespaced, sections, wrappers
from conchcheck.core.words.forms import CallForm, Reader, WordsCall
from conchcheck.core.words.framing import Block as Block
from conchcheck.core.words.framing import BlockRole as BlockRole
from conchcheck.core.words.framing import Read
from conchcheck.core.words.values import (
    DSML41_VALUES,
    DSML_VALUES,
    GLM_VALUES,
    K3_VALUES,
    QWEN_VALUES,
)


def _tool_call(reader: Reader, head: str, body: str, raw: str, cut_off: bool) -> list[WordsCall]:
    # One tag, three families: Hermes/Qwen 2.5 write JSON, Qwen3-Coder XML, GLM a bare name
    # with <arg_key> pairs (their chat templates; vLLM hermes, qwen3coder, glm4_moe parsers).
    stripped = body.strip()
    if stripped.startswith("<function="):
        return markup.qwen_xml(reader, stripped, raw, cut_off=cut_off)
    if "<arg_key>" in body or _BARE_NAME.fullmatch(stripped):
        return markup.glm(reader, body, raw, cut_off=cut_off)
    return reader.json_body(body, CallForm.TOOL_CALL, raw, cut_off=cut_off)


def _function(reader: Reader, head: str, body: str, raw: str, cut_off: bool) -> list[WordsCall]:
    return markup.function_tag(reader, head.strip(), body, raw, cut_off=cut_off)


def _framed(read: Callable[..., list[WordsCall]]) -> Read:
    def framed(reader: Reader, head: str, body: str, raw: str, cut_off: bool) -> list[WordsCall]:
        return read(reader, body, raw, cut_off=cut_off)

    return framed


def _dsml_v4(reader: Reader, text: str, raw: str, *, cut_off: bool) -> list[WordsCall]:
    return markup.dsml(reader, text, raw, cut_off=cut_off, form=CallForm.DEEPSEEK_V4)


def _harmony(reader: Reader, head: str, body: str, raw: str, cut_off: bool) -> list[WordsCall]:
    return sections.harmony(reader, head, body, raw, cut_off=cut_off)


def _harmony_turn(block: Block, head: str) -> Block:
    # A Harmony message is a call only to= a function; any other is text (openai/harmony
    # docs/format.md; sections.is_harmony_call).
    return block if sections.is_harmony_call(block.implied + head) else _HARMONY_TEXT


_BARE_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,199}")
_HARMONY_END = ("<|call|>", "<|end|>", "<|return|>")
_HARMONY_NEXT = ("<|start|>", "<|channel|>")

BLOCKS: tuple[Block, ...] = (
    Block(
        "<tool_call>",
        CallForm.TOOL_CALL,
        _tool_call,
        ("</tool_call>",),
        ("<tool_call>",),
        values=(QWEN_VALUES, GLM_VALUES),
        again=("<tool_call>",),
    ),
    Block(
        "<function=",
        CallForm.FUNCTION_TAG,
        _function,
        ("</function>",),
        ("<function=",),
        head_end=">",
        head_limit=200,
        values=(QWEN_VALUES,),
        again=("<function=", "<tool_call>"),
    ),
    Block(
        "<|python_tag|>",
        CallForm.PYTHON_TAG,
        _framed(sections.python_tag),
        ("<|eom_id|>", "<|eot_id|>"),
        to_end=True,
    ),
    Block(
        "<|python_start|>",
        CallForm.LLAMA4_PYTHONIC,
        _framed(sections.llama4),
        ("<|python_end|>",),
    ),
    # Mistral writes no closer: the first value after the name ends the call, and what
    # follows is words (vLLM's mistral parser; mistral-common's v11+ tool-call grammar).
    Block(
        "[TOOL_CALLS]",
        CallForm.MISTRAL,
        _framed(sections.mistral),
        ("</s>",),
        to_end=True,
        balanced=True,
        inert=("[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"),
    ),
    Block(
        "<｜tool▁calls▁begin｜>",
        CallForm.DEEPSEEK_V31,
        _framed(sections.deepseek),
        ("<｜tool▁calls▁end｜>",),
        calls_close=True,
    ),
    Block(
        "<｜DSML｜function_calls>",
        CallForm.DEEPSEEK_DSML,
        _framed(markup.dsml),
        ("</｜DSML｜function_calls>",),
        strings=False,
        values=(DSML_VALUES,),
        again=("</｜DSML｜function_calls>",),
        calls_close=True,
    ),
    Block(
        "<｜DSML｜tool_calls>",
        CallForm.DEEPSEEK_V4,
        _framed(_dsml_v4),
        ("</｜DSML｜tool_calls>",),
        strings=False,
        values=(DSML_VALUES,),
        again=("</｜DSML｜tool_calls>",),
        calls_close=True,
    ),
    Block(
        "<｜DSML｜ calls>",
        CallForm.DEEPSEEK_V41,
        _framed(markup.dsml41),
        ("</｜DSML｜ calls>",),
        strings=False,
        values=(DSML41_VALUES,),
        again=("</｜DSML｜ calls>",),
        calls_close=True,
    ),
    Block(
        "<|tool_calls_section_begin|>",
        CallForm.KIMI_K2,
        _framed(sections.kimi),
        ("<|tool_calls_section_end|>",),
        calls_close=True,
    ),
    Block(
        "<|open|>tools<|sep|>",
        CallForm.KIMI_K3,
        _framed(markup.kimi_k3),
        ("<|close|>tools<|sep|>",),
        strings=False,
        values=(K3_VALUES,),
        again=("<|close|>tools<|sep|>",),
        calls_close=True,
    ),
    Block("<|tool_call>", CallForm.GEMMA4, _framed(sections.gemma4), ("<tool_call|>",)),
    # Issue 22: LFM2, Granite 3, Hunyuan A13B, Cohere Command R7B / A, FunctionGemma. A list
    # is read as a value, so its own end ends it (``lists``); Granite 3 writes no closer.
    Block("<|tool_call_start|>", CallForm.LFM2, _framed(lists.lfm2), ("<|tool_call_end|>",)),
    Block("<|tool_call|>", CallForm.GRANITE, _framed(lists.granite), balanced=True),
    # HY-V3 closes each call in the block, so a cut keeps the calls closed before it.
    Block(
        "<tool_calls>",
        CallForm.HUNYUAN,
        _framed(lists.hunyuan),
        ("</tool_calls>",),
        values=(GLM_VALUES,),
        calls_close=True,
    ),
    Block("<|START_ACTION|>", CallForm.COHERE, _framed(lists.cohere), ("<|END_ACTION|>",)),
    Block(
        "<start_function_call>",
        CallForm.FUNCTIONGEMMA,
        _framed(sections.functiongemma),
        ("<end_function_call>",),
        raw=sections.FUNCTIONGEMMA_QUOTE,
    ),
    # -- issue 22, families written in tags (core.words.invocations names their sources)
    *(
        Block(o, f, _framed(r), (c,), strings=False, values=(v,), again=(c,), calls_close=True)
        for o, c, f, r, v in invocations.SECTIONS
    ),
    # MiniMax-M3: each call closes, so a cut keeps the calls closed before it (``namespaced``).
    Block(
        namespaced.BLOCK[0],
        CallForm.MINIMAX_M3,
        _framed(namespaced.minimax_m3),
        namespaced.BLOCK[1:],
        strings=False,
        calls_close=True,
    ),
    # llama.cpp's lenient wrappers, each a call only when it holds one naming an offered tool
    # (wrappers): the head is the space before the "{" of the call's JSON.
    *(
        Block(
            tag,
            CallForm.TOOL_CALL,
            None,
            wrappers.CLOSERS,
            wrappers.REOPEN,
            head_end="{",
            head_limit=200,
            head_shape=wrappers.TAG_HEAD,
            depth=1,
            role=BlockRole.WRAPPER,
            sift=wrappers.tag_calls,
        )
        for tag in wrappers.TAGS
    ),
    Block(
        wrappers.FUNCTION,
        CallForm.FUNCTION_TAG,
        None,
        ("</function>",),
        wrappers.REOPEN,
        head_end="{",
        head_limit=420,
        head_shape=wrappers.FUNCTION_HEAD,
        depth=1,
        role=BlockRole.WRAPPER,
        sift=wrappers.function_calls,
    ),
    # A call's JSON after words: its "{" or "[" opens it and the value's own end ends it.
    *(
        Block(
            opener,
            CallForm.BARE_JSON,
            None,
            (),
            wrappers.REOPEN,
            depth=1,
            balanced=True,
            role=BlockRole.WRAPPER,
            sift=wrappers.bare_calls,
        )
        for opener in wrappers.BARE
    ),
    # gpt-oss output starts at <|channel|> (the prompt ends "<|start|>assistant"); each later
    # message opens with <|start|> (openai/harmony docs/format.md).
    *(
        Block(
            opener,
            CallForm.HARMONY,
            _harmony,
            _HARMONY_END,
            _HARMONY_NEXT,
            head_end="<|message|>",
            head_limit=400,
            to_end=True,
            turn=_harmony_turn,
        )
        for opener in _HARMONY_NEXT
    ),
    Block(
        "<think>",
        CallForm.TOOL_CALL,
        None,
        ("</think>",),
        strings=False,
        role=BlockRole.REASONING,
        calls_inside=True,
    ),
    Block(
        "[THINK]", CallForm.TOOL_CALL, None, ("[/THINK]",), strings=False, role=BlockRole.REASONING
    ),
    # Gemma 4 thinks in "<|channel>thought\n…<channel|>"; Kimi K3 in a think channel.
    Block(
        "<|channel>",
        CallForm.GEMMA4,
        None,
        ("<channel|>",),
        strings=False,
        role=BlockRole.REASONING,
    ),
    Block(
        "<|open|>think<|sep|>",
        CallForm.KIMI_K3,
        None,
        ("<|close|>think<|sep|>",),
        strings=False,
        role=BlockRole.REASONING,
    ),
    # Cohere Command R7B / A plan in a thinking block (their template; llama.cpp's Command
    # R7B parser and vLLM's cohere_command parsers take it as reasoning).
    Block(
        "<|START_THINKING|>",
        CallForm.COHERE,
        None,
        ("<|END_THINKING|>",),
        strings=False,
        role=BlockRole.REASONING,
    ),
    # FunctionGemma ends a calling turn with "<start_function_response>" (Ollama's renderer):
    # a bare one is the turn's end, one with a body a result the model made up.
    Block(
        "<start_function_response>",
        CallForm.FUNCTIONGEMMA,
        None,
        ("<end_function_response>",),
        strings=False,
        role=BlockRole.RESPONSE,
    ),
    # Seed-OSS thinks in "<seed:think>…</seed:think>" (its template; vLLM seed_oss reasoning).
    Block(
        "<seed:think>",
        CallForm.SEED_OSS,
        None,
        ("</seed:think>",),
        strings=False,
        role=BlockRole.REASONING,
    ),
    # MiniMax-M3 thinks in "<mm:think>…</mm:think>" (llama.cpp common/parsers/minimax-m3.cpp).
    Block(
        "<mm:think>",
        CallForm.MINIMAX_M3,
        None,
        ("</mm:think>",),
        strings=False,
        role=BlockRole.REASONING,
    ),
    Block(
        "<tool_response>",
        CallForm.TOOL_CALL,
        None,
        ("</tool_response>",),
        strings=False,
        role=BlockRole.RESPONSE,
    ),
    # Gemma 4 ends a calling turn with a bare "<|tool_response>" (its template; Ollama's
    # gemma4 parser): only one with a body is a result the model made up.
    Block(
        "<|tool_response>",
        CallForm.GEMMA4,
        None,
        ("<tool_response|>",),
        strings=False,
        role=BlockRole.RESPONSE,
    ),
)

_HARMONY_TEXT = Block(
    "<|channel|>",
    CallForm.HARMONY,
    None,
    _HARMONY_END,
    _HARMONY_NEXT,
    strings=False,
    to_end=True,
    role=BlockRole.REASONING,
)

BY_OPENER: dict[str, Block] = {block.opener: block for block in BLOCKS}
HARMONY_ROLE = Block(
    "to=functions.",
    CallForm.HARMONY,
    _harmony,
    _HARMONY_END,
    _HARMONY_NEXT,
    head_end="<|message|>",
    head_limit=400,
    to_end=True,
    implied="to=functions.",
    turn=_harmony_turn,
)
"""A gpt-oss reply that opens with its header's recipient (read only at a reply's start)."""
CALL_MARKERS: tuple[str, ...] = (
    *(b.opener for b in BLOCKS if b.role is BlockRole.CALLS and b.form is not CallForm.HARMONY),
    "<tool_response>",
)
"""What in a reply's text shows a call (or a made-up result) left there; Harmony's channel
markers are left out, since its analysis channel in the text is reasoning, not a call."""
REASONING_ENDS = ("</think>", "[/THINK]", "<channel|>", "</seed:think>", "</mm:think>")
"""A reasoning closer with no opener: the server took the opener, so what came before was
reasoning (Qwen3 and DeepSeek templates put ``<think>`` in the prompt)."""

FENCE = "```"
HELD_FENCE = Block(
    FENCE, CallForm.FENCE, None, (FENCE,), role=BlockRole.WRAPPER, sift=wrappers.fence_calls
)
"""A code fence that may hold a call: held until it ends, then read (``wrappers.fence_calls``)."""
PASSED_FENCE = Block(FENCE, CallForm.FENCE, None, (FENCE,), strings=False, role=BlockRole.REASONING)
"""Any other code fence: shown as it comes, never read for calls."""
PYTHONIC_LIST = Block(
    "", CallForm.PYTHONIC, balanced=True, role=BlockRole.WRAPPER, sift=lists.pythonic_calls
)
"""A pythonic list after words (``markers.PYTHONIC``): its own ``]`` ends it; calls naming an
offered tool, or words as written."""
HELD_FENCES = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_use", "tool", "xml"})
"""The info strings of the fences that are held."""
