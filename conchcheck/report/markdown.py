"""``report.md``: the verdict and its evidence, short enough for a PR comment or a CI summary.

The content is the shared ``outline``; this module writes it as GitHub-flavoured Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from conchcheck.core.escaping import one_line, visible
from conchcheck.report.blocks import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Marks,
    Para,
    Refusals,
    Table,
)
from conchcheck.report.outline import outline

if TYPE_CHECKING:
    from conchcheck.results import ProbeResult, RunInfo


def render(result: ProbeResult, info: RunInfo) -> str:
    """``report.md`` as text."""
    return to_markdown(outline(result, info))


# -- Markdown ------------------------------------------------------------------------------

# Backslash-escaped wherever they are: code, emphasis, table cells, links, strikethrough.
# An underscore inside a word (get_weather) is no emphasis, and stays as it is.
_SPECIAL = re.compile(r"([\\`*|\[\]~])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What makes a line a heading, a quote, a list item or a rule when it starts it.
_LEADING = re.compile(r"[#>+=-]|\d+[.)]")
# A paragraph's tone as a sign: Markdown has no colour, and GitHub shows emoji.
_SIGNS = {"warn": "⚠️ ", "stop": "⛔ "}


def to_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown of ``blocks``."""
    return "\n\n".join(_block(block) for block in blocks) + "\n"


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {_escape(block.text)}"
    if isinstance(block, Para):
        return _line_start(_SIGNS.get(block.tone, "") + _inline(block.spans))
    if isinstance(block, Bullets):
        return "\n".join(f"- {_line_start(_inline(item))}" for item in block.items)
    if isinstance(block, Table):
        lines = [_row(block.head), "|" + "---|" * len(block.head)]
        return "\n".join([*lines, *(_row(row) for row in block.rows)])
    if isinstance(block, Refusals):
        # No folding in a PR comment: each message once, naming every case it answered.
        return "\n\n".join(_block(part) for part in block.grouped())
    text = visible(block.text)
    fence = "`" * max(3, _longest_run(text) + 1)
    return f"{fence}text\n{text}\n{fence}"


def _row(cells: Iterable[str | Marks]) -> str:
    texts = (cell.text if isinstance(cell, Marks) else cell for cell in cells)
    return "| " + " | ".join(_escape(text) for text in texts) + " |"


def _inline(spans: Inline) -> str:
    out = []
    for span in spans:
        if isinstance(span, Bold):
            # Emphasis opens only before, and closes only after, a character that is not a
            # space (CommonMark's flanking rule): bold text that starts or ends with one
            # would show its asterisks instead. The spaces go; nothing but spaces, no bold.
            text = _escape(span.text).strip()
            out.append(f"**{text}**" if text else "")
        elif isinstance(span, Code):
            # Code spans take no escapes: only one line, with its controls visible.
            text = one_line(span.text)
            ticks = "`" * (_longest_run(text) + 1)
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            out.append(f"{ticks}{pad}{text}{pad}{ticks}")
        else:
            out.append(_escape(span))
    return "".join(out)


def _escape(text: str) -> str:
    """Text shown as it is: no Markdown, no HTML tags or entities, one line (a table cell)."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;")
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _line_start(line: str) -> str:
    # Leading spaces would make an indented code block; a leading "#", "-" or "1." a heading,
    # a list or a rule.
    line = line.lstrip(" \t")
    return "\\" + line if _LEADING.match(line) else line


def _longest_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
