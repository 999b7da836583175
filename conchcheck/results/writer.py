"""The one writer of ``results.json``: a ``ProbeResult`` as data, in the shape
``jsonschemas/results.schema.json`` describes, and as text."""

from __future__ import annotations

import json
from typing import Any

from conchcheck.core.escaping import json_text
from conchcheck.results.cells import Cell
from conchcheck.results.facts import (
    CatalogueFacts,
    CellFacts,
    NativeFacts,
    SchemaFacts,
    StreamFacts,
)
from conchcheck.results.knobs import FidelityFacts, IdFacts, KnobFacts
from conchcheck.results.plain import to_plain
from conchcheck.results.result import ProbeResult, RunInfo

SCHEMA_VERSION = 3
"""Written; ``results.reader`` also reads versions 1 (before typed evidence) and 2 (before
a result named its API family)."""


def to_data(result: ProbeResult, info: RunInfo) -> dict[str, Any]:
    """The whole result as plain data, in the shape ``results.schema.json`` describes."""
    verdict: dict[str, Any] | None = to_plain(result.verdict)
    if verdict is not None and result.verdict is not None:
        for mode in ("native", "words"):
            rates = getattr(result.verdict, mode)
            verdict[mode]["rate"] = rates.rate
            verdict[mode]["clean_rate"] = rates.clean_rate
    own = {"own_tools": [to_plain(tool) for tool in result.own_tools]} if result.own_tools else {}
    return {
        "schema_version": SCHEMA_VERSION,
        "run": to_plain(info),
        "target": result.target,
        "provider": result.provider,
        "model": result.model,
        "endpoint": result.endpoint,
        "api": result.api.value,
        "family": result.family_dialect.value,
        "matrix": {"name": result.matrix, "digest": result.matrix_digest},
        **own,
        "budget": {
            "requests": result.requests,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "stage_ms": dict(result.stage_ms),
            "stage_requests": dict(result.stage_requests),
            "critical_path": result.critical_path,
        },
        "stopped": result.stopped,
        "unusable": result.unusable,
        "catalogue": to_plain(result.catalogue),
        "verdict": verdict,
        "cells": [cell_data(cell) for cell in result.cells],
    }


def cell_data(cell: Cell) -> dict[str, Any]:
    """One cell as data: its fields, its facts under ``extra``, and its label."""
    data: dict[str, Any] = {
        name: to_plain(getattr(cell, name)) for name in Cell.__dataclass_fields__ if name != "facts"
    }
    data["extra"] = facts_data(cell.facts)
    data["refusal_kind"] = to_plain(cell.refusal_kind)
    data["label"] = cell.label
    return data


def facts_data(facts: CellFacts | None) -> dict[str, Any]:
    """A cell's facts as the flat ``extra`` object every version of the file has written."""
    match facts:
        case None:
            return {}
        case SchemaFacts(feature, valid, same_as):
            twin = {} if same_as is None else {"same_as": same_as}
            return {"feature": feature, "valid": valid, **twin}
        case CatalogueFacts(listed, tools, window):
            return {"listed": listed, "tools": tools, "context_window": window}
        case NativeFacts(calls, marker_leak, leak):
            leaked = {}
            if leak is not None:
                leaked = {
                    "leaked_family": leak.family,
                    "leaked_calls": leak.calls,
                    "leaked_fix": leak.fix,
                    **(
                        {} if leak.read_passes is None else {"leaked_read_passes": leak.read_passes}
                    ),
                }
            return {"native_calls": calls, "marker_leak": marker_leak, **leaked}
        case StreamFacts(native, whole, whole_reply):
            compared = (
                {} if whole is None else {"whole": whole, "whole_reply": to_plain(whole_reply)}
            )
            return {**facts_data(native), **compared}
        case KnobFacts(knob, state, calls, baseline, breaking, read_from, baseline_from):
            return {
                "knob": knob.value,
                "state": state.value,
                "calls": calls,
                "baseline": baseline,
                "breaking": list(breaking),
                "read_from": read_from,
                "baseline_from": baseline_from,
            }
        case IdFacts(rounds, round_trip):
            return {"id_rounds": [list(ids) for ids in rounds], "round_trip": round_trip}
        case FidelityFacts(changed):
            return {"changed": to_plain(changed)}


def render(result: ProbeResult, info: RunInfo) -> str:
    """``results.json`` as text: sorted keys, two-space indent, UTF-8 as is."""
    return dumps(to_data(result, info))


def dumps(data: Any) -> str:
    """The one way conchcheck writes JSON reports, so every writer gives the same bytes."""
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return json_text(text) + "\n"
