"""The dialect stage: which dialect carries every valid schema case, measured, for few requests.

DESIGN.md rule 4. Valid cases go many to a request. ``permissive`` is tried first, then the
family's own dialect, then the others from most to least permissive, until the most
permissive dialect that carries every case is known: a grouped request in that dialect
carried all of them, and every more permissive dialect was refused on at least one case.
Then, within an economy bound, the refused dialects are split case by case so the report
can say which cases each refuses; a case whose converted schema is byte-for-byte the one a
dialect already accepted is not sent again. A failed request settles nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from conchcheck.core.dialects import Dialect, to_dialect
from conchcheck.core.refusals import Refusal, RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.core.trials import PERMISSIVENESS, AsWritten, Trial
from conchcheck.matrix import SchemaCase
from conchcheck.probe.context import Context
from conchcheck.probe.evidence import exchange_cell
from conchcheck.results import Cell, Outcome, SchemaFacts, Stage
from conchcheck.verdict import STRICT_MODE, carried_by, exploration_order
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied, Unparsed
from conchcheck.wire.providers import ApiFamily

JSON_SCHEMA = AsWritten.JSON_SCHEMA
"""Gemini only: full JSON Schema sent as ``parametersJsonSchema``."""
ECONOMY = 0.25
"""The stage spends at most this share of one request per case per dialect."""
SPLIT_KINDS = frozenset({RefusalKind.CONTEXT_LENGTH, RefusalKind.OTHER})
"""Refusals that may concern a group's size or some of its tools, not the dialect: split."""
ENDPOINT_KINDS = frozenset(
    {RefusalKind.TOOLS, RefusalKind.AUTH, RefusalKind.NOT_FOUND, RefusalKind.QUOTA}
)
"""Refusals of the endpoint itself: no dialect can change them, so exploring stops."""

Settled = dict[tuple[str, Trial], Cell]


def case_tools(case: SchemaCase, dialect: Trial) -> tuple[Tool, ...]:
    """The tools a schema case sends (its copies, when it has them), in ``dialect``."""
    schema = dict(case.tool.parameters)
    if dialect not in (JSON_SCHEMA, STRICT_MODE) and schema:
        schema = to_dialect(schema, dialect)
    return tuple(Tool(t.name, t.description, schema) for t in case.tools)


