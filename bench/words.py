"""Benchmark the words reader: linear in its input, and about as fast streamed as whole.

Run: .venv/bin/python bench/words.py [--quick]

Prints two tables (issue 9, section 2), each row's ratio against a baseline measured in the
same run and the bound it must stay within:
- linearity: 1 MB of one repeated opener (hostile input) read in at most 12x the time of
  100 KB of the same (a linear reader takes about 10x);
- streaming: the same reply fed as deltas arrive (1-8 characters, random) within 1.5x of one
  piece, and one character at a time within 4x. Each run's deltas are new strings, as a
  stream's are; one row forgets the deltas readers remember first, as a process's first
  reply does; a last row, with no bound, reads a reply whose deltas hardly repeat.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator

from timing import best_of_each

from conchcheck.core.words import WordsReader, read_calls
from conchcheck.core.words.markers import SAFE, SHOWN

QUICK = "--quick" in sys.argv
TOOLS = [
    {
        "name": "remember",
        "parameters": {"type": "object", "properties": {"fact": {"type": "string"}}},
    }
]
OPENERS = [
    "<tool_call>", "```", "[TOOL_CALLS]", "<function=", "<|python_tag|>", '<tool_call>{"a": "',
    "<｜tool▁calls▁begin｜>", "<｜DSML｜function_calls>", "<|tool_calls_section_begin|>",
    "<|channel|>", "<|tool_call>", "<think>", "<parameter=x>", "</think>",
    "<|tool_call_start|>", "<|tool_call|>[", "<tool_calls>", "functools[", "<|START_ACTION|>",
    "<start_function_call>call:f{a:<escape>", "[TOOL_CALLS]f{",
    # issue 22's families written in tags, and their inner tags repeated inside one block
    "<minimax:tool_call>", '<function_calls><invoke name="x"><parameter name="a">',
    "<seed:tool_call><function=x><parameter=a>", "<｜tool_calls_begin｜>",
    '<｜tool_calls_begin｜><steptml:invoke name="x">', "<tool_calls><tool_call>x<tool_sep>",
    # closers with no opener, each dropped (and counted) where it stands
    "</tool_call>", "x<|eot_id|>",
    # pythonic lists after words (read, or words again), and calls that end reasoning
    "a [remember(fact=1)] ", "a [f(", "<think><tool_call>remember<arg_key>",
    "<think><|tool_calls_section_begin|><|tool_call_begin|>",
    "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"x\">]<]minimax[>[<a>", "x]",
    # llama.cpp's lenient wrappers: a tag in prose, one opened on a "{" and never closed
    "<tool>", "<json>{", '<function name="x">{', "```xml\n<tool>{",
    # a call's JSON after words: never closed (an object, a list), many that are no call, code
    'x {"name"', 'x [{"name": 1}', 'x {"name": "x"} ', "x {\n  ",
]  # fmt: skip


FILLED = [
    ("<function=remember>", "{"), ("<function=remember>", "{}"), ("<tool_call>", "["),
    ("<|python_tag|>", "{}"), ("<|tool_call|>[", '"'), ("functools[", '"a",'),
    ("<function=remember>", '["a",'), ("[TOOL_CALLS]", '{"a":'),
]  # fmt: skip
"""(opener, fill): the opener once, then the fill to the size."""


def repeated(opener: str, size: int) -> str:
    return opener * (size // len(opener))


def reply(size: int) -> str:
    """Prose with markup and a Hermes call every ~1 KB: the reader's everyday work."""
    block = '<tool_call>{"name": "remember", "arguments": {"fact": "a cat"}}</tool_call>'
    prose = (
        "The weather is fine today, and here is a long answer with some `code` and <b>tags</b>. "
    )
    unit = prose * 12 + block + "\n"
    return unit * (size // len(unit))


def unrepeated(size: int, seed: int = 5) -> str:
    """``reply``'s shape, but its words made of random letters: its deltas hardly repeat,
    which a model's tokens do. The worst case for the deltas the reader remembers."""
    rng, parts, length = random.Random(seed), [], 0
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789"

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))

    block = '<tool_call>{"name": "remember", "arguments": {"fact": "a cat"}}</tool_call>\n'
    while length < size:
        sentence = " ".join(word() for _ in range(12))
        parts.append(f"{sentence} `{word()}` and <b>{word()}</b>. ")
        parts += [block] if len(parts) % 13 == 12 else []
        length += len(parts[-1])
    return "".join(parts)


def deltas(text: str, seed: int = 1) -> list[str]:
    """``text`` cut as a stream's deltas arrive: 1 to 8 characters each."""
    rng, out, i = random.Random(seed), [], 0
    while i < len(text):
        step = rng.randint(1, 8)
        out.append(text[i : i + step])
        i += step
    return out


def fresh(pieces: list[str], copies: int) -> Iterator[list[str]]:
    """``copies`` lists of the same deltas as new strings, one for each run. A stream's deltas
    are new strings whose hash nobody has worked out yet; the reader's tables hash each one,
    and the same strings in every run would have their hash kept from the first."""
    return iter([[piece.encode().decode() for piece in pieces] for _ in range(copies)])


