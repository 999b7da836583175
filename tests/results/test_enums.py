"""The shipped results schema and the reader agree: every ``str`` enum the reader builds from
``results.json`` is in ``results.schema.json`` with exactly its values, so a file the schema
passes never ends in a ``ValueError``; a value outside one is one line and exit 2 from every
command that reads results files.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
import types
import typing
from enum import Enum
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import Dialect
from conchcheck.core.fidelity import FieldChange
from conchcheck.core.usertools import OwnTool
from conchcheck.results import facts as facts_module
from conchcheck.results.cells import Cell
from conchcheck.results.evidence import ReplyEvidence
from conchcheck.results.knobs import KnobFacts
from conchcheck.results.reader import HINT
from conchcheck.results.result import ProbeResult, RunInfo
from conchcheck.results.verdict import Verdict
from conchcheck.wire.catalogue import ModelInfo
from conchcheck.wire.providers import ApiFamily
from conchcheck.yamlevents import json_path, locate

ROOT = Path(__file__).parent.parent.parent
GOLDEN = ROOT / "tests" / "golden" / "results.json"
SCHEMA = json.loads(files("conchcheck.jsonschemas").joinpath("results.schema.json").read_text())
SCHEMA_VALIDATOR = Draft202012Validator(SCHEMA)

Path_ = tuple[str | int, ...]
"""A place in the file: keys, indices, and ``*`` for every item of a list or object."""

READ: dict[Path_, Any] = {
    ("api",): ApiFamily,
    ("family",): Dialect,
    ("run",): RunInfo,
    ("catalogue",): ModelInfo | None,
    ("verdict",): Verdict | None,
    ("own_tools", "*"): OwnTool,
    ("cells", "*"): Cell,
    # A cell's facts are written flat in its extra object (results.facts): the knob cell's
    # and the fidelity cell's through from_plain, the streaming cell's whole reply as evidence.
    ("cells", "*", "extra"): KnobFacts,
    ("cells", "*", "extra", "changed"): tuple[FieldChange, ...],
    ("cells", "*", "extra", "whole_reply"): ReplyEvidence | None,
}
"""What the reader builds from each place of the file (``results.reader``)."""
RESULT_FIELDS = {
    "api": "api", "family_dialect": "family", "verdict": "verdict", "own_tools": "own_tools",
    "cells": "cells",
}  # fmt: skip
"""Each field of ``ProbeResult`` that holds an enum somewhere, by the key it is written under."""


def _optional(kind: Any) -> tuple[Any, bool]:
    """``kind`` without ``None``, and whether ``None`` was one of its branches."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        branches = [b for b in typing.get_args(kind) if b is not type(None)]
        rest: Any = branches[0] if len(branches) == 1 else typing.Union[tuple(branches)]  # noqa: UP007
        return rest, len(branches) < len(typing.get_args(kind))
    return kind, False


def _enums(kind: Any) -> list[type[Enum]] | None:
    """The enums a value of ``kind`` is one of (a Dialect, a Trial's two); None if not one."""
    branches = typing.get_args(kind) if typing.get_origin(kind) else (kind,)
    if all(isinstance(b, type) and issubclass(b, Enum) for b in branches):
        return list(branches)
    return None


def _holds_enum(kind: Any, seen: frozenset[Any] = frozenset()) -> bool:
    kind, _ = _optional(kind)
    if _enums(kind) is not None:
        return True
    if dataclasses.is_dataclass(kind) and kind not in seen:
        hints = typing.get_type_hints(kind)
        return any(_holds_enum(hints[f.name], seen | {kind}) for f in dataclasses.fields(kind))
    return any(_holds_enum(arg, seen) for arg in typing.get_args(kind) if arg is not Ellipsis)


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _at(path: Path_) -> dict[str, Any]:
    node = SCHEMA
    for part in path:
        node = _resolve(node)
        node = node["items"] if part == "*" and "items" in node else (
            node["additionalProperties"] if part == "*" else node["properties"][part]
        )  # fmt: skip
    return _resolve(node)


