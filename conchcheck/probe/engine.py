"""The probe: one matrix against one target, run as a graph of stages within a budget.

    reach ──┬─► catalogue ──► words prompts ──► each one's round trip
            └─► dialect ────► native prompts ─► each one's round trip
                         └──► streaming pairs

Every request waits only for what it needs, under the one concurrency limit of the budget,
so a probe's wall time stays near its critical path. A spent budget or an interrupt stops
the probe with the cells so far; ``resume`` continues it without repeating finished cells.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from typing import TypeVar

from conchcheck.core.dialects import Dialect
from conchcheck.core.refusals import RefusalKind
from conchcheck.core.strictness import strict_breaks
from conchcheck.core.trials import PERMISSIVENESS
from conchcheck.matrix import Matrix
from conchcheck.probe.budget import STAGE, URGENCY, StopProbe, Urgency
from conchcheck.probe.context import CHAIN, Check, Context, ProbeObserver, ProbeOptions
from conchcheck.probe.costs import run_costs
from conchcheck.probe.dialect import run_dialects, run_invalid_cases
from conchcheck.probe.evidence import exchange_cell
from conchcheck.probe.followups import round_trip, streaming
from conchcheck.probe.knobs import run_knobs
from conchcheck.probe.pacing import ProviderLimit
from conchcheck.probe.prompts import native_prompt, words_prompt
from conchcheck.probe.repeats import Later, after, planned, repeated
from conchcheck.results import (
    CatalogueFacts,
    Cell,
    Outcome,
    ProbeResult,
    RequestEvidence,
    Stage,
)
from conchcheck.verdict import decide, decide_dialect
from conchcheck.wire import adapter_for
from conchcheck.wire.catalogue import Catalogues
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.exchange import Failed, Refused, Replied, Unparsed, WireErrorKind
from conchcheck.wire.keys import Secret
from conchcheck.wire.providers import Target
from conchcheck.wire.transport import Transport, Wire

__all__ = ["Probe", "ProbeObserver", "ProbeOptions"]

T = TypeVar("T")
UNUSABLE_REFUSALS = frozenset({RefusalKind.AUTH, RefusalKind.NOT_FOUND, RefusalKind.QUOTA})


class Probe:
    """One probe of one target with one matrix; ``run`` it, or take ``partial`` when stopped."""

    def __init__(
        self,
        target: Target,
        matrix: Matrix,
        *,
        key: Secret | None = None,
        options: ProbeOptions | None = None,
        transport: Transport | None = None,
        observer: ProbeObserver | None = None,
        resume: Iterable[Cell] = (),
        shared: ProviderLimit | None = None,
    ) -> None:
        self.target = target
        self.matrix = matrix
        self.key = key
        self.options = options or ProbeOptions()
        self.transport = transport
        self.observer = observer
        self.resume = tuple(resume)
        self.shared = shared
        """Limits shared with other probes of the same provider (``conchcheck.run.fleet``)."""
        self.ctx: Context | None = None
        self.unusable: str | None = None
        self.spans: dict[Stage, list[float]] = {}
        self.chains: dict[Stage, int] = {}
        """The longest chain of requests at the end of each stage's work."""

    async def run(self) -> ProbeResult:
        """The whole graph; stops early on an unusable target or a spent budget."""
        async with Wire(policy=self.options.policy, transport=self.transport) as wire:
            ctx = Context(
                self.target,
                self.matrix,
                self.options,
                wire,
                adapter_for(self.target),
                self.key,
                self.observer,
                self.resume,
            )
            ctx.budget.shared = self.shared
            wire.gate = ctx.budget
            self.ctx = ctx
            deadline = self.options.deadline
            try:
                await asyncio.wait_for(self._graph(ctx), timeout=deadline)
            except StopProbe:
                pass
            except asyncio.TimeoutError:
                return self.partial(f"the deadline of {deadline:g} s passed")
        return self.partial()

    async def _graph(self, ctx: Context) -> None:
        await self.timed(Stage.REACH, Urgency.REACH, self.reach(ctx))
        if self.unusable is not None:
            return
        catalogue = asyncio.ensure_future(
            self.timed(Stage.CATALOGUE, Urgency.REACH, self.read_catalogue(ctx))
        )
        checks = self.options.checks
        dialect = asyncio.ensure_future(
            self.timed(Stage.DIALECT, Urgency.DIALECT, run_dialects(ctx))
            if Check.DIALECT in checks
            else _nothing()
        )
        jobs: list[Awaitable[object]] = [catalogue, dialect]
        if Check.DIALECT in checks:
            # Nothing waits for the deliberately invalid cases: they go when a slot is free.
            jobs.append(self.timed(Stage.DIALECT, Urgency.IDLE, run_invalid_cases(ctx)))
        if Check.MODE in checks:
            ctx.sharing.expect(p.id for p in ctx.matrix.prompts)
            jobs += [self.words(ctx, catalogue), self.native(ctx, dialect)]
        if Check.KNOBS in checks:
            # Knob tools are plain schemas every dialect carries: no wait for the dialect.
            jobs.append(self.timed(Stage.KNOBS, Urgency.NATIVE, run_knobs(ctx)))
        if Check.COST in checks:
            jobs.append(self.costs(ctx, dialect))
        await ctx.together(jobs)
        self._check_answers(ctx)

    async def words(self, ctx: Context, catalogue: Awaitable[None]) -> None:
        """Words prompts need only the catalogue's window, not the dialect."""
        await catalogue
        self.follow(Stage.CATALOGUE)
        prompts = ctx.matrix.prompts
        ctx.announce(Stage.WORDS, planned(self.options, len(prompts)))

        async def one(prompt_index: int, attempt: int, later: Later) -> Cell:
            prompt = prompts[prompt_index]
            urgency = Urgency.CHAIN if prompt.follow_up and attempt == 1 else Urgency.WORDS
            cell = await self.timed(Stage.WORDS, urgency, words_prompt(ctx, prompt, attempt))
            if attempt == 1 and prompt.follow_up is not None:
                trip = self.timed(Stage.FOLLOW_UP, Urgency.CHAIN, round_trip(ctx, prompt, cell))
                await after(trip, later)
            return cell

        await repeated(ctx, one)

    async def native(self, ctx: Context, dialect_stage: Awaitable[None]) -> None:
        """Native prompts and the streaming pairs need the dialect verdict."""
        try:
            await self._native(ctx, dialect_stage)
        finally:
            ctx.sharing.close()  # what waits for a request not sent sends its own

    async def _native(self, ctx: Context, dialect_stage: Awaitable[None]) -> None:
        await dialect_stage
        self.follow(Stage.DIALECT)
        dialect = self.chosen_dialect(ctx)
        prompts = ctx.matrix.prompts
        if Check.STREAMING in self.options.checks:
            streamed = {p.id for p in prompts}
        else:
            calling = [p for p in prompts if not p.expect.no_call and p.follow_up is None]
            streamed = {p.id for p in calling[: self.options.streaming_checks]}
        ctx.announce(Stage.NATIVE, planned(self.options, len(prompts)))

        async def one(prompt_index: int, attempt: int, later: Later) -> Cell:
            prompt = prompts[prompt_index]
            work = native_prompt(ctx, prompt, dialect, attempt)
            urgency = Urgency.CHAIN if prompt.follow_up and attempt == 1 else Urgency.NATIVE
            whole = asyncio.ensure_future(self.timed(Stage.NATIVE, urgency, work))

            async def trip() -> None:
                cell = await whole
                if attempt == 1 and prompt.follow_up is not None:
                    await self.timed(Stage.FOLLOW_UP, Urgency.CHAIN, round_trip(ctx, prompt, cell))

            jobs: list[Awaitable[object]] = [trip()]
            if attempt == 1 and prompt.id in streamed:
                # The streamed copy goes with the whole request, at its urgency, and is
                # compared with its cell; the round trip waits for the whole reply only.
                pair = streaming(ctx, prompt, dialect, whole)
                jobs.append(self.timed(Stage.FOLLOW_UP, urgency, pair))
            try:
                await after(ctx.together(jobs), later)
                return await whole
            except BaseException:
                whole.cancel()  # the probe is stopping: the whole request goes with it
                raise

        await repeated(ctx, one)

    async def costs(self, ctx: Context, dialect_stage: Awaitable[None]) -> None:
        """What the tools cost in the chosen dialect and each less permissive one (an
        endpoint that takes a dialect takes what is stricter), when a slot is free."""
        await dialect_stage
        self.follow(Stage.DIALECT)
        chosen = self.chosen_dialect(ctx)
        dialects = PERMISSIVENESS[PERMISSIVENESS.index(chosen) :]
        await self.timed(Stage.COST, Urgency.IDLE, run_costs(ctx, dialects, chosen))

    def chosen_dialect(self, ctx: Context) -> Dialect:
        """The dialect native tools go in: the verdict's, else the best there is, else the
        family's (an endpoint that takes no tools refuses them in any dialect)."""
        verdict = decide_dialect(
            ctx.cells,
            self.target.dialect,
            [c.id for c in self.matrix.schema_cases if not c.valid],
            [c.id for c in self.matrix.schema_cases if c.valid],
        )
        return verdict.dialect or verdict.best or self.target.dialect

    def follow(self, stage: Stage) -> None:
        """What runs next waited for ``stage``: its chain continues from there."""
        CHAIN.set(max(CHAIN.get(), self.chains.get(stage, 0)))

    async def timed(self, stage: Stage, urgency: Urgency, work: Awaitable[T]) -> T:
        """Run ``work`` as part of ``stage``: its requests go at ``urgency`` and count there."""
        URGENCY.set(urgency)
        STAGE.set(stage.value)
        started = time.perf_counter()
        try:
            return await work
        finally:
            span = self.spans.setdefault(stage, [started, started])
            span[0] = min(span[0], started)
            span[1] = max(span[1], time.perf_counter())
            self.chains[stage] = max(self.chains.get(stage, 0), CHAIN.get())

    async def reach(self, ctx: Context) -> None:
        """One plain chat request: no usable reply, a bad key or an unknown model stop here."""
        ctx.announce(Stage.REACH, 1)
        prior = ctx.reuse("reach")
        if prior is not None:
            return
        request = ChatRequest(
            self.target.model,
            (Message(Role.USER, "Reply with the single word: ready"),),
            max_tokens=self.options.dialect_max_tokens,
            temperature=self.options.temperature,
        )
        exchange = await ctx.send(request, "reach")
        match exchange.outcome:
            case Replied():
                outcome, detail = Outcome.PASS, "The target answered a plain chat request."
            case Unparsed(failure):
                # The model answered; only the server's reading of it failed: reachable.
                outcome, detail = Outcome.UNPARSED_BY_SERVER, failure.cause
            case Refused(refusal):
                outcome, detail = Outcome.REFUSED, refusal.message
                if refusal.kind is RefusalKind.RATE_LIMIT:
                    # Still "later" after its retries: what follows would be refused alike.
                    self.unusable = ctx.budget.pressure.rate_limit_reason()
                elif refusal.kind in UNUSABLE_REFUSALS:
                    self.unusable = _one_line(f"{refusal.kind.value}: {refusal.message}")
            case Failed(error):
                # No usable reply to the plainest request: nothing after it could be read.
                outcome, detail = Outcome.ERROR, error.detail
                self.unusable = _one_line(f"{error.kind.value}: {error.detail}")
        cell = exchange_cell(
            "reach", Stage.REACH, "reach", exchange, outcome=outcome, detail=detail
        )
        ctx.record(cell)

    async def read_catalogue(self, ctx: Context) -> None:
        """What the provider declares about the model."""
        ctx.announce(Stage.CATALOGUE, 1)
        spent = ctx.budget.requests
        info = await Catalogues(ctx.wire).lookup(self.target, self.key)
        ctx.catalogue = info
        if ctx.budget.requests > spent:
            CHAIN.set(CHAIN.get() + 1)  # a look-up the words prompts wait for
        ctx.record(
            Cell(
                "catalogue",
                Stage.CATALOGUE,
                "catalogue",
                Outcome.ERROR if info.error else Outcome.PASS,
                info.error or info.evidence or "nothing declared",
                error_kind=WireErrorKind.CATALOGUE if info.error else None,
                request=_looked_up(info.source),
                facts=CatalogueFacts(info.listed, info.tools, info.context_window),
            )
        )

    def _check_answers(self, ctx: Context) -> None:
        # An endpoint that answered nothing usable after the plain request proves nothing.
        sent = [
            c for c in ctx.cells if c.stage not in (Stage.REACH, Stage.CATALOGUE) and c.requests
        ]
        if sent and all(c.outcome is Outcome.ERROR for c in sent):
            # Stopped for a rate limit or silence, that is the reason; else the first failure.
            reason = ctx.budget.pressed or f"every request after the first failed: {sent[0].detail}"
            self.unusable = _one_line(reason)

    def partial(self, stopped: str | None = None) -> ProbeResult:
        """The result as it stands (after ``run``, or after an interrupt)."""
        ctx = self.ctx
        order = {stage: index for index, stage in enumerate(Stage)}
        # Sorted before the verdict too: requests finish in any order, the verdict must not
        # depend on which came first (a replay is compared byte for byte).
        cells_now = sorted(
            ctx.cells if ctx is not None else (), key=lambda c: (order[c.stage], c.id)
        )
        budget = ctx.budget if ctx is not None else None
        stop = stopped or (budget.stopped if budget is not None else None)
        pressed = budget.pressed if budget is not None else None
        if self.unusable is None and pressed is not None and stop == pressed:
            # Stopped by a rate limit or silence before anything was learnt: not a partial
            # result, but a target that can't be probed (exit 3).
            learnt = (c for c in cells_now if c.stage not in (Stage.REACH, Stage.CATALOGUE))
            if all(c.outcome in (Outcome.ERROR, Outcome.SKIPPED) for c in learnt):
                self.unusable, stop = _one_line(pressed), None
        reached = self.unusable is None and any(c.stage is Stage.REACH for c in cells_now)
        schema_cases = self.matrix.schema_cases
        verdict = (
            decide(
                cells_now,
                family=self.target.dialect,
                threshold=self.options.threshold,
                invalid_cases=[c.id for c in schema_cases if not c.valid],
                valid_cases=[c.id for c in schema_cases if c.valid],
                strict_breakers=[
                    c.id
                    for c in schema_cases
                    if c.valid and any(strict_breaks(dict(t.parameters)) for t in c.tools)
                ],
                tools_declared=ctx.catalogue.tools if ctx and ctx.catalogue else None,
                api=self.target.provider.api,
                confidence=self.options.confidence,
            )
            if reached
            else None
        )
        cells = tuple(cells_now)
        stage_ms = {
            stage.value: round((end - start) * 1000, 1)
            for stage, (start, end) in self.spans.items()
        }
        return ProbeResult(
            self.target.label,
            self.target.provider.name,
            self.target.model,
            self.target.base_url,
            self.target.provider.api,
            self.target.dialect,
            self.matrix.name,
            self.matrix.digest,
            cells,
            ctx.catalogue if ctx else None,
            verdict,
            budget.requests if budget else 0,
            budget.prompt_tokens if budget else 0,
            budget.completion_tokens if budget else 0,
            stage_ms,
            stop,
            self.unusable,
            dict(budget.by_stage) if budget else {},
            ctx.critical_path if ctx else 0,
            self.matrix.own,
        )


async def _nothing() -> None:
    return None


def _looked_up(source: str) -> RequestEvidence | None:
    # A catalogue names its look-up as "GET <url>" or "POST <url> <body>".
    method, _, rest = source.partition(" ")
    url, _, body = rest.partition(" ")
    return RequestEvidence(method, url, body=body or None) if url else None


def _one_line(text: str) -> str:
    # The reason is shown on one line: a provider's page excerpt keeps its line breaks.
    return " ".join(text.split())
