"""How often each prompt is sent: ``--repeat N`` sends every attempt at once; ``--repeat
auto`` sends a prompt's attempts in waves, each wave judged before the next is sent, until
the prompt's label can't change (``conchcheck.core.confidence.wave``).

Every attempt goes through the context like any request: within the budget, the deadline and
the one concurrency limit. Prompts run side by side; only one prompt's attempts wait for each
other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from conchcheck.core.confidence import MAX_REPEAT, wave
from conchcheck.probe.context import AUTO, Context, ProbeOptions
from conchcheck.results import PASSING, Cell, Outcome

Later = list["asyncio.Future[object]"] | None
"""Where an attempt puts its follow-ups, to run beside the next waves; None: it awaits them."""
Attempt = Callable[[int, int, Later], Awaitable[Cell]]
"""One attempt of one prompt (the prompt's index, the attempt from 1), giving its cell."""


def planned(options: ProbeOptions, prompts: int) -> int:
    """Cells a prompt stage announces; 0 (not known ahead) for ``--repeat auto``."""
    return 0 if options.repeat == AUTO else prompts * options.repeat


async def repeated(ctx: Context, one: Attempt) -> None:
    """Every prompt's attempts, as ``ctx.options.repeat`` says."""
    count = len(ctx.matrix.prompts)
    repeat = ctx.options.repeat
    if repeat != AUTO:
        await ctx.together(one(i, n, None) for i in range(count) for n in range(1, repeat + 1))
        return
    later: list[asyncio.Future[object]] = []
    try:
        await ctx.together(until_settled(ctx, one, i, later) for i in range(count))
    except BaseException:
        for task in later:
            task.cancel()  # the probe is stopping: the follow-ups go with it
        raise
    # The first attempts' follow-ups ran beside the waves; the stage ends with them.
    await ctx.together(later)


async def until_settled(
    ctx: Context, one: Attempt, index: int, later: list[asyncio.Future[object]]
) -> None:
    """One prompt's attempts, wave after wave, until its label can't change."""
    options = ctx.options
    passes = answered = sent = 0
    most = options.max_repeat or MAX_REPEAT
    while size := wave(
        passes,
        answered,
        sent,
        threshold=options.threshold,
        confidence=options.confidence,
        most=most,
    ):
        cells = await ctx.together(one(index, sent + n, later) for n in range(1, size + 1))
        sent += size
        for cell in cells:
            if cell is None or cell.outcome is Outcome.SKIPPED:
                return  # the budget is spent, or the tools don't fit the window: no more
            if cell.outcome is not Outcome.ERROR:  # a failed request is evidence of nothing
                answered += 1
                passes += cell.outcome in PASSING


async def after(work: Awaitable[object], later: Later) -> None:
    """``work`` awaited now, or started now and kept in ``later`` to be awaited there."""
    if later is None:
        await work
    else:
        later.append(asyncio.ensure_future(work))
