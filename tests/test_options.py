"""What the verdict advises: every route an app can take, with what the probe measured, best
first; strict mode called ignored where it took what it must refuse; escaped call openers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck import read_results
from conchcheck.cli import app
from conchcheck.core.leaks import Family, Server, server_fix
from conchcheck.core.strictness import strict_breaks
from conchcheck.core.trials import AsWritten
from conchcheck.results import (
    Cell,
    CellMode,
    LeakFacts,
    NativeFacts,
    Option,
    Outcome,
    ReplyEvidence,
    Route,
    Stage,
)
from conchcheck.verdict import decide
from conchcheck.wire.adapter import marker_findings
from conchcheck.wire.chat import Finding
from tests.emulators.model import Answer, Asked
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]

FIX = server_fix(Family.PLAIN_JSON, Server.LLAMACPP)
FROM_TEXT = (
    "Pass the tools natively and, when a reply has no calls, read them from its text as a "
    "tolerant client does (conchcheck.read_calls)."
)
WORDS = (
    "List the tools in the system prompt and read the calls from the reply text "
    "(conchcheck.render_tools, conchcheck.read_calls)."
)
AS_IS = "Pass the tools natively as is."


def native(n: int, outcome: Outcome, read_passes: bool | None = None) -> Cell:
    leak = LeakFacts("plain_json", 1, FIX, read_passes) if read_passes is not None else None
    return Cell(f"native/p{n}/1", Stage.NATIVE, f"p{n}", outcome, mode=CellMode.NATIVE,
                facts=NativeFacts(0 if leak else 1, leak is not None, leak))  # fmt: skip


def words(n: int, outcome: Outcome) -> Cell:
    return Cell(f"words/p{n}/1", Stage.WORDS, f"p{n}", outcome, mode=CellMode.WORDS)


P, L, N = Outcome.PASS, Outcome.LEAKED, Outcome.NO_CALL

OPTIONS = [
    pytest.param(
        # Qwen2.5-Coder-0.5B on llama-server (docs/example/report.md): native 1/11, the rest
        # leaked as bare JSON that mostly reads as the right call; words 6/11.
        [native(1, P), *(native(i, L, i < 9) for i in range(2, 12)),
         *(words(i, P if i <= 6 else N) for i in range(1, 12))],
        [Option(Route.NATIVE_AFTER_FIX, 8, 11, FIX, bound=True),
         Option(Route.FROM_TEXT, 8, 11, FROM_TEXT),
         Option(Route.WORDS, 6, 11, WORDS),
         Option(Route.NATIVE, 1, 11, AS_IS)],
        " Best measured: native after a server fix, up to 8/11 (73%).",
        id="words-verdict-hides-calls-a-template-fix-would-return",
    ),
    pytest.param(
        [native(1, P), native(2, P), words(1, P), words(2, N)],
        [Option(Route.NATIVE, 2, 2, AS_IS), Option(Route.WORDS, 1, 2, WORDS)],
        " Best measured: native as is, 2/2 (100%).",
        id="native-works-as-is",
    ),
    pytest.param(
        [native(1, P), native(2, N), words(1, P), words(2, N)],
        [Option(Route.NATIVE, 1, 2, AS_IS), Option(Route.WORDS, 1, 2, WORDS)],
        " Best measured: native as is, 1/2 (50%).",
        id="a-tie-goes-to-the-simpler-route",
    ),
    pytest.param(
        [native(1, L, False), native(2, N), words(1, P), words(2, P)],
        [Option(Route.WORDS, 2, 2, WORDS),
         Option(Route.NATIVE, 0, 2, AS_IS),
         Option(Route.NATIVE_AFTER_FIX, 0, 2, FIX, bound=True),
         Option(Route.FROM_TEXT, 0, 2, FROM_TEXT)],
        " Best measured: tools in words, 2/2 (100%).",
        id="leaked-calls-that-read-wrong-help-no-one",
    ),
    pytest.param([], [], "", id="nothing-measured-no-advice"),
]  # fmt: skip


@pytest.mark.parametrize(("cells", "options", "ending"), OPTIONS)
def test_options_best_first(cells: list[Cell], options: list[Option], ending: str) -> None:
    verdict = decide(cells, family="permissive")
    assert list(verdict.options) == options
    assert verdict.reason.endswith(ending) if ending else "Best measured" not in verdict.reason


def strict_cell(case: str, outcome: Outcome) -> Cell:
    return Cell(f"dialect/strict_mode/{case}", Stage.DIALECT, case, outcome,
                dialect=AsWritten.STRICT_MODE)  # fmt: skip


STRICT = [
    pytest.param(
        # llama-server's /v1/responses never reads strict (provider-facts 2026-12-04): it takes
        # the open schemas OpenAI's strict mode refuses (S24, S25).
        [strict_cell("baseline", Outcome.ACCEPTED), strict_cell("closed", Outcome.ACCEPTED)],
        ["baseline"],
        "Strict mode (strict: true) is ignored: the endpoint took 1 schema case that strict "
        "mode must refuse (baseline: an open object or an optional property), so its calls are "
        "not held to the schema.",
        id="llama-server-takes-what-strict-mode-must-refuse",
    ),
    pytest.param(
        [strict_cell("closed", Outcome.ACCEPTED)],
        [],
        "Strict mode (strict: true) took all 1 schema cases it was asked about.",
        id="only-strict-clean-cases-taken",
    ),
    pytest.param(
        [strict_cell("baseline", Outcome.REFUSED), strict_cell("closed", Outcome.ACCEPTED)],
        ["baseline"],
        "Strict mode (strict: true) refused 1 of 2 schema cases (baseline); the probe's other "
        "requests send strict: false.",
        id="openai-refuses-an-open-schema",
    ),
]


@pytest.mark.parametrize(("cells", "breakers", "finding"), STRICT)
def test_strict_mode_finding(cells: list[Cell], breakers: list[str], finding: str) -> None:
    verdict = decide(cells, family="permissive", strict_breakers=breakers)
    assert [f for f in verdict.findings if f.startswith("Strict mode")] == [finding]


BREAKS = [
    pytest.param({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
                  "additionalProperties": False}, (), id="closed-and-all-required"),
    pytest.param({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                 ("#: additionalProperties is not false",), id="open-object-s24"),
    pytest.param({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"],
                  "additionalProperties": False}, ("#: not required: b",), id="optional-field-s25"),
    pytest.param({"type": "object", "additionalProperties": False, "required": ["x"],
                  "properties": {"x": {"type": "array", "items": {"type": "object",
                                 "properties": {"y": {}}}}}},
                 ("#/properties/x/items: additionalProperties is not false",
                  "#/properties/x/items: not required: y"), id="nested-in-items"),
    pytest.param({"$defs": {"n": {"type": "object"}}, "anyOf": [{"$ref": "#/$defs/n"}]},
                 ("#/$defs/n: additionalProperties is not false",), id="in-defs"),
    pytest.param({"type": "string"}, (), id="not-an-object"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "breaks"), BREAKS)
def test_strict_breaks(schema: dict[str, object], breaks: tuple[str, ...]) -> None:
    assert strict_breaks(schema) == breaks  # type: ignore[arg-type]


def test_strict_breaks_is_bounded_in_depth() -> None:
    deep: dict[str, object] = {"type": "string"}
    for _ in range(200):
        deep = {"items": deep}
    assert strict_breaks(deep) == ("#" + "/items" * 64 + ": deeper than 64 levels",)  # type: ignore[arg-type]


ESCAPED = [
    # llama-cpp-python 0.3.36, chatml-function-calling: the model answers in the escaped form
    # its prompt was rendered in (provider-facts, real servers measured by hand 2026-12-04).
    pytest.param('&lt;tool_call&gt;\n{"name": "remember", "arguments": {}}\n&lt;/tool_call&gt;',
                 [Finding("html_escaped_call_markers", "the text holds &lt;tool_call&gt;: the "
                          "prompt was rendered HTML-escaped")], id="llama-cpp-python-escaped"),
    pytest.param('<tool_call>{"name": "f"}</tool_call>',
                 [Finding("call_markers_in_text", "the text holds <tool_call>")], id="plain"),
    pytest.param("I use &lt;b&gt; for bold.", [], id="other-escapes-are-not-calls"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "findings"), ESCAPED)
def test_escaped_call_openers(text: str, findings: list[Finding]) -> None:
    assert list(marker_findings(text)) == findings


def test_escaped_openers_are_a_verdict_finding() -> None:
    found = (Finding("html_escaped_call_markers", "…"),)
    cells = [
        Cell("words/p1/1", Stage.WORDS, "p1", N, mode=CellMode.WORDS,
             reply=ReplyEvidence(200, findings=found)),
        Cell("words/p2/1", Stage.WORDS, "p2", N, mode=CellMode.WORDS,
             reply=ReplyEvidence(200, findings=found)),
    ]  # fmt: skip
    (finding,) = [f for f in decide(cells, family="permissive").findings if "escaped" in f]
    assert finding.startswith("2 replies held an HTML-escaped call opener (&lt;tool_call&gt;)")


def test_an_escaped_call_is_a_no_call_that_says_why(serve: Serve, tmp_path: Path) -> None:
    """Over loopback: a server that renders its prompt HTML-escaped (llama-cpp-python 0.3.36's
    chatml-function-calling handler) gets calls written back escaped, in words and natively."""

    def escaped(asked: Asked) -> Answer:
        # Its quotes come escaped too, as &#34; (tests/data/recordings/llama-cpp-python.focus.json),
        # so no reader finds the call's JSON in the text.
        name = asked.tools[0]["name"] if asked.tools else "get_weather"
        quote = "&#34;"
        return Answer(
            text=f"&lt;tool_call&gt;{{{quote}name{quote}: {quote}{name}{quote}, {quote}arguments"
            f"{quote}: {{}}}}&lt;/tool_call&gt;"
        )

    server = serve(OpenAIEmulator(escaped))
    out = tmp_path / "out"
    args = ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    probed = read_results(out / "results.json")
    cell = next(c for c in probed.cells if c.id == "words/weather-enum/1")
    assert cell.outcome is Outcome.NO_CALL
    assert cell.detail == (
        "expected get_weather; got no call; the text holds &lt;tool_call&gt;: the prompt was "
        "rendered HTML-escaped, so the model wrote its call escaped"
    )
    assert probed.verdict is not None
    (finding,) = [f for f in probed.verdict.findings if "HTML-escaped" in f]
    assert finding.startswith("22 replies held an HTML-escaped call opener")
