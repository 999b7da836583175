"""Advice from a verdict: the routes an app can take to this model's calls, each with what the
probe measured for it, best first. Pure: rates and cells in, options out.
"""

from __future__ import annotations

from collections.abc import Sequence

from conchcheck.results import Cell, Leak, NativeFacts, Option, Outcome, Rates, Route, Stage


def routes(
    native: Rates, words: Rates, cells: Sequence[Cell], leaks: Sequence[Leak]
) -> tuple[Option, ...]:
    """The routes an app can take, each with what the probe measured, best first.

    Reading calls from the text counts the native passes plus the leaked replies whose calls,
    read from the text, pass. A server fix would return those same calls natively, so its
    rate is that count as an upper bound: the probe never ran the fixed server.
    """
    found: list[Option] = []
    if native.total:
        found.append(
            Option(Route.NATIVE, native.passed, native.total, "Pass the tools natively as is.")
        )
    if native.total and leaks:
        read = native.passed + sum(
            isinstance(c.facts, NativeFacts)
            and c.facts.leak is not None
            and c.facts.leak.read_passes is True
            for c in cells
            if c.stage is Stage.NATIVE and c.outcome is Outcome.LEAKED
        )
        # The fix of the format most cells leaked in: the one that moves the most replies.
        fix = max(leaks, key=lambda leak: len(leak.cells)).fix
        found.append(Option(Route.NATIVE_AFTER_FIX, read, native.total, fix, bound=True))
        found.append(
            Option(
                Route.FROM_TEXT,
                read,
                native.total,
                "Pass the tools natively and, when a reply has no calls, read them from its "
                "text as a tolerant client does (conchcheck.read_calls).",
            )
        )
    if words.total:
        found.append(
            Option(
                Route.WORDS,
                words.passed,
                words.total,
                "List the tools in the system prompt and read the calls from the reply text "
                "(conchcheck.render_tools, conchcheck.read_calls).",
            )
        )
    order = list(Route)
    # Best rate first; on a tie the simpler route (native as is, before any fix or reader).
    return tuple(sorted(found, key=lambda o: (-o.rate, order.index(o.route))))