def _walk(kind: Any, path: Path_, found: dict[Path_, list[Any]]) -> None:
    """Every enum place under ``path`` (``kind`` read there), with the values the schema must
    list there, into ``found``."""
    bare, nullable = _optional(kind)
    enums = _enums(bare)
    if enums is not None:
        values: list[Any] = [m.value for e in enums for m in e]
        found[path] = values + [None] * nullable
    elif typing.get_origin(bare) is tuple:
        _walk(typing.get_args(bare)[0], (*path, "*"), found)
    elif typing.get_origin(bare) in (dict, typing.get_origin(typing.Mapping[str, int])):
        _walk(typing.get_args(bare)[1], (*path, "*"), found)
    elif dataclasses.is_dataclass(bare):
        hints = typing.get_type_hints(bare)
        for field in dataclasses.fields(bare):
            # Facts are read from extra by the stage (READ's rows); the rest by their names.
            if field.init and field.name != "facts" and _holds_enum(hints[field.name]):
                _walk(hints[field.name], (*path, field.name), found)


def enum_places() -> dict[Path_, list[Any]]:
    """Every place the reader builds an enum from, with the values it takes (and null)."""
    found: dict[Path_, list[Any]] = {}
    for path, kind in READ.items():
        _walk(kind, path, found)
    return found


def test_every_field_of_a_result_that_holds_an_enum_is_read_in_the_table():
    hints = typing.get_type_hints(ProbeResult)
    holding = {f.name for f in dataclasses.fields(ProbeResult) if _holds_enum(hints[f.name])}
    assert holding == set(RESULT_FIELDS)
    assert {(key,) for key in RESULT_FIELDS.values()} <= {p[:1] for p in READ}
    # The facts a stage writes in extra hold enums only where READ's extra rows read them.
    extra = {
        name: cls for name in ("SchemaFacts", "CatalogueFacts", "NativeFacts", "IdFacts")
        if _holds_enum(cls := getattr(facts_module, name))
    }  # fmt: skip
    assert extra == {}


@pytest.mark.parametrize(
    ("path", "values"),
    [pytest.param(p, v, id=json_path(list(p)).replace("*", "x")) for p, v in enum_places().items()],
)
def test_the_schema_lists_exactly_the_values_of_each_enum_the_reader_builds(
    path: Path_, values: list[Any]
) -> None:
    node = _at(path)
    assert node.get("enum") == values, f"{json_path(list(path))} in results.schema.json"


def _set(data: Any, path: Path_, value: Any) -> None:
    *parents, last = path
    for part in parents:
        if isinstance(data, dict) and data.get(part) is None:
            data[part] = {}
        data = data[part]
    data[last] = value


def _cell(data: dict[str, Any], cell_id: str) -> int:
    return next(i for i, c in enumerate(data["cells"]) if c["id"] == cell_id)


def _whole_reply(data: dict[str, Any]) -> Path_:
    # The golden streaming cell timed out; one that compared a whole reply carries it in extra.
    index = _cell(data, "follow_up/streaming/weather-enum")
    reply = data["cells"][_cell(data, "reach")]["reply"]
    data["cells"][index]["extra"] = {"whole": "pass", "whole_reply": copy.deepcopy(reply)}
    return ("cells", index, "extra", "whole_reply", "finish")


def _own_tool(data: dict[str, Any]) -> Path_:
    data["own_tools"] = [
        {"name": "t", "source": "tools.yaml", "description": "", "parameters": {},
         "problem": None, "smoke": [{"name": "city", "origin": "example", "value": "Oslo"}]}
    ]  # fmt: skip
    return ("own_tools", 0, "smoke", 0, "origin")


def _at_cell(cell_id: str, *rest: str | int) -> Any:
    return lambda data: ("cells", _cell(data, cell_id), *rest)


