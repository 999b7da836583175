"""Files replaced whole: written beside the target, then renamed over it.

A reader sees the old file or the new one, never half of either, and a run killed mid-write
(``kill -9``, a full disk) leaves the old file as it was. What such a run leaves is its
temporary file, named ``.<name>.<pid>.<random>.tmp``; the next write to the same target
removes those whose process is gone (a live writer's file is never touched, so concurrent
writers under a lock, as the capability file's are, are safe).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from pathlib import Path


def replace_file(path: Path, text: str, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``text`` to ``path`` in one step; ``durable`` also syncs it to the disk.

    ``mode`` is the new file's permissions (mkstemp makes it 0600); None keeps the old
    file's, or 0644 for a new one. Raises ``OSError`` and leaves no temporary file behind.
    """
    sweep(path)
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
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
    if durable:
        _sync_folder(path.parent)


def sweep(path: Path) -> list[Path]:
    """Remove the temporary files of writers of ``path`` that died; return what went."""
    removed = []
    prefix = f".{path.name}."
    with suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid = name[len(prefix) :].split(".", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                with suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to judge
    return True


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
