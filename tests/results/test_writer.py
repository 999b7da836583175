"""results.json as written: its shipped schema, its version, and the facts of each stage."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conchcheck.report import ReportFormat, render
from conchcheck.results import (
    CatalogueFacts,
    Cell,
    LeakFacts,
    NativeFacts,
    Outcome,
    ProbeResult,
    RunInfo,
    SchemaFacts,
    Stage,
    StreamFacts,
)
from conchcheck.results.reader import validator
from conchcheck.results.writer import facts_data, to_data


def test_json_fits_its_schema(result: ProbeResult, info: RunInfo):
    data = json.loads(render(result, ReportFormat.JSON, info))
    assert list(validator().iter_errors(data)) == []
    assert data["schema_version"] == 3
    assert data["verdict"]["native"]["rate"] == 0.5
    assert data["cells"][0]["label"] == "pass"


def test_json_of_an_unusable_target_fits_its_schema(info: RunInfo, make_result):
    result = make_result(
        cells=(), catalogue=None, verdict=None, unusable="auth: Invalid API key.", stage_ms={}
    )
    assert list(validator().iter_errors(to_data(result, info))) == []


def test_schema_names_every_stage_and_outcome():
    schema = validator().schema
    assert schema["$defs"]["stage"]["enum"] == [s.value for s in Stage]
    assert schema["$defs"]["cell"]["properties"]["outcome"]["enum"] == [o.value for o in Outcome]
    fields = {f.name for f in dataclasses.fields(Cell)}
    # Fields added after version 1 was first written are optional, so older files still load;
    # refusal_kind is derived from the refusal and written for readers' convenience; a cell's
    # typed facts are written flat under "extra", the key every version has had.
    added, derived = {"calls"}, {"refusal_kind"}
    written = fields - {"facts"} | {"extra"}
    assert set(schema["$defs"]["cell"]["required"]) == written - added | derived
    assert added <= set(schema["$defs"]["cell"]["properties"])


@pytest.mark.parametrize(
    ("facts", "extra"),
    [
        (None, {}),
        (SchemaFacts("$ref into $defs", True), {"feature": "$ref into $defs", "valid": True}),
        (
            SchemaFacts("128 tools", True, same_as="dialect/permissive/many-tools"),
            {"feature": "128 tools", "valid": True, "same_as": "dialect/permissive/many-tools"},
        ),
        (
            CatalogueFacts(True, None, 40960),
            {"listed": True, "tools": None, "context_window": 40960},
        ),
        (NativeFacts(2, False), {"native_calls": 2, "marker_leak": False}),
        (
            NativeFacts(0, True, LeakFacts("hermes", 1, "Start llama-server with --jinja.")),
            {
                "native_calls": 0,
                "marker_leak": True,
                "leaked_family": "hermes",
                "leaked_calls": 1,
                "leaked_fix": "Start llama-server with --jinja.",
            },
        ),
        (
            StreamFacts(NativeFacts(1, False), "pass", None),
            {"native_calls": 1, "marker_leak": False, "whole": "pass", "whole_reply": None},
        ),
        (StreamFacts(NativeFacts(0, False), None), {"native_calls": 0, "marker_leak": False}),
    ],
    ids=[
        "no-facts",
        "schema-case",
        "schema-case-settled-by-its-twin",
        "catalogue-tools-unknown",
        "native-calls",
        "native-leaked-as-text",
        "streaming-with-whole",
        "streaming-version-1",
    ],
)
def test_facts_are_written_flat_under_extra(facts, extra):
    assert facts_data(facts) == extra
