"""``conchcheck tools export``: the user's tools written in the dialect every probed target
accepts, with what the conversion changed and the targets that forced each change.

``export_tools(spec)`` reads the results (each target's dialect verdict), then the tool
sources as ``probe --tools`` reads them, converts, checks that the file reads back as the
same tools, and only then writes it, whole. Every problem is one ``InputError`` line, raised
before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conchcheck.core.credentials import credentials_in
from conchcheck.core.dialects import Dialect
from conchcheck.core.portable import (
    FleetTarget,
    ForcedChange,
    PortableTool,
    ToolRefusal,
    portable_tools,
)
from conchcheck.core.trials import rank
from conchcheck.core.usertools import OwnTool
from conchcheck.errors import InputError
from conchcheck.files import check_out_file, parse_document, tools_in
from conchcheck.redaction import held, hold
from conchcheck.results import ProbeResult
from conchcheck.run.building import read_own_tools
from conchcheck.run.spec import TIMEOUT_RANGE, check_source_options
from conchcheck.sources.headers import header_values

SUFFIXES = (".json", ".yaml", ".yml")
"""What ``--out`` may end in: the suffix says JSON or YAML, as ``--tools FILE`` reads it."""


@dataclass(frozen=True, slots=True)
class ToolsExportSpec:
    """What ``tools export`` is asked: the tool sources (as ``probe --tools`` takes them),
    the results of the targets, and the file to write."""

    tools: tuple[str, ...]
    results: tuple[Path, ...]
    """``results.json`` files, or folders holding one or ``*/results.json`` (a fleet's)."""
    out: Path
    tools_env: tuple[str, ...] = ()
    tools_headers: tuple[str, ...] = ()
    timeout: float = 120.0
    """Seconds an MCP server has for its whole tool list."""

    def __post_init__(self) -> None:
        if not self.tools:
            raise InputError(
                "--tools: no tool source was given.",
                hint="Add --tools SOURCE: mcp:stdio:<command>, an MCP URL, an OpenAPI "
                "document or a tools file.",
            )
        if not self.results:
            raise InputError(
                "--from: no results were given, so no target's dialect is known.",
                hint="Add --from with each target's results.json, or a --targets run's folder.",
            )
        check_source_options(self.tools, self.tools_env, self.tools_headers)
        low, high = TIMEOUT_RANGE
        if not low <= self.timeout <= high:
            raise InputError(
                f"--timeout: {self.timeout:g} is out of range.", hint=f"Give {low:g} to {high:g}."
            )
        if self.out.suffix.lower() not in SUFFIXES:
            raise InputError(
                f"--out: {self.out}: the name must end in .json, .yaml or .yml, which says how"
                " the tools are written.",
                hint="Name the file tools.json or tools.yaml.",
            )


@dataclass(frozen=True, slots=True)
class ExportTarget:
    """A target the file is for: its name, the dialect it takes, and where that was read."""

    name: str
    dialect: Dialect
    results: Path
    note: str | None = None
    """Why this dialect, when it is not the verdict's own (no dialect carried everything)."""


@dataclass(frozen=True, slots=True)
class ToolsExportResult:
    """The file written: the dialect, the targets, the tools and every change made."""

    out: Path
    dialect: Dialect
    targets: tuple[ExportTarget, ...]
    tools: tuple[PortableTool, ...]
    changes: tuple[ForcedChange, ...]
    refusals: tuple[ToolRefusal, ...]
    """What the results say of the tools themselves: each target's refusals of a tool in a
    dialect more permissive than the one written."""
    notes: tuple[str, ...]
    """Lines a user must read: a target's dialect that is not its verdict's, a tool some
    target refused in every dialect."""


def export_tools(spec: ToolsExportSpec) -> ToolsExportResult:
    """Read, convert, check, then write ``spec.out``; ``InputError`` (nothing written) for
    bad input: a results file that isn't one, a target with no dialect, tools other than
    the ones its results were probed with, a source that can't be read, a bad ``--out``."""
    check_out_file(spec.out)
    for source in spec.tools:
        for credential in credentials_in(source):
            hold(credential)  # masked wherever a source is shown, as a probe masks it
    headers = header_values(spec.tools_headers)
    loaded = _load_results(spec.results)
    _not_an_input(spec.out, [Path(s) for s in spec.tools] + [path for path, _ in loaded])
    targets, notes = _targets(loaded)
    own = read_own_tools(spec.tools, spec.tools_env, headers, spec.timeout).own
    for tool in own:
        if tool.problem is not None:
            raise InputError(
                f"--tools: {tool.source}: the schema of {tool.name} is not valid JSON Schema"
                f" ({tool.problem}), so it has no conversion.",
                hint="Fix the schema; a probe sends it once as written and judges nothing.",
            )
    for path, result in loaded:
        _same_tools(path, result, own)
    names = [t.name for t in targets]
    portable = portable_tools(own, [FleetTarget(t.name, t.dialect) for t in targets])
    refusals = tuple(_refusals(loaded, names, own, portable.dialect))
    notes += _excepted(loaded, names, own)
    # Whatever the sources hold of a key this process holds is masked, as in a report.
    text = held().text(render_tools_file(portable.tools, spec.out))
    _reads_back(text, spec.out, portable.tools)
    _write(spec.out, text)
    return ToolsExportResult(
        spec.out,
        portable.dialect,
        tuple(targets),
        portable.tools,
        portable.changes,
        refusals,
        tuple(notes),
    )


def render_tools_file(tools: Sequence[PortableTool], out: Path) -> str:
    """The text of a tools file ``probe --tools`` reads: ``{"tools": [...]}``, JSON or YAML
    as ``out``'s suffix says, each tool ``name``, ``description``, ``parameters``."""
    data = {
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in tools
        ]
    }
    if out.suffix.lower() == ".json":
        return json.dumps(data, indent=2, ensure_ascii=False, default=dict) + "\n"
    import yaml  # off the CLI's start-up path

    class _Dumper(yaml.SafeDumper):
        # The file is read back without anchors or aliases (conchcheck.files refuses them).
        def ignore_aliases(self, data: object) -> bool:
            return True

    return yaml.dump(
        json.loads(json.dumps(data, default=dict)),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )


