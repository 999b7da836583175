"""Evidence is bounded: long texts keep a head, a tail, their length and sha256."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.excerpt import ITEMS_LIMIT, bounded, excerpt
from tests.emulators.model import Answer, Asked, Call
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        pytest.param("short", 10, "short", id="fits"),
        pytest.param("x" * 10, 10, "x" * 10, id="exactly-at-the-limit"),
        pytest.param(
            "a" * 150 + "b" * 150,
            120,
            "a" * 68 + " … [300 characters in all] … " + "b" * 23,
            id="a-snippet-says-its-length",
        ),
        pytest.param(
            "a" * 1500 + "b" * 1500,
            1000,
            "a" * 672
            + f" … [3,000 characters in all; sha256 {sha('a' * 1500 + 'b' * 1500)}] … "
            + "b" * 224,
            id="evidence-says-its-length-and-sha256",
        ),
    ],
)
def test_excerpt(text: str, limit: int, expected: str) -> None:
    assert excerpt(text, limit) == expected


def test_an_excerpt_fits_its_limit_and_excerpting_it_again_changes_nothing() -> None:
    text = "word " * 100_000
    once = excerpt(text)
    assert len(once) == 4000
    assert excerpt(once) == once
    assert once.startswith("word word") and once.endswith("word ")


def test_a_lone_surrogate_is_hashed_not_raised() -> None:
    assert "sha256" in excerpt("\ud800" * 5000)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"a": 1, "b": [True, None]}, {"a": 1, "b": [True, None]}, id="small-as-is"),
        pytest.param(
            {"city": "x" * 5000},
            {"city": excerpt("x" * 5000)},
            id="a-long-string-inside-is-excerpted",
        ),
        pytest.param(
            list(range(ITEMS_LIMIT + 5)),
            [*range(ITEMS_LIMIT), "… [5 more items left out]"],
            id="a-long-list-keeps-its-first-items",
        ),
        pytest.param(
            {str(i): i for i in range(ITEMS_LIMIT + 1)},
            {**{str(i): i for i in range(ITEMS_LIMIT)}, "…": "… [1 more items left out]"},
            id="a-wide-object-keeps-its-first-keys",
        ),
        pytest.param("y" * 5000, excerpt("y" * 5000), id="a-bare-string"),
    ],
)
def test_bounded(value: Any, expected: Any) -> None:
    assert bounded(value) == expected


def test_a_wide_value_of_many_long_strings_is_cut_as_a_whole() -> None:
    value = ["z" * 3000] * 100
    text = json.dumps(bounded(value))
    assert len(text) < 80_000
    assert "more items left out" in text


def test_a_deep_value_is_bounded_without_recursion() -> None:
    value: Any = "leaf"
    for _ in range(50_000):
        value = [value]
    assert bounded(value) is not None


def test_a_900kb_argument_leaves_small_reports_with_its_sha256(
    serve: Serve, tmp_path: Path
) -> None:
    # Under the wire's argument cap (1 MB, Policy.max_arguments): a reply, read and judged.
    huge, sent = "A" * 900_000, []

    def behave(asked: Asked) -> Answer:
        if not asked.tools:
            return Answer(text="No tools.")
        tool = asked.tools[0]
        field = next(iter((tool.get("parameters") or {}).get("properties") or {"x": {}}))
        arguments = json.dumps({field: huge})
        sent.append(arguments)
        return Answer(calls=[Call(tool["name"], arguments)], finish="tool_calls")

    server = serve(OpenAIEmulator(behave))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(out), "--quiet",
         "--cache", str(tmp_path / "cache.yaml")],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    sizes = {p.name: p.stat().st_size for p in out.iterdir()}
    results = (out / "results.json").read_text()
    # Bounded by cell: every cell's evidence is cut, whatever the reply's size (the four
    # reports of a cell holding a 900 KB argument take under 80 KB together).
    cells = len(json.loads(results)["cells"])
    assert sum(sizes.values()) < 80_000 * cells, (sizes, cells)
    assert huge[:10_000] not in results
    # The native cells keep the provider's argument text as an excerpt naming the whole.
    assert f"[{len(sent[0]):,} characters in all; sha256 {sha(sent[0])}]" in results