def streamed(pieces: list[str], *, forget: bool = False) -> None:
    """Feed ``pieces`` to a new reader; ``forget``: with the deltas readers remember (shared
    by every reader in a process) forgotten first, as for a process's first reply."""
    if forget:
        SAFE.clear()
        SHOWN.clear()
    reader = WordsReader(TOOLS)
    for piece in pieces:
        reader.feed(piece)
    reader.close()


def main() -> None:
    small, large = (20_000, 200_000) if QUICK else (100_000, 1_000_000)
    print(f"{'linearity: repeated opener':<36} {'100 KB':>9} {'1 MB':>9} {'ratio':>7} {'bound':>6}")
    worst = 0.0
    for opener in OPENERS:
        a, b = repeated(opener, small), repeated(opener, large)
        ta, tb = best_of_each(
            [lambda a=a: read_calls(a, TOOLS), lambda b=b: read_calls(b, TOOLS)], repeat=3
        )
        worst = max(worst, tb / ta)
        print(f"{opener!r:<36} {ta * 1e3:>7.1f}ms {tb * 1e3:>7.0f}ms {tb / ta:>6.1f}x {12:>5}x")
    print(f"{'worst':<36} {'':>9} {'':>9} {worst:>6.1f}x {12:>5}x\n")

    # One opener and then a megabyte of one character (issue 23: 1 MB of "{" after a function
    # opener took 2.4 s): a run of brackets or quotes is one token. The last column is the
    # time against the same size of plain prose, read in the same run.
    print(f"{'one opener, then one fill':<36} {'100 KB':>9} {'1 MB':>9} {'ratio':>7} {'bound':>6}"
          f" {'vs prose':>9}")  # fmt: skip
    prose = "The weather is fine today. " * (large // 27)
    for head, fill in FILLED:
        a, b = head + fill * (small // len(fill)), head + fill * (large // len(fill))
        ta, tb, tp = best_of_each(
            [lambda a=a: read_calls(a, TOOLS), lambda b=b: read_calls(b, TOOLS),
             lambda: read_calls(prose, TOOLS)], repeat=3,
        )  # fmt: skip
        worst = max(worst, tb / ta)
        print(f"{head + ' ' + fill!r:<36} {ta * 1e3:>7.1f}ms {tb * 1e3:>7.0f}ms {tb / ta:>6.1f}x "
              f"{12:>5}x {tb / tp:>8.0f}x")  # fmt: skip
    print()

    text = reply(100_000)
    # Each run takes a few ms: the best of many, taken in turns, so a scheduler's hiccup or a
    # slow stretch doesn't decide a ratio.
    runs = 10 if QUICK else 40
    pieces, chars = deltas(text), list(text)
    assert read_calls(text, TOOLS).calls == read_calls(text, TOOLS).calls
    delta_runs, cold_runs, floor_runs = (fresh(pieces, runs) for _ in range(3))
    whole, by_delta, cold, by_char, floor_delta, floor_char = best_of_each(
        [
            lambda: read_calls(text, TOOLS),
            lambda: streamed(next(delta_runs)),
            lambda: streamed(next(cold_runs), forget=True),
            lambda: streamed(chars),  # one character is one string however it is made
            lambda: _untouched(next(floor_runs)),
            lambda: _untouched(chars),
        ],
        repeat=runs,
    )
    # Measured apart: a stream of other deltas would push this reply's out of what readers
    # remember, which one process reading one model's replies doesn't do.
    odd = unrepeated(100_000)
    odd_pieces = deltas(odd)
    odd_runs = fresh(odd_pieces, runs)
    odd_whole, odd_delta = best_of_each(
        [lambda: read_calls(odd, TOOLS), lambda: streamed(next(odd_runs))], repeat=runs
    )
    rows = [
        ("one piece", whole, 1.0),
        (f"deltas of 1-8 chars ({len(pieces)} feeds)", by_delta, 1.5),
        ("  the same, a process's first reply", cold, 1.5),
        (f"one char at a time ({len(chars)} feeds)", by_char, 4.0),
    ]
    print(f"{'streaming: 100 KB reply':<36} {'time':>9} {'ratio':>7} {'bound':>6}")
    for name, seconds, bound in rows:
        print(f"{name:<36} {seconds * 1e3:>7.1f}ms {seconds / whole:>6.2f}x {bound:>5}x")
    # No bound: a model's deltas are tokens, and tokens repeat. This shows what it costs when
    # they don't (most deltas new to what the readers remember), against that reply's own
    # one piece.
    name = f"deltas, {len(set(odd_pieces))} of {len(odd_pieces)} distinct"
    print(f"{name:<36} {odd_delta * 1e3:>7.1f}ms {odd_delta / odd_whole:>6.2f}x {'-':>6}")
    # The floor no reader written in Python goes under: one piece, plus a Python call per
    # delta to a reader that hands every delta back untouched.
    print(f"{'floor: one piece + a call per delta':<36}")
    for name, loop in (("deltas", floor_delta), ("chars", floor_char)):
        print(f"  {name:<34} {(whole + loop) * 1e3:>7.1f}ms {(whole + loop) / whole:>6.2f}x")


class _Untouched:
    def feed(self, chunk: str) -> str:
        return chunk


def _untouched(pieces: list[str]) -> None:
    reader = _Untouched()
    for piece in pieces:
        reader.feed(piece)


if __name__ == "__main__":
    main()
