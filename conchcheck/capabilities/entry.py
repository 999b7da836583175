"""One capability entry: what one probe found about one endpoint, and its data in the file.

``capabilities.file`` reads, checks and writes the file; this module owns the entry's fields
and how each is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any

from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.knobs import (
    Agreement,
    Fidelity,
    Ids,
    Knobs,
    KnobsAndLosses,
    KnobState,
    Reasoning,
    Streaming,
)
from conchcheck.wire.providers import ApiFamily, default_api

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True, slots=True)
class Entry:
    """What one probe found about one endpoint: provider + model + base URL + API family."""

    provider: str
    model: str
    endpoint: str
    """The base URL requests went to."""
    api: ApiFamily
    """The API family spoken there: one server often speaks several at one base URL, and
    each has its own entry."""
    dialect: str | None
    """``permissive``, ``gemini``, ``anthropic`` or ``strict``; None if unknown."""
    mode: str
    """``native``, ``words`` or ``none``."""
    rates: Mapping[str, float]
    """Pass rates: ``native``, ``native_clean``, ``words``, ``words_clean``."""
    repairs_seen: tuple[str, ...]
    refused_keywords: tuple[str, ...]
    context_window: int | None
    tools_declared: bool | None
    """What the catalogue said; None if it said nothing."""
    tools_observed: bool | None
    """What the probe saw; None if it could not tell."""
    conchcheck_version: str
    matrix: str
    matrix_digest: str
    """sha256 of the matrix, hex."""
    probed_at: str
    """ISO 8601 UTC to the second: ``2026-12-02T10:00:00Z``."""
    expires_at: str
    leaked_as_text: tuple[str, ...] = ()
    """Families whose native calls the server left in the text (issue 9): an app reading
    this endpoint must read calls from the content, or fix the server."""
    strict_mode: Mapping[str, tuple[str, ...]] | None = None
    """The valid schema cases ``strict: true`` took (``accepted``) and ``refused``; None
    when the probe did not try it (only the Responses API has it)."""
    knobs_and_losses: KnobsAndLosses | None = None
    """What the endpoint did with each knob, its call ids, finish reasons, argument fidelity,
    reasoning channel and streaming parity (written flat: ``knobs``, ``ids``, …); None in
    entries before version 3 and for a probe run without ``--checks knobs``. Its findings
    stay in the report."""
    tokens_per_tool: Mapping[str, int] | None = None
    """Each tool's prompt tokens in the entry's dialect (``--checks cost``); None when not
    measured (and absent from the file)."""
    capacity: int | None = None
    """The most tools with which the model still called the one asked for (``--checks
    cost``); None when not measured or not even one."""

    @property
    def key(self) -> tuple[str, str, str, ApiFamily]:
        """(provider, model, endpoint, api): what makes an entry one of a kind in the file."""
        return (self.provider, self.model, self.endpoint, self.api)

    def as_data(self) -> dict[str, Any]:
        """The entry as its file writes it (``entry_to_data``): what ``--json`` prints."""
        return entry_to_data(self)

    def fresh(self, now: datetime) -> bool:
        """True while ``now`` (timezone-aware) is before ``expires_at``."""
        return now < parse_timestamp(self.expires_at)


def timestamp(moment: datetime) -> str:
    """``2026-12-02T10:00:00Z`` for a timezone-aware ``moment``; seconds, no fraction."""
    if moment.tzinfo is None:
        raise ValueError("timestamp() needs a timezone-aware datetime")
    return moment.astimezone(timezone.utc).strftime(_TIME_FORMAT)


def parse_timestamp(text: str) -> datetime:
    """The aware UTC datetime for ``2026-12-02T10:00:00Z``; ValueError for anything else."""
    return datetime.strptime(text, _TIME_FORMAT).replace(tzinfo=timezone.utc)


def expires(probed_at: datetime, days: float = 7) -> datetime:
    """When an entry probed at ``probed_at`` stops being fresh."""
    return probed_at + timedelta(days=days)


def entry_to_data(entry: Entry) -> dict[str, Any]:
    """The entry as plain data, in the file's field order (rates sorted by name)."""
    data = {field.name: getattr(entry, field.name) for field in fields(Entry)}
    data["api"] = entry.api.value  # safe_dump writes plain strings only
    data["rates"] = {name: float(rate) for name, rate in sorted(entry.rates.items())}
    data["repairs_seen"] = list(entry.repairs_seen)
    data["refused_keywords"] = list(entry.refused_keywords)
    data["leaked_as_text"] = list(entry.leaked_as_text)
    if entry.strict_mode is not None:
        data["strict_mode"] = {name: list(cases) for name, cases in entry.strict_mode.items()}
    for measured in ("tokens_per_tool", "capacity"):
        if data[measured] is None:
            del data[measured]  # not measured: absent, as in files before version 4
    if entry.tokens_per_tool is not None:
        data["tokens_per_tool"] = dict(entry.tokens_per_tool)
    section = data.pop("knobs_and_losses")
    if section is not None:
        # Flat in the entry, under the names apps and CI read (``knobs.strict``, ``ids.…``).
        data.update(
            {
                "knobs": _plain(section.knobs),
                "ids": _plain(section.ids),
                "finish_reason": _plain(section.finish_reason),
                "fidelity": section.fidelity.value,
                "fidelity_changes": [change.value for change in section.fidelity_changes],
                "reasoning": _plain(section.reasoning),
                "streaming": _plain(section.streaming),
            }
        )
    return data


def entry_of(data: Mapping[str, Any]) -> Entry:
    """An entry from data the schema already checked (any version read)."""
    # leaked_as_text and strict_mode came after the first files were written: absent means
    # none seen and not tried.
    values = {f.name: data[f.name] for f in fields(Entry) if f.name in data}
    values["rates"] = {name: float(rate) for name, rate in data["rates"].items()}
    values["repairs_seen"] = tuple(data["repairs_seen"])
    values["refused_keywords"] = tuple(data["refused_keywords"])
    values["leaked_as_text"] = tuple(data.get("leaked_as_text", ()))
    strict = data.get("strict_mode")
    values["strict_mode"] = None if strict is None else {k: tuple(v) for k, v in strict.items()}
    # A version 1 entry names no API (see the module).
    old = ApiFamily.RESPONSES if strict is not None else default_api(data["provider"])
    values["api"] = ApiFamily(data["api"]) if "api" in data else old
    for name in SECTION:
        values.pop(name, None)
    values["knobs_and_losses"] = _section(data) if "knobs" in data else None
    return Entry(**values)


SECTION = (
    "knobs",
    "ids",
    "finish_reason",
    "fidelity",
    "fidelity_changes",
    "reasoning",
    "streaming",
)
"""The knobs-and-losses fields, flat in an entry since version 3."""


def _section(data: Mapping[str, Any]) -> KnobsAndLosses:
    finish = data.get("finish_reason")
    return KnobsAndLosses(
        knobs=Knobs(**{name: KnobState(state) for name, state in data["knobs"].items()}),
        ids=Ids(**data["ids"]),
        finish_reason=None if finish is None else Agreement(finish),
        fidelity=Fidelity(data["fidelity"]),
        fidelity_changes=tuple(FidelityChange(c) for c in data["fidelity_changes"]),
        reasoning=Reasoning(**data["reasoning"]),
        streaming=Streaming(**data["streaming"]),
    )


def _plain(value: Any) -> Any:
    """A section part as YAML-safe data: enums as their values, dataclasses as dicts."""
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value
