"""``ProbeSpec``: the values a probe is asked for, refused when made, each with the CLI's
exact one-line message (the option's name, what is wrong, the hint)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from conchcheck.errors import InputError
from conchcheck.probe import ProbeOptions
from conchcheck.run import ProbeSpec

REFUSED = [
    pytest.param(
        {"prompts": Path("p.yaml")},
        "--prompts: prompts files are for your own tools, and no --tools was given."
        " Add --tools SOURCE, or put the prompts in a matrix (--matrix).",
        id="prompts-without-tools",
    ),
    pytest.param(
        {"tools": ("tools.json",), "reuse_cached": True},
        "--tools and --use-cache: the capability file holds matrix verdicts, not verdicts on"
        " your tools, so there is nothing to reuse. Drop --use-cache.",
        id="own-tools-and-the-cache",
    ),
    pytest.param(
        {"tools": ("tools.json",), "matrix": "mine.yaml"},
        "--tools and --matrix: give one; --tools makes the matrix from your tools."
        " Use --prompts FILE for prompts written for your tools.",
        id="own-tools-and-a-matrix",
    ),
    pytest.param(
        {"record": Path("r.json"), "replay": Path("r.json")},
        "--record and --replay: give one, not both."
        " A replay sends nothing, so there is nothing new to record.",
        id="record-and-replay",
    ),
    pytest.param(
        {"options": ProbeOptions(deadline=0.5)},
        "--deadline: 0.5 is out of range. Give 1 to 604800.",
        id="deadline-under-a-second",
    ),
    pytest.param(
        {"options": ProbeOptions(threshold=float("nan"))},
        "--threshold: nan is not a finite number. Give 0 to 1.",
        id="threshold-nan",
    ),
    pytest.param(
        {"options": ProbeOptions(repeat=101)},
        "--repeat: 101 is out of range. Give a whole number from 1 to 100, or auto.",
        id="repeat-over-a-hundred",
    ),
    pytest.param(
        {"expected_mode": "word"},
        "--expect-mode: `word` is not a mode; did you mean `words`?"
        " The modes are native, words, none.",
        id="expected-mode-misspelt",
    ),
    pytest.param(
        {"expected_dialect": "openapi"},
        "--expect-dialect: `openapi` is not a dialect."
        " The dialects are permissive, gemini, anthropic, strict.",
        id="expected-dialect-unknown",
    ),
    # The combinations are checked before the numbers, as the options were.
    pytest.param(
        {"prompts": Path("p.yaml"), "options": ProbeOptions(repeat=0)},
        "--prompts: prompts files are for your own tools, and no --tools was given."
        " Add --tools SOURCE, or put the prompts in a matrix (--matrix).",
        id="first-problem-named",
    ),
]


@pytest.mark.parametrize(("values", "message"), REFUSED)
def test_a_spec_refuses_a_value_when_made(values: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        ProbeSpec("vllm:m", **values)
    assert f"{caught.value} {caught.value.hint}" == message


@pytest.mark.parametrize(
    ("values", "writes"),
    [
        pytest.param({}, True, id="a-matrix-probe-writes-its-entry"),
        pytest.param({"write_entry": False}, False, id="asked-not-to"),
        pytest.param({"tools": ("tools.json",)}, False, id="own-tools-never-replace-it"),
    ],
)
def test_which_probes_write_the_capability_entry(values: dict[str, Any], writes: bool) -> None:
    assert ProbeSpec("vllm:m", **values).writes_entry is writes


def test_a_spec_says_what_was_asked_and_no_more() -> None:
    spec = ProbeSpec("vllm:m")
    assert (spec.matrix, spec.out_dir, spec.capability_file, spec.reuse_cached) == (
        "default",
        None,
        None,
        False,
    )
    with pytest.raises(FrozenInstanceError):
        spec.matrix = "other"  # type: ignore[misc]
