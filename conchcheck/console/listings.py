"""What conchcheck knows and checked: the providers, a matrix and its problems, the
gate's result and a tools export."""

from __future__ import annotations

from rich.table import Table

from conchcheck.console import screen
from conchcheck.console.screen import safe, show_table
from conchcheck.gate.outcome import Direction, GateResult
from conchcheck.matrix import Matrix
from conchcheck.run.toolsfile import ToolsExportResult
from conchcheck.wire.providers import Provider


def show_providers(providers: list[Provider]) -> None:
    """The provider registry as a table."""
    table = Table("provider", "API", "base URL", "key from", "dialect", "catalogue", "note")
    table.columns[2].overflow = "fold"  # a URL cut with an ellipsis can't be copied
    for p in providers:
        table.add_row(
            p.name,
            p.api,
            p.base_url,
            p.key_env or "(none)",
            p.dialect.value,
            p.catalogue.value,
            safe(p.note),
        )
    show_table(table)
    screen.out.print("Targets are written provider:model; --base-url points any of them elsewhere.")


def show_matrix(matrix: Matrix) -> None:
    """A matrix's schema cases and prompts."""
    screen.out.print(
        f"[bold]{safe(matrix.name)}[/] — {safe(matrix.description or '')}", soft_wrap=True
    )
    cases = Table("schema case", "feature", "tool", title="Schema cases")
    for case in matrix.schema_cases:
        note = "" if case.valid else " (invalid on purpose)"
        copies = f" ×{case.copies}" if case.copies else ""
        cases.add_row(safe(case.id), safe(case.feature) + note, safe(case.tool.name) + copies)
    show_table(cases)
    prompts = Table("prompt", "user", "tools", "expects", title="Prompts")
    for prompt in matrix.prompts:
        wanted = (
            "no call" if prompt.expect.no_call else ", ".join(c.tool for c in prompt.expect.calls)
        )
        prompts.add_row(safe(prompt.id), safe(prompt.user), str(len(prompt.tools)), safe(wanted))
    show_table(prompts)


def show_matrix_problems(path: object, problems: list[str]) -> None:
    """Each problem on stderr, or that the matrix is valid on stdout."""
    for line in problems:
        screen.err.print(safe(line), soft_wrap=True)
    if not problems:
        screen.out.print(safe(f"{path}: a valid matrix."), soft_wrap=True)


def show_gate(result: GateResult) -> None:
    """What ``conchcheck check`` found, a line each, so a pipe or a log keeps every word."""
    from conchcheck.gate.markdown import summary

    for check in result.unmet:
        line = f"{check.target}  {check.name}: wanted {check.wanted}, got {check.got}"
        screen.out.print(f"[red]UNMET[/] {safe(line)}", soft_wrap=True)
    for change in result.changes:
        regressed = change.direction is Direction.REGRESSION
        word = "[red]REGRESSION[/]" if regressed else "[green]IMPROVEMENT[/]"
        line = f"{change.target}  {change.what}: {change.before} -> {change.after}"
        screen.out.print(f"{word} {safe(line)}", soft_wrap=True)
    colour, word = ("green", "passed") if result.passed else ("red", "failed")
    screen.out.print(
        f"[{colour}]conchcheck check: {word}.[/] {safe(summary(result))}", soft_wrap=True
    )


def show_tools_export(result: ToolsExportResult) -> None:
    """``tools export``: the dialect, each target's, every change and who forced it, notes."""
    screen.out.print(
        f"Dialect: [bold]{result.dialect}[/], the most permissive every target accepted."
    )
    targets = Table("target", "dialect", "from", title="Targets", title_justify="left")
    for t in result.targets:
        targets.add_row(safe(t.name), t.dialect.value, safe(str(t.results)))
    show_table(targets)
    changes = Table("tool", "place", "change", "forced by", title="Changes", title_justify="left")
    for c in result.changes:
        changes.add_row(safe(c.tool), safe(c.path), safe(c.what), safe(", ".join(c.forced_by)))
    show_table(changes) if result.changes else screen.out.print(
        "No changes: every schema is as written."
    )
    for line in (*(t.line for t in result.refusals), *result.notes):
        screen.out.print(safe(line), soft_wrap=True)
    count = f"{len(result.tools)} tool{'s' * (len(result.tools) != 1)}"
    screen.out.print(
        safe(f"wrote {result.out}: {count} in the {result.dialect} dialect"), soft_wrap=True
    )
