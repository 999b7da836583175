"""The layering of DESIGN.md, checked on the source by folder: a pure core, one renderer, one
wire, imports that run one way, and no import cycle.

Every import counts: top-level, inside a function, and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "conchcheck"

# The layer of each top-level name in the package; a folder is one layer.
LAYER_OF = {
    "errors": "base",
    "version": "base",
    "redaction": "base",
    "jsonschemas": "base",
    "core": "core",
    "files": "files",
    "yamlevents": "files",
    "replacement": "files",
    "wire": "wire",
    "matrix": "matrix",
    "sources": "sources",
    "results": "results",
    "verdict": "results",
    "advice": "results",
    "knobs": "results",
    "costs": "results",
    "probe": "probe",
    "report": "report",
    "gate": "gate",
    "capabilities": "capabilities",
    "run": "run",
    "console": "console",
    "cli": "cli",
    "__main__": "cli",
    "__init__": "api",
}
# What each layer may import (itself always). cli → run → probe → {wire, matrix} → core;
# report → results; gate → report; run may import report, to write the reports.
MAY_IMPORT = {
    "base": set(),
    "core": {"base"},
    "files": {"base", "core"},
    "wire": {"base", "core"},
    "matrix": {"base", "core", "files"},
    # The user's own tools: files, processes, and MCP over HTTP through the wire layer.
    "sources": {"base", "core", "files", "wire"},
    # results.reader alone reads a file (``files``); the rest of results/ is pure.
    "results": {"base", "core", "files", "wire"},
    "probe": {"base", "core", "wire", "matrix", "results"},
    "report": {"base", "core", "files", "results"},
    # An entry's API family (wire), and the knobs-and-losses values it carries (core).
    "capabilities": {"base", "core", "files", "wire"},
    "gate": {"base", "core", "files", "results"},
    "run": {
        "base",
        "core",
        "files",
        "wire",
        "matrix",
        "sources",
        "results",
        "probe",
        "report",
        "capabilities",
    },
    "console": {
        "base",
        "core",
        "files",
        "wire",
        "matrix",
        "results",
        "report",
        "capabilities",
        "run",
        "gate",
    },
    "cli": {
        "base",
        "core",
        "files",
        "wire",
        "matrix",
        "results",
        "probe",
        "report",
        "capabilities",
        "run",
        "console",
        "gate",
    },
    "api": set(LAYER_OF.values()) - {"cli", "console"},
}
IO_MODULES = {
    "os", "sys", "io", "time", "datetime", "pathlib", "socket", "subprocess", "random",
    "logging", "asyncio", "urllib.request", "shutil", "tempfile", "httpx", "rich", "typer",
}  # fmt: skip
IO_CALLS = {"open", "print", "input", "exec", "eval", "compile", "__import__"}


def modules() -> dict[str, tuple[Path, ast.Module]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = (path, ast.parse(path.read_text()))
    return found


MODULES = modules()


def imports(name: str, path: Path, tree: ast.Module) -> set[str]:
    """Every module ``name`` imports, relative imports resolved, function-level ones included."""
    names: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return LAYER_OF["__init__"]
    return LAYER_OF[parts[1]]


def internal(names: set[str]) -> set[str]:
    """The conchcheck modules among ``names`` (``from x import name`` counted as ``x``)."""
    out = set()
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("conchcheck"):
            out.add(name)
    return out


def uses_any(names: set[str], banned: set[str]) -> set[str]:
    return {n for n in names if any(n == b or n.startswith(b + ".") for b in banned)}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_one_way(name: str) -> None:
    path, tree = MODULES[name]
    mine = layer(name)
    wrong = {
        other
        for other in internal(imports(name, path, tree))
        if other != "conchcheck" and layer(other) != mine and layer(other) not in MAY_IMPORT[mine]
    }
    assert not wrong, f"{name} ({mine}) may not import {sorted(wrong)}"


# The one reader of results.json reads it; everything else in results/ is pure.
READERS = {"conchcheck.results.reader"}


@pytest.mark.parametrize(
    "name", sorted(n for n in MODULES if layer(n) in {"core", "results"} and n not in READERS)
)
def test_pure_modules_do_no_io(name: str) -> None:
    path, tree = MODULES[name]
    bad = uses_any(imports(name, path, tree), IO_MODULES)
    assert not bad, f"{name} is pure: no I/O, clock or rendering, but it imports {bad}"
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & IO_CALLS, f"{name} is pure: it calls {calls & IO_CALLS}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_one_renderer_one_wire(name: str) -> None:
    path, tree = MODULES[name]
    uses = imports(name, path, tree)
    short = name.removeprefix("conchcheck.")
    if uses_any(uses, {"rich"}):
        layer = short.split(".")[0]
        assert layer in {"cli", "console"}, f"only cli and console render; {name} imports rich"
    if uses_any(uses, {"typer"}):
        assert short.split(".")[0] == "cli", f"only cli imports typer; {name} does"
    if uses_any(uses, {"httpx"}):
        assert short.startswith("wire."), f"only conchcheck.wire does HTTP; {name} imports httpx"


def test_every_module_has_a_layer() -> None:
    assert {name.split(".")[1] for name in MODULES if "." in name} <= set(LAYER_OF)


def test_no_import_cycles() -> None:
    graph = {name: internal(imports(name, *MODULES[name])) - {name} for name in MODULES}
    # A package's own __init__ importing its modules is not a cycle with them.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == []


def test_modules_stay_small() -> None:
    # Lines as written, comments included: a module is read as a whole.
    sizes = {name: len(path.read_text().splitlines()) for name, (path, _) in MODULES.items()}
    assert {n: s for n, s in sizes.items() if s > 450} == {}
