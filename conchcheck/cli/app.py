"""The ``conchcheck`` application: its one error funnel, its options shared by commands.

Exit codes: 0 done and fits · 1 a check failed (a call that doesn't fit, an unreadable
text) · 2 bad usage or input · 3 target unusable · 4 stopped early.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from conchcheck.errors import ConchcheckError, InputError

if TYPE_CHECKING:
    from typer._click import exceptions as clicks

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


CacheOption = Annotated[Optional[Path], typer.Option("--cache", help="Capability file.")]  # noqa: UP045
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def main() -> None:
    """Run the command line."""
    app()
