"""The matrix as data: schema cases, prompts and the reusable tools they name.

This module owns the two facts other parts used to work out for themselves: the names of a
case's copies (``copy_names``) and the matrix's digest (``digest``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conchcheck.core.matching import Expectation, Matcher
from conchcheck.core.tools import ChoiceMode, Tool, ToolChoice
from conchcheck.core.usertools import OwnTool
from conchcheck.errors import InputError

_AUTO = ToolChoice(ChoiceMode.AUTO)
MAX_COPIES = 999
"""The most copies a case may send (three digits of ``_NNN``); matrix.schema.json agrees."""


def copy_names(name: str, copies: int | None) -> list[str]:
    """``name``, or ``name_001`` … ``name_NNN`` when the case sends ``copies`` of it.

    ``InputError`` for a count outside 1 to ``MAX_COPIES``, before any name is made.
    """
    if copies is None:
        return [name]
    if type(copies) is not int or not 1 <= copies <= MAX_COPIES:
        raise InputError(f"copies must be a whole number from 1 to {MAX_COPIES}, not {copies!r}.")
    return [f"{name}_{n:03d}" for n in range(1, copies + 1)]


def digest(data: Any) -> str:
    """``sha256:`` of ``data`` as canonical JSON (sorted keys), so results name the matrix."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SchemaCase:
    """A tool whose parameters exercise one schema feature that providers treat differently."""

    id: str
    feature: str
    tool: Tool
    valid: bool = True
    """False for a deliberately invalid schema, which a provider should refuse."""
    copies: int | None = None
    """Send the tool this many times, named ``<name>_001``, ``<name>_002``, …"""

    def __post_init__(self) -> None:
        copy_names(self.tool.name, self.copies)  # a count out of range is refused here

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the case sends: the tool, or its copies."""
        tool = self.tool
        return tuple(
            Tool(n, tool.description, tool.parameters) for n in copy_names(tool.name, self.copies)
        )


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A round trip: each call gets ``result`` back, and the final answer must fit ``answer``."""

    result: str
    answer: Matcher


@dataclass(frozen=True, slots=True)
class Prompt:
    """A user message, the tools offered, and what a correct outcome is."""

    id: str
    user: str
    tools: tuple[str, ...]
    """Ids of the tools offered, in ``Matrix.tools``."""
    expect: Expectation
    system: str | None = None
    tool_choice: ToolChoice = _AUTO
    follow_up: FollowUp | None = None


@dataclass(frozen=True, slots=True)
class Matrix:
    """A matrix that passed every check."""

    name: str
    description: str
    tools: Mapping[str, Tool]
    """The reusable tools by id, in file order (read-only)."""
    schema_cases: tuple[SchemaCase, ...]
    prompts: tuple[Prompt, ...]
    path: str
    """The file it was read from."""
    source: Any
    """The matrix as read, as JSON data."""
    digest: str
    """``sha256:`` of ``source`` as canonical JSON (sorted keys), so results name the matrix."""
    version: int = 1
    own: tuple[OwnTool, ...] = ()
    """The user's own tools (``probe --tools``), each carried by the schema case of its name."""
