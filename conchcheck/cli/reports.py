"""The ``report`` commands: the compatibility report of many results, and the joining of
CI shards. Options in, library calls, one line out; errors reach ``cli``'s funnel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from typer.core import TyperGroup

from conchcheck.cli.app import app
from conchcheck.version import __version__


class _DefaultCommand(TyperGroup):
    """A group whose first argument, unless it names a subcommand or asks for help, goes to
    its ``render`` command: ``report RESULTS…`` beside ``report merge DIR…``.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["render", *args]
        return list(super().parse_args(ctx, args))


report_app = typer.Typer(
    cls=_DefaultCommand,
    no_args_is_help=True,
    help="The compatibility report across many results: conchcheck report RESULTS… --out DIR, "
    "or conchcheck report merge DIR… --out DIR to join the folders of CI shards.",
)

ResultsArgument = Annotated[
    list[Path], typer.Argument(help="results.json files, or folders of them (*/results.json).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the files written as JSON.")]


@report_app.command("render")
def report_render(
    results: ResultsArgument,
    out: Annotated[Path, typer.Option(help="The report folder.")],
    baseline: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(help="A previous report's results (files or folders): show what changed."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write compatibility.md, compatibility.html and badges/<target>.svg for RESULTS.

    Exit codes: 0 written · 2 bad input (a results file that doesn't read, a target twice).
    """
    from datetime import datetime, timezone

    from conchcheck.report.compatibility import write_compatibility

    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    written = write_compatibility(
        results, out, generated=now, version=__version__, baseline=baseline or ()
    )
    _show_written(out, written, as_json)


@report_app.command("merge")
def report_merge(
    shards: Annotated[list[Path], typer.Argument(help="Shard folders of results.")],
    out: Annotated[Path, typer.Option(help="The folder to join them in.")],
    as_json: JsonOption = False,
) -> None:
    """Join the results of CI shards into one folder: <target>/results.json and index.json.

    Exit codes: 0 joined · 2 a target twice, two matrices, or a results file that doesn't read.
    """
    from conchcheck.report.compatibility import merge

    _show_written(out, merge(shards, out), as_json)


def _show_written(out: Path, written: list[Path], as_json: bool) -> None:
    from conchcheck import console

    if as_json:
        console.emit_json([str(path) for path in written])
    else:
        console.say(f"Wrote {len(written)} files to {out}.")


app.add_typer(report_app, name="report")
