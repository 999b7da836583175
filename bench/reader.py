"""Benchmark the readers: throughput against json.loads measured in the same run.

Run: .venv/bin/python bench/reader.py [--quick]

Prints one table. "ratio" is this row's time over its baseline's time (lower is better);
the baseline of each row is named in its "vs" column and measured in the same run.
"""

from __future__ import annotations

import json
import sys

from timing import best

from conchcheck.core.arguments import read_arguments
from conchcheck.core.repair import read_json
from conchcheck.core.words import WordsReader, read_calls

QUICK = "--quick" in sys.argv


def payload(size: int) -> dict[str, object]:
    """A tool-call-like object of about ``size`` bytes of JSON."""
    row = {"id": 12345, "name": "Zürich office", "tags": ["a", "b", "c"], "ok": True, "score": 0.75}
    count = max(1, size // len(json.dumps(row)))
    return {"query": "invoices", "rows": [dict(row, id=i) for i in range(count)]}


def broken(text: str) -> str:
    """The same JSON as a small model might write it: single quotes, Python literals, trailing commas."""
    return text.replace('"', "'").replace("true", "True").replace("]", ",]").replace("}", ",}")


ROWS: list[tuple[str, str, float, float, int]] = []


def row(name: str, vs: str, seconds: float, baseline: float, size: int) -> None:
    ROWS.append((name, vs, seconds, baseline, size))


def main() -> None:
    sizes = [10_000, 100_000] if QUICK else [10_000, 100_000, 1_000_000]
    for size in sizes:
        value = payload(size)
        valid = json.dumps(value)
        mended = broken(valid)
        assert read_json(mended).value == value
        base = best(lambda: json.loads(valid))
        row(
            f"read_json valid {len(valid) // 1000} KB",
            "json.loads",
            best(lambda: read_json(valid)),
            base,
            len(valid),
        )
        row(
            f"read_json broken {len(mended) // 1000} KB",
            "json.loads",
            best(lambda: read_json(mended)),
            base,
            len(mended),
        )
        cut = mended[: len(mended) // 2]
        row(
            f"read_json cut in half {len(cut) // 1000} KB",
            "json.loads",
            best(lambda: read_json(cut)),
            base,
            len(cut),
        )

    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "order": {"enum": ["newest", "oldest"]},
        },
        "required": ["query"],
    }
    small = '{"query": "invoice", "limit": 5}'
    sloppy = "{'query': 'invoice', 'limit': '5', 'order': 'Newest', 'colour': 'red',}"
    base = best(lambda: [json.loads(small) for _ in range(1000)])
    row(
        "read_arguments valid x1000",
        "json.loads x1000",
        best(lambda: [read_arguments(small, schema) for _ in range(1000)]),
        base,
        len(small),
    )
    row(
        "read_arguments sloppy x1000",
        "json.loads x1000",
        best(lambda: [read_arguments(sloppy, schema) for _ in range(1000)]),
        base,
        len(sloppy),
    )

    tools = [
        {
            "name": "remember",
            "parameters": {"type": "object", "properties": {"fact": {"type": "string"}}},
        }
    ]
    block = '<tool_call>{"name": "remember", "arguments": {"fact": "a cat"}}</tool_call>'
    prose = (
        "The weather is fine today, and here is a long answer with some `code` and <b>tags</b>. "
    )
    reply = (prose * 12 + block + "\n") * (100_000 // (len(prose) * 12 + len(block) + 1))
    whole = best(lambda: read_calls(reply, tools), repeat=3)

    def by_character() -> None:
        reader = WordsReader(tools)
        for char in reply:
            reader.feed(char)
        reader.close()

    row(f"WordsReader {len(reply) // 1000} KB one piece", "itself", whole, whole, len(reply))
    row(
        f"WordsReader {len(reply) // 1000} KB char by char",
        "one piece",
        best(by_character, repeat=3),
        whole,
        len(reply),
    )
    assert read_calls(reply, tools).calls == read_calls(reply, tools).calls

    print(f"{'case':<36} {'vs':<18} {'time':>10} {'MB/s':>8} {'ratio':>7}")
    for name, vs, seconds, baseline, size in ROWS:
        rate = size / seconds / 1e6 if "x1000" not in name else size * 1000 / seconds / 1e6
        print(
            f"{name:<36} {vs:<18} {seconds * 1e3:>8.2f}ms {rate:>8.1f} {seconds / baseline:>6.1f}x"
        )


if __name__ == "__main__":
    main()