Loaded = tuple[Path, ProbeResult]


def _load_results(paths: Sequence[Path]) -> list[Loaded]:
    from conchcheck.report.compatibility.shards import load_all, refuse_duplicates

    # A file named twice (alone and in its folder) is one target's results, not two.
    loaded = list({path.resolve(): (path, result) for path, result in load_all(paths)}.values())
    refuse_duplicates(loaded)
    return loaded


def _targets(loaded: Sequence[Loaded]) -> tuple[list[ExportTarget], list[str]]:
    """Each result's target (named apart from the others) and dialect, and the notes they need;
    ``InputError`` for a target whose results name no dialect it takes."""
    labels = [r.target for _, r in loaded]
    targets: list[ExportTarget] = []
    notes: list[str] = []
    for (path, result), label in zip(loaded, labels, strict=True):
        name = label if labels.count(label) == 1 else f"{label} at {result.endpoint}"
        if sum(1 for _, r in loaded if (r.target, r.endpoint) == (label, result.endpoint)) > 1:
            name += f" ({result.api})"
        if result.unusable is not None:
            raise InputError(
                f"--from: {path}: {name} was unusable ({result.unusable}), so no dialect of"
                " it is known.",
                hint="Probe it again once it answers, or leave it out of --from.",
            )
        if result.stopped is not None:
            raise InputError(
                f"--from: {path}: the probe of {name} stopped early ({result.stopped}), so its"
                " dialect verdict is not settled.",
                hint=f"Finish it with `conchcheck probe … --resume {path}`, or leave it out.",
            )
        verdict = result.verdict.dialect if result.verdict is not None else None
        if verdict is None or (verdict.dialect is None and verdict.best is None):
            raise InputError(
                f"--from: {path}: no dialect carried a schema case of {name}, so no tools"
                " file fits it.",
                hint="Leave it out of --from, or give it the tools in words.",
            )
        note = None
        dialect = verdict.dialect
        if dialect is None:
            assert verdict.best is not None
            dialect = verdict.best
            note = (
                f"{name}: no dialect carried every schema case; {dialect}, which carried the"
                " most, is used."
            )
            notes.append(note)
        targets.append(ExportTarget(name, dialect, path, note))
    return targets, notes


