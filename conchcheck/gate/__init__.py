"""Gate a build on probe results: expectations a run must keep, and regressions from a baseline.

``gatekeeper.check`` is the entry point: results files in, a ``GateResult`` out, which
``render`` turns into Markdown, JUnit, GitHub workflow commands or JSON (text is the
console's). Light to import: the CLI names the formats before anything is checked.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from conchcheck.gate.outcome import GateResult


class CheckFormat(str, Enum):
    """How ``conchcheck check`` writes what it found."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JUNIT = "junit"
    GITHUB = "github"
    JSON = "json"


def render(result: GateResult, fmt: CheckFormat) -> str:
    """What goes to stdout in ``fmt``; for ``github``, the workflow commands (the summary is
    ``github.summary``). ``text`` is rendered by the console, not here."""
    from conchcheck.gate import github, junit, markdown
    from conchcheck.gate.outcome import to_data
    from conchcheck.results.writer import dumps

    match fmt:
        case CheckFormat.MARKDOWN:
            return markdown.render(result)
        case CheckFormat.JUNIT:
            return junit.render(result)
        case CheckFormat.GITHUB:
            return github.commands(result)
        case CheckFormat.JSON:
            return dumps(to_data(result))
        case CheckFormat.TEXT:
            raise ValueError("text is rendered by conchcheck.console")
        case _:
            _never(fmt)


def _never(value: NoReturn) -> NoReturn:
    raise AssertionError(f"unhandled value: {value!r}")
