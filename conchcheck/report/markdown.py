"""``report.md``: the verdict and its evidence, short enough for a PR comment or a CI summary.

The content is the shared ``outline``; this module writes it as GitHub-flavoured Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from conchcheck.report.outline import (
    Block,
    Bold,
    Bullets,
    Code,
    Heading,
    Inline,
    Para,
    Table,
    outline,
)

if TYPE_CHECKING:
    from conchcheck.report import RunInfo
    from conchcheck.results import ProbeResult


def render(result: ProbeResult, info: RunInfo) -> str:
    """``report.md`` as text."""
    return to_markdown(outline(result, info))


# -- Markdown ------------------------------------------------------------------------------

_SPECIAL = re.compile(r"([\\`*|])")


def to_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown of ``blocks``."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {_escape(block.text)}")
        elif isinstance(block, Para):
            out.append(_inline(block.spans))
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {_inline(item)}" for item in block.items))
        elif isinstance(block, Table):
            lines = [_row(block.head), "|" + "---|" * len(block.head)]
            out.append("\n".join([*lines, *(_row(row) for row in block.rows)]))
        else:
            fence = "`" * max(3, _longest_run(block.text) + 1)
            out.append(f"{fence}text\n{block.text}\n{fence}")
    return "\n\n".join(out) + "\n"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(_escape(cell) for cell in cells) + " |"


def _inline(spans: Inline) -> str:
    out = []
    for span in spans:
        if isinstance(span, Bold):
            out.append(f"**{_escape(span.text)}**")
        elif isinstance(span, Code):
            text = " ".join(span.text.splitlines())
            ticks = "`" * (_longest_run(text) + 1)
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            out.append(f"{ticks}{pad}{text}{pad}{ticks}")
        else:
            out.append(_escape(span))
    return "".join(out)


def _escape(text: str) -> str:
    """Text shown as it is: no Markdown, no HTML tags, one line (table cells need that)."""
    one_line = " ".join(text.splitlines())
    return _SPECIAL.sub(r"\\\1", one_line).replace("<", "&lt;")


def _longest_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
