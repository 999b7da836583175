"""Live: Qwen2.5-Coder-0.5B-Instruct on llama-server, probed end to end (marker ``live``).

The model's own chat template takes tools (``/props`` says so) and the model writes the right
call, but as bare or fenced JSON in the reply's text, never as native ``tool_calls``
(provider-facts: Qwen2.5-Coder-0.5B-Instruct on llama-server 0.3.36). conchcheck should find
it calling in words, see the calls leaked into the native replies' text, and see the call it
makes where none is needed. One server for the module, at temperature 0: the default matrix,
then a two-line matrix with the question that draws a call without need.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from conchcheck.capabilities import CapabilityFile
from conchcheck.matrix import load_matrix
from conchcheck.results import CatalogueFacts, Cell, CellMode, Outcome, ProbeResult, Stage
from conchcheck.verdict import decide

pytestmark = pytest.mark.live
MATRIX = load_matrix("default")
INVALID = [c.id for c in MATRIX.schema_cases if not c.valid]
CALLING = [p.id for p in MATRIX.prompts if p.expect.calls]
"""The default prompts that want a call: every one but no-tool-needed."""

WITHOUT_NEED = """\
version: 1
name: without-need
description: A question no tool answers, with a tool offered.
tools:
  get_weather:
    name: get_weather
    description: Get the current weather in a city.
    parameters:
      type: object
      properties:
        city: {type: string, description: "The city name, like Paris."}
        unit: {type: string, enum: [celsius, fahrenheit], description: The temperature unit.}
      required: [city]
schema_cases:
  - id: baseline
    feature: a plain object
    tool: get_weather
    valid: true
prompts:
  - id: arithmetic
    user: "What is 2+2?"
    tools: [get_weather]
    expect:
      no_call: true
"""


@pytest.fixture(scope="module")
def runs(
    start_server: Any, probe_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """qwen-coder started once, probed with the default matrix and with without-need, stopped."""
    matrix: Path = tmp_path_factory.mktemp("matrix") / "without-need.yaml"
    matrix.write_text(WITHOUT_NEED)
    server = start_server("qwen-coder")
    try:
        found = {"default": probe_server(server), "without-need": probe_server(server, matrix)}
        found["catalogue"] = _catalogue(server.url, matrix, tmp_path_factory.mktemp("all"))
        found["cost"] = probe_server(server, matrix, extra=("--checks", "cost"))
        found["auto"] = probe_server(server, matrix, extra=("--repeat", "auto"))
    finally:
        server.stop()
    assert server.process.poll() is not None, "llama-server still running"
    with socket.socket() as sock:
        port = int(server.url.rsplit(":", 1)[1])
        assert sock.connect_ex(("127.0.0.1", port)) != 0, "the port still answers"
    return found


def _catalogue(url: str, matrix: Path, out: Path) -> dict[str, Any]:
    """``llamacpp:*``: every model the server lists (one), probed with ``matrix``."""
    from typer.testing import CliRunner

    from conchcheck.cli import app

    result = CliRunner().invoke(
        app, ["probe", "llamacpp:*", "--base-url", url + "/v1", "--matrix", str(matrix),
              "--out", str(out), "--quiet", "--timeout", "600",
              "--cache", str(out / "capabilities.yaml")],
    )  # fmt: skip
    return {"code": result.exit_code, "stderr": result.stderr, "out": out, "url": url}


@pytest.fixture(scope="module")
def probed(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The probe with the default matrix."""
    return runs["default"]


def prompt_cells(run: dict[str, Any], mode: CellMode) -> dict[str, Cell]:
    stage = Stage.NATIVE if mode is CellMode.NATIVE else Stage.WORDS
    return {c.case: c for c in run["cells"] if c.stage is stage and c.mode is mode}


def test_the_target_and_its_outputs(probed: dict[str, Any]) -> None:
    assert probed["target"] == "llamacpp:qwen2.5-coder-0.5b"
    entries = CapabilityFile(probed["out"] / "capabilities.yaml").entries()
    assert [(e.provider, e.model, e.mode) for e in entries] == [
        ("llamacpp", "qwen2.5-coder-0.5b", "none")
    ]
    assert (
        (probed["out"] / "report.md")
        .read_text()
        .startswith("**llamacpp:qwen2.5-coder-0.5b** — dialect **permissive**, mode **none**")
    )


def test_the_catalogue_says_tools_are_supported(probed: dict[str, Any]) -> None:
    catalogue = next(c for c in probed["cells"] if c.stage is Stage.CATALOGUE)
    assert catalogue.request is not None and catalogue.request.method == "GET"
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/props", catalogue.request.url)
    # The model's own template: supports_tools and supports_tool_calls are true.
    assert catalogue.facts == CatalogueFacts(None, True, 2048)  # -c 8192 shared by --parallel 4
    assert "'supports_tool_calls': True" in catalogue.detail
    assert probed["result"].verdict.tools_declared is True


