"""The layering of DESIGN.md, checked on the source: a pure core, one renderer, one wire."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "conchcheck"
PURE = {
    "repair",
    "arguments",
    "problems",
    "schemas",
    "words",
    "wordforms",
    "dialects",
    "refusals",
    "tools",
    "errors",
    "plain",
    "version",
    "chat",
    "results",
    "matching",
    "verdict",
}
IO_MODULES = {
    "os",
    "sys",
    "io",
    "time",
    "datetime",
    "pathlib",
    "socket",
    "subprocess",
    "random",
    "logging",
    "asyncio",
    "urllib.request",
    "shutil",
    "tempfile",
}
IO_CALLS = {"open", "print", "input", "exec", "eval", "compile", "__import__"}


def modules() -> list[tuple[str, ast.Module]]:
    return [
        (
            str(path.relative_to(PACKAGE.parent).with_suffix("")).replace("/", "."),
            ast.parse(path.read_text()),
        )
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def uses_any(names: set[str], banned: set[str]) -> set[str]:
    return {n for n in names if any(n == b or n.startswith(b + ".") for b in banned)}


@pytest.mark.parametrize(("name", "tree"), [pytest.param(n, t, id=n) for n, t in modules()])
def test_layers(name: str, tree: ast.Module) -> None:
    uses = imported(tree)
    short = name.removeprefix("conchcheck.")
    if short in PURE:
        bad = uses_any(uses, IO_MODULES | {"httpx", "rich", "typer"})
        assert not bad, f"{name} is pure: no I/O, clock or rendering, but it imports {bad}"
        calls = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert not calls & IO_CALLS, f"{name} is pure: it calls {calls & IO_CALLS}"
    if uses_any(uses, {"rich"}):
        assert short in {"cli", "console"}, f"only cli and console render; {name} imports rich"
    if uses_any(uses, {"typer"}):
        assert short == "cli", f"only cli imports typer; {name} does"
    if uses_any(uses, {"httpx"}):
        assert short.startswith("wire."), f"only conchcheck.wire does HTTP; {name} imports httpx"


def test_modules_stay_small() -> None:
    sizes = {name: len(ast.unparse(tree).splitlines()) for name, tree in modules()}
    assert {n: s for n, s in sizes.items() if s > 450} == {}