def _same_tools(path: Path, result: ProbeResult, own: Sequence[OwnTool]) -> None:
    """A probe of the user's tools speaks for those tools only: each tool written must be
    among them with the same schema. A matrix probe's verdict speaks for any tool."""
    if not result.own_tools:
        return
    probed = {t.name: t for t in result.own_tools}
    for tool in own:
        found = probed.get(tool.name)
        if found is None or dict(found.parameters) != dict(tool.parameters):
            why = "is not among them" if found is None else "had another schema then"
            raise InputError(
                f"--from: {path}: {result.target} was probed with other tools; {tool.name} {why}.",
                hint="Probe it again with these --tools, or give results of a matrix probe.",
            )


def _refusals(
    loaded: Sequence[Loaded], names: Sequence[str], own: Sequence[OwnTool], chosen: Dialect
) -> list[ToolRefusal]:
    """Each target's schema refusals of the tools written, in dialects more permissive than
    ``chosen``, from its dialect verdict: the evidence that the changes were needed."""
    tools = [t.name for t in own]
    found = []
    for (_, result), name in zip(loaded, names, strict=True):
        refused = result.verdict.dialect.refused if result.verdict else ()
        for tool in tools:
            # The schemas as written (strict_mode, json_schema) are no dialect to write in.
            mine = [
                (r.dialect, r.reason)
                for r in refused
                if r.case == tool
                and isinstance(r.dialect, Dialect)
                and rank(r.dialect) < rank(chosen)
            ]
            if mine:
                dialects = tuple(sorted({d for d, _ in mine}, key=rank))
                reasons = "; ".join(dict.fromkeys(reason for _, reason in mine))
                found.append(ToolRefusal(tool, name, dialects, reasons))
    return found


def _excepted(loaded: Sequence[Loaded], names: Sequence[str], own: Sequence[OwnTool]) -> list[str]:
    """A line for each tool written that a target refused in every dialect it tried."""
    tools = {t.name for t in own}
    notes = []
    for (_, result), name in zip(loaded, names, strict=True):
        for refusal in result.verdict.dialect.excepted if result.verdict else ():
            if refusal.case in tools:
                notes.append(
                    f"{refusal.case}: {name} refused it in every dialect tried ({refusal.reason});"
                    " it is written all the same, and that target won't take it."
                )
    return notes


def _not_an_input(out: Path, inputs: Sequence[Path]) -> None:
    """``InputError`` when ``out`` is one of the files read (a tools file, a results file):
    a file beside them in a results folder is fine."""
    for path in inputs:
        try:
            same = out.exists() and path.exists() and path.samefile(out)
        except OSError:
            same = False
        if same:
            raise InputError(
                f"--out: {out}: is one of the inputs; writing it would replace what was read.",
                hint="Choose another file.",
            )


def _reads_back(text: str, out: Path, tools: Sequence[PortableTool]) -> None:
    """Check that ``text`` reads back, as ``probe --tools`` reads a file, as ``tools``."""
    read = tools_in(*parse_document(text, out.name))
    wanted = held().value([(t.name, t.description, dict(t.parameters)) for t in tools])
    if [(t.name, t.description, dict(t.parameters)) for t in read] != wanted:
        raise InputError(
            f"--out: {out}: the tools would not read back as written.",
            hint="Write it as .json instead; please report this.",
        )


def _write(out: Path, text: str) -> None:
    from conchcheck.replacement import replace_file  # tempfile: off the CLI's start-up path

    try:
        # A tools file is no secret and is meant to be shared: 0644, as a report.
        replace_file(out, text, mode=0o644)
    except OSError as exc:
        raise InputError(
            f"--out: {out}: cannot be written ({exc.strerror}).",
            hint="Check the permissions and free space, or choose another file.",
        ) from None
