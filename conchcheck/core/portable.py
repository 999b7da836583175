"""One tools file for a whole fleet: the user's tools in the least permissive of the targets'
dialects (so every target takes them), each change the conversion makes with the targets that
forced it.

A target forced a change when converting the tool to that target's own dialect changes the
same place too; a target whose dialect keeps the place as written did not. Pure: the
dialects and refusals come in measured, the tools come in read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conchcheck.core.dialects import Dialect, to_dialect
from conchcheck.core.schemadiff import ChangeKind, SchemaChange, schema_changes
from conchcheck.core.trials import PERMISSIVENESS, rank
from conchcheck.core.usertools import OwnTool

CHANGES_KEPT = 1000
"""Changes listed for one tool; the rest are counted (a schema of thousands of nodes)."""


@dataclass(frozen=True, slots=True)
class ToolRefusal:
    """Evidence from the results: a target refused a tool in these dialects, for ``reason``
    (``schema: default``, the refusal's kind and what it names)."""

    tool: str
    target: str
    dialects: tuple[Dialect, ...]
    reason: str

    @property
    def line(self) -> str:
        """``search_issues: gemini-gw refused it in permissive and anthropic (schema: default).``"""
        return (
            f"{self.tool}: {self.target} refused it in {_listed([str(d) for d in self.dialects])}"
            f" ({self.reason})."
        )


@dataclass(frozen=True, slots=True)
class FleetTarget:
    """A probed target and the dialect it accepts."""

    name: str
    dialect: Dialect


@dataclass(frozen=True, slots=True)
class ForcedChange:
    """One place the conversion changes in one tool, and the targets whose dialect changes it
    too (the ones that forced it)."""

    tool: str
    path: str
    kind: ChangeKind
    before: str | None
    after: str | None
    forced_by: tuple[str, ...]

    @property
    def what(self) -> str:
        """The change without its place: ``removed "uri"``, ``"a" → "b"``, ``$ref … inlined``."""
        line = SchemaChange(self.path, self.kind, self.before, self.after).line()
        return line.removeprefix(f"{self.path}: ")


@dataclass(frozen=True, slots=True)
class PortableTool:
    """One tool as written to the file: its schema in the chosen dialect."""

    name: str
    source: str
    description: str
    parameters: Mapping[str, Any]
    unlisted: int = 0
    """Changes past ``CHANGES_KEPT``, counted and not listed."""


@dataclass(frozen=True, slots=True)
class PortableTools:
    """The tools in the dialect every target takes, and what converting them changed."""

    dialect: Dialect
    tools: tuple[PortableTool, ...]
    changes: tuple[ForcedChange, ...]


def fleet_dialect(targets: Sequence[FleetTarget]) -> Dialect:
    """The most permissive dialect every target accepts: the least permissive of theirs."""
    if not targets:
        raise ValueError("no targets: a dialect every target takes needs one target at least")
    return max((t.dialect for t in targets), key=rank)


def portable_tools(tools: Sequence[OwnTool], targets: Sequence[FleetTarget]) -> PortableTools:
    """``tools`` converted to ``fleet_dialect(targets)``, each change with the targets that
    forced it. A tool that takes no parameters (``{}``) is written as it is, as a probe
    sends it."""
    chosen = fleet_dialect(targets)
    written, changes = [], []
    for tool in tools:
        before = dict(tool.parameters)
        after = to_dialect(before, chosen) if before else {}
        shown, count = schema_changes(before, after, limit=CHANGES_KEPT)
        places = {d: _places(before, d) for d in _stricter(targets)} if shown else {}
        for change in shown:
            forced = tuple(t.name for t in targets if _touches(change.path, places.get(t.dialect)))
            changes.append(
                ForcedChange(
                    tool.name, change.path, change.kind, change.before, change.after, forced
                )
            )
        written.append(
            PortableTool(tool.name, tool.source, tool.description, after, count - len(shown))
        )
    return PortableTools(chosen, tuple(written), tuple(changes))


def _stricter(targets: Sequence[FleetTarget]) -> list[Dialect]:
    # permissive sends the schema as written: it forces nothing.
    return [d for d in PERMISSIVENESS[1:] if any(t.dialect is d for t in targets)]


def _places(schema: dict[str, Any], dialect: Dialect) -> tuple[str, ...]:
    changed, _ = schema_changes(schema, to_dialect(schema, dialect), limit=CHANGES_KEPT * 10)
    return tuple(c.path for c in changed)


def _touches(path: str, places: tuple[str, ...] | None) -> bool:
    """Whether a dialect that changes ``places`` changes ``path``: the same place, or one
    inside the other (a node replaced whole changes every keyword in it)."""
    return places is not None and any(
        p == path or _inside(path, p) or _inside(p, path) for p in places
    )


def _inside(path: str, outer: str) -> bool:
    return path.startswith(outer) and path[len(outer) : len(outer) + 1] in (".", "[")


def _listed(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
