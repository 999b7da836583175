"""Run a command and write its exit code and peak resident memory to a file, measured from
this small process (``python tests/peak.py RESULT COMMAND...``).

A child's ``ru_maxrss`` starts at its parent's high-water mark: at exec the kernel keeps the
larger of the old memory's peak and the new one's (``setmax_mm_hiwater_rss`` in
``exec_mmap``). A probe started straight from a test run that has grown to 250 MB therefore
reports 250 MB, whatever it uses itself. Started from this launcher, whose own memory is a
fresh interpreter's, the command's peak is its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path


def main() -> None:
    result, command = Path(sys.argv[1]), sys.argv[2:]
    child = subprocess.Popen(command)  # stdin, stdout, stderr, cwd and env inherited
    # A test that gives up on the command stops this launcher; the command goes with it.
    signal.signal(signal.SIGTERM, lambda *_: child.kill())
    _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    result.write_text(json.dumps({"code": code, "rss_mb": usage.ru_maxrss / 1024}))


if __name__ == "__main__":
    main()
