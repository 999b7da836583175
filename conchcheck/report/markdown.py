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
    Para,
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


def to_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown of ``blocks``."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {_escape(block.text)}")
        elif isinstance(block, Para):
            out.append(_line_start(_inline(block.spans)))
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {_line_start(_inline(item))}" for item in block.items))
        elif isinstance(block, Table):
            lines = [_row(block.head), "|" + "---|" * len(block.head)]
            out.append("\n".join([*lines, *(_row(row) for row in block.rows)]))
        else:
            text = visible(block.text)
            fence = "`" * max(3, _longest_run(text) + 1)
            out.append(f"{fence}text\n{text}\n{fence}")
    return "\n\n".join(out) + "\n"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(_escape(cell) for cell in cells) + " |"


def _inline(spans: Inline) -> str:
    out = []
    for span in spans:
        if isinstance(span, Bold):
            out.append(f"**{_escape(span.text)}**")
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
