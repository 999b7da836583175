"""Real exchanges captured from llama.cpp with small models (tests/data/live/README.md), read offline.

The reader, the classifier and the verdict must give today what they gave on the real run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conchcheck.core.leaks import family_of
from conchcheck.core.matching import judge
from conchcheck.core.refusals import classify
from conchcheck.core.words import read_calls
from conchcheck.matrix import load_matrix
from conchcheck.probe.judging import read_native
from conchcheck.results import Cell, NativeFacts, Outcome, ProbeResult, Stage
from conchcheck.results.reader import read_results
from conchcheck.verdict import decide
from conchcheck.wire.chat import Finish, Reply

DATA = Path(__file__).parent / "data" / "live"
MATRIX = load_matrix("default")
INVALID = [c.id for c in MATRIX.schema_cases if not c.valid]


def run(name: str) -> ProbeResult:
    return read_results(DATA / f"{name}.results.json")


@pytest.mark.parametrize("name", ["smollm2-own", "smollm2-hermes", "gemma3", "qwen-coder"])
def test_the_verdict_follows_from_the_cells(name: str) -> None:
    result = run(name)
    recorded, catalogue = result.verdict, result.catalogue
    assert recorded is not None and catalogue is not None
    verdict = decide(
        result.cells, family="permissive", invalid_cases=INVALID, tools_declared=catalogue.tools
    )
    assert verdict.mode == recorded.mode
    assert verdict.dialect.dialect == recorded.dialect.dialect
    assert verdict.refused_keywords == recorded.refused_keywords
    assert [(leak.family, list(leak.cells)) for leak in verdict.leaks] == [
        (leak.family, sorted(leak.cells)) for leak in recorded.leaks
    ]


@pytest.mark.parametrize("name", ["smollm2-hermes"])
def test_refusals_classify_as_recorded(name: str) -> None:
    cells = run(name).cells
    refused = [c for c in cells if c.outcome is Outcome.REFUSED]
    assert {(c.case, c.dialect, c.refusal_kind) for c in refused} == {
        ("type-list-null", "permissive", "schema"),
        ("dangling-ref", "permissive", "schema"),
        ("unknown-type", "permissive", "schema"),
        ("many-tools", "permissive", "context_length"),
        ("many-tools", "strict", "context_length"),
    }
    for cell in refused:
        assert cell.reply is not None and cell.refusal is not None
        assert cell.reply.status is not None
        again = classify(cell.reply.status, cell.reply.body)
        assert (again.kind, again.message) == (cell.refusal.kind, cell.refusal.message)


def test_two_native_calls_where_one_was_wanted() -> None:
    cells = run("smollm2-hermes").cells
    (cell,) = [c for c in cells if c.id == "native/nested-object/1"]
    assert cell.reply is not None
    assert cell.reply.text is not None and cell.reply.finish is not None
    reply = Reply(cell.reply.text, cell.reply.calls, cell.reply.finish)
    (prompt,) = [p for p in MATRIX.prompts if p.id == "nested-object"]
    tools = [MATRIX.tools[t] for t in prompt.tools]
    read = read_native(reply, tools, "strict")
    good = [(c.name, r.arguments) for c, r in read if r is not None and r.ok]
    judgement, _ = judge(good, prompt.expect)
    assert [c.name for c, _ in read] == ["save_contact", "save_contact"]
    assert judgement.value == cell.outcome.value == "wrong_tool"


@pytest.mark.parametrize("name", ["smollm2-own", "smollm2-hermes", "gemma3", "qwen-coder"])
def test_words_replies_read_as_recorded(name: str) -> None:
    cells = run(name).cells
    words = [
        c for c in cells if c.stage is Stage.WORDS and c.reply is not None and c.reading is not None
    ]
    assert words
    for cell in words:
        (prompt,) = [p for p in MATRIX.prompts if p.id == cell.case]
        tools = [MATRIX.tools[t] for t in prompt.tools]
        assert cell.reply is not None and cell.reply.text is not None and cell.reading
        cut = cell.reply.finish is Finish.LENGTH
        reading = read_calls(cell.reply.text, tools, cut_off=cut)
        recorded = cell.reading.text
        if recorded.endswith("```") and not cell.reply.text.endswith("```"):
            # Recorded when a code fence left open at the reply's end was shown closed, with
            # three backticks the model never wrote; it is shown as written now.
            recorded = recorded[:-3]
        assert reading.text == recorded
        assert [(c.form.value, c.name) for c in reading.calls] == [
            (c.form, c.name) for c in cell.reading.calls
        ]


def test_tools_never_reach_a_template_without_them() -> None:
    result = run("smollm2-own")
    cells = result.cells
    assert result.catalogue is not None and result.catalogue.tools is False
    assert all(_native_calls(c) == 0 for c in cells if c.stage is Stage.NATIVE)
    assert all(c.outcome is Outcome.ACCEPTED for c in cells if c.stage is Stage.DIALECT)


def test_calls_left_in_the_text_read_as_recorded() -> None:
    """Qwen2.5-Coder on llama-server writes its calls as bare or fenced JSON in the content of
    native replies (provider-facts): read again, each is the same call, of no family."""
    result = run("qwen-coder")
    cells, verdict = result.cells, result.verdict
    assert verdict is not None
    leaked = [c for c in cells if c.stage is Stage.NATIVE and c.outcome is Outcome.LEAKED]
    assert len(leaked) == 10
    assert [leak.family for leak in verdict.leaks] == ["plain_json"]
    for cell in leaked:
        (prompt,) = [p for p in MATRIX.prompts if p.id == cell.case]
        tools = [MATRIX.tools[t] for t in prompt.tools]
        assert cell.reply is not None and cell.reply.text is not None and cell.reading
        assert _native_calls(cell) == 0
        reading = read_calls(cell.reply.text, tools, cut_off=cell.reply.finish is Finish.LENGTH)
        assert [(c.form.value, c.name, c.arguments) for c in reading.calls] == [
            (c.form, c.name, c.arguments) for c in cell.reading.calls
        ]
        assert {family_of(c).value for c in reading.calls} == {"plain_json"}


def _native_calls(cell: Cell) -> int | None:
    return cell.facts.native_calls if isinstance(cell.facts, NativeFacts) else None
