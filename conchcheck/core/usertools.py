"""The user's own tools (``probe --tools``) as a probe records them: where each came from,
its schema, and how its smoke prompt chose arguments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

SMOKE_PREFIX = "smoke-"
"""A smoke prompt's id is this and its tool's name."""
MAX_TOOLS = 512
"""The most tools a probe of the user's tools takes (MCP servers list up to a few hundred)."""
MAX_NAME = 128
"""The longest tool name a probe of the user's tools takes: MCP's own bound ("Tool names
SHOULD be between 1 and 128 characters", specification 2025-11-25, server/tools). Providers
take 64 (OpenAI's and Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``): a name between the two is
probed, and their refusals say so."""


class Origin(str, Enum):
    """Where a smoke prompt's value for an argument came from."""

    EXAMPLE = "example"
    DEFAULT = "default"
    CONST = "const"
    ENUM = "enum"
    MODEL = "model"
    """The schema gives no value: the model chooses one, which only has to be present."""


@dataclass(frozen=True, slots=True)
class SmokeArgument:
    """One argument of a smoke prompt: its name, value (None for ``model``) and origin."""

    name: str
    origin: Origin
    value: Any = None


@dataclass(frozen=True, slots=True)
class OwnTool:
    """One of the user's tools: where it came from, its schema, and its smoke prompt."""

    name: str
    source: str
    description: str
    parameters: Mapping[str, Any]
    problem: str | None = None
    """Why its schema is not valid JSON Schema by its own draft, when it is not."""
    smoke: tuple[SmokeArgument, ...] | None = None
    """The smoke prompt's arguments; None when ``--prompts`` replaced the smoke prompts."""
    protocol: str | None = None
    """The MCP revision its server was spoken to in (``2026-07-28``, or the version
    ``initialize`` agreed on); None for a tool from a file."""

    @property
    def case_id(self) -> str:
        """The schema case that carries it: the tool's name."""
        return self.name
