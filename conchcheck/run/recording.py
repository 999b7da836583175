"""The recording file of ``--record`` and ``--replay``: read and checked for a replay,
written whole (keys masked) after a recorded probe.
"""

from __future__ import annotations

import json
from pathlib import Path

from conchcheck.core.escaping import encodable
from conchcheck.core.jsontypes import JsonValue
from conchcheck.errors import InputError
from conchcheck.files import load_json, problem
from conchcheck.jsonschemas import problems
from conchcheck.redaction import held
from conchcheck.replacement import replace_file
from conchcheck.wire.policy import MAX_BODY
from conchcheck.wire.recording import Recorded, Recording, body_digest

REPLAY_KEY = "rk-9f4e2b7d1a6c3e8f05b2"
"""The key a replay sends when the environment has none: the recording's keys are masked."""


def load_recording(path: Path, max_body: int = MAX_BODY) -> Recording:
    """A recording file, checked against ``recording.schema.json`` and against its own
    claims (``file:line: path: …``): each request hashes to its ``request_sha256``, and a
    body is ``truncated`` exactly when it is past ``max_body``, the cap it was recorded with.
    """
    data, text, name = load_json(path)
    found = problems("recording", data)
    if found:
        where, message = found[0]
        raise problem(name, text, where, message)
    recording = Recording.from_data(data)
    for index, exchange in enumerate(recording.exchanges):
        claim = _false_claim(exchange, max_body)
        if claim is not None:
            field, message = claim
            raise problem(name, text, ["exchanges", index, field], message + _CHANGED)
    return recording


_CHANGED = "; the recording was changed after it was written, record again"


def _false_claim(exchange: Recorded, max_body: int) -> tuple[str, str] | None:
    """The field of ``exchange`` whose claim its own content belies, and how; None if none."""
    if exchange.request is not None and body_digest(_canonical(exchange.request))[1] != (
        exchange.sha256
    ):
        return "request_sha256", "is not the sha256 of the exchange's request"
    size, cap = len(exchange.body), f"{max_body >> 20} MB"
    # The recorder keeps one byte past the cap of a body it cut, and every byte of one it didn't.
    if exchange.truncated and size <= max_body:
        return "truncated", f"true, but the body is {size} bytes, within the {cap} cap"
    if not exchange.truncated and size > max_body:
        return "truncated", f"false, but the body is {size} bytes, past the {cap} cap"
    return None


def _canonical(value: JsonValue) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


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
