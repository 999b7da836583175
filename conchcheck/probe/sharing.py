"""Requests one stage sends that another would send again, byte for byte: sent once, read twice.

The knob stage's named ``tool_choice`` and its parallel-control baseline are, with the default
matrix, the very requests the native stage sends for ``forced-choice`` and ``parallel-calls``.
The native stage hands each of its first attempts over here; the knob stage waits for the one
it would repeat and reads it again, but only when the request is equal field for field, so a
shared reply is never evidence of something that wasn't asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from conchcheck.results import Cell
from conchcheck.wire.chat import ChatRequest
from conchcheck.wire.exchange import Exchange

__all__ = ["Sent", "Sharing"]


@dataclass(frozen=True, slots=True)
class Sent:
    """A request as it went, what came back, and the cell its stage read from it."""

    request: ChatRequest
    exchange: Exchange
    cell: Cell
    chain: int
    """Requests one after another up to and including this one (the critical path)."""


class Sharing:
    """The native stage's first attempts, by prompt id, for a stage that would repeat one."""

    def __init__(self) -> None:
        self._sent: dict[str, asyncio.Future[Sent | None]] = {}

    def expect(self, prompt_ids: Iterable[str]) -> None:
        """The prompts the native stage will send (called before any stage starts)."""
        loop = asyncio.get_running_loop()
        for prompt_id in prompt_ids:
            self._sent.setdefault(prompt_id, loop.create_future())

    def give(self, prompt_id: str, sent: Sent | None) -> None:
        """What became of a prompt's first attempt: None when nothing was sent (a resumed
        probe's cell, a skipped prompt)."""
        future = self._sent.get(prompt_id)
        if future is not None and not future.done():
            future.set_result(sent)

    def close(self) -> None:
        """The native stage ended (or stopped): whatever it did not send never will be."""
        for future in self._sent.values():
            if not future.done():
                future.set_result(None)

    async def take(self, prompt_id: str, request: ChatRequest) -> Sent | None:
        """The prompt's first attempt, when the native stage sends it and it went exactly as
        ``request``; None otherwise (send it yourself)."""
        future = self._sent.get(prompt_id)
        if future is None:
            return None
        sent = await asyncio.shield(future)
        return sent if sent is not None and sent.request == request else None
