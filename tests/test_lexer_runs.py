"""Runs of brackets and quotes are read as one token each (issue 23: 1 MB of "{" after a
function opener took 2 s); the lexer still ends a value exactly where a character-by-character
reading does, whole or in chunks of any size.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.words.lexer import Lexer


def by_hand(text: str) -> int | None:
    """Where the first bracketed value of ``text`` ends, read one character at a time as JSON
    is: quotes open strings only inside brackets, a backslash escapes in a string."""
    depth, quote, escaped = 0, "", False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'" and depth:
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}" and depth:
            depth -= 1
            if not depth:
                return i + 1
    return None


@pytest.mark.parametrize(
    ("text", "end"),
    [
        pytest.param("[[[]]] x", 6, id="nested-run-closes-in-a-closing-run"),
        pytest.param("{}{} x", 2, id="first-empty-pair-is-a-whole-value"),
        pytest.param("[" + "[]" * 5000 + "] x", 10_002, id="pairs-inside-a-list"),
        pytest.param("[" + '"' * 4097 + ']"] x', 4101, id="odd-run-of-quotes-opens-a-string"),
        pytest.param("[" + '"' * 4096 + "] x", 4098, id="even-run-of-quotes-is-empty-strings"),
        pytest.param('"""[1] x', 6, id="quotes-before-brackets-are-words"),
        pytest.param("{" * 9000 + "}" * 9000 + " x", 18_000, id="runs-past-one-token"),
        pytest.param("[[[", None, id="never-closed"),
    ],
)
def test_a_run_ends_a_value_where_a_character_does(text: str, end: int | None) -> None:
    assert by_hand(text) == end
    found = Lexer((), balanced=True).find(text)
    assert (found[0] if found else None) == end


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]{}\"'\\ a", max_size=60), st.integers(1, 9))
def test_any_text_in_any_chunks_ends_where_by_hand_does(text: str, size: int) -> None:
    whole = Lexer((), balanced=True).find(text)
    assert (whole[0] if whole else None) == by_hand(text)
    lexer, found = Lexer((), balanced=True), None
    for i in range(0, len(text), size):
        found = lexer.feed(text[i : i + size])
        if found is not None:
            break
    found = found or lexer.finish()
    assert (found[0] if found else None) == by_hand(text)
