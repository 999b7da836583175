"""``conchcheck export``: capability entries read from capability files and probe results,
written where other stacks read capability (``capabilities.exports`` owns the formats).

A results file becomes the entry its probe wrote (``capability_entry``), dated by its start;
a probe with no verdict (stopped, unusable) or of the user's own tools has none to export.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conchcheck.capabilities import CapabilityFile, Entry, parse_timestamp
from conchcheck.capabilities.exports import Document, render
from conchcheck.capabilities.formats import ExportFormat
from conchcheck.errors import InputError
from conchcheck.files import check_out_file, folder_problem, link_inside, linked
from conchcheck.replacement import replace_file
from conchcheck.report.compatibility.shards import results_files
from conchcheck.results.reader import read_results
from conchcheck.run.execution import capability_entry


@dataclass(frozen=True, slots=True)
class ExportSpec:
    """What to export, to which format, and where (None: the document is the outcome's, for
    the caller to print)."""

    sources: tuple[Path, ...]
    """Capability files (any name but ``*.json``), ``results.json`` files, or folders a probe
    wrote (``results.json`` in them or in their folders, as ``report`` reads them)."""
    to: ExportFormat
    out: Path | None = None


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export read and wrote."""

    entries: tuple[Entry, ...]
    documents: tuple[Document, ...]
    written: tuple[Path, ...]
    """The files written; none when ``out`` was None."""
    skipped: tuple[Skipped, ...] = ()
    """Results in the folders given that have nothing to export."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A results file in a folder given, with nothing to export, and why."""

    path: Path
    why: str


def export(spec: ExportSpec) -> Exported:
    """Read every entry of ``spec.sources``, render them, and write them to ``spec.out``.

    InputError, before anything is written, for a source that doesn't read, a results file
    named with nothing to export, two sources of one endpoint, or an ``out`` that can't take
    the files. A folder's results with nothing to export are skipped, and said.
    """
    entries, skipped = read_entries(spec.sources)
    documents = render(spec.to, entries)
    if spec.out is None:
        if len(documents) > 1:
            raise InputError(
                f"{len(documents)} models.dev files to write: give --out a folder for them.",
                hint="Each goes to providers/<provider>/models/<model>.toml under it.",
            )
        return Exported(tuple(entries), tuple(documents), (), skipped)
    targets = _places(documents, spec.out)
    for path in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
    for path, document in zip(targets, documents, strict=True):
        replace_file(path, document.text)
    return Exported(tuple(entries), tuple(documents), tuple(targets), skipped)


def read_entries(sources: Sequence[Path]) -> tuple[list[Entry], tuple[Skipped, ...]]:
    """The capability entries of ``sources`` in order, and the results in their folders that
    have none; InputError for a results file named that has none, or one endpoint twice."""
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for source in sources:
        if source.is_dir():
            for path in results_files(source):
                found = _from_results(path)
                if isinstance(found, Entry):
                    entries.append(found)
                else:
                    skipped.append(Skipped(path, found))
        elif source.suffix == ".json":
            found = _from_results(source)
            if not isinstance(found, Entry):
                raise InputError(f"{source}: {found}.", hint="Export a probe that finished.")
            entries.append(found)
        else:
            if not source.exists():
                raise InputError(f"{source}: no such file or folder.")
            entries += CapabilityFile(source).entries()
    twice = [key for key, count in Counter(e.key for e in entries).items() if count > 1]
    if twice:
        provider, model, endpoint, api = twice[0]
        raise InputError(
            f"{provider} {model} at {endpoint} ({api.value}) is in the sources twice.",
            hint="Export each probe of one endpoint on its own, or give only the newest.",
        )
    return entries, tuple(skipped)


def _from_results(path: Path) -> Entry | str:
    """The entry of the probe at ``path``, or why it has none."""
    result = read_results(path)
    if result.verdict is None or result.stopped is not None:
        why = result.unusable or f"it stopped early: {result.stopped}"
        return f"its probe has no verdict to export ({why.rstrip('.')})"
    if result.own_tools:
        # As the capability file: a probe of your tools never speaks for the endpoint.
        return "a probe of your own tools (--tools) measures them, not the endpoint"
    if result.run is None:  # pragma: no cover - a results file always names its run
        return "it names no run, so when it was probed is unknown"
    return capability_entry(result, parse_timestamp(result.run.started_at))


def _places(documents: Sequence[Document], out: Path) -> list[Path]:
    """Where each document goes under ``out``; InputError when ``out`` can't take them."""
    if documents[0].path is None or out.suffix == ".toml":
        if len(documents) > 1:
            raise InputError(
                f"--out {out}: {len(documents)} models.dev files need a folder, not a file.",
                hint="Give --out a folder: each goes to providers/<provider>/models/….",
            )
        check_out_file(out)
        return [out]
    places = [out.joinpath(*d.path.parts) for d in documents if d.path is not None]
    problem = folder_problem(out)
    if problem is not None:
        raise InputError(f"--out: {out}: {problem}.", hint="Choose another folder.")
    for place in places:
        link = link_inside(out, place.parent)
        if link is not None:
            raise linked(link, out)
        check_out_file(place)
    if len(set(places)) < len(places):
        twice = next(p for p in places if places.count(p) > 1)
        raise InputError(
            f"{twice}: two entries would write this one file.",
            hint="Export the entries of one model at one provider on their own.",
        )
    return places
