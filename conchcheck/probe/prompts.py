"""The prompt stages: the matrix's prompts with the tools passed natively, and in words.

Native and words run the same prompts so the two are comparable. Native prompts need the
dialect verdict (the tools go in the chosen dialect); words prompts need only the
catalogue's window, so they run while the dialect is still being settled.
"""

from __future__ import annotations

from collections.abc import Sequence

from conchcheck.core.dialects import Dialect, to_dialect
from conchcheck.core.tools import Tool, ToolChoice
from conchcheck.core.words import ListLevel, ToolList, render_tools
from conchcheck.core.words.listing import choice_words
from conchcheck.matrix import Prompt
from conchcheck.probe.context import CHAIN, Context
from conchcheck.probe.judging import judge_native, judge_words
from conchcheck.probe.sharing import Sent
from conchcheck.results import Cell, CellMode, Outcome, Stage
from conchcheck.wire.chat import ChatRequest, Message, Role


def offered(ctx: Context, prompt: Prompt) -> tuple[Tool, ...]:
    """The prompt's tools as the matrix defines them (original schemas)."""
    return tuple(ctx.matrix.tools[name] for name in prompt.tools)


def in_dialect(tools: Sequence[Tool], dialect: Dialect) -> tuple[Tool, ...]:
    """The tools with their schemas in ``dialect``, as a client would send them natively."""
    return tuple(
        Tool(t.name, t.description, to_dialect(dict(t.parameters), dialect) if t.parameters else {})
        for t in tools
    )


def listed(ctx: Context, tools: Sequence[Tool]) -> ToolList:
    """The tools in words, sized to the window the catalogue declared."""
    return render_tools(tools, ctx.catalogue.context_window if ctx.catalogue else None)


def messages(prompt: Prompt, system: str = "") -> tuple[Message, ...]:
    """The prompt's conversation, with ``system`` (the tools in words) after its own system."""
    text = "\n\n".join(part for part in (prompt.system or "", system) if part)
    head = (Message(Role.SYSTEM, text),) if text else ()
    return (*head, Message(Role.USER, prompt.user))


def request(
    ctx: Context,
    turns: tuple[Message, ...],
    tools: tuple[Tool, ...] = (),
    choice: ToolChoice | None = None,
    *,
    stream: bool = False,
) -> ChatRequest:
    """A prompt's request, with the prompt stage's output limit."""
    return ChatRequest(
        ctx.target.model,
        turns,
        tools=tools,
        tool_choice=choice,
        stream=stream,
        max_tokens=ctx.options.prompt_max_tokens,
        temperature=ctx.options.temperature,
    )


def native_request(
    ctx: Context, prompt: Prompt, dialect: Dialect, *, stream: bool = False
) -> ChatRequest:
    """The prompt with its tools passed natively in ``dialect``."""
    sent = in_dialect(offered(ctx, prompt), dialect)
    return request(ctx, messages(prompt), sent, prompt.tool_choice, stream=stream)


async def native_prompt(ctx: Context, prompt: Prompt, dialect: Dialect, attempt: int) -> Cell:
    """One native cell."""
    cell_id = f"native/{prompt.id}/{attempt}"
    prior = ctx.reuse(cell_id)
    if prior is not None:
        if attempt == 1:
            ctx.sharing.give(prompt.id, None)  # not sent this time: nothing to read again
        return prior
    sent = native_request(ctx, prompt, dialect)
    exchange = await ctx.send(sent, cell_id)
    cell = ctx.record(
        judge_native(cell_id, prompt, exchange, offered(ctx, prompt), dialect, attempt, ctx.server)
    )
    if attempt == 1:
        ctx.sharing.give(prompt.id, Sent(sent, exchange, cell, CHAIN.get()))
    return cell


async def words_prompt(ctx: Context, prompt: Prompt, attempt: int) -> Cell:
    """One words cell (skipped when not even the names fit the window)."""
    cell_id = f"words/{prompt.id}/{attempt}"
    prior = ctx.reuse(cell_id)
    if prior is not None:
        return prior
    tools = offered(ctx, prompt)
    text = listed(ctx, tools)
    if text.level is ListLevel.NONE:
        skipped = Cell(
            cell_id,
            Stage.WORDS,
            prompt.id,
            Outcome.SKIPPED,
            text.note,
            mode=CellMode.WORDS,
            attempt=attempt,
        )
        return ctx.record(skipped)
    # A forced choice has no field in words: the model is told, as a client would tell it.
    told = "\n\n".join(part for part in (text.text, choice_words(prompt.tool_choice)) if part)
    exchange = await ctx.send(request(ctx, messages(prompt, told)), cell_id)
    return ctx.record(judge_words(cell_id, prompt, exchange, tools, text.level.value, attempt))
