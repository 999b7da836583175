"""How the dialect stage sends a schema case: in one of the four dialects, or as written
through a switch an API offers beside them. Each is a trial with its own cells; only the
dialects decide the dialect verdict.
"""

from __future__ import annotations

from conchcheck.core.dialects import Dialect
from conchcheck.core.names import Name


class AsWritten(Name):
    """A schema sent as written, through an API's own switch."""

    JSON_SCHEMA = "json_schema"
    """Gemini: full JSON Schema in ``parametersJsonSchema``."""
    STRICT_MODE = "strict_mode"
    """The Responses API: ``strict: true`` on every function tool (its default)."""


Trial = Dialect | AsWritten
"""What a dialect cell tried: a dialect, or a schema as written."""


PERMISSIVENESS: tuple[Dialect, ...] = (
    Dialect.PERMISSIVE,
    Dialect.ANTHROPIC,
    Dialect.GEMINI,
    Dialect.STRICT,
)
"""The dialects from most to least permissive (DESIGN.md rule 4)."""


def rank(trial: Trial | str) -> int:
    """Where ``trial`` sorts: the dialects from most to least permissive, then the schemas
    as written beside them."""
    return PERMISSIVENESS.index(trial) if trial in PERMISSIVENESS else len(PERMISSIVENESS)
