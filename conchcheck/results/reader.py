"""The one reader of ``results.json``: any version still supported, checked by its shipped
JSON Schema, read back as a whole typed ``ProbeResult``.

``--resume``, ``conchcheck check`` and ``conchcheck report`` read results here and nowhere
else; every problem is an ``InputError`` of one line, ``file:line: $.path: message``.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from conchcheck.core.dialects import Dialect
from conchcheck.core.fidelity import FieldChange
from conchcheck.core.usertools import OwnTool
from conchcheck.errors import InputError
from conchcheck.files import load_json, locate, problem
from conchcheck.results.cells import Cell, CellMode, Stage
from conchcheck.results.evidence import ReplyEvidence
from conchcheck.results.facts import (
    CatalogueFacts,
    CellFacts,
    LeakFacts,
    NativeFacts,
    SchemaFacts,
    StreamFacts,
)
from conchcheck.results.knobs import FidelityFacts, IdFacts, KnobFacts
from conchcheck.results.plain import from_plain
from conchcheck.results.result import ProbeResult, RunInfo
from conchcheck.results.verdict import Verdict
from conchcheck.results.versions import upgrade
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.providers import ApiFamily

READS = (1, 2, 3)
"""The versions of the file this conchcheck reads."""
HINT = "results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out."


def read_results(path: Path | str) -> ProbeResult:
    """The probe result in ``path``; ``InputError`` (one line) where the file is wrong."""
    data, text, name = load_json(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if type(version) is int and version not in READS:
        raise InputError(
            f"{name}:{locate(text, ['schema_version'])}: $.schema_version: version {version} "
            f"is not one this conchcheck reads (it reads {_listed(READS)}).",
            hint="A newer conchcheck may have written it: upgrade, or probe again without "
            "--resume.",
        )
    error = best_match(validator().iter_errors(data))
    if error is not None:
        located = problem(name, text, list(error.absolute_path), error.message)
        raise InputError(str(located), hint=HINT)
    return result_of(upgrade(data))


def _listed(versions: tuple[int, ...]) -> str:
    """``1, 2 and 3``."""
    *rest, last = map(str, versions)
    return f"{', '.join(rest)} and {last}" if rest else last


def result_of(data: dict[str, Any]) -> ProbeResult:
    """A ``ProbeResult`` from a document already checked and upgraded."""
    budget = data["budget"]
    return ProbeResult(
        target=data["target"],
        provider=data["provider"],
        model=data["model"],
        endpoint=data["endpoint"],
        api=ApiFamily(data["api"]),
        family_dialect=Dialect(data["family"]),
        matrix=data["matrix"]["name"],
        matrix_digest=data["matrix"]["digest"],
        cells=tuple(cell_of(item) for item in data["cells"]),
        catalogue=from_plain(ModelInfo | None, data["catalogue"]),  # type: ignore[arg-type]
        verdict=from_plain(Verdict | None, data["verdict"]),  # type: ignore[arg-type]
        requests=budget["requests"],
        prompt_tokens=budget["prompt_tokens"],
        completion_tokens=budget["completion_tokens"],
        stage_ms={k: float(v) for k, v in budget["stage_ms"].items()},
        stopped=data["stopped"],
        unusable=data["unusable"],
        stage_requests=dict(budget.get("stage_requests") or {}),
        critical_path=budget.get("critical_path", 0),
        own_tools=tuple(from_plain(OwnTool, t) for t in data.get("own_tools") or ()),
        run=from_plain(RunInfo, data["run"]),
    )


def cell_of(item: dict[str, Any]) -> Cell:
    """One cell, its facts read by its stage from the flat ``extra`` object."""
    cell = from_plain(Cell, item)
    facts = facts_of(cell.stage, cell.mode, item.get("extra") or {})
    return cell if facts is None else dataclasses.replace(cell, facts=facts)


def facts_of(stage: Stage, mode: CellMode | None, extra: dict[str, Any]) -> CellFacts | None:
    """The typed facts of a cell of ``stage`` (and ``mode``) from its ``extra`` object."""
    match stage:
        case Stage.DIALECT if "valid" in extra:
            feature = str(extra.get("feature", ""))
            return SchemaFacts(feature, bool(extra["valid"]), extra.get("same_as"))
        case Stage.CATALOGUE if "listed" in extra:
            return CatalogueFacts(extra["listed"], extra.get("tools"), extra.get("context_window"))
        case Stage.NATIVE:
            return _native(extra)
        case Stage.FOLLOW_UP if mode is CellMode.STREAMING and extra:
            reply = extra.get("whole_reply")
            whole = None if reply is None else from_plain(ReplyEvidence, reply)
            return StreamFacts(_native(extra), extra.get("whole"), whole)
        case Stage.KNOBS if "knob" in extra:
            return from_plain(KnobFacts, extra)
        case Stage.KNOBS if "id_rounds" in extra:
            rounds = tuple(tuple(ids) for ids in extra["id_rounds"])
            return IdFacts(rounds, extra.get("round_trip"))
        case Stage.KNOBS if "changed" in extra:
            return FidelityFacts(from_plain(tuple[FieldChange, ...], extra["changed"]))
        case _:
            return None


def _native(extra: dict[str, Any]) -> NativeFacts | None:
    if "native_calls" not in extra:
        return None
    leak = None
    if extra.get("leaked_family") is not None:
        leak = LeakFacts(
            extra["leaked_family"],
            int(extra.get("leaked_calls", 0)),
            extra.get("leaked_fix", ""),
            extra.get("leaked_read_passes"),
        )
    return NativeFacts(int(extra["native_calls"]), bool(extra.get("marker_leak")), leak)


@cache
def validator() -> Draft202012Validator:
    """The validator of ``results.schema.json``, shipped in ``conchcheck.jsonschemas``."""
    text = files("conchcheck.jsonschemas").joinpath("results.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))
