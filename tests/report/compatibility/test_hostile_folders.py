"""`report merge` and `report` over hostile folders: symbolic links inside `--out`, a named
pipe where a results file should be, and target names that are long, differ only in case, or
try to climb out of the folder. Each ends in one line and exit 2 with nothing written, or
writes only inside `--out` (issue 23; issue 26 items 8 to 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.report.compatibility.test_compatibility import HOSTILE, cli, edited

LONG = "mylab:" + "m" * 400


def tree(root: Path) -> list[str]:
    """Every path under ``root`` (links not followed), relative, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("link", "command"),
    [
        pytest.param("vllm-m", "merge", id="merge-a-target-folder-that-is-a-link"),
        pytest.param("badges", "report", id="report-a-badges-folder-that-is-a-link"),
    ],
)
def test_a_link_inside_out_is_never_written_through(
    probed: dict[str, Path], tmp_path: Path, link: str, command: str
) -> None:
    shard = tmp_path / "shard"
    edited(probed["vllm:m"], shard / "x")
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    out.mkdir()
    (out / link).symlink_to(elsewhere, target_is_directory=True)
    args = ("merge", str(shard)) if command == "merge" else (str(shard),)
    done = cli("report", *args, "--out", str(out))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"conchcheck: {out / link}: is a symbolic link inside {out}; conchcheck never writes"
        " through one. Remove the link, or choose another folder with --out.\n"
    )
    assert tree(elsewhere) == [] and tree(out) == [link]


def test_a_named_pipe_is_refused_unopened(probed: dict[str, Path], tmp_path: Path) -> None:
    # Opened, a pipe with no writer waits for ever (cli's 60 s timeout would fail the test).
    shard = tmp_path / "shard"
    edited(probed["vllm:m"], shard / "a")
    (shard / "b").mkdir()
    os.mkfifo(shard / "b" / "results.json")
    done = cli("report", "merge", str(shard), "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"conchcheck: {shard / 'b' / 'results.json'}: is a named pipe, not a regular file."
        " Give a file's path.\n"
    )
    assert not (tmp_path / "out").exists()


def test_hostile_target_names_stay_inside_out(probed: dict[str, Path], tmp_path: Path) -> None:
    names = {
        "a": LONG,
        "b": "mylab:Model",
        "c": "mylab:model",
        "d": "../../escape:../..",
        "e": HOSTILE,
        "f": "...:---",
    }
    shard = tmp_path / "shard"
    for folder, target in names.items():
        edited(probed["vllm:m"], shard / folder, target=target)
    out = tmp_path / "all"
    done = cli("report", "merge", str(shard), "--out", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    index = json.loads((out / "index.json").read_text())
    assert [(t["target"], t["results"]) for t in index["targets"]] == [
        ("...:---", "target/results.json"),
        ("../../escape:../..", "escape/results.json"),
        (HOSTILE, "script-img-src-x-onerror-document.title-pwned-31m-evil/results.json"),
        ("mylab:Model", "mylab-Model/results.json"),
        # A name past 100 characters is cut, with a hash of the whole name.
        (LONG, "mylab-" + "m" * 85 + "-3259fa17/results.json"),
        # One folder on a file system that ignores case: a second name.
        ("mylab:model", "mylab-model-2/results.json"),
    ]
    assert tree(tmp_path / "shard") == sorted(
        [*names, *(f"{folder}/results.json" for folder in names)]
    )
    assert all(len(part.encode()) <= 255 for part in tree(out))
    # The merged folder is a report's input like any other, badges named the same way.
    done = cli("report", str(out), "--out", str(tmp_path / "r"), "--json")
    assert done.returncode == 0, done.stderr
    badges = sorted(Path(p).name for p in json.loads(done.stdout) if "/badges/" in p)
    assert badges == sorted([
        "escape.svg", "mylab-" + "m" * 85 + "-3259fa17.svg", "mylab-Model.svg",
        "mylab-model-2.svg", "script-img-src-x-onerror-document.title-pwned-31m-evil.svg",
        "target.svg",
    ])  # fmt: skip
