"""What a stage may use: the target, the matrix, the options, and a way to send and record.

Stages get a ``Context``, never the engine: they send through it (within the budget and the
one concurrency limit), record cells, reuse the cells of a probe being resumed, and tell the
observer. The context also measures the critical path: how many requests, one after
another, the longest chain of the probe waited for.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import json
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, TypeVar

from conchcheck.core.confidence import CONFIDENCE
from conchcheck.core.leaks import Server
from conchcheck.core.names import Name
from conchcheck.core.refusals import NOT_EVIDENCE
from conchcheck.core.words import estimate_tokens
from conchcheck.matrix import Matrix
from conchcheck.probe.budget import Budget, StopProbe
from conchcheck.probe.evidence import bound
from conchcheck.probe.sharing import Sharing
from conchcheck.results import Cell, Outcome, Stage
from conchcheck.results.plain import to_plain
from conchcheck.wire.adapter import ChatAdapter
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.chat import ChatRequest
from conchcheck.wire.exchange import Exchange, Failed, WireErrorKind
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import Target
from conchcheck.wire.recording import ASKER
from conchcheck.wire.transport import Policy, Wire

T = TypeVar("T")

CHAIN: contextvars.ContextVar[int] = contextvars.ContextVar("chain", default=0)
"""Requests sent one after another before the current point of the current task."""


class ProbeObserver(Protocol):
    """Told of progress; ``conchcheck.console`` renders it, Python callers may pass nothing."""

    def stage(self, stage: Stage, total: int) -> None:
        """A stage starts with ``total`` cells (an estimate for the dialect stage)."""

    def cell(self, cell: Cell) -> None:
        """A cell finished."""


class Check(Name):
    """A group of checks a probe can run (``--checks``); ``DEFAULT_CHECKS`` by default."""

    DIALECT = "dialect"
    """The schema cases, across the dialects."""
    MODE = "mode"
    """The prompts natively and in words, the round trips, two streaming pairs."""
    KNOBS = "knobs"
    """Knobs and losses: tool_choice, parallel control, strict mode, call ids, fidelity."""
    STREAMING = "streaming"
    """Every native prompt also streamed and compared (without it, two are)."""
    COST = "cost"
    """What the tools cost: each tool's prompt tokens in each dialect, and the capacity
    point. Not in ``DEFAULT_CHECKS``: it sends about as many requests as the rest."""


DEFAULT_CHECKS: Final = frozenset(Check) - {Check.COST}
"""The groups a probe runs when ``--checks`` names none."""


AUTO: Final = "auto"
"""``--repeat auto``: each prompt until its label is settled."""


@dataclass(frozen=True, slots=True)
class ProbeOptions:
    """How a probe runs and what it may spend."""

    repeat: int | Literal["auto"] = 1
    """Attempts of each prompt in each mode, or ``"auto"``: until its label can't change
    (``conchcheck.core.confidence``)."""
    threshold: float = 0.5
    """The pass rate a mode needs, and a prompt's label is measured against."""
    confidence: float = CONFIDENCE
    """The confidence of each prompt's interval and label."""
    max_repeat: int | None = None
    """Attempts of a prompt at most under ``repeat="auto"``; None is ``MAX_REPEAT``."""
    temperature: float = 0.0
    max_requests: int | None = None
    max_tokens: int | None = None
    """Budget of prompt + completion tokens over the whole probe."""
    dialect_max_tokens: int = 8
    """Output limit of a dialect cell: only acceptance matters."""
    prompt_max_tokens: int = 200
    """Output limit of a prompt: enough for a call or a short answer, not for rambling."""
    streaming_checks: int = 2
    """Prompts also sent streamed, to compare with the whole reply, without ``Check.STREAMING``."""
    checks: frozenset[Check] = DEFAULT_CHECKS
    """The groups of checks to run."""
    policy: Policy = field(default_factory=Policy)
    """Timeouts, retries, body size; ``policy.concurrency`` is the probe's one limit."""
    deadline: float | None = None
    """Seconds the whole probe may take; past it, requests in flight are dropped (never
    evidence) and the probe stops with what it has, like a spent budget."""

    @property
    def concurrency(self) -> int:
        """Requests in flight at once."""
        return self.policy.concurrency or 1


_SERVERS = {
    "llamacpp": Server.LLAMACPP,
    "vllm": Server.VLLM,
    "sglang": Server.SGLANG,
    "ollama": Server.OLLAMA,
    "ollama-openai": Server.OLLAMA,
}


