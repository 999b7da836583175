"""Tagged values: how each format written in tags marks an argument's value (Qwen3-Coder's
``<parameter=…>``, GLM's ``<arg_value>``, DeepSeek's DSML parameters, Kimi K3's argument tags),
and what after a closing tag makes it real. ``lexer`` reads them; the formats' readers name them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Values:
    """A tagged-value syntax: a value opens with ``opener``, runs to a ``closer`` followed
    (after whitespace) by one of ``follows`` or by the end, and ends early at another opener.
    """

    opener: str
    """A regex for the opening tag (bounded: no unbounded repeats)."""
    opener_prefix: str
    """A regex matching any start of the opening tag at the end of the text."""
    closer: str
    follows: tuple[str, ...]
    own_line: bool = False
    """The format puts each tag on a line of its own, so an opening tag inside a line of a
    value is text, and only one at a line's start ends a value left unclosed."""


def tagged(
    head: str,
    attributes: str,
    end: str,
    closer: str,
    follows: tuple[str, ...],
    *,
    own_line: bool = False,
) -> Values:
    """The ``Values`` of tags written ``head``, ``attributes`` (a bounded character class
    repeat, or empty), ``end``; the prefix pattern is built from the same parts.
    """
    assert head.startswith("<"), 'Lexer._tail looks for value tags from a "<"'
    starts = [re.escape(head[:i]) for i in range(1, len(head))]
    middle = re.escape(head) + attributes.replace("{1,", "{0,")
    starts += [middle + re.escape(end[:i]) for i in range(len(end))]
    return Values(
        re.escape(head) + attributes + re.escape(end),
        "(?:" + "|".join(reversed(starts)) + r")\Z",
        closer,
        follows,
        own_line,
    )


# Qwen3-Coder's chat template writes "<parameter=NAME>\nVALUE\n</parameter>\n" and then the
# next parameter or "</function>" (vLLM qwen3coder_tool_parser; llama.cpp common/chat.cpp).
QWEN_VALUES = tagged(
    "<parameter=",
    "[^>\n]{1,200}",
    ">",
    "</parameter>",
    ("<parameter=", "</function>", "</tool_call>", "<function="),
    own_line=True,
)
# GLM 4.5-4.7: "<arg_key>K</arg_key><arg_value>V</arg_value>", then the next key or the closer
# (zai-org GLM-4.5 chat_template.jinja; vLLM glm4_moe_tool_parser).
GLM_VALUES = tagged("<arg_value>", "", "", "</arg_value>", ("<arg_key>", "</tool_call>"))
# DeepSeek V3.2 and V4's DSML: '<｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>'
# (DeepSeek-V3.2 encoding_dsv32.py as vendored in vLLM; vLLM deepseekv32_tool_parser).
DSML_VALUES = tagged(
    "<｜DSML｜parameter",
    "[^>\n]{0,300}",
    ">",
    "</｜DSML｜parameter>",
    (
        "<｜DSML｜parameter",
        "</｜DSML｜invoke>",
        "<｜DSML｜invoke",
        "</｜DSML｜function_calls>",
        "</｜DSML｜tool_calls>",
    ),
    own_line=True,
)
# DeepSeek V4.1's DSML names its tags with a leading space ("<｜DSML｜ parameter …>"; vLLM
# vllm/tokenizers/deepseek_v41_encoding.py, adapted from DeepSeek's V4.1 reference encoder).
DSML41_VALUES = tagged(
    "<｜DSML｜ parameter",
    "[^>\n]{0,300}",
    ">",
    "</｜DSML｜ parameter>",
    ("<｜DSML｜ parameter", "</｜DSML｜ invoke>", "<｜DSML｜ invoke", "</｜DSML｜ calls>"),
    own_line=True,
)
# Kimi K3: '<|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>' (the Kimi-K3
# template as copied in llama.cpp models/templates; vLLM kimi_k3_tool_parser).
K3_VALUES = tagged(
    "<|open|>argument",
    "[^<\n]{0,300}",
    "<|sep|>",
    "<|close|>argument<|sep|>",
    ("<|open|>argument", "<|close|>call<|sep|>", "<|close|>tools<|sep|>"),
)