def test_it_never_calls_natively(probed: dict[str, Any]) -> None:
    native = prompt_cells(probed, CellMode.NATIVE)
    assert sorted(native) == sorted(p.id for p in MATRIX.prompts)
    assert {c.case: c.facts.native_calls for c in native.values()} == dict.fromkeys(native, 0)
    verdict = probed["result"].verdict
    assert verdict.tools_observed is False
    assert "The catalogue declares tools, but the model never called natively." in verdict.findings


def test_the_calls_are_in_the_native_replies_text(probed: dict[str, Any]) -> None:
    # The evidence the leak finding reads: the expected tool's call, as JSON in the content
    # (bare or in a ```json fence), for most prompts that want a call.
    native = prompt_cells(probed, CellMode.NATIVE)
    written = {}
    for case in CALLING:
        text = (native[case].reply.text or "").strip()  # type: ignore[union-attr]
        fenced = re.fullmatch(r"```json\n(.*)\n```", text, re.DOTALL)
        try:
            call = json.loads(fenced.group(1) if fenced else text)
        except ValueError:
            continue
        written[case] = call["name"]
    expected = {p.id: p.expect.calls[0].tool for p in MATRIX.prompts if p.id in written}
    # forced-choice forces remember on a weather question; llama-server's chat drops the
    # object tool_choice, so the model writes the call it was asked for.
    if "forced-choice" in expected:
        expected["forced-choice"] = "get_weather"
    assert written == expected
    assert len(written) * 2 >= len(CALLING), sorted(written)


def test_the_verdict_is_none_with_the_routes(probed: dict[str, Any]) -> None:
    result: ProbeResult = probed["result"]
    assert result.verdict is not None and result.catalogue is not None
    assert result.verdict.mode == "none", result.verdict.reason
    # The native replies' text holds more right calls than words: the fix is named first.
    assert result.verdict.options[0].route.value == "native_after_fix", result.verdict.reason
    outcome = probed["outcome"]  # the CLI's --json
    assert (outcome["result"]["verdict"]["mode"], outcome["entry"]["mode"]) == ("none", "none")
    verdict = decide(
        probed["cells"],
        family="permissive",
        invalid_cases=INVALID,
        tools_declared=result.catalogue.tools,
    )
    assert (verdict.mode.value, verdict.dialect.dialect) == ("none", "permissive")
    words = prompt_cells(probed, CellMode.WORDS)
    passed = sorted(case for case, c in words.items() if c.outcome is Outcome.PASS)
    # Seen in three runs of three (2026-12-04): these five, all clean. Told to call remember,
    # the model answers the weather question with get_weather (forced-choice), so words is
    # 5/11, under the threshold: mode none, with the routes that show what would work.
    assert passed == [
        "boolean-argument", "integer-argument", "no-tool-needed", "remember-fact",
        "three-arguments",
    ]  # fmt: skip
    assert (result.verdict.words.passed, result.verdict.words.total) == (5, 11)


def test_the_greeting_draws_no_call(probed: dict[str, Any]) -> None:
    # The default matrix's no-tool-needed ("Hello! Please reply with a short greeting.", with a
    # system prompt that says to use a tool only when asked) gets a greeting in both modes.
    for mode in (CellMode.NATIVE, CellMode.WORDS):
        greeting = prompt_cells(probed, mode)["no-tool-needed"]
        assert greeting.outcome is Outcome.PASS, (mode, greeting.detail)
        assert greeting.reply is not None and (greeting.reply.text or "").startswith("Hello!")


def test_it_calls_a_tool_without_need(runs: dict[str, dict[str, Any]]) -> None:
    # "What is 2+2?" with get_weather offered: natively the model writes a get_weather call in
    # the text (the evidence; test_the_call_without_need_is_seen has the outcome), while with
    # the tools in words it answers 4.
    run = runs["without-need"]
    native = prompt_cells(run, CellMode.NATIVE)["arithmetic"]
    assert native.reply is not None and native.facts.native_calls == 0
    call = json.loads(native.reply.text or "")
    assert call["name"] == "get_weather"
    words = prompt_cells(run, CellMode.WORDS)["arithmetic"]
    assert words.outcome is Outcome.PASS and "4" in (words.reply.text or "")  # type: ignore[union-attr]


def test_the_call_without_need_is_seen(runs: dict[str, dict[str, Any]]) -> None:
    native = prompt_cells(runs["without-need"], CellMode.NATIVE)["arithmetic"]
    assert native.outcome is Outcome.UNWANTED_CALL, native.detail
    assert "calls_leaked_as_text" in {f.code for f in native.findings}


