"""A dialect cell's trial reads back as the enum it was: a Dialect, or a schema as written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.core.trials import PERMISSIVENESS, AsWritten, rank
from conchcheck.report import ReportFormat, render
from conchcheck.results import RunInfo, Stage
from conchcheck.results.reader import read_results
from tests.report.conftest import build_result

INFO = RunInfo("0.1.0", "2026-03-01T09:00:00Z", "2026-03-01T09:01:13Z", "conchcheck probe x")


@pytest.mark.parametrize(
    "trial",
    [Dialect.PERMISSIVE, Dialect.GEMINI, AsWritten.STRICT_MODE, AsWritten.JSON_SCHEMA],
    ids=["permissive", "gemini", "responses-strict-mode", "gemini-json-schema"],
)
def test_a_trial_reads_back_as_its_enum(trial, tmp_path: Path):
    result = build_result()
    cells = list(result.cells)
    first = next(i for i, c in enumerate(cells) if c.stage is Stage.DIALECT)
    cells[first] = dataclasses.replace(cells[first], dialect=trial)
    path = tmp_path / "results.json"
    path.write_text(
        render(dataclasses.replace(result, cells=tuple(cells)), ReportFormat.JSON, INFO),
        encoding="utf-8",
    )
    read = read_results(path).cells[first].dialect
    assert (type(read), read) == (type(trial), trial)


@pytest.mark.parametrize(
    ("trial", "expected"),
    [
        (Dialect.PERMISSIVE, 0),
        (Dialect.ANTHROPIC, 1),
        (Dialect.GEMINI, 2),
        (Dialect.STRICT, 3),
        (AsWritten.STRICT_MODE, 4),
        (AsWritten.JSON_SCHEMA, 4),
    ],
    ids=lambda v: str(v),
)
def test_trials_sort_most_permissive_first_then_as_written(trial, expected):
    assert rank(trial) == expected
    assert len(PERMISSIVENESS) == 4
