"""Benchmark the words reader against a peer: the same replies read by conchcheck and by
agent-tool-parser 0.1.3 (a parser with a compiled Rust core, on PyPI), in one process.

Run: .venv/bin/python bench/peers.py [--quick]

The peer is never a dependency of conchcheck: the bench installs it into a virtualenv of its
own (.bench/agent-tool-parser-0.1.3, made on first run from PyPI) and puts that virtualenv's
site-packages at the end of this process's path, so both readers run in one interpreter and
take turns (timing.best_of_each). conchcheck does more per reply than the peer: it also
normalises each call against the tool's schema and checks it (DESIGN rule 6). A row compares
times only where both read the same calls (names and arguments); elsewhere it says which
one read what (the peer misreads some of these: a name with its bracket, a number left as
text, an argument's value taken for the name), and there is no ratio. No bound: the table is for knowing where the time goes.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

from timing import best_of_each

from conchcheck.core.words import read_calls

QUICK = "--quick" in sys.argv
PEER = "agent-tool-parser"
VERSION = "0.1.3"
ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / ".bench" / f"{PEER}-{VERSION}"

TOOLS = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
]
CITY = "Paris"
# One call of each family, in the markers its chat template writes (docs/research/call-formats-*.md).
REPLIES = {
    "hermes": 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    "llama3-python-tag": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
    "pythonic": '[get_weather(city="Paris", days=3)]',
    "mistral": '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
    "json-fence": '```json\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n```',
    "deepseek-dsml": (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    ),
    "deepseek-v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "qwen3-coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
    "kimi-k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris", "days": 3}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    ),
    "claude-invoke-xml": (
        '<function_calls><invoke name="get_weather"><parameter name="city">Paris</parameter>'
        '<parameter name="days">3</parameter></invoke></function_calls>'
    ),
    "minimax-m2": (
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris'
        '</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>'
    ),
    "mistral-compact": '[TOOL_CALLS]get_weather{"city": "Paris", "days": 3}',
    "react": 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris", "days": 3}',
}  # fmt: skip
LONG = "Paris " * 2000
"""A 12 KB argument, where a reader's cost per character shows."""


def peer() -> Any:
    """The peer's module, from its own virtualenv (made on first run)."""
    python = HOME / "bin" / "python"
    if not python.exists():
        venv.create(HOME, with_pip=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"{PEER}=={VERSION}"], check=True
        )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    sys.path.append(site)
    import agent_tool_parser  # type: ignore[import-not-found]

    assert agent_tool_parser.__version__ == VERSION, agent_tool_parser.__version__
    assert agent_tool_parser.ACCELERATED, "the peer's Rust core did not load"
    return agent_tool_parser


def ours(text: str) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in read_calls(text, TOOLS).calls]


def short(calls: list[tuple[str, object]]) -> str:
    """The calls as a row can show them: at most 60 characters."""
    text = repr(calls)
    return text if len(text) <= 60 else text[:59] + "…"


def main() -> None:
    parser = peer()

    def theirs(text: str) -> list[tuple[str, object]]:
        return [(c.name, c.args) for c in parser.try_parse_tool_calls(text)]

    replies = dict(REPLIES)
    replies["hermes, 12 KB argument"] = REPLIES["hermes"].replace(CITY, LONG)
    replies["pythonic, 12 KB argument"] = REPLIES["pythonic"].replace(CITY, LONG)
    loops = 20 if QUICK else 200
    widths = [26, 7, 14, 10, 6, 0]
    header = ["family", "bytes", "conchcheck µs", "peer µs", "ratio", "read"]
    print("  ".join(h.rjust(w) if w else h for h, w in zip(header, widths, strict=True)))
    for family, text in replies.items():
        mine, their = ours(text), theirs(text)
        times = best_of_each(
            [lambda t=text: [ours(t) for _ in range(loops)],
             lambda t=text: [theirs(t) for _ in range(loops)]],
            repeat=3 if QUICK else 7,
        )  # fmt: skip
        mine_us, their_us = (1e6 * t / loops for t in times)
        same = mine == their
        ratio = f"{mine_us / their_us:.1f}" if same else "—"
        said = (
            "both, the same calls"
            if same
            else f"differ: conchcheck {short(mine)}, peer {short(their)}"
        )
        cells = [family, str(len(text.encode())), f"{mine_us:.1f}", f"{their_us:.1f}", ratio]
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=False)) + "  " + said)


if __name__ == "__main__":
    main()
