"""The ``conchcheck`` command: options in, library calls, rendering, exit codes out.

Exit codes: 0 done and fits · 1 a check failed (a call that doesn't fit, an unreadable
text) · 2 bad usage or input · 3 target unusable · 4 stopped early.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from conchcheck.errors import ConchcheckError, InputError
from conchcheck.report import ReportFormat

if TYPE_CHECKING:
    from typer._click import exceptions as clicks

    from conchcheck.capabilities import CapabilityFile
else:
    try:  # Typer vendors Click as typer._click since 0.2x; before, it used Click itself.
        from typer._click import exceptions as clicks
    except ImportError:
        from click import exceptions as clicks
from conchcheck.version import __version__

# Everything heavier (the engine, httpx, jsonschema, rich) is imported inside the command
# that needs it, so `conchcheck --help` starts as fast as Typer does (bench/probe.py).


class _Commands(TyperGroup):
    """The one error funnel: a ``ConchcheckError`` or a usage error becomes one line on
    stderr (``conchcheck: --option: what is wrong. hint``) and its exit code.

    Click prints a usage error as the usage, a "Try --help" line and an "Error:" line; here
    it is worded like every other bad input. Help stays help.
    """

    def main(self, *args: Any, **extra: Any) -> Any:
        standalone = extra.get("standalone_mode", True)
        extra["standalone_mode"] = False
        try:
            code = super().main(*args, **extra)
        except _HELP_ERRORS as exc:
            exc.show()
            code = exc.exit_code
        except (ConchcheckError, clicks.ClickException) as exc:
            from conchcheck import console

            error = exc if isinstance(exc, ConchcheckError) else usage_error(exc)
            console.error(error)
            code = exc.exit_code
        if not standalone:
            return code
        sys.exit(code if isinstance(code, int) else 0)


# Click 8.2 raises this when a group is run bare: it prints the help, which is no mistake.
_HELP_ERRORS = tuple(getattr(clicks, n) for n in ("NoArgsIsHelpError",) if hasattr(clicks, n))


def usage_error(exc: clicks.ClickException) -> InputError:
    """A Click error in conchcheck's words: the option, what is wrong, where help is."""
    ctx, param = getattr(exc, "ctx", None), getattr(exc, "param", None)
    hint = f"See `{ctx.command_path} --help`." if ctx is not None else None
    if isinstance(exc, clicks.NoSuchOption):
        guess = " or ".join(sorted(exc.possibilities or ()))
        said = f"; did you mean {guess}?" if guess else "."
        return InputError(f"{exc.option_name}: no such option{said}", hint=hint)
    if not isinstance(exc, clicks.BadParameter) or param is None:
        return InputError(_sentence(exc.format_message()), hint=hint)
    opts = param.opts if param.param_type_name == "option" else [(param.name or "").upper()]
    # Typer words a failed conversion "Value error, …": the option already says which.
    what = exc.message.removeprefix("Value error, ")
    if isinstance(exc, clicks.MissingParameter):
        what = "required, but not given"
    return InputError(f"{max(opts, key=len)}: {_sentence(what)}", hint=hint)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "?", "!")) else text + "."


app = typer.Typer(
    cls=_Commands,
    help="Probe an LLM provider and model for tool calling, with evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals can hold API keys
    rich_markup_mode=None,
)

# Written out so --help needn't import the converter; tests/test_cli.py checks it names every
# dialect of conchcheck.core.dialects.Dialect.
FAMILIES = "permissive, anthropic, gemini, strict"


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


@app.command()
def dialect(
    schema: Annotated[Path, typer.Argument(help="JSON Schema file ('-' for stdin).")],
    to: Annotated[str, typer.Option("--to", help=f"The dialect: {FAMILIES}.")],
) -> None:
    """Convert a tool's parameter schema to a provider family's dialect and print it."""
    from conchcheck import console
    from conchcheck.core.dialects import to_dialect
    from conchcheck.files import load_schema

    console.show_schema(to_dialect(load_schema(schema), to))


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


