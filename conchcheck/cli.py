"""The ``conchcheck`` command: options in, library calls, rendering, exit codes out.

Exit codes: 0 done and fits · 1 a check failed (a call that doesn't fit, an unreadable
text) · 2 bad usage or input · 3 target unusable · 4 stopped early.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from conchcheck import __version__, console
from conchcheck.arguments import read_arguments
from conchcheck.dialects import Dialect, to_dialect
from conchcheck.errors import ConchcheckError, InputError
from conchcheck.inputs import load_schema, load_tools, read_text
from conchcheck.repair import Unreadable, read_json
from conchcheck.wire.providers import PROVIDERS
from conchcheck.words import read_calls

app = typer.Typer(
    help="Probe an LLM provider and model for tool calling, with evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals can hold API keys
    rich_markup_mode=None,
)

FAMILIES = ", ".join(d.value for d in Dialect)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"conchcheck {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Probe an LLM provider and model for tool calling, with evidence."""


@app.command()
def read(
    source: Annotated[
        Optional[Path],  # noqa: UP045 - Typer reads the annotation at run time on 3.10
        typer.Argument(help="File with the reply or the arguments; stdin when omitted or '-'."),
    ] = None,
    tools: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--tools", help="JSON list of tools: read SOURCE as a model's reply."),
    ] = None,
    schema: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--schema", help="JSON Schema: read SOURCE as one call's arguments."),
    ] = None,
    name: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--name", help="The tool's name, for the message (with --schema)."),
    ] = None,
    cut_off: Annotated[
        bool, typer.Option("--cut-off", help="The reply hit its token limit: mend nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Read a reply or a call's arguments the way conchcheck does, and show how.

    Without --tools or --schema, SOURCE is read as JSON and the repairs are shown.
    Exit code 1 when the text can't be read or a call doesn't fit.
    """
    try:
        if tools and schema:
            raise InputError("Give --tools or --schema, not both.")
        text, _ = read_text(source)
        if schema is not None:
            result = read_arguments(text, load_schema(schema), cut_off=cut_off, tool=name)
            console.emit_json(result) if as_json else console.show_arguments(result)
            raise typer.Exit(0 if result.ok else 1)
        if tools is not None:
            reading = read_calls(text, load_tools(tools), cut_off=cut_off)
            console.emit_json(reading) if as_json else console.show_calls(reading)
            raise typer.Exit(0 if all(call.ok for call in reading.calls) else 1)
        try:
            value = read_json(text, mend_unclosed=not cut_off)
        except Unreadable as exc:
            unread = {"readable": False, "reason": exc.reason, "message": str(exc)}
            console.emit_json(unread) if as_json else console.show_unreadable(exc)
            raise typer.Exit(1) from None
        console.emit_json(value) if as_json else console.show_reading(value)
    except ConchcheckError as exc:
        console.error(exc)
        raise typer.Exit(exc.exit_code) from None


@app.command()
def dialect(
    schema: Annotated[Path, typer.Argument(help="JSON Schema file ('-' for stdin).")],
    to: Annotated[str, typer.Option("--to", help=f"The dialect: {FAMILIES}.")],
) -> None:
    """Convert a tool's parameter schema to a provider family's dialect and print it."""
    try:
        converted = to_dialect(load_schema(schema), to)
    except ConchcheckError as exc:
        console.error(exc)
        raise typer.Exit(exc.exit_code) from None
    console.show_schema(converted)


@app.command()
def providers(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the providers conchcheck knows: API family, base URL, key variable, dialect."""
    known = list(PROVIDERS.values())
    console.emit_json(known) if as_json else console.show_providers(known)


def main() -> None:
    """Run the command line."""
    app()
