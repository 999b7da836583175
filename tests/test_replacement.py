"""Files replaced whole; a killed writer's temporary file is swept by the next write."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conchcheck.capabilities.file import CapabilityFile
from conchcheck.replacement import STALE_AFTER, replace_file, sweep
from conchcheck.report import ReportFormat, write_reports
from conchcheck.report.compatibility import merge, write_compatibility
from conchcheck.results.reader import read_results
from tests.test_capabilities import entry


def test_a_file_is_replaced_whole_with_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    replace_file(target, "one")
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("one", 0o644)
    os.chmod(target, 0o600)
    replace_file(target, "two", durable=True)
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("two", 0o600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_writer_killed_mid_write_leaves_a_file_the_next_write_removes(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    # A real writer, killed with SIGKILL while its temporary file is open and half written.
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, sys, tempfile, time
            fd, tmp = tempfile.mkstemp(dir={str(tmp_path)!r},
                                       prefix=".report.html." + str(os.getpid()) + ".",
                                       suffix=".tmp")
            os.write(fd, b"half")
            print(tmp, flush=True)
            time.sleep(60)
        """)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdout is not None
    stray = Path(writer.stdout.readline().strip())
    assert stray.exists()
    # While the writer lives, its file is not touched.
    assert sweep(target) == []
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    writer.stdout.close()
    assert target.read_text() == "old"
    replace_file(target, "new")
    assert not stray.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    assert target.read_text() == "new"


