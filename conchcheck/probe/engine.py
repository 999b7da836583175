"""The probe: run a matrix against one target, stage by stage, within a budget.

reach → catalogue → dialect → native → words → follow-ups. Each stage is a set of cells run
concurrently; a budget (requests, tokens) or an interrupt stops the probe with the cells
so far, and ``resume`` continues it without repeating finished cells.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conchcheck.probe.dialect import run_dialects
from conchcheck.probe.evidence import refusal_evidence, reply_evidence, request_evidence, tokens
from conchcheck.probe.prompts import run_prompts
from conchcheck.results import Cell, Outcome, ProbeResult, Stage
from conchcheck.verdict import decide
from conchcheck.wire import adapter_for
from conchcheck.wire.catalogue import Catalogues, ModelInfo
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import Target
from conchcheck.wire.transport import Exchange, Policy, Transport, Wire, WireErrorKind

UNUSABLE_REFUSALS = frozenset({"auth", "not_found"})
UNUSABLE_ERRORS = frozenset({WireErrorKind.CONNECT, WireErrorKind.INSECURE, WireErrorKind.REDIRECT})


@dataclass(frozen=True, slots=True)
class ProbeOptions:
    """How a probe runs and what it may spend."""

    concurrency: int = 4
    repeat: int = 1
    threshold: float = 0.5
    temperature: float = 0.0
    max_requests: int | None = None
    max_tokens: int | None = None
    """Budget of prompt + completion tokens over the whole probe."""
    dialect_max_tokens: int = 8
    """Output limit of a dialect cell: only acceptance matters."""
    prompt_max_tokens: int = 200
    """Output limit of a prompt: enough for a call or a short answer, not for rambling."""
    streaming_checks: int = 2
    """Prompts also sent streamed, to compare with the whole reply."""
    policy: Policy = field(default_factory=Policy)


class ProbeObserver(Protocol):
    """Told of progress; ``conchcheck.console`` renders it, Python callers may pass nothing."""

    def stage(self, stage: Stage, total: int) -> None:
        """A stage starts with ``total`` cells (an estimate for the dialect stage)."""

    def cell(self, cell: Cell) -> None:
        """A cell finished."""


class StopProbe(Exception):
    """The budget is spent or the probe was interrupted."""


class Budget:
    """Counts requests and tokens; refuses the next request once either limit is reached."""

    def __init__(self, max_requests: int | None, max_tokens: int | None) -> None:
        self.max_requests = max_requests
        self.max_tokens = max_tokens
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.stopped: str | None = None

    def before(self) -> None:
        """Count one more request, or raise ``StopProbe`` when the budget is spent."""
        if self.stopped is None:
            if self.max_requests is not None and self.requests >= self.max_requests:
                self.stopped = f"the request budget ({self.max_requests}) is spent"
            elif (
                self.max_tokens is not None
                and self.prompt_tokens + self.completion_tokens >= self.max_tokens
            ):
                self.stopped = f"the token budget ({self.max_tokens}) is spent"
        if self.stopped is not None:
            raise StopProbe(self.stopped)
        self.requests += 1

    def after(self, exchange: Exchange) -> None:
        """Count the tokens an exchange reported."""
        prompt, completion = tokens(exchange)
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0


class Probe:
    """One probe of one target with one matrix; ``run`` it, or take ``partial`` when stopped."""

    def __init__(
        self,
        target: Target,
        matrix: Any,
        *,
        key: Secret | None = None,
        options: ProbeOptions | None = None,
        transport: Transport | None = None,
        observer: ProbeObserver | None = None,
        resume: Iterable[Cell] = (),
    ) -> None:
        self.target = target
        self.matrix = matrix
        self.key = key
        self.options = options or ProbeOptions()
        self.transport = transport
        self.observer = observer
        self.adapter = adapter_for(target)
        self.budget = Budget(self.options.max_requests, self.options.max_tokens)
        self.prior = {c.id: c for c in resume if c.outcome is not Outcome.ERROR}
        self.cells: list[Cell] = []
        self.catalogue: ModelInfo | None = None
        self.stage_ms: dict[str, float] = {}
        self.stage_requests: dict[str, int] = {}
        self.unusable: str | None = None
        self.wire: Wire | None = None
        self.limit = asyncio.Semaphore(self.options.concurrency)

    # -- what stages use ------------------------------------------------------------------

    async def send(self, request: ChatRequest) -> Exchange:
        """Send within the budget; ``StopProbe`` once it is spent."""
        self.budget.before()
        assert self.wire is not None
        exchange = await self.wire.send(self.target, self.adapter, request, self.key)
        self.budget.after(exchange)
        return exchange

    def record(self, cell: Cell) -> Cell:
        """Keep a finished cell and tell the observer."""
        self.cells.append(cell)
        if self.observer is not None:
            self.observer.cell(cell)
        return cell

    def reuse(self, cell_id: str) -> Cell | None:
        """A finished cell of the probe being resumed, recorded again as it was."""
        cell = self.prior.get(cell_id)
        return self.record(cell) if cell is not None else None

    async def gather(self, jobs: Sequence[Callable[[], Awaitable[Any]]]) -> None:
        """Run jobs concurrently (bounded); a spent budget ends the ones not yet started."""

        async def one(job: Callable[[], Awaitable[Any]]) -> None:
            async with self.limit:
                with contextlib.suppress(StopProbe):
                    await job()

        await asyncio.gather(*(one(job) for job in jobs))

    def exchange_cell(
        self, cell_id: str, stage: Stage, case: str, exchange: Exchange, **fields: Any
    ) -> Cell:
        """A cell carrying an exchange's evidence; the outcome is in ``fields``."""
        prompt, completion = tokens(exchange)
        refusal = exchange.refusal
        error = exchange.error
        return Cell(
            cell_id,
            stage,
            case,
            refusal_kind=refusal.kind.value if refusal else None,
            error_kind=error.kind.value if error else None,
            request=request_evidence(exchange),
            reply=reply_evidence(exchange),
            refusal=refusal_evidence(refusal),
            requests=exchange.attempts,
            latency_ms=round(exchange.latency_ms, 1),
            prompt_tokens=prompt,
            completion_tokens=completion,
            **fields,
        )

    # -- the run ------------------------------------------------------------------------------

    async def run(self) -> ProbeResult:
        """Every stage in order; stops early on an unusable target or a spent budget."""
        async with Wire(policy=self.options.policy, transport=self.transport) as wire:
            self.wire = wire
            try:
                await self.timed(Stage.REACH, self.reach)
                if self.unusable is None:
                    await self.timed(Stage.CATALOGUE, self.read_catalogue)
                    await self.timed(Stage.DIALECT, lambda: run_dialects(self))
                    await self.timed(Stage.NATIVE, lambda: run_prompts(self, "native"))
                    await self.timed(Stage.WORDS, lambda: run_prompts(self, "words"))
                    await self.timed(Stage.FOLLOW_UP, lambda: run_prompts(self, "follow_up"))
            except StopProbe:
                pass
        return self.partial()

    async def timed(self, stage: Stage, work: Callable[[], Awaitable[Any]]) -> None:
        """Run one stage and keep its wall time."""
        if self.budget.stopped:
            return
        started, spent = time.perf_counter(), self.budget.requests
        try:
            await work()
        finally:
            self.stage_ms[stage.value] = round((time.perf_counter() - started) * 1000, 1)
            self.stage_requests[stage.value] = self.budget.requests - spent

    async def reach(self) -> None:
        """One plain chat request: an auth or model refusal makes the target unusable."""
        if self.observer:
            self.observer.stage(Stage.REACH, 1)
        if self.reuse("reach") is not None:
            return
        request = ChatRequest(
            self.target.model,
            (Message(Role.USER, "Reply with the single word: ready"),),
            max_tokens=self.options.dialect_max_tokens,
            temperature=self.options.temperature,
        )
        exchange = await self.send(request)
        if exchange.reply is not None and exchange.refusal is None:
            outcome, detail = Outcome.PASS, "The target answered a plain chat request."
        elif exchange.refusal is not None:
            outcome, detail = Outcome.REFUSED, exchange.refusal.message
            if exchange.refusal.kind.value in UNUSABLE_REFUSALS:
                self.unusable = f"{exchange.refusal.kind.value}: {exchange.refusal.message}"
        else:
            assert exchange.error is not None
            outcome, detail = Outcome.ERROR, exchange.error.detail
            if exchange.error.kind in UNUSABLE_ERRORS:
                self.unusable = f"{exchange.error.kind.value}: {exchange.error.detail}"
        self.record(
            self.exchange_cell(
                "reach", Stage.REACH, "reach", exchange, outcome=outcome, detail=detail
            )
        )

    async def read_catalogue(self) -> None:
        """What the provider declares about the model."""
        if self.observer:
            self.observer.stage(Stage.CATALOGUE, 1)
        assert self.wire is not None
        info = await Catalogues(self.wire).lookup(self.target, self.key)
        self.catalogue = info
        outcome = Outcome.ERROR if info.error else Outcome.PASS
        detail = info.error or info.evidence or "nothing declared"
        self.record(
            Cell(
                "catalogue",
                Stage.CATALOGUE,
                "catalogue",
                outcome,
                detail,
                error_kind="catalogue" if info.error else None,
                request={"source": info.source},
                extra={
                    "listed": info.listed,
                    "tools": info.tools,
                    "context_window": info.context_window,
                },
            )
        )

    def partial(self, stopped: str | None = None) -> ProbeResult:
        """The result as it stands (after ``run``, or after an interrupt)."""
        stop = stopped or self.budget.stopped
        family = self.target.dialect.value
        invalid = [c.id for c in self.matrix.schema_cases if not c.valid]
        declared = self.catalogue.tools if self.catalogue else None
        reached = self.unusable is None and any(c.stage is Stage.REACH for c in self.cells)
        verdict = (
            decide(
                self.cells,
                family=family,
                threshold=self.options.threshold,
                invalid_cases=invalid,
                tools_declared=declared,
            )
            if reached
            else None
        )
        order = {stage: index for index, stage in enumerate(Stage)}
        cells = tuple(sorted(self.cells, key=lambda c: (order[c.stage], c.id)))
        return ProbeResult(
            self.target.label,
            self.target.provider.name,
            self.target.model,
            self.target.base_url,
            family,
            self.matrix.name,
            self.matrix.digest,
            cells,
            self.catalogue,
            verdict,
            self.budget.requests,
            self.budget.prompt_tokens,
            self.budget.completion_tokens,
            dict(self.stage_ms),
            stop,
            self.unusable,
            dict(self.stage_requests),
        )
