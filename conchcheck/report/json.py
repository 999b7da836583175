"""``results.json``: every cell of a probe as data, versioned and checked by a shipped schema.

``load_results`` reads one back (for ``--resume``), checking it against the schema first.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from conchcheck.core.refusals import Refusal, RefusalKind, Violation
from conchcheck.errors import InputError
from conchcheck.files import load_json, locate, problem
from conchcheck.plain import to_plain
from conchcheck.report.escaping import json_text
from conchcheck.results import (
    CallReading,
    Cell,
    CellMode,
    Finding,
    Finish,
    Outcome,
    ReadCall,
    ReplyEvidence,
    RequestEvidence,
    Stage,
    ToolCall,
    WireErrorKind,
)

if TYPE_CHECKING:
    from conchcheck.report import RunInfo
    from conchcheck.results import ProbeResult

SCHEMA_VERSION = 2
"""Written; version 1 (typed evidence did not exist yet) is still read."""
READS = (1, 2)
HINT = "results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out."


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
        "family": result.family,
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
        "cells": [
            {**to_plain(cell), "refusal_kind": cell.refusal_kind, "label": cell.label}
            for cell in result.cells
        ],
    }


def render(result: ProbeResult, info: RunInfo) -> str:
    """``results.json`` as text: sorted keys, two-space indent, UTF-8 as is."""
    return dumps(to_data(result, info))


def dumps(data: Any) -> str:
    """The one way conchcheck writes JSON reports, so every writer gives the same bytes."""
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return json_text(text) + "\n"


def load_results(path: Path | str) -> tuple[tuple[Cell, ...], dict[str, Any]]:
    """The cells of a ``results.json`` and the whole document; InputError where it is wrong."""
    data, text, name = load_json(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if type(version) is int and version not in READS:
        raise InputError(
            f"{name}:{locate(text, ['schema_version'])}: $.schema_version: version {version} "
            f"is not one this conchcheck reads (it reads {' and '.join(map(str, READS))}).",
            hint="A newer conchcheck may have written it: upgrade, or probe again without "
            "--resume.",
        )
    error = best_match(validator().iter_errors(data))
    if error is not None:
        located = problem(name, text, list(error.absolute_path), error.message)
        raise InputError(str(located), hint=HINT)
    return tuple(_cell(item) for item in data["cells"]), data


def _cell(item: dict[str, Any]) -> Cell:
    return Cell(
        id=item["id"],
        stage=Stage(item["stage"]),
        case=item["case"],
        outcome=Outcome(item["outcome"]),
        detail=item["detail"],
        dialect=item["dialect"],
        mode=CellMode(item["mode"]) if item["mode"] else None,
        attempt=item["attempt"],
        error_kind=WireErrorKind(item["error_kind"]) if item["error_kind"] else None,
        repairs=tuple(item["repairs"]),
        findings=_findings(item["findings"]),
        request=_request(item["request"]),
        reply=_reply(item["reply"]),
        reading=_reading(item["reading"]),
        refusal=_refusal(item["refusal"]),
        cases=tuple(item["cases"]),
        requests=item["requests"],
        latency_ms=float(item["latency_ms"]),
        prompt_tokens=item["prompt_tokens"],
        completion_tokens=item["completion_tokens"],
        extra=item["extra"],
        calls=_calls(item.get("calls")),
    )


# Readers of the evidence as written. Version 1 files (conchcheck before the engine's rebuild)
# nest usage in the reply and key findings by name; both shapes read to the same types.


def _calls(items: list[dict[str, Any]] | None) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.get("id"), c["name"], c["arguments"]) for c in items or ())


def _findings(items: list[dict[str, str]] | None) -> tuple[Finding, ...]:
    return tuple(Finding(f.get("code", ""), f.get("detail", "")) for f in items or ())


def _request(data: dict[str, Any] | None) -> RequestEvidence | None:
    if data is None:
        return None
    if "source" in data:  # version 1 catalogue cells: "GET <url>"
        method, _, url = str(data["source"]).partition(" ")
        return RequestEvidence(method, url)
    return RequestEvidence(data["method"], data["url"], data.get("headers") or {}, data.get("body"))


def _reply(data: dict[str, Any] | None) -> ReplyEvidence | None:
    if data is None:
        return None
    usage = data.get("usage") or data
    finish = data.get("finish")
    return ReplyEvidence(
        data.get("status"),
        data.get("attempts", 1),
        data.get("text"),
        _calls(data.get("calls")),
        Finish(finish) if finish else None,
        data.get("finish_reason"),
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        _findings(data.get("findings")),
        data.get("body", ""),
        tuple(data.get("waits") or ()),
    )


def _reading(data: dict[str, Any] | None) -> CallReading | None:
    if data is None:
        return None
    calls = tuple(
        ReadCall(
            c.get("form", "native"),
            c.get("name"),
            bool(c.get("ok", not c.get("error"))),
            c.get("arguments"),
            tuple(c.get("repairs") or ()),
            tuple(c.get("dropped") or ()),
            c.get("message") or c.get("error"),
            c.get("raw"),
        )
        for c in data.get("calls") or ()
    )
    return CallReading(
        calls, data.get("text"), data.get("fake_responses", 0), data.get("list_level")
    )


def _refusal(data: dict[str, Any] | None) -> Refusal | None:
    if data is None:
        return None
    return Refusal(
        RefusalKind(data["kind"]),
        data.get("status", 0),
        data.get("message", ""),
        data.get("code"),
        data.get("retry_after"),
        data.get("path"),
        data.get("tool_index"),
        data.get("keyword"),
        data.get("failed_generation"),
        data.get("should_retry"),
        tuple(
            Violation(v["tool_index"], v.get("keyword"), v.get("path"), v.get("message", ""))
            for v in data.get("violations") or ()
        ),
    )


@cache
def validator() -> Draft202012Validator:
    """The validator of ``results.schema.json``, shipped in ``conchcheck.jsonschemas``."""
    text = files("conchcheck.jsonschemas").joinpath("results.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))
