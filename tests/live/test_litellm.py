"""Live: a LiteLLM proxy in front of llama-server (Qwen2.5-Coder-0.5B, qwen-coder-native).

The pinned ``litellm[proxy]`` in its own virtualenv (scripts/pinned_venv.py), never a
dependency of conchcheck, configured with one ``openai/`` model whose ``api_base`` is the
llama-server, and a master key made for this run (LiteLLM won't start without one; every
request must carry it). Probed through the CLI on its chat endpoint and on its
``/v1/messages`` (``--api anthropic``) with the focus matrix
(tests/data/recordings/focus.yaml).

What the proxy does, from requests made by hand (curl, 2026-12-04) and its source
(litellm/proxy/ and litellm/llms/ in 1.108.7):
- chat: the upstream's parsed ``tool_calls`` come back as they are (the weather request by
  hand: ``finish_reason: tool_calls``, ``get_weather {"city": "Paris", "unit": "celsius"}``);
- ``/v1/messages`` for an ``openai/`` model goes to the upstream's Responses API and comes
  back as ``tool_use`` blocks, streamed too;
- upstream 400s and 500s come back wrapped (``litellm.BadRequestError: …``), the upstream's
  words kept on chat; LiteLLM retries an upstream 500 itself;
- a request without the key, or with another, is refused 401.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conchcheck.results import CellMode, Outcome, Stage
from scripts import pinned_venv
from tests.live.conftest import ProbeServer, StartServer, need_venv

pytestmark = pytest.mark.live
FOCUS = Path(__file__).parent.parent / "data" / "recordings" / "focus.yaml"
MODEL = "qwen2.5-coder-0.5b"
KEY_ENV = "CONCHCHECK_LIVE_LITELLM_KEY"


@pytest.fixture(scope="module")
def runs(
    start_server: StartServer, probe_server: ProbeServer
) -> Iterator[dict[str, dict[str, Any]]]:
    need_venv(pinned_venv.LITELLM)
    key = "sk-" + secrets.token_urlsafe(24)
    upstream = start_server("qwen-coder-native")
    try:
        proxy = pinned_venv.litellm_proxy(upstream, MODEL, key)
        try:
            env = {KEY_ENV: key}
            target = f"openai:{MODEL}"
            options = ("--api-key-env", KEY_ENV)
            found = {
                "chat": probe_server(proxy, FOCUS, target=target, extra=options, env=env),
                "anthropic": probe_server(
                    proxy, FOCUS, target=target, extra=(*options, "--api", "anthropic"), env=env
                ),
            }
        finally:
            proxy.stop()
    finally:
        upstream.stop()
    assert proxy.process.poll() is not None and upstream.process.poll() is not None
    for run in found.values():
        run["key"] = key
    yield found


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_the_key_never_leaks(runs: dict[str, dict[str, Any]], api: str) -> None:
    run = runs[api]
    key: str = run["key"]
    assert key not in run["stdout"] and key not in run["stderr"]
    for path in Path(run["out"]).rglob("*"):
        if path.is_file():
            assert key not in path.read_text(errors="replace"), path.name


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_native_calls_come_through(runs: dict[str, dict[str, Any]], api: str) -> None:
    run = runs[api]
    verdict = run["result"].verdict
    assert verdict is not None and verdict.mode == "native", verdict.reason
    native = {c.case: c for c in run["cells"] if c.stage is Stage.NATIVE}
    for case, tool in (("weather-enum", "get_weather"), ("remember-fact", "remember")):
        cell = native[case]
        assert cell.outcome is Outcome.PASS, (case, cell.detail)
        assert cell.reply is not None and [c.name for c in cell.reply.calls] == [tool]
    assert native["no-tool-needed"].outcome is Outcome.PASS


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_streams_agree(runs: dict[str, dict[str, Any]], api: str) -> None:
    checks = [
        c for c in runs[api]["cells"] if c.stage is Stage.FOLLOW_UP and c.mode is CellMode.STREAMING
    ]
    # Every prompt of the focus matrix is streamed beside its whole request.
    assert sorted(c.case for c in checks) == [
        "forced-choice", "no-tool-needed", "remember-fact", "weather-enum",
    ]  # fmt: skip
    assert all(c.outcome is Outcome.PASS for c in checks), [(c.id, c.detail) for c in checks]


def test_upstream_schema_refusals_pass_through_chat(runs: dict[str, dict[str, Any]]) -> None:
    # llama-server's 400 for a dangling $ref and an unknown type, wrapped by LiteLLM as
    # "litellm.BadRequestError: …" with the upstream's words: still schema refusals.
    dialect = runs["chat"]["result"].verdict.dialect
    assert dialect.dialect == "permissive"
    refused = {(r.case, r.kind) for r in dialect.refused if r.dialect == "permissive"}
    assert refused == {("dangling-ref", "schema"), ("unknown-type", "schema")}
    assert all("litellm.BadRequestError" in r.message for r in dialect.refused)