class Exploration:
    """One dialect stage: what is settled so far, and what it may still spend."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        cases = ctx.matrix.schema_cases
        self.valid = [c for c in cases if c.valid]
        self.invalid = [c for c in cases if not c.valid]
        self.settled: Settled = {}
        self.cap = math.ceil(ECONOMY * len(cases) * len(PERMISSIVENESS))
        # The invalid cases are sent apart, but count against the same bound.
        self.spent = len(self.invalid)
        self.endpoint_refusal: Refusal | None = None
        self.sent: set[Trial] = set()
        """Dialects a request went out in (a group refused without naming a case settles none)."""

    async def run(self) -> None:
        """Explore, then draw the per-case picture within the cap."""
        self.ctx.announce(Stage.DIALECT, len(self.valid) + len(self.invalid))
        await self.explore()
        if self.ctx.target.provider.api is ApiFamily.GEMINI and self.endpoint_refusal is None:
            await self.try_all(JSON_SCHEMA)
        if self.ctx.target.provider.api is ApiFamily.RESPONSES and self.endpoint_refusal is None:
            # The exploration sends strict: false; what strict: true does to the same schemas
            # (OpenAI's default there) is recorded beside it, and never decides the dialect.
            await self.strict_mode()

    async def run_invalid(self) -> None:
        """Deliberately invalid schemas: once, as sent, each alone; nothing waits for them."""
        await self.ctx.together([self.group([c], Dialect.PERMISSIVE) for c in self.invalid])

    async def explore(self) -> None:
        """Find the most permissive dialect that carries every valid case; then the picture."""
        family = self.ctx.target.dialect
        chosen: Dialect | None = None
        for dialect in exploration_order(family):
            if self.endpoint_refusal is not None:
                return
            rank = PERMISSIVENESS.index(dialect)
            if chosen is not None and rank > PERMISSIVENESS.index(chosen):
                continue
            await self.try_all(dialect)
            if carried_by(self.cells(), dialect, [c.id for c in self.valid]):
                chosen = dialect
            if chosen is not None and all(
                self.tried(d) for d in PERMISSIVENESS[: PERMISSIVENESS.index(chosen)]
            ):
                break
        for dialect in PERMISSIVENESS:
            if self.endpoint_refusal is None and self.tried(dialect) and dialect != chosen:
                await self.picture(dialect)

    def cells(self) -> list[Cell]:
        """The dialect cells settled so far."""
        return list(self.settled.values())

    def tried(self, dialect: Trial) -> bool:
        """Whether any case was sent in ``dialect`` (by this probe, or the one resumed)."""
        return dialect in self.sent or any(d == dialect for _, d in self.settled)

    async def try_all(self, dialect: Trial) -> None:
        """Every valid case in ``dialect``: the plain ones in one request, many-tools alone."""
        singles = [c for c in self.valid if c.copies]
        plain = [c for c in self.valid if not c.copies]
        jobs = [self.without_named(plain, dialect)] if plain else []
        await self.ctx.together([*jobs, *(self.group([c], dialect) for c in singles)])

    async def without_named(self, cases: list[SchemaCase], dialect: Trial) -> None:
        """Send ``cases`` together; when a refusal names some, send the rest once more without
        them. A refusal that names no case settles nothing here (the picture splits it).

        llama-cpp-python refuses a group holding a tool without ``parameters`` naming only
        ``tools[1]`` (tests/data/recordings/llama-cpp-python.focus.json): the other cases of
        the group must still be sent, or no dialect is ever seen to carry them.
        """
        if not await self.group(cases, dialect):
            return
        # Once, and within the stage's bound: a provider that names one refused tool a
        # request (Gemini's keyword refusals) is left to the picture, which splits.
        rest = [c for c in cases if (c.id, dialect) not in self.settled]
        if rest and self.spent < self.cap:
            await self.group(rest, dialect)

    async def strict_mode(self) -> None:
        """Settle case by case what ``strict: true`` refuses: a refusal that names one tool
        settles it, one that names none is split; at most two requests a case."""
        todo = [c for c in self.valid if not c.copies]  # a schema question, not a count
        await self.settle_each(todo, STRICT_MODE, self.spent + 2 * len(todo))

    async def picture(self, dialect: Trial) -> None:
        """Settle case by case what ``dialect`` refuses, within the cap."""
        todo = []
        for case in self.valid:
            if (case.id, dialect) in self.settled:
                continue
            twin = self.twin(case, dialect)
            if twin is not None:
                self.keep(case, dialect, twin)
            else:
                todo.append(case)
        await self.settle_each(todo, dialect, self.cap)

    async def settle_each(self, todo: list[SchemaCase], dialect: Trial, stop: int) -> None:
        """Send ``todo`` in ``dialect`` until each case is settled, splitting refused groups,
        while fewer than ``stop`` requests are spent."""
        while todo and self.spent < stop and self.endpoint_refusal is None:
            named = await self.group(todo, dialect, split=True)
            before = len(todo)
            todo = [c for c in todo if (c.id, dialect) not in self.settled]
            if len(todo) == before and not named:
                return  # nothing settled (a failure): sending it again proves no more

    def twin(self, case: SchemaCase, dialect: Trial) -> Cell | None:
        """An accepted cell of ``case`` in another dialect whose tools were the same bytes."""
        mine = case_tools(case, dialect)
        for (case_id, other), cell in self.settled.items():
            same = case_id == case.id and other in PERMISSIVENESS
            if same and cell.outcome is Outcome.ACCEPTED and case_tools(case, other) == mine:
                return cell
        return None

    def keep(self, case: SchemaCase, dialect: Trial, twin: Cell) -> None:
        """Record ``case`` as accepted in ``dialect`` on the evidence of its byte-equal twin."""
        detail = (
            f"The same schema, byte for byte, was accepted as {twin.dialect} "
            f"(cell {twin.id}); not sent again."
        )
        cell = Cell(
            f"dialect/{dialect}/{case.id}",
            Stage.DIALECT,
            case.id,
            Outcome.ACCEPTED,
            detail,
            dialect=dialect,
            requests=0,
            facts=_twin_facts(twin),
        )
        self.settled[(case.id, dialect)] = self.ctx.record(cell)

    async def group(
        self, cases: Sequence[SchemaCase], dialect: Trial, *, split: bool = False
    ) -> bool:
        """Send ``cases`` in one request and settle what the reply allows; True if a case
        was named by a refusal. ``split``: settle the rest of a refused group too."""
        todo = [c for c in cases if not self.resumed(c, dialect)]
        if not todo:
            return False
        tools = tuple(t for case in todo for t in case_tools(case, dialect))
        request = ChatRequest(
            self.ctx.target.model,
            (Message(Role.USER, "Reply with the single word: ok"),),
            tools=tools,
            max_tokens=self.ctx.options.dialect_max_tokens,
            temperature=self.ctx.options.temperature,
            gemini_schema_field="parametersJsonSchema" if dialect == JSON_SCHEMA else "parameters",
            strict=dialect == STRICT_MODE,
        )
        self.sent.add(dialect)
        asker = f"dialect/{dialect}/" + "+".join(case.id for case in todo)
        exchange = await self.ctx.send(request, asker)
        self.spent += exchange.attempts
        match exchange.outcome:
            case Replied() | Unparsed():
                # Output the server couldn't parse is still output: the model ran on these
                # tools, so the request and its schemas were accepted.
                self.settle(todo, dialect, exchange, Outcome.ACCEPTED)
            case Failed():
                self.settle(todo, dialect, exchange, Outcome.ERROR)
            case Refused(refusal) if len(todo) == 1 or refusal.kind in ENDPOINT_KINDS:
                if refusal.kind in ENDPOINT_KINDS:
                    self.endpoint_refusal = refusal
                self.settle(todo, dialect, exchange, Outcome.REFUSED)
            case Refused(refusal) if refusal.kind in SPLIT_KINDS:
                half = len(todo) // 2
                await self.ctx.together(
                    [
                        self.group(todo[:half], dialect, split=split),
                        self.group(todo[half:], dialect, split=split),
                    ]
                )
            case Refused(refusal) if refusal.kind is RefusalKind.SCHEMA:
                # A group holds no many-tools case, so a tool's index is its case's position.
                named = [
                    (
                        todo[v.tool_index],
                        replace(refusal, tool_index=v.tool_index, keyword=v.keyword, path=v.path),
                    )
                    for v in refusal.violations
                    if 0 <= v.tool_index < len(todo)
                ]
                index = refusal.tool_index
                if index is None:
                    index = _named_tool(refusal.message, todo)
                if not named and index is not None and 0 <= index < len(todo):
                    named = [(todo[index], refusal)]
                for case, own in named:
                    # Every tool the refusal names is refused by this one request.
                    self.settle([case], dialect, exchange, Outcome.REFUSED, todo, own)
                if named:
                    return True
                if split:
                    half = len(todo) // 2
                    await self.ctx.together(
                        [
                            self.group(todo[:half], dialect, split=True),
                            self.group(todo[half:], dialect, split=True),
                        ]
                    )
            case Refused():
                # A rate limit that outlasted its retries says nothing of the schemas.
                self.settle(todo, dialect, exchange, Outcome.REFUSED)
        return False

    def resumed(self, case: SchemaCase, dialect: Trial) -> bool:
        """Whether the probe being resumed settled ``case`` in ``dialect`` (then reused)."""
        prior = self.ctx.reuse(f"dialect/{dialect}/{case.id}")
        if prior is not None:
            self.settled[(case.id, dialect)] = prior
        return prior is not None

    def settle(
        self,
        cases: Sequence[SchemaCase],
        dialect: Trial,
        exchange: Exchange,
        outcome: Outcome,
        sent: Sequence[SchemaCase] = (),
        own: Refusal | None = None,
    ) -> None:
        """Record ``cases`` as settled by ``exchange`` (``sent``: every case in the request;
        ``own``: what the refusal says of this case, when it names several)."""
        ids = tuple(c.id for c in (sent or cases))
        together = f" (sent with {len(ids) - 1} other cases)" if len(ids) > 1 else ""
        match exchange.outcome:
            case Refused(refusal):
                detail = refusal.message
            case Failed(error):
                detail = error.detail
            case Replied():
                detail = f"Accepted{together}."
            case Unparsed(failure):
                detail = (
                    f"Accepted{together}: the model generated output the server couldn't "
                    f"parse ({failure.message})"
                )
        for case in cases:
            cell = exchange_cell(
                f"dialect/{dialect}/{case.id}",
                Stage.DIALECT,
                case.id,
                exchange,
                outcome=outcome,
                detail=detail,
                dialect=dialect,
                cases=ids,
                facts=SchemaFacts(case.feature, case.valid),
                refusal=own or exchange.refusal,
            )
            self.settled[(case.id, dialect)] = self.ctx.record(cell)


def _twin_facts(twin: Cell) -> SchemaFacts | None:
    """The facts of a cell settled by its byte-equal twin: the twin's, naming it."""
    facts = twin.facts
    return replace(facts, same_as=twin.id) if isinstance(facts, SchemaFacts) else None


def _named_tool(message: str, cases: Sequence[SchemaCase]) -> int | None:
    """The one case whose tool the message names in quotes, as OpenAI's refusals do
    ("Invalid schema for function 'mysql_execute': …", refusals.yaml S24, S25)."""
    found = [
        index
        for index, case in enumerate(cases)
        if f"'{case.tool.name}'" in message or f'"{case.tool.name}"' in message
    ]
    return found[0] if len(found) == 1 else None


async def run_dialects(ctx: Context) -> None:
    """The dialect stage of one probe: the valid cases, which native prompts wait for."""
    await Exploration(ctx).run()


async def run_invalid_cases(ctx: Context) -> None:
    """The deliberately invalid cases, which nothing waits for."""
    await Exploration(ctx).run_invalid()