def test_other_files_in_the_folder_are_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    keep = [tmp_path / ".junit.xml.bak", tmp_path / ".other.json.1.tmp", tmp_path / "notes.tmp"]
    for path in keep:
        path.write_text("x")
    replace_file(target, "<testsuites/>")
    assert all(path.exists() for path in keep)


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "folder-in-the-way"
    target.mkdir()
    with contextlib.suppress(OSError):
        replace_file(target, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder-in-the-way"]


# -- stale temporaries: by exact name, by writer and by age -----------------------------------

STALE = STALE_AFTER + 1
"""Seconds old that a temporary of a live pid is swept at."""
GOLDEN = Path(__file__).parent / "golden" / "results.json"


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


@contextlib.contextmanager
def _pids() -> Iterator[dict[str, int]]:
    """A live pid, a dead (reaped) one and a zombie (killed, not reaped), for the names."""
    live, dead, zombie = _sleeper(), _sleeper(), _sleeper()
    dead.kill()
    dead.wait()
    zombie.kill()
    # A zombie until waited for: what a harness that kills and moves on leaves.
    deadline = time.monotonic() + 10
    while _state(zombie.pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield {"live": live.pid, "dead": dead.pid, "zombie": zombie.pid, "ours": os.getpid()}
    finally:
        for process in (live, zombie):
            process.kill()
            process.wait()


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return stat[stat.rfind(b")") + 2 :][:1].decode()


TEMPORARIES = [
    # (name, by whom, age in seconds, swept)
    ("{name}.{live}.a1b2c3d4", "a live writer's, fresh", 0, False),
    ("{name}.{live}.a1b2c3d5", "a live writer's, just under the bound", STALE_AFTER - 30, False),
    ("{name}.{live}.a1b2c3d6", "a live pid's, untouched past the bound", STALE, True),
    ("{name}.{dead}.a1b2c3d7", "a dead writer's (killed and reaped), fresh", 0, True),
    ("{name}.{zombie}.a1b2_3d8", "a zombie writer's (killed, not reaped), fresh", 0, True),
    ("{name}.{ours}.a1b2c3d9", "our pid's, no write of ours holds it (a container's pid)", 0, True),
    ("{name}.{dead}.a1b2c3d.tmp", "not mkstemp's: 7 random characters", STALE, False),
    ("{name}.{dead}.a1b2c3d4e", "not mkstemp's: 9 random characters", STALE, False),
    ("{name}.{dead}.A1B2C3D4", "not mkstemp's: capitals", STALE, False),
    ("{name}.x{dead}.a1b2c3d4", "no pid", STALE, False),
    ("{name}.{dead}.a1b2c3d4.tmp.bak", "another suffix", STALE, False),
    ("other.json.{dead}.a1b2c3d4", "another target's", STALE, False),
    ("{name}x.{dead}.a1b2c3d4", "a target whose name starts with this one's", STALE, False),
]
"""Names are ``.<name>`` + the above + ``.tmp`` unless they end in it or in another suffix."""


def _temporary_name(pattern: str, name: str, pids: dict[str, int]) -> str:
    text = "." + pattern.format(name=name, **pids)
    return text if text.endswith((".tmp", ".bak")) else text + ".tmp"


def _write_reports(folder: Path) -> Path:
    result = read_results(GOLDEN)
    assert result.run is not None
    write_reports(result, folder, [ReportFormat.JSON], result.run)
    return folder / "results.json"


def _write_report_html(folder: Path) -> Path:
    result = read_results(GOLDEN)
    assert result.run is not None
    write_reports(result, folder, [ReportFormat.HTML], result.run)
    return folder / "report.html"


def _write_capabilities(folder: Path) -> Path:
    CapabilityFile(folder / "capabilities.yaml").put(entry())
    return folder / "capabilities.yaml"


def _write_compatibility(folder: Path) -> Path:
    write_compatibility([GOLDEN], folder, generated="2026-03-01T09:00:00Z", version="0.1.0")
    return folder / "compatibility.html"


def _write_merged(folder: Path) -> Path:
    shard = folder / "shard"
    shard.mkdir()
    (shard / "results.json").write_bytes(GOLDEN.read_bytes())
    merge([shard], folder)
    return folder / "index.json"


WRITERS = [
    pytest.param(_write_capabilities, "capabilities.yaml", id="capability-file"),
    pytest.param(_write_reports, "results.json", id="results"),
    pytest.param(_write_report_html, "report.html", id="report-html"),
    pytest.param(_write_compatibility, "compatibility.html", id="compatibility-report"),
    pytest.param(_write_merged, "index.json", id="merged-shards-index"),
]


@pytest.mark.parametrize(("write", "name"), WRITERS)
def test_a_write_sweeps_only_its_own_stale_temporaries(
    write: Callable[[Path], Path], name: str, tmp_path: Path
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    with _pids() as pids:
        made = {}
        for pattern, whose, age, swept in TEMPORARIES:
            path = folder / _temporary_name(pattern, name, pids)
            path.write_text("half a file")
            os.utime(path, (time.time() - age, time.time() - age))
            made[path.name] = (whose, swept)
        written = write(folder)
        left = {p.name for p in folder.iterdir()}
    assert written.name == name and written.exists()
    assert {made[n][0]: n in left for n in made} == {w: not s for w, s in made.values()}


def test_a_write_in_flight_in_another_thread_is_not_swept(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    held, release = threading.Event(), threading.Event()
    real = os.replace

    def hold(src: Any, dst: Any) -> None:
        if Path(dst) == target and not held.is_set():
            held.set()
            release.wait(10)
        real(src, dst)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", hold)
        writer = threading.Thread(target=replace_file, args=(target, "first"))
        writer.start()
        assert held.wait(10)
        # Our pid, fresh and held by a write of ours: another thread's write sweeps nothing.
        (mine,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert sweep(target) == []
        release.set()
        writer.join(10)
    assert target.read_text() == "first" and not mine.exists()


KILLED_WRITER = """
import os, sys, time
from pathlib import Path
from conchcheck import replacement

def hold(src, dst):
    # Killed here: the temporary is whole, the rename never happens.
    print(src, flush=True)
    time.sleep(120)

os.replace = hold
replacement.replace_file(Path(sys.argv[1]), "new " * 10_000)
"""


def test_writers_killed_mid_write_leave_nothing_after_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "capabilities.yaml"
    target.write_text("old")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    strays, unreaped = [], []
    for n in range(8):
        writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)],
                                  stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
        assert writer.stdout is not None
        strays.append(Path(writer.stdout.readline().strip()))
        # Each writer's first act was to sweep the temporaries of the writers killed before it.
        assert [s.exists() for s in strays] == [False] * n + [True]
        writer.send_signal(signal.SIGKILL)
        writer.stdout.close()
        # Half are reaped, half left zombies, as a harness that kills and moves on leaves them.
        if n % 2:
            unreaped.append(writer)
        else:
            writer.wait()
    try:
        assert target.read_text() == "old"
        deadline = time.monotonic() + 10
        while any(_state(w.pid) != "Z" for w in unreaped) and time.monotonic() < deadline:
            time.sleep(0.01)
        replace_file(target, "new")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["capabilities.yaml"]
        assert target.read_text() == "new"
    finally:
        for writer in unreaped:
            writer.wait()
