"""The recording file of ``--record`` and ``--replay``: read and checked for a replay,
written whole (keys masked) after a recorded probe.
"""

from __future__ import annotations

import json
from pathlib import Path

from conchcheck.core.escaping import encodable
from conchcheck.errors import InputError
from conchcheck.files import load_json, problem
from conchcheck.jsonschemas import problems
from conchcheck.redaction import held
from conchcheck.replacement import replace_file
from conchcheck.wire.recording import Recording

REPLAY_KEY = "rk-9f4e2b7d1a6c3e8f05b2"
"""The key a replay sends when the environment has none: the recording's keys are masked."""


def load_recording(path: Path) -> Recording:
    """A recording file, checked against ``recording.schema.json`` (``file:line: path: …``)."""
    data, text, name = load_json(path)
    found = problems("recording", data)
    if found:
        where, message = found[0]
        raise problem(name, text, where, message)
    return Recording.from_data(data)


def write_recording(recording: Recording, path: Path) -> Path:
    """Write ``recording`` to ``path`` whole (keys masked), one exchange a line."""
    data = recording.to_data()
    exchanges = data.pop("exchanges")
    head = json.dumps(data, ensure_ascii=False)[:-1]
    lines = ",\n".join(json.dumps(item, ensure_ascii=False) for item in exchanges)
    text = (
        f'{head}, "exchanges": [\n{lines}\n]}}\n' if exchanges else f'{head}, "exchanges": []}}\n'
    )
    try:
        replace_file(path, held().text(encodable(text)), mode=0o644)
    except OSError as exc:
        raise InputError(
            f"--record: {path}: cannot be written ({exc.strerror}).", hint="Choose another file."
        ) from None
    return path
