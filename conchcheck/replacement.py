"""Files replaced whole: written beside the target, then renamed over it.

A reader sees the old file or the new one, never half of either, and a run killed mid-write
(``kill -9``, a full disk) leaves the old file as it was. What such a run leaves is its
temporary file, named exactly ``.<name>.<pid>.<8 characters>.tmp`` (``tempfile.mkstemp``'s
random part); the next write to the same target removes those that are stale:

* at once, when their writer is certainly gone: no process has their pid, or only a zombie
  (killed, not yet reaped by its parent: a harness that kills and moves on), or the pid is
  this process's own and no write of ours holds the file (a container starts every run as
  the same pid, so a killed run's pid is the next run's);
* otherwise once untouched for ``STALE_AFTER``, whatever the pid says: a pid proves nothing
  in a folder shared across containers or hosts, or after the pid was reused.

Nothing else is touched: another name, another target's temporaries, or a live writer's,
whose file is fresh (its pid lives, and the write moves its mtime).
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path

STALE_AFTER = 600.0
"""Seconds a temporary may go unwritten before it is swept whatever its pid says (10
minutes). A live writer holds its temporary only for one write of text already rendered in
memory, a write and at most an fsync: seconds on the slowest disk, and every write moves the
mtime. Ten minutes untouched belongs to no live write; were a writer stopped that long
between its last byte and its rename, its rename fails (``OSError``) and the old file
stays whole: a write is lost, never a file."""
_RANDOM = "[a-z0-9_]{8}"
"""What ``tempfile.mkstemp`` puts between prefix and suffix (its ``_RandomNameSequence``)."""
_HELD: set[str] = set()
"""The temporaries this process is writing now (another thread's write is live)."""
_HELD_LOCK = threading.Lock()


def replace_file(path: Path, text: str, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``text`` to ``path`` in one step; ``durable`` also syncs it to the disk.

    ``mode`` is the new file's permissions (mkstemp makes it 0600); None keeps the old
    file's, or 0644 for a new one. Raises ``OSError`` and leaves no temporary file behind.
    """
    sweep(path)
    with _HELD_LOCK:
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
        )
        _HELD.add(os.path.abspath(tmp))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o777
            except FileNotFoundError:
                mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        with _HELD_LOCK:
            _HELD.discard(os.path.abspath(tmp))
    if durable:
        _sync_folder(path.parent)


def sweep(path: Path, *, now: float | None = None) -> list[Path]:
    """Remove the stale temporary files of writes to ``path`` (see the module); return them.

    ``now`` is the time to judge ages by (``time.time()`` when None).
    """
    removed = []
    ours = re.compile(rf"\.{re.escape(path.name)}\.([0-9]{{1,10}})\.{_RANDOM}\.tmp")
    now = time.time() if now is None else now
    with suppress(OSError):
        for entry in os.scandir(path.parent):
            named = ours.fullmatch(entry.name)
            if named is None or not entry.is_file(follow_symlinks=False):
                continue
            with suppress(OSError):
                if _gone(int(named.group(1)), entry.path) or (
                    now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
                ):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _gone(pid: int, tmp: str) -> bool:
    """Whether the writer of ``tmp``, by its pid, is certainly gone from this machine."""
    if pid == os.getpid():
        with _HELD_LOCK:
            return os.path.abspath(tmp) not in _HELD
    if pid <= 0:
        return False  # os.kill would signal a process group, not ask after one process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # another user's process: alive, and not ours to judge
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` is a zombie: dead, its parent not told yet (Linux's /proc says)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read(4096)
    except OSError:
        return False  # no /proc (macOS): a zombie waits for STALE_AFTER
    # The state follows the command's closing parenthesis, which may itself hold any bytes.
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"


def _sync_folder(folder: Path) -> None:
    # The rename is durable only once the folder itself is synced (POSIX; not on Windows).
    if not hasattr(os, "O_DIRECTORY"):
        return
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
