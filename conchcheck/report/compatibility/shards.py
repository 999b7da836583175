"""Finding results files in folders, and joining the folders of CI shards into one.

A shard is a folder holding ``results.json`` or ``*/results.json`` (a multi-target probe also
writes an ``index.json`` there; the results files are what counts). Joined, each endpoint
(target, base URL and API) must come once, and every one must have been probed with the same
matrix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from conchcheck.errors import InputError
from conchcheck.files import link_inside, linked
from conchcheck.report.compatibility.badge import distinct, filename
from conchcheck.results import ProbeResult

Loaded = tuple[Path, ProbeResult]

RESULTS = "results.json"
INDEX = "index.json"


def results_files(path: Path) -> list[Path]:
    """``path`` itself when it is a file; else its ``results.json`` and ``*/results.json``."""
    if not path.is_dir():
        if not path.exists():
            raise InputError(f"{path}: no such file or folder.")
        return [path]
    found = sorted({*path.glob(RESULTS), *path.glob(f"*/{RESULTS}")})
    if not found and (path / INDEX).is_file():
        # A shard the sharding gave no target: with more shards than targets, a real case.
        return []
    if not found:
        raise InputError(
            f"{path}: holds no {RESULTS}, neither in it nor in its folders.",
            hint="Give the folder a probe wrote with --out, or the results.json files.",
        )
    return found


def load_all(paths: Iterable[Path]) -> list[Loaded]:
    """Every results file under ``paths``, read and checked; InputError at the first bad one."""
    from conchcheck.results.reader import read_results  # jsonschema: off the start-up path

    loaded = []
    paths = list(paths)
    for path in paths:
        for file in results_files(path):
            loaded.append((file, read_results(file)))
    if paths and not loaded:
        raise InputError(
            f"{', '.join(map(str, paths))}: no target was probed in any of them.",
            hint="Each shard's index.json lists no target: check the targets file.",
        )
    return loaded


def refuse_duplicates(loaded: Sequence[Loaded]) -> None:
    """InputError naming both files when a target comes twice at one endpoint in one API
    (one server's several APIs are several rows)."""
    seen: dict[tuple[str, str, str], Path] = {}
    for path, result in loaded:
        key = _key(result)
        if key in seen:
            raise InputError(
                f"{path}: target {key[0]} at {key[1]} ({key[2]}) is also in {seen[key]}; "
                "each target may come once in each API of an endpoint.",
                hint="Remove one of the two, or give shards that split the targets.",
            )
        seen[key] = path


def refuse_mixed_matrices(loaded: Sequence[Loaded]) -> None:
    """InputError naming both files when two results were probed with different matrices."""
    if not loaded:
        return
    first, result = loaded[0]
    want = _matrix(result)
    for path, other in loaded[1:]:
        if _matrix(other) != want:
            raise InputError(
                f"{path}: matrix {_shown(_matrix(other))} differs from {_shown(want)} in "
                f"{first}; shards must be probed with the same matrix.",
                hint="Probe every shard with the same --matrix and conchcheck version.",
            )


def merge(shards: Sequence[Path], out: Path) -> list[Path]:
    """Join the results of ``shards`` into ``out``: ``<target>/results.json`` each, and an
    ``index.json``; the files written, index last. Nothing is written when a check fails.
    """
    loaded = load_all(shards)
    if not loaded:
        raise InputError(
            "No shard folder was given.", hint="conchcheck report merge DIR… --out DIR"
        )
    refuse_duplicates(loaded)
    refuse_mixed_matrices(loaded)
    texts: dict[Path, str] = {}
    folders: set[str] = set()
    entries = []
    apis: dict[str, set[str]] = {}
    for _, result in loaded:
        apis.setdefault(result.target, set()).add(result.api.value)
    for path, result in sorted(loaded, key=lambda item: _key(item[1])):
        # One server's several APIs: each folder names its API.
        name = result.target if len(apis[result.target]) == 1 else f"{result.target} {result.api}"
        folder = distinct(filename(name).removesuffix(".svg"), folders)
        # The file is copied as it was written: a merge never rewrites a shard's evidence.
        texts[out / folder / RESULTS] = path.read_text(encoding="utf-8")
        entries.append(
            {
                "target": result.target,
                "endpoint": result.endpoint,
                "api": result.api.value,
                "results": f"{folder}/{RESULTS}",
                "from": str(path),
            }
        )
    name, digest = _matrix(loaded[0][1])
    index = {"matrix": {"name": name, "digest": digest}, "targets": entries}
    texts[out / INDEX] = json.dumps(index, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return write_folder(out, texts)


def write_folder(out: Path, texts: Mapping[Path, str]) -> list[Path]:
    """Write each file (under ``out``, its folders made) whole, 0644; the files, in order.

    ``InputError`` naming ``out`` when one can't be written, and before any is written when a
    folder inside ``out`` is a symbolic link.
    """
    from conchcheck.replacement import replace_file  # tempfile: off the CLI's start-up path

    # Every folder is checked before the first write: a refusal leaves nothing half written.
    for file in texts:
        link = link_inside(out, file.parent)
        if link is not None:
            raise linked(link, out)
    written = []
    try:
        for file, text in texts.items():
            file.parent.mkdir(parents=True, exist_ok=True)
            replace_file(file, text, mode=0o644)
            written.append(file)
    except OSError as exc:
        raise InputError(
            f"{out}: cannot be written ({exc.strerror}).",
            hint="Check the permissions and free space, or choose another folder with --out.",
        ) from None
    return written


def _matrix(result: ProbeResult) -> tuple[str, str]:
    return result.matrix, result.matrix_digest


def _shown(matrix: tuple[str, str]) -> str:
    return f"{matrix[0]} ({matrix[1]})"


def _key(result: ProbeResult) -> tuple[str, str, str]:
    return result.target, result.endpoint, result.api.value
