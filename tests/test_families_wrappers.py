"""Calls in wrappers no family owns, read as forgivingly as llama.cpp's Hermes 2 Pro parser and
each wrapper named as a repair (docs/research/call-formats-step3-xlam-phi4-cohere-
functiongemma-claude-react-mistral.md, section 9): a wrapper is a call only when it holds one
naming an offered tool, and words exactly as written otherwise.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from conchcheck.core.words import WordsReader, read_calls
from tests.test_families import TOOLS

Call = tuple[str, "str | None", Any, list[str], "str | None"]


def calls_of(reading: Any) -> list[Call]:
    return [
        (c.form.value, c.name, c.arguments, [r.value for r in c.repairs], c.error)
        for c in reading.calls
    ]


# (reply, text the user sees, [(form, name, arguments, repairs, error)])
CASES = [
    # A code fence that holds no call shows exactly as written, closed or not.
    pytest.param('```json\n{"a": 1}', '```json\n{"a": 1}', [], id="unclosed-json-fence-no-call"),
    pytest.param("See:\n```\nx = 1\n", "See:\n```\nx = 1\n", [], id="unclosed-bare-fence-words"),
]


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_read_in_one_piece(reply: str, text: str, calls: list[Call]) -> None:
    reading = read_calls(reply, TOOLS)
    assert (reading.text, calls_of(reading)) == (text, calls)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_streamed(reply: str, text: str, calls: list[Call], size: int) -> None:
    reader = WordsReader(TOOLS)
    shown = "".join(reader.feed(reply[i : i + size]) for i in range(0, len(reply), size))
    end = reader.close()
    assert (shown + end.text, calls_of(end)) == (text, calls)


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_wrapper_streamed_as_deltas_arrive(reply: str, text: str, calls: list[Call]) -> None:
    rng = random.Random(reply)
    for _ in range(5):
        reader, shown, i = WordsReader(TOOLS), [], 0
        while i < len(reply):
            step = rng.randint(1, 8)
            shown.append(reader.feed_bytes(reply[i : i + step].encode()))
            i += step
        end = reader.close()
        assert ("".join(shown) + end.text, calls_of(end)) == (text, calls)


# A cut reply (cut_off=True) shows what a whole one does when nothing in it is a call.
@pytest.mark.parametrize(("reply", "text", "calls"), [c for c in CASES if not c.values[2]])
def test_a_cut_reply_with_no_call_shows_the_same_words(
    reply: str, text: str, calls: list[Call]
) -> None:
    reading = read_calls(reply, TOOLS, cut_off=True)
    assert (reading.text, calls_of(reading)) == (text, calls)
