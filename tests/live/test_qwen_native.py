"""Live: Qwen2.5-Coder-0.5B on llama-server with a template whose calls are what it writes.

The first real model whose native calls a real server parses. llama-server builds its
tool-call parser from the chat template ("chat format: peg-native": common/chat.cpp
``common_chat_templates_apply_jinja`` runs the differential autoparser of
common/chat-diff-analyzer.cpp, and ``peg_generator::generate_parser`` in
common/chat-auto-parser-generator.cpp builds the parser). Qwen2.5's template wraps calls in
``<tool_call>`` and the model writes bare JSON, so with its own template nothing is parsed
(tests/live/test_qwen_coder.py); scripts/native_template.py derives the template without the
wrapper (configuration ``qwen-coder-native``), and the same replies come back as ``tool_calls``.

One server for the module, probed through the CLI on three APIs into ONE capability file:
chat with the default matrix (its streaming stage included), then ``--api responses`` and
``--api anthropic`` with the small focus matrix (tests/data/recordings/focus.yaml).

Requests made by hand against this server (curl, temperature 0, 2026-12-04), which the
assertions below rest on:
- ``POST /v1/chat/completions`` "What's the weather in Paris in celsius?" with get_weather →
  200, ``finish_reason: tool_calls``, ``content: ""``, one call
  ``get_weather {"city": "Paris", "unit": "celsius"}``;
- the same with ``stream: true`` → a first delta with role only, then ``tool_calls`` deltas
  (index 0, id and name in the first, then the arguments a few characters at a time);
- ``POST /v1/responses`` the same → one ``function_call`` output item, status completed;
- ``POST /v1/messages`` the same → one ``tool_use`` block, ``stop_reason: tool_use``;
- ``POST /v1/chat/completions`` "Save a contact: Ana Lima, who lives at 12 Rose Street,
  Lisbon, Portugal." with save_contact → HTTP 500 ``{"error": {"code": 500, "message": "The
  model produced output that does not match the expected peg-native format", "type":
  "server_error"}}``; the server log shows the model began with a ```` ``` ```` fence
  ("common_chat_peg_parse: unparsed peg-native output: ```"): thrown by
  ``common_chat_peg_parse`` in common/chat.cpp when the parse fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conchcheck.capabilities import CapabilityFile
from conchcheck.matrix import load_matrix
from conchcheck.results import CatalogueFacts, Cell, CellMode, Outcome, Stage, StreamFacts
from tests.live.conftest import ProbeServer, StartServer

pytestmark = pytest.mark.live
FOCUS = Path(__file__).parent.parent / "data" / "recordings" / "focus.yaml"
MATRIX = load_matrix("default")
CALLING = [p.id for p in MATRIX.prompts if p.expect.calls]
UNPARSED = "The model produced output that does not match the expected peg-native format"


@pytest.fixture(scope="module")
def runs(
    start_server: StartServer, probe_server: ProbeServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, dict[str, Any]]]:
    """qwen-coder-native started once, probed on chat, Responses and Messages, stopped."""
    cache = tmp_path_factory.mktemp("native-cache") / "capabilities.yaml"
    server = start_server("qwen-coder-native")
    try:
        found = {
            "chat": probe_server(server, cache=cache),
            "responses": probe_server(server, FOCUS, extra=("--api", "responses"), cache=cache),
            "anthropic": probe_server(server, FOCUS, extra=("--api", "anthropic"), cache=cache),
        }
    finally:
        server.stop()
    assert server.process.poll() is not None, "llama-server still running"
    found["chat"]["cache"] = cache
    yield found


def prompt_cells(run: dict[str, Any], mode: CellMode = CellMode.NATIVE) -> dict[str, Cell]:
    stage = Stage.NATIVE if mode is CellMode.NATIVE else Stage.WORDS
    return {c.case: c for c in run["cells"] if c.stage is stage and c.mode is mode}


def streaming(run: dict[str, Any]) -> list[Cell]:
    return [c for c in run["cells"] if c.stage is Stage.FOLLOW_UP and c.mode is CellMode.STREAMING]


def test_the_template_declares_tools(runs: dict[str, dict[str, Any]]) -> None:
    catalogue = next(c for c in runs["chat"]["cells"] if c.stage is Stage.CATALOGUE)
    assert catalogue.request is not None
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/props", catalogue.request.url)
    # /props chat_template_caps of the derived template: it still describes tools and calls.
    assert catalogue.facts == CatalogueFacts(None, True, 2048)  # -c 8192 over --parallel 4


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_it_calls_natively(runs: dict[str, dict[str, Any]], api: str) -> None:
    # The server parses the bare JSON the model writes: native tool_calls (chat),
    # function_call items (Responses), tool_use blocks (Messages) — the requests by hand above.
    run = runs[api]
    verdict = run["result"].verdict
    assert verdict is not None
    assert verdict.mode == "native", verdict.reason
    assert verdict.tools_observed is True
    assert verdict.leaks == ()
    native = prompt_cells(run)
    for case in ("weather-enum", "remember-fact"):
        cell = native[case]
        assert cell.outcome is Outcome.PASS, (case, cell.detail)
        assert cell.facts.native_calls == 1, case  # type: ignore[union-attr]
    assert native["no-tool-needed"].outcome is Outcome.PASS
    report = (run["out"] / "report.md").read_text()
    assert report.startswith(f"**{run['target']}** — dialect **permissive**, mode **native**")


def test_most_native_calls_are_parsed_on_chat(runs: dict[str, dict[str, Any]]) -> None:
    # Measured by hand with the default matrix: 8 of 11 native (1 of 11 with the model's own
    # template, tests/data/live/qwen-coder.results.json).
    verdict = runs["chat"]["result"].verdict
    assert verdict.native.total == 11
    assert verdict.native.passed >= 7, verdict.native
    assert verdict.native.passed > verdict.words.passed
    assert "The catalogue declares tools, but the model never called natively." not in (
        verdict.findings
    )


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_streams_parse_the_same_calls(runs: dict[str, dict[str, Any]], api: str) -> None:
    # Streamed, llama-server sends the parsed call as tool_calls deltas (chat), function_call
    # items named by item_id (Responses; no output_index) and tool_use blocks (Messages): each
    # streamed reply carries the same call as the whole one. Every native prompt is streamed;
    # these two are the ones the model calls rightly on every API.
    checks = [c for c in streaming(runs[api]) if c.case in ("remember-fact", "weather-enum")]
    assert sorted(c.case for c in checks) == ["remember-fact", "weather-enum"]
    for check in checks:
        if api == "responses":
            # The same call, but only once conchcheck gave the events the output_index the
            # Responses API documents and llama-server leaves out: a disagreement for a client.
            assert check.outcome is Outcome.WRONG_ARGUMENTS, (check.id, check.detail)
            assert check.detail == (
                "Streamed and whole replies agree only after the deltas were repaired "
                "(event_without_output_index)."
            )
        else:
            assert check.outcome is Outcome.PASS, (check.id, check.detail)
            assert check.detail == "Streamed and whole replies agree (pass)."
        assert isinstance(check.facts, StreamFacts) and check.facts.native is not None
        assert check.facts.native.native_calls == 1
        assert check.reply is not None and [c.name for c in check.reply.calls] == [
            {"weather-enum": "get_weather", "remember-fact": "remember"}[check.case]
        ]
    findings = {f.code for c in checks for f in c.findings}
    assert "item_done_without_added" not in findings


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_invalid_schemas_are_refused(runs: dict[str, dict[str, Any]], api: str) -> None:
    # The parser is generated from the tools' schemas: a dangling $ref and an unknown type
    # fail it with a 400 "Unable to generate parser for this template. Automatic parser
    # generation failed: JSON schema error …" (provider-facts: llama-server observations), on
    # every API; on /v1/messages the error body is OpenAI-shaped, and read the same.
    run = runs[api]
    dialect = run["result"].verdict.dialect
    assert dialect.dialect == "permissive"
    refused = {(r.case, r.kind) for r in dialect.refused if r.dialect == "permissive"}
    assert refused == {("dangling-ref", "schema"), ("unknown-type", "schema")}
    assert dialect.invalid_accepted == ()
    messages = {r.case: r.message for r in dialect.refused if r.dialect == "permissive"}
    assert "cannot resolve $ref #/$defs/missing" in messages["dangling-ref"]
    assert "unrecognized type strung" in messages["unknown-type"]


def test_a_fenced_call_is_the_servers_500(runs: dict[str, dict[str, Any]]) -> None:
    # Where the model fences its JSON the template's parser fails and the server answers 500
    # (the request by hand above). At temperature 0 the same request gets the same 500: the
    # model's answer, not a refusal, and not worth a retry.
    native = prompt_cells(runs["chat"])
    unparsed = [c for c in native.values() if c.reply is not None and c.reply.status == 500]
    assert unparsed, {c.case: c.outcome.value for c in native.values()}
    for cell in unparsed:
        assert cell.reply is not None and UNPARSED in (cell.reply.body or "")
        assert cell.outcome is not Outcome.REFUSED, cell.detail
        assert cell.requests == 1, cell.requests
    assert all(c.outcome is not Outcome.REFUSED for c in native.values())


def test_each_api_is_its_own_endpoint(runs: dict[str, dict[str, Any]]) -> None:
    # One server, one base URL, three APIs: three entries in the one capability file.
    entries = CapabilityFile(runs["chat"]["cache"]).entries()
    assert (
        sorted((e.provider, e.model, e.mode) for e in entries)
        == [("llamacpp", "qwen2.5-coder-0.5b", "native")] * 3
    )
