"""``conchcheck export``: measured capability written where other stacks read capability."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from conchcheck.capabilities.formats import ExportFormat
from conchcheck.cli.app import JsonOption, app
from conchcheck.errors import InputError


@app.command()
def export(
    sources: Annotated[
        Optional[list[Path]],  # noqa: UP045 - Typer reads the annotation at run time on 3.10
        typer.Argument(
            help="Capability files, results.json files, or folders a probe wrote (their"
            " results.json and */results.json)."
        ),
    ] = None,
    to: Annotated[
        Optional[ExportFormat],  # noqa: UP045
        typer.Option(
            "--to",
            help="litellm (a proxy config's model_list), models-dev (a model file's"
            " tool_call) or json (conchcheck's own, versioned).",
        ),
    ] = None,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            help="The file to write; for models-dev a folder (providers/<provider>/models/"
            "<model>.toml in it) unless it ends .toml; stdout when omitted."
        ),
    ] = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON Schema of --to json, and stop.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Write the capability a probe measured where LiteLLM, models.dev and other tools read it.

    A fact is written only where it was measured: an unknown stays out, never false. Each
    entry keeps the date it was probed and the conchcheck that probed it.
    Exit codes: 0 written · 2 bad input (a source that doesn't read, a probe that stopped,
    an entry twice, an --out that can't take the files).
    """
    from conchcheck import console
    from conchcheck.capabilities.exports import schema as export_schema
    from conchcheck.run.exporting import ExportSpec
    from conchcheck.run.exporting import export as run_export

    if schema:
        if sources or to is not None or out is not None:
            raise InputError("--schema: alone; it prints the schema and reads nothing.")
        console.emit_json(export_schema())
        return
    if not sources:
        raise InputError("Give the capability files or results to export.")
    if to is None:
        raise InputError("--to: required: litellm, models-dev or json.")
    done = run_export(ExportSpec(tuple(sources), to, out))
    for skipped in done.skipped:
        console.complain(f"Skipped {skipped.path}: {skipped.why}.")
    if out is None:
        console.emit_text(done.documents[0].text)
    elif as_json:
        console.emit_json([str(path) for path in done.written])
    else:
        count = len(done.entries)
        console.say(
            f"Exported {count} {'entry' if count == 1 else 'entries'} to {to.value}: "
            + ", ".join(str(path) for path in done.written)
        )
