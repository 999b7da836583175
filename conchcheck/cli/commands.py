"""The commands that read, convert, check and keep: everything but ``probe``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from conchcheck.cli.app import FAMILIES, CacheOption, JsonOption, app
from conchcheck.errors import ExitCode, InputError
from conchcheck.gate import CheckFormat

if TYPE_CHECKING:
    from conchcheck.capabilities import CapabilityFile


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
    from conchcheck import console
    from conchcheck.core.arguments import read_arguments
    from conchcheck.core.repair import Unreadable, read_json
    from conchcheck.core.words import read_calls
    from conchcheck.files import load_schema, load_tools, read_text

    if tools and schema:
        raise InputError("Give --tools or --schema, not both.")
    text, _ = read_text(source)
    if schema is not None:
        result = read_arguments(text, load_schema(schema), cut_off=cut_off, tool=name)
        console.emit_json(result) if as_json else console.show_arguments(result)
        raise typer.Exit(ExitCode.DONE if result.ok else ExitCode.FAILED)
    if tools is not None:
        reading = read_calls(text, load_tools(tools), cut_off=cut_off)
        console.emit_json(reading) if as_json else console.show_calls(reading)
        raise typer.Exit(ExitCode.DONE if all(c.ok for c in reading.calls) else ExitCode.FAILED)
    try:
        value = read_json(text, mend_unclosed=not cut_off)
    except Unreadable as exc:
        unread = {"readable": False, "reason": exc.reason, "message": str(exc)}
        console.emit_json(unread) if as_json else console.show_unreadable(exc)
        raise typer.Exit(ExitCode.FAILED) from None
    console.emit_json(value) if as_json else console.show_reading(value)


@app.command()
def dialect(
    schema: Annotated[Path, typer.Argument(help="JSON Schema file ('-' for stdin).")],
    to: Annotated[str, typer.Option("--to", help=f"The dialect: {FAMILIES}.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout (it always is).")] = False,
) -> None:
    """Convert a tool's parameter schema to a provider family's dialect and print it."""
    from conchcheck import console
    from conchcheck.core.dialects import to_dialect
    from conchcheck.files import load_schema

    console.show_schema(to_dialect(load_schema(schema), to))


@app.command()
def check(
    results: Annotated[list[Path], typer.Argument(help="results.json files or their folders.")],
    expect: Annotated[Optional[Path], typer.Option(help="Expectations YAML.")] = None,  # noqa: UP045
    baseline: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(help="Earlier results.json (repeat)."),
    ] = None,
    tolerance: Annotated[float, typer.Option(help="How far a rate may fall.")] = 0.05,
    fmt: Annotated[CheckFormat, typer.Option("--format")] = CheckFormat.TEXT,
    summary: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(help="github: Markdown appended here [default: $GITHUB_STEP_SUMMARY]."),
    ] = None,
) -> None:
    """Gate RESULTS on --expect, --baseline. Exit 0 all holds, 1 unmet or regressed, 2 bad input."""
    from conchcheck import console
    from conchcheck.gate import gatekeeper, render

    result = gatekeeper.check(results, expect=expect, baseline=baseline or (), tolerance=tolerance)
    console.show_gate(result) if fmt is CheckFormat.TEXT else console.emit(render(result, fmt))
    if fmt is CheckFormat.GITHUB:
        console.emit(gatekeeper.write_summary(result, summary))
    raise typer.Exit(result.exit_code)


@app.command()
def providers(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the providers conchcheck knows: API family, base URL, key variable, dialect."""
    from conchcheck import console
    from conchcheck.wire.providers import PROVIDERS

    known = list(PROVIDERS.values())
    console.emit_json(known) if as_json else console.show_providers(known)


matrix_app = typer.Typer(help="Check and show probe matrices.", no_args_is_help=True)
cache_app = typer.Typer(help="The capability file: list, show, clear, path.", no_args_is_help=True)
app.add_typer(matrix_app, name="matrix")
app.add_typer(cache_app, name="cache")


@matrix_app.command("validate")
def matrix_validate(
    path: Annotated[Path, typer.Argument(help="Matrix YAML file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Check a matrix; print every problem as file:line: path: message (exit 2 if any)."""
    from conchcheck import console
    from conchcheck.matrix import validate_file

    problems = validate_file(path)
    if as_json:
        console.emit_json({"path": str(path), "valid": not problems, "problems": problems})
    else:
        console.show_matrix_problems(path, problems)
    if problems:
        raise typer.Exit(ExitCode.USAGE)


@matrix_app.command("show")
def matrix_show(
    name: Annotated[str, typer.Argument(help="A built-in matrix name or a file.")] = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Show a matrix: its schema cases and prompts."""
    from conchcheck import console
    from conchcheck.matrix import load_matrix

    found = load_matrix(name)
    console.emit_json(found) if as_json else console.show_matrix(found)


def _cache_file(path: Optional[Path]) -> CapabilityFile:  # noqa: UP045
    from conchcheck.capabilities import CapabilityFile, default_path

    return CapabilityFile(path or default_path())


@cache_app.command("path")
def cache_path(cache: CacheOption = None, as_json: JsonOption = False) -> None:
    """Print where the capability file is."""
    from conchcheck import console

    path = str(_cache_file(cache).path)
    console.emit_json({"path": path}) if as_json else console.say(path)


@cache_app.command("list")
def cache_list(cache: CacheOption = None, as_json: JsonOption = False) -> None:
    """List the entries of the capability file."""
    from conchcheck import console

    entries = _cache_file(cache).entries()
    console.emit_json(entries) if as_json else console.show_entries(entries)


@cache_app.command("show")
def cache_show(
    target: Annotated[str, typer.Argument(help="provider:model")],
    base_url: Annotated[str | None, typer.Option()] = None,
    api: Annotated[
        str | None, typer.Option(help="The entry's API family [default: the provider's own].")
    ] = None,
    cache: CacheOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout (it always is).")] = False,
) -> None:
    """Show one target's entry (at --base-url, in --api) as it is in the file."""
    from conchcheck import console
    from conchcheck.wire.providers import parse_target

    parsed = parse_target(target, base_url=base_url, api=api)
    found = (parsed.provider.name, parsed.model, parsed.base_url, parsed.provider.api)
    entry = _cache_file(cache).get(*found)
    if entry is None:
        console.complain(f"No entry for {target} at {parsed.base_url} ({parsed.provider.api}).")
        raise typer.Exit(ExitCode.FAILED)
    console.emit_json(entry)


@cache_app.command("clear")
def cache_clear(
    target: Annotated[
        str | None, typer.Argument(help="provider:model; all entries when omitted")
    ] = None,
    api: Annotated[
        str | None, typer.Option(help="Only the entries of this API family; all when omitted.")
    ] = None,
    cache: CacheOption = None,
    force: Annotated[bool, typer.Option("--force", help="Also delete a corrupt file.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove a target's entries (of every API, or --api's), or the whole file."""
    from conchcheck import console
    from conchcheck.wire.providers import parse_target

    file = _cache_file(cache)
    if target is None:
        file.clear(force=force)
        done: dict[str, object] = {"cleared": str(file.path)}
        said = f"Cleared {file.path}."
    else:
        parsed = parse_target(target, api=api)
        family = parsed.provider.api if api is not None else None
        count = file.remove(parsed.provider.name, parsed.model, api=family)
        done = {"target": target, "api": api, "removed": count}
        shown = target if api is None else f"{target} ({api})"
        said = f"Removed {count} entr{'y' if count == 1 else 'ies'} for {shown}."
    console.emit_json(done) if as_json else console.say(said)