@app.command()
def probe(
    target: Annotated[str, typer.Argument(help="provider:model, e.g. openrouter:qwen/qwen3-8b")],
    base_url: Annotated[
        str | None,
        typer.Option(help="Any OpenAI-compatible server, or another URL for the provider."),
    ] = None,
    matrix: Annotated[str, typer.Option(help="A built-in matrix name or a YAML file.")] = "default",
    out: Annotated[
        Path | None, typer.Option(help="Report folder [default: ./conchcheck-out/<target>].")
    ] = None,
    report_format: Annotated[
        list[ReportFormat] | None,
        typer.Option("--format", help="Reports to write (repeat); all by default."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(help="Capability file [default: $CONCHCHECK_CACHE or the user cache]."),
    ] = None,
    use_cache: Annotated[
        bool,
        typer.Option(
            "--use-cache", help="Skip the probe when the capability file has a fresh entry."
        ),
    ] = False,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Read the key from this variable instead of the provider's."),
    ] = None,
    allow_insecure: Annotated[
        bool, typer.Option("--allow-insecure", help="Allow a key over plain http to another host.")
    ] = False,
    # Ranges are checked by JobSpec, so a Python caller meets the same limits and words.
    concurrency: Annotated[int, typer.Option(help="Requests at once (1-64).")] = 4,
    repeat: Annotated[int, typer.Option(help="Run each prompt N times (1-100).")] = 1,
    threshold: Annotated[float, typer.Option(help="Pass rate a mode needs (0-1).")] = 0.5,
    max_requests: Annotated[
        int | None, typer.Option(help="Stop after N requests (exit 4).")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Stop after N tokens (exit 4).")] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait for a reply (0.1-86400).")
    ] = 120.0,
    deadline: Annotated[
        float | None,
        typer.Option(help="Seconds the whole probe may take; then it stops (exit 4)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(help="A results.json to continue without repeating finished cells."),
    ] = None,
    expect_mode: Annotated[
        str | None, typer.Option(help="Exit 1 unless the mode is this (native, words, none).")
    ] = None,
    expect_dialect: Annotated[
        str | None, typer.Option(help="Exit 1 unless the dialect is this.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the verdict as JSON on stdout.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress, only the summary.")
    ] = False,
) -> None:
    """Probe TARGET with a matrix; write reports and the capability entry.

    Exit codes: 0 done · 1 an expectation failed · 2 bad usage or input · 3 target unusable
    (unreachable, auth, unknown model) · 4 stopped early (budget, deadline, Ctrl-C, SIGTERM,
    SIGHUP; the partial results are written).
    """
    from conchcheck import console
    from conchcheck.job import EXIT_UNUSABLE, Job, JobSpec
    from conchcheck.probe import ProbeOptions
    from conchcheck.wire.transport import Policy

    options = ProbeOptions(
        repeat=repeat, threshold=threshold, max_requests=max_requests, deadline=deadline,
        max_tokens=max_tokens, policy=Policy(read_timeout=timeout, allow_insecure=allow_insecure,
                                             concurrency=concurrency),
    )  # fmt: skip
    spec = JobSpec(
        target, base_url, matrix, out, tuple(report_format or ReportFormat), cache, use_cache,
        api_key_env=api_key_env, options=options, resume=resume, expect_mode=expect_mode,
        expect_dialect=expect_dialect, command=" ".join(["conchcheck", *sys.argv[1:]]),
    )  # fmt: skip
    job = Job(spec)
    cached = job.cached()
    if cached is not None:
        console.emit_json(cached) if as_json else console.show_cached(cached)
        raise typer.Exit(0)
    with console.progress(quiet=quiet or as_json) as observer, _stop_signals() as caught:
        try:
            result = job.run(observer)
        except KeyboardInterrupt:
            partial = job.partial(f"interrupted ({caught[-1] if caught else 'Ctrl-C'})")
            if partial is None:
                raise typer.Exit(4) from None
            result = partial
    outcome = job.finish(result)
    shown = outcome
    if outcome.exit_code == EXIT_UNUSABLE:
        # Why the target can't be probed is commentary, not the product: stderr (G13).
        console.complain(outcome.message)
        shown = replace(outcome, message="Reports of what was tried are written.")
    console.emit_json(outcome) if as_json else console.show_outcome(shown)
    raise typer.Exit(outcome.exit_code)