MUTATIONS = [
    pytest.param(lambda d: ("api",), id="api"),
    pytest.param(lambda d: ("family",), id="family-dialect"),
    pytest.param(_at_cell("reach", "stage"), id="cell-stage"),
    pytest.param(_at_cell("reach", "outcome"), id="cell-outcome"),
    pytest.param(_at_cell("native/remember/1", "dialect"), id="cell-dialect-a-trial"),
    pytest.param(_at_cell("native/remember/1", "mode"), id="cell-mode"),
    pytest.param(_at_cell("follow_up/streaming/weather-enum", "error_kind"), id="wire-error-kind"),
    pytest.param(_at_cell("reach", "reply", "finish"), id="finish-reason"),
    pytest.param(_at_cell("dialect/permissive/ref-defs", "refusal", "kind"), id="refusal-kind"),
    pytest.param(_at_cell("knobs/strict", "extra", "knob"), id="knob-of-a-knob-cell"),
    pytest.param(_at_cell("knobs/strict", "extra", "state"), id="knob-state-of-a-knob-cell"),
    pytest.param(_at_cell("knobs/fidelity", "extra", "changed", 0, "change"),
                 id="fidelity-change-of-a-cell"),
    pytest.param(_whole_reply, id="finish-of-a-whole-reply-in-extra"),
    pytest.param(lambda d: ("verdict", "mode"), id="verdict-mode"),
    pytest.param(lambda d: ("verdict", "dialect", "dialect"), id="verdict-dialect"),
    pytest.param(lambda d: ("verdict", "dialect", "chain", 1), id="dialect-chain"),
    pytest.param(lambda d: ("verdict", "dialect", "best"), id="best-dialect"),
    pytest.param(lambda d: ("verdict", "dialect", "unsettled", 0), id="unsettled-dialect"),
    pytest.param(lambda d: ("verdict", "dialect", "refused", 0, "dialect"),
                 id="refused-case-dialect"),
    pytest.param(lambda d: ("verdict", "dialect", "refused", 0, "kind"), id="refused-case-kind"),
    pytest.param(lambda d: ("verdict", "dialect", "limits", 1, "kind"), id="limit-kind"),
    pytest.param(lambda d: ("verdict", "dialect", "carriers", "ref-defs"), id="carriers-a-list"),
    pytest.param(lambda d: ("verdict", "options", 0, "route"), id="option-route"),
    pytest.param(lambda d: ("verdict", "knobs_and_losses", "knobs", "strict"), id="knob-state"),
    pytest.param(lambda d: ("verdict", "knobs_and_losses", "finish_reason"),
                 id="finish-reason-agreement"),
    pytest.param(lambda d: ("verdict", "knobs_and_losses", "fidelity"), id="fidelity"),
    pytest.param(lambda d: ("verdict", "knobs_and_losses", "fidelity_changes", 0),
                 id="fidelity-changes"),
    pytest.param(_own_tool, id="smoke-argument-origin"),
]  # fmt: skip


def mutated(where: Any, folder: Path, value: str = "bogus") -> tuple[Path, str, Path_]:
    """The golden results.json with ``value`` at the place ``where`` names: file, text, path."""
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    path = where(data)
    # A mapping of case to dialects holds a list: the bad value is its first item.
    if path[-1] == "ref-defs":
        _set(data, path, [value])
        path = (*path, 0)
    else:
        _set(data, path, value)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "results.json"
    file.write_text(text, encoding="utf-8")
    return file, text, path


def expected(file: Path, text: str, path: Path_, value: str = "bogus") -> str:
    """The one line a reader says of ``value`` at ``path``: where, and the values it takes."""
    places = enum_places()
    place = next(p for p in places if len(p) == len(path) and all(
        a == b or a == "*" for a, b in zip(p, path, strict=True)))  # fmt: skip
    line = next(n for n, t in enumerate(text.splitlines(), 1) if f'"{value}"' in t)
    return (
        f"conchcheck: {file}:{line}: {json_path(list(path))}: {value!r} is not one of "
        f"{places[place]!r}. {HINT}"
    )


