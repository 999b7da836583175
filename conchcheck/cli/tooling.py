"""The ``tools`` commands: your own tools made fit for every target probed. Options in, one
library call, rendering; errors reach ``cli``'s funnel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from conchcheck.cli.app import JsonOption, app

tools_app = typer.Typer(
    no_args_is_help=True,
    help="Your own tools (MCP, OpenAPI or a tools file) made fit for the targets you probed.",
)


@tools_app.command("export")
def tools_export(
    tools: Annotated[
        list[str],
        typer.Option(
            "--tools",
            metavar="SOURCE",
            help="Your tools (repeat): mcp:stdio:<command>, an MCP URL, an OpenAPI document or"
            " a tools file, as probe --tools takes them.",
        ),
    ],
    results: Annotated[
        list[Path],
        typer.Option(
            "--from",
            metavar="RESULTS",
            help="Each target's results.json, or a folder of them such as a --targets run's"
            " (repeat).",
        ),
    ],
    out: Annotated[
        Path, typer.Option(metavar="FILE", help="The tools file to write: .json, .yaml or .yml.")
    ],
    tools_env: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer reads the annotation at run time on 3.10
        typer.Option(
            "--tools-env",
            metavar="NAME",
            help="Give the MCP servers started this variable of yours (repeat).",
        ),
    ] = None,
    tools_header: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--tools-header",
            metavar="'NAME: VALUE'",
            help="Send this header to the MCP servers at a URL (repeat); ${VAR} is read from"
            " your environment.",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds an MCP server has for its tool list.")
    ] = 120.0,
    as_json: JsonOption = False,
) -> None:
    """Write your tools in the most permissive dialect every target in RESULTS accepted, and
    list each change with the targets that forced it.

    Exit codes: 0 written · 2 bad input (a results file that doesn't read, a target with no
    dialect, results of other tools, a source that can't be read).
    """
    from conchcheck import console
    from conchcheck.run.toolsfile import ToolsExportSpec, export_tools

    spec = ToolsExportSpec(
        tools=tuple(tools),
        results=tuple(results),
        out=out,
        tools_env=tuple(tools_env or ()),
        tools_headers=tuple(tools_header or ()),
        timeout=timeout,
    )
    result = export_tools(spec)
    console.emit_json(result) if as_json else console.show_tools_export(result)


app.add_typer(tools_app, name="tools")
