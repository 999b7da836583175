"""The gate for GitHub Actions: workflow annotations, and Markdown for the step summary.

Annotations are workflow commands on stdout (``::error title=…::message``), escaped as the
runner expects: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

from conchcheck.core.escaping import visible
from conchcheck.gate import markdown
from conchcheck.gate.outcome import GateResult


def commands(result: GateResult) -> str:
    """An ``::error`` line per unmet expectation and regression, a ``::notice`` per
    improvement; empty when there are none."""
    lines = [
        _command("error", f"{c.target}: {c.name}", f"wanted {c.wanted}, got {c.got}")
        for c in result.unmet
    ]
    lines += [
        _command("error", f"{c.target}: regression in {c.what}", f"{c.before} -> {c.after}")
        for c in result.regressions
    ]
    lines += [
        _command("notice", f"{c.target}: improvement in {c.what}", f"{c.before} -> {c.after}")
        for c in result.improvements
    ]
    return "".join(line + "\n" for line in lines)


def summary(result: GateResult) -> str:
    """The step summary: the Markdown report."""
    return markdown.render(result)


def _command(kind: str, title: str, message: str) -> str:
    return f"::{kind} title={_property(title)}::{_data(message)}"


def _data(text: str) -> str:
    # The runner reads %, CR and LF as escapes in a message; anything else as it is.
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    # A property also ends at ':' and ',' unless they are escaped.
    return _data(text).replace(":", "%3A").replace(",", "%2C")