@pytest.mark.parametrize("where", MUTATIONS)
def test_a_value_outside_an_enum_is_one_line_from_report(where: Any, tmp_path: Path) -> None:
    file, text, path = mutated(where, tmp_path / "in")
    result = CliRunner().invoke(app, ["report", str(file), "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [expected(file, text, path)]
    assert not (tmp_path / "out").exists()


def _several(tmp_path: Path) -> tuple[list[Path], str]:
    """Three results files of three targets, the middle one with a bad finish reason."""
    files_ = []
    for n, name in enumerate(("a", "b", "c")):
        data = json.loads(GOLDEN.read_text(encoding="utf-8"))
        data["target"] = f"vllm:model-{name}"
        if n == 1:
            data["cells"][_cell(data, "reach")]["reply"]["finish"] = "bogus"
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(text, encoding="utf-8")
        files_.append(tmp_path / name / "results.json")
        if n == 1:
            said = expected(files_[-1], text, ("cells", 0, "reply", "finish"))
    return files_, said


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "conchcheck", *args], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("report", "{a}", "{b}", "{c}", "--out", "{out}"), id="compatibility-report"),
        pytest.param(("report", "{a}", "--baseline", "{b}", "--out", "{out}"),
                     id="compatibility-report-baseline"),
        pytest.param(("report", "merge", "{A}", "{B}", "{C}", "--out", "{out}"),
                     id="report-merge"),
        pytest.param(("check", "{a}", "{b}", "{c}", "--expect", "{expect}"), id="check"),
        pytest.param(("check", "{a}", "--baseline", "{b}"), id="check-baseline"),
    ],
)  # fmt: skip
def test_one_bad_file_among_several_is_named_in_one_line(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    (a, b, c), said = _several(tmp_path)
    expect = tmp_path / "expect.yaml"
    expect.write_text('targets:\n  "*":\n    mode: native\n', encoding="utf-8")
    names = {"a": a, "b": b, "c": c, "A": a.parent, "B": b.parent, "C": c.parent}
    args = [part.format(out=tmp_path / "out", expect=expect, **names) for part in command]
    done = _cli(*args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said + "\n")
    assert not (tmp_path / "out").exists()


SHAPES = [
    pytest.param(_at_cell("reach", "request"), {}, (), "'method' is a required property",
                 id="request-without-method"),
    pytest.param(_at_cell("reach", "reply", "findings"), [{}], (0,),
                 "'code' is a required property", id="finding-without-code"),
    pytest.param(_at_cell("native/remember/1", "reading", "calls", 0), {"name": "x"}, (),
                 "'form' is a required property", id="read-call-without-form"),
    pytest.param(_at_cell("dialect/permissive/ref-defs", "refusal"), {"kind": "schema"}, (),
                 "'status' is a required property", id="refusal-without-status-in-version-3"),
    pytest.param(lambda d: ("verdict", "dialect", "refused", 0, "case"), "bogus", (-1,),
                 "case 'bogus' in permissive is no dialect cell of this file",
                 id="refused-case-with-no-cell"),
    pytest.param(lambda d: ("verdict", "dialect", "limits", 0, "dialect"), "strict", (-1,),
                 "case 'many-tools' in strict is no dialect cell of this file",
                 id="limit-in-a-dialect-with-no-cell"),
]  # fmt: skip
"""What the schema takes and the reader can't: where, the value, the place the line names
(relative: ``(0,)`` its first item, ``(-1,)`` the object holding it), and why."""


@pytest.mark.parametrize(("where", "value", "named", "said"), SHAPES)
def test_what_the_schema_lets_through_and_no_type_takes_is_one_line(
    where: Any, value: Any, named: tuple[int, ...], said: str, tmp_path: Path
) -> None:
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    path = where(data)
    _set(data, path, value)
    assert not list(SCHEMA_VALIDATOR.iter_errors(data))  # the schema takes it
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    file = tmp_path / "results.json"
    file.write_text(text, encoding="utf-8")
    place = list(path[:-1] if named == (-1,) else (*path, *named))
    # The line is the one every input problem names (conchcheck.files.locate, tested there).
    line = locate(text, place)
    result = CliRunner().invoke(app, ["report", str(file), "--out", str(tmp_path / "out")])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"conchcheck: {file}:{line}: {json_path(place)}: {said}. {HINT}"
    ]