def test_native_calls_leak_into_the_text(probed: dict[str, Any]) -> None:
    native = prompt_cells(probed, CellMode.NATIVE)
    wanting = [native[case] for case in CALLING]
    leaked = [c.case for c in wanting if c.outcome.value == "leaked"]
    assert len(leaked) * 2 >= len(wanting), {c.case: c.outcome.value for c in wanting}
    codes = {f.code for c in probed["cells"] for f in c.findings}
    codes |= {f.code for c in probed["cells"] if c.reply is not None for f in c.reply.findings}
    assert "calls_leaked_as_text" in codes, sorted(codes)
    # Qwen2.5-Coder writes bare or fenced JSON without its template's <tool_call> tags:
    # no server flag fixes that, and the verdict says so (provider-facts, Qwen2.5-Coder).
    assert {native[case].facts.leak.family for case in leaked} == {"plain_json"}
    verdict = probed["result"].verdict
    assert [leak.family for leak in verdict.leaks] == ["plain_json"]
    assert "llama-server builds its call parser from the chat template" in verdict.leaks[0].fix


def test_its_measured_capability_exports_for_litellm_and_models_dev(
    probed: dict[str, Any], tmp_path: Path
) -> None:
    """The real probe's results, exported: LiteLLM's own loader then holds what was measured
    (no native calling; tool_choice required and a named tool ignored), and models.dev's
    tool_call says the same, with what wasn't measured left out."""
    from typer.testing import CliRunner

    from conchcheck.cli import app
    from tests.live.litellm_loader import load_in_litellm

    results = probed["out"] / "results.json"
    config = tmp_path / "litellm.yaml"
    runner = CliRunner()
    done = runner.invoke(app, ["export", str(results), "--to", "litellm", "--out", str(config)])
    assert done.exit_code == 0, done.stderr
    assert load_in_litellm(config) == {
        "qwen2.5-coder-0.5b": {
            "model": "openai/qwen2.5-coder-0.5b",
            "supports_function_calling": False,
            "supports_tool_choice": False,
            "supports_parallel_function_calling": False,
        }
    }
    toml = runner.invoke(app, ["export", str(results), "--to", "models-dev"])
    assert toml.exit_code == 0, toml.stderr
    table = toml.stdout.split("[tool_call]\n", 1)[1]
    # Streaming agreed on the pairs compared; no reply carried two calls, so parallel is
    # unknown; exact arguments were never measured (too few native calls).
    assert table == 'supported = false\nstreaming = true\ndialect = "permissive"\nmode = "none"\n'


def test_the_whole_catalogue_of_the_server_is_its_one_model(
    runs: dict[str, dict[str, Any]],
) -> None:
    """llama-server lists the model it serves at /v1/models (OpenAI's shape), named by the
    path given to -m when it has no --alias (a request by hand, 2026-12-05: ``data[0].id``
    is the GGUF's path): probing ``llamacpp:*`` probes that model, with an index."""
    from scripts import local_model

    served = local_model.model_file(local_model.CONFIGS["qwen-coder"].model)
    run = runs["catalogue"]
    assert run["code"] == 0, run["stderr"]
    assert run["stderr"] == (
        f"llamacpp:*: GET {run['url']}/v1/models listed 1 models; probing 1.\n"
    )
    index = json.loads((run["out"] / "index.json").read_text())
    assert [(t["target"], t["exit_code"]) for t in index["targets"]] == [(f"llamacpp:{served}", 0)]


def test_what_its_tool_costs_as_llama_server_renders_it(runs: dict[str, dict[str, Any]]) -> None:
    """``--checks cost`` on the real server: the usage llama-server reports prices the one
    tool in every dialect (its chat template renders the schema, so the dialects cost more
    or less alike), and the capacity search ends at one tool, since this model never calls
    natively (above)."""
    costs = runs["cost"]["result"].verdict.tool_costs
    assert costs is not None and costs.baseline is not None and costs.baseline > 0
    assert [c.tool for c in costs.tools] == ["get_weather"]
    dialects = costs.tools[0].tokens
    assert sorted(dialects) == ["anthropic", "gemini", "permissive", "strict"]
    assert all(tokens is not None and tokens > 20 for tokens in dialects.values()), dialects
    assert (costs.capacity, costs.point) == (None, 1)
    assert costs.why == "With 1 tool the tool asked for was not called."


def test_repeat_auto_labels_each_prompt_within_its_bounds(
    runs: dict[str, dict[str, Any]],
) -> None:
    """``--repeat auto`` on the real server: each prompt in each mode gets a label after at
    least the first wave of four attempts (the fewest that can settle one at 95% against 0.5)
    and at most ten; alike attempts (temperature 0) settle at the first wave."""
    labels = runs["auto"]["result"].verdict.labels
    assert labels is not None
    assert sorted((p.prompt, p.mode) for p in labels.prompts) == [
        ("arithmetic", "native"), ("arithmetic", "words"),
    ]  # fmt: skip
    for p in labels.prompts:
        assert 4 <= p.attempts <= 10 and p.label is not None, p
        if p.passes in (0, p.attempts):
            assert p.attempts == 4 and p.label.value in ("pass", "fail"), p
