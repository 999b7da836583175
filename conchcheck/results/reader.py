"""The one reader of ``results.json``: any version still supported, checked by its shipped
JSON Schema, read back as a whole typed ``ProbeResult``.

``--resume``, ``conchcheck check`` and ``conchcheck report`` read results here and nowhere
else; every problem is an ``InputError`` of one line, ``file:line: $.path: message``: what
the schema refuses, what it lets through that no type of the result takes (``PlainError``),
and a verdict that names a cell the file doesn't hold.
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
from conchcheck.core.excerpt import excerpt
from conchcheck.core.fidelity import FieldChange
from conchcheck.core.usertools import OwnTool
from conchcheck.errors import InputError
from conchcheck.files import load_json, problem
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
from conchcheck.results.plain import Place, PlainError, from_plain
from conchcheck.results.result import ProbeResult, RunInfo
from conchcheck.results.verdict import Verdict
from conchcheck.results.versions import upgrade
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.providers import ApiFamily
from conchcheck.yamlevents import locate

READS = (1, 2, 3)
"""The versions of the file this conchcheck reads."""
HINT = "results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out."
MESSAGE_LIMIT = 300
"""Characters of one problem's words kept in its line."""


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
        raise _located(name, text, list(error.absolute_path), error.message)
    try:
        result = result_of(upgrade(data))
        _refusals_have_cells(result)
    except PlainError as exc:
        raise _located(name, text, list(exc.path), exc.message) from None
    return result


def _located(name: str, text: str, path: list[str | int], message: str) -> InputError:
    # jsonschema quotes the value it refuses, and a value can be a whole cell.
    return InputError(str(problem(name, text, path, excerpt(message, MESSAGE_LIMIT))), hint=HINT)


def _refusals_have_cells(result: ProbeResult) -> None:
    """Each refusal the dialect verdict lists is of a dialect cell the file holds: a report
    shows that cell's evidence beside it."""
    if result.verdict is None:
        return
    held = {(c.case, c.dialect) for c in result.cells if c.stage is Stage.DIALECT}
    for key in ("refused", "limits"):
        for index, item in enumerate(getattr(result.verdict.dialect, key)):
            if (item.case, item.dialect) not in held:
                raise PlainError(
                    ("verdict", "dialect", key, index),
                    f"case {item.case!r} in {item.dialect} is no dialect cell of this file",
                )


def _listed(versions: tuple[int, ...]) -> str:
    """``1, 2 and 3``."""
    *rest, last = map(str, versions)
    return f"{', '.join(rest)} and {last}" if rest else last


def result_of(data: dict[str, Any]) -> ProbeResult:
    """A ``ProbeResult`` from a document already checked and upgraded; ``PlainError`` where
    a value the schema lets through fits no type of the result."""
    budget = data["budget"]
    return ProbeResult(
        target=data["target"],
        provider=data["provider"],
        model=data["model"],
        endpoint=data["endpoint"],
        api=from_plain(ApiFamily, data["api"], ("api",)),
        family_dialect=from_plain(Dialect, data["family"], ("family",)),
        matrix=data["matrix"]["name"],
        matrix_digest=data["matrix"]["digest"],
        cells=tuple(cell_of(item, ("cells", i)) for i, item in enumerate(data["cells"])),
        catalogue=from_plain(ModelInfo | None, data["catalogue"], ("catalogue",)),  # type: ignore[arg-type]
        verdict=from_plain(Verdict | None, data["verdict"], ("verdict",)),  # type: ignore[arg-type]
        requests=budget["requests"],
        prompt_tokens=budget["prompt_tokens"],
        completion_tokens=budget["completion_tokens"],
        stage_ms={k: float(v) for k, v in budget["stage_ms"].items()},
        stopped=data["stopped"],
        unusable=data["unusable"],
        stage_requests=dict(budget.get("stage_requests") or {}),
        critical_path=budget.get("critical_path", 0),
        own_tools=tuple(
            from_plain(OwnTool, t, ("own_tools", i))
            for i, t in enumerate(data.get("own_tools") or ())
        ),
        run=from_plain(RunInfo, data["run"], ("run",)),
    )


def cell_of(item: dict[str, Any], at: Place = ()) -> Cell:
    """One cell (``at`` its place), its facts read by its stage from the flat ``extra``."""
    cell = from_plain(Cell, item, at)
    facts = facts_of(cell.stage, cell.mode, item.get("extra") or {}, (*at, "extra"))
    return cell if facts is None else dataclasses.replace(cell, facts=facts)


def facts_of(
    stage: Stage, mode: CellMode | None, extra: dict[str, Any], at: Place = ()
) -> CellFacts | None:
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
            whole = (
                None if reply is None else from_plain(ReplyEvidence, reply, (*at, "whole_reply"))
            )
            return StreamFacts(_native(extra), extra.get("whole"), whole)
        case Stage.KNOBS if "knob" in extra:
            return from_plain(KnobFacts, extra, at)
        case Stage.KNOBS if "id_rounds" in extra:
            rounds = tuple(tuple(ids) for ids in extra["id_rounds"])
            return IdFacts(rounds, extra.get("round_trip"))
        case Stage.KNOBS if "changed" in extra:
            changed = from_plain(tuple[FieldChange, ...], extra["changed"], (*at, "changed"))
            return FidelityFacts(changed)
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
