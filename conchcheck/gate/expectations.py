"""Expectations files: what each target must keep, read from YAML checked by a shipped schema.

A section per target label (``provider:model``) and a ``"*"`` section for every target; a
target's own section overrides the default key by key. Each problem is
``file:line: $.path: message``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from conchcheck import jsonschemas
from conchcheck.errors import InputError
from conchcheck.files import load_json, read_text
from conchcheck.gate.bounds import Bound
from conchcheck.gate.knobs import FIELDS, Wanted, wanted
from conchcheck.gate.runs import RATES
from conchcheck.yamlevents import FAST_LOADER, json_path, locate, yaml_hazard

DEFAULT = "*"
HINT = "The expectations file follows conchcheck/jsonschemas/expectations.schema.json."


@dataclass(frozen=True, slots=True)
class Section:
    """What one target (or every target) must keep; None or empty means not asked."""

    mode: tuple[str, ...] | None = None
    """Any one of these modes."""
    dialect: tuple[str, ...] | None = None
    """Any one of these dialects."""
    rates: Mapping[str, Bound] = field(default_factory=lambda: MappingProxyType({}))
    """Bounds by rate name: ``native.rate``, ``words.clean_rate``, …"""
    accepted: tuple[str, ...] | None = None
    """Schema cases accepted in the verdict's dialect."""
    passes: tuple[str, ...] | None = None
    """Prompts that pass: ``remember`` in the verdict's mode, ``words/remember`` in words."""
    no_findings: tuple[str, ...] | None = None
    """Finding codes that must not appear in any cell (``calls_leaked_as_text``)."""
    knobs: Mapping[str, Wanted] = field(default_factory=lambda: MappingProxyType({}))
    """What the knobs-and-losses section must say, by field path: ``knobs.strict``,
    ``ids.round_trip``, ``reasoning.swallowed``, …"""

    def over(self, default: Section) -> Section:
        """This section with what it doesn't say taken from ``default``."""
        return Section(
            mode=self.mode if self.mode is not None else default.mode,
            dialect=self.dialect if self.dialect is not None else default.dialect,
            rates=MappingProxyType({**default.rates, **self.rates}),
            accepted=self.accepted if self.accepted is not None else default.accepted,
            passes=self.passes if self.passes is not None else default.passes,
            no_findings=self.no_findings if self.no_findings is not None else default.no_findings,
            knobs=MappingProxyType({**default.knobs, **self.knobs}),
        )


@dataclass(frozen=True, slots=True)
class Expectations:
    """An expectations file: a section per target label, and the ``"*"`` default."""

    source: str
    targets: Mapping[str, Section]
    """Sections by target label, in the file's order, ``"*"`` excluded."""
    default: Section | None = None

    def for_target(self, target: str) -> Section | None:
        """What ``target`` must keep: its own section over the default; None if neither."""
        own = self.targets.get(target)
        if own is None:
            return self.default
        return own if self.default is None else own.over(self.default)


def load_expectations(path: Path | str) -> Expectations:
    """An expectations file; ``InputError`` (``file:line: path: message``) where it is wrong."""
    if str(path).endswith(".json"):
        # JSON is YAML, but PyYAML takes no key past 1,024 characters: a JSON file's own parser.
        data, text, name = load_json(path)
    else:
        text, name = read_text(path)
        hazard = yaml_hazard(text)
        if hazard is not None:
            raise InputError(hazard.located(name) + ".", hint=HINT)
        try:
            data = yaml.load(text, Loader=FAST_LOADER)
        except yaml.YAMLError:
            data = _pure(text, name)
    found = _problems(text, data)
    if found:
        line, where, message = sorted(found)[0]
        more = f" ({len(found) - 1} more after it)" if len(found) > 1 else ""
        raise InputError(f"{name}:{line}: {where}: {message}{more}.", hint=HINT)
    sections = {label: _section(body or {}) for label, body in data["targets"].items()}
    default = sections.pop(DEFAULT, None)
    return Expectations(name, MappingProxyType(sections), default)


def _problems(text: str, data: Any) -> list[tuple[int, str, str]]:
    return [
        (locate(text, path) or 1, json_path(path), message)
        for path, message in jsonschemas.problems("expectations", data)
    ]


def _pure(text: str, name: str) -> Any:
    # libyaml words its errors its own way; the pure loader's words are the same everywhere.
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise InputError(f"{name}:{line}: $: not YAML: {exc.problem}.", hint=HINT) from None
    except yaml.YAMLError:
        raise InputError(f"{name}:1: $: not YAML.", hint=HINT) from None


def _section(body: Mapping[str, Any]) -> Section:
    section = Section(
        mode=_names(body.get("mode")),
        dialect=_names(body.get("dialect")),
        accepted=_names(body.get("accepted")),
        passes=_names(body.get("passes")),
        no_findings=_names(body.get("no_findings")),
    )
    rates = {key: Bound.parse(value) for key, value in body.items() if key in RATES}
    # In the section's order, whatever the file's: checks read alike across files.
    knobs = {path: wanted(path, body[path]) for path in FIELDS if path in body}
    return replace(section, rates=MappingProxyType(rates), knobs=MappingProxyType(knobs))


def _names(value: str | list[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)
