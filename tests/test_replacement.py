"""Files replaced whole; a killed writer's temporary file is swept by the next write."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from conchcheck.replacement import replace_file, sweep


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
