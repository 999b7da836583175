"""Real provider error bodies for the emulators, taken by id from tests/data/refusals.yaml.

Each vector there is a provider's own error text with its source; emulators answer with
them verbatim, so what the wire layer meets in tests is what providers really send.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.emulators.server import Response

VECTORS = Path(__file__).parent.parent / "data" / "refusals.yaml"


@cache
def _vectors() -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in yaml.safe_load(VECTORS.read_text())}


def vector(vector_id: str) -> dict[str, Any]:
    """The vector with this id: status, body, headers, source, want."""
    return _vectors()[vector_id]


def refusal(vector_id: str, *, status: int | None = None) -> Response:
    """A response carrying the vector's real body (and headers)."""
    found = vector(vector_id)
    headers = {"content-type": "application/json", **(found.get("headers") or {})}
    return Response(status or found["status"], found["body"].encode(), headers)