@contextmanager
def _stop_signals() -> Iterator[list[str]]:
    """SIGTERM and SIGHUP stop a probe as Ctrl-C does: partial results written, exit 4.

    Each is turned into a SIGINT, so it takes the one path Ctrl-C takes (asyncio cancels
    the probe, ``KeyboardInterrupt`` reaches ``probe``); the list names what came.
    """
    caught: list[str] = []

    def stop(number: int, frame: object) -> None:
        caught.append(signal.Signals(number).name)
        signal.raise_signal(signal.SIGINT)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]  # no SIGHUP on Windows
    before = {n: signal.signal(getattr(signal, n), stop) for n in names}
    try:
        yield caught
    finally:
        for name, handler in before.items():
            signal.signal(getattr(signal, name), handler)


@matrix_app.command("validate")
def matrix_validate(path: Annotated[Path, typer.Argument(help="Matrix YAML file.")]) -> None:
    """Check a matrix; print every problem as file:line: path: message (exit 2 if any)."""
    from conchcheck import console
    from conchcheck.matrix import validate_file

    problems = validate_file(path)
    console.show_matrix_problems(path, problems)
    if problems:
        raise typer.Exit(2)


@matrix_app.command("show")
def matrix_show(
    name: Annotated[str, typer.Argument(help="A built-in matrix name or a file.")] = "default",
) -> None:
    """Show a matrix: its schema cases and prompts."""
    from conchcheck import console
    from conchcheck.matrix import load_matrix

    console.show_matrix(load_matrix(name))


def _cache_file(path: Optional[Path]) -> CapabilityFile:  # noqa: UP045
    from conchcheck.capabilities import CapabilityFile, default_path

    return CapabilityFile(path or default_path())


CacheOption = Annotated[Optional[Path], typer.Option("--cache", help="Capability file.")]  # noqa: UP045


@cache_app.command("path")
def cache_path(cache: CacheOption = None) -> None:
    """Print where the capability file is."""
    from conchcheck import console

    console.say(str(_cache_file(cache).path))


@cache_app.command("list")
def cache_list(
    cache: CacheOption = None, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """List the entries of the capability file."""
    from conchcheck import console

    entries = _cache_file(cache).entries()
    console.emit_json(entries) if as_json else console.show_entries(entries)


@cache_app.command("show")
def cache_show(
    target: Annotated[str, typer.Argument(help="provider:model")],
    base_url: Annotated[str | None, typer.Option()] = None,
    cache: CacheOption = None,
) -> None:
    """Show one target's entry as it is in the file."""
    from conchcheck import console
    from conchcheck.wire.providers import parse_target

    parsed = parse_target(target, base_url=base_url)
    entry = _cache_file(cache).get(parsed.provider.name, parsed.model, parsed.base_url)
    if entry is None:
        console.complain(f"No entry for {target} at {parsed.base_url}.")
        raise typer.Exit(1)
    console.emit_json(entry)


@cache_app.command("clear")
def cache_clear(
    target: Annotated[
        str | None, typer.Argument(help="provider:model; all entries when omitted")
    ] = None,
    cache: CacheOption = None,
    force: Annotated[bool, typer.Option("--force", help="Also delete a corrupt file.")] = False,
) -> None:
    """Remove a target's entries, or the whole file."""
    from conchcheck import console
    from conchcheck.wire.providers import parse_target

    file = _cache_file(cache)
    if target is None:
        file.clear(force=force)
        console.say(f"Cleared {file.path}.")
    else:
        parsed = parse_target(target)
        count = file.remove(parsed.provider.name, parsed.model)
        console.say(f"Removed {count} entr{'y' if count == 1 else 'ies'} for {target}.")


# `report RESULTS…` and `report merge DIR…`: their own module, to keep this one short.
from conchcheck.commands import report_app  # noqa: E402

app.add_typer(report_app, name="report")


def main() -> None:
    """Run the command line."""
    app()