class Context:
    """One probe's shared state, as the stages see it."""

    def __init__(
        self,
        target: Target,
        matrix: Matrix,
        options: ProbeOptions,
        wire: Wire,
        adapter: ChatAdapter,
        key: Secret | None,
        observer: ProbeObserver | None,
        prior: Iterable[Cell],
    ) -> None:
        self.target = target
        self.matrix = matrix
        self.options = options
        self.wire = wire
        self.adapter = adapter
        self.key = key
        self.observer = observer
        self.budget = Budget(
            options.max_requests,
            options.max_tokens,
            options.concurrency,
            sleep=wire.sleep,
            max_pause=options.policy.max_wait,
        )
        # A failed cell proves nothing, so a resumed probe sends it again.
        self.prior = {c.id: c for c in prior if c.outcome is not Outcome.ERROR}
        self.cells: list[Cell] = []
        self.catalogue: ModelInfo | None = None
        self.critical_path = 0
        self.sharing = Sharing()
        """The native stage's first attempts, for a stage that would send one again."""

    @property
    def server(self) -> Server:
        """The engine behind the endpoint, by its provider (for the fix a leak names)."""
        return _SERVERS.get(self.target.provider.name, Server.OTHER)

    async def send(self, request: ChatRequest, asker: str) -> Exchange:
        """Send for the cell ``asker`` within the budget; ``StopProbe`` once it is spent.

        ``asker`` travels with the request to a recording, so a replay answers each cell
        with its own reply (``conchcheck.wire.recording.ASKER``).
        """
        ASKER.set(asker)
        if self.budget.stopped is not None:
            raise StopProbe(self.budget.stopped)
        held = 0
        if request.max_tokens is not None and self.options.max_tokens is not None:
            # What the request may spend is held before it goes, so requests in flight together
            # can't overrun the budget between them. The prompt is estimated from its JSON.
            estimate = estimate_tokens(json.dumps(to_plain(request), ensure_ascii=False))
            limit = self.budget.reserve(request.max_tokens, estimate)
            if limit is None:
                raise StopProbe(self.budget.stopped or "the token budget is spent")
            held = estimate + limit
            request = dataclasses.replace(request, max_tokens=limit)
        try:
            exchange = await self.wire.send(
                self.target, self.adapter, request, self.key, self.budget
            )
        except BaseException:  # cancelled (an interrupt): what it held is free again
            self.budget.spend(None, None, held)
            raise
        self.budget.ended(exchange.outcome)
        reply = exchange.reply
        usage = reply.usage if reply is not None else None
        self.budget.spend(
            usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None, held
        )
        if exchange.attempts:
            depth = CHAIN.get() + 1
            CHAIN.set(depth)
            self.critical_path = max(self.critical_path, depth)
        match exchange.outcome:
            case Failed(error) if error.kind is WireErrorKind.BUDGET:
                raise StopProbe(self.budget.stopped or error.detail)
            case _:
                pass
        if self.budget.stopped is not None and _would_retry(exchange):
            # A retry the budget refused: what came says "later", which is not an answer.
            raise StopProbe(self.budget.stopped)
        return exchange

    def record(self, cell: Cell) -> Cell:
        """Keep a finished cell (its evidence bounded) and tell the observer. A cell refused
        for a rate limit, a quota or its key is kept as failed: it proves nothing."""
        if cell.outcome is Outcome.REFUSED and cell.refusal_kind in NOT_EVIDENCE:
            said = f"Refused ({cell.refusal_kind}), which says nothing of the request"
            cell = dataclasses.replace(cell, outcome=Outcome.ERROR, detail=f"{said}: {cell.detail}")
        cell = bound(cell)
        self.cells.append(cell)
        if self.observer is not None:
            self.observer.cell(cell)
        return cell

    def reuse(self, cell_id: str) -> Cell | None:
        """A finished cell of the probe being resumed, recorded again as it was."""
        cell = self.prior.get(cell_id)
        return self.record(cell) if cell is not None else None

    def announce(self, stage: Stage, total: int) -> None:
        """Tell the observer a stage starts."""
        if self.observer is not None:
            self.observer.stage(stage, total)

    async def together(self, jobs: Iterable[Awaitable[T]]) -> list[T | None]:
        """Run ``jobs`` at once; a job the budget stopped gives None.

        The chain after them is the longest chain among them: each ran in its own task.
        """

        async def one(job: Awaitable[T]) -> tuple[T | None, int]:
            try:
                return await job, CHAIN.get()
            except StopProbe:
                return None, CHAIN.get()

        jobs = list(jobs)
        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            done = await asyncio.gather(*tasks)
        except BaseException:
            # The probe is stopping (a replay missing a request, a deadline, an interrupt):
            # stop the others too, and close the jobs that never started, so none is left
            # behind as a coroutine never awaited.
            for task in tasks:
                task.cancel()
            for job in jobs:
                _close_unstarted(job)
            raise
        if done:
            CHAIN.set(max(CHAIN.get(), *(depth for _, depth in done)))
        return [value for value, _ in done]


def _would_retry(exchange: Exchange) -> bool:
    refusal, error = exchange.refusal, exchange.error
    if refusal is not None:
        return refusal.retryable
    return error is not None and error.kind in (WireErrorKind.CONNECT, WireErrorKind.TIMEOUT)


def _close_unstarted(job: object) -> None:
    """Close a coroutine that never ran, and the coroutines it was handed to await (a stage's
    work passed to ``Probe.timed``), so none is left behind never awaited."""
    if not inspect.iscoroutine(job) or inspect.getcoroutinestate(job) != "CORO_CREATED":
        return
    frame = job.cr_frame
    for argument in frame.f_locals.values() if frame is not None else ():
        _close_unstarted(argument)
    job.close()
