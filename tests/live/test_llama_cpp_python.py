"""Live: llama-cpp-python's own server (``chatml-function-calling``) with Qwen2.5-Coder-0.5B.

The pinned ``llama-cpp-python[server]`` in its own virtualenv (scripts/pinned_venv.py),
started with ``--chat_format chatml-function-calling``, probed through the CLI with the focus
matrix (tests/data/recordings/focus.yaml). What the server does, from its source
(llama_cpp/llama_chat_format.py ``chatml_function_calling``, llama_cpp/server/types.py,
llama_cpp/server/app.py in the 0.3.36 sdist) and from requests made by hand (curl,
2026-12-04):
- a tool without ``parameters`` fails the request model's validation
  (``ChatCompletionFunction.parameters`` is required in llama_cpp/llama_types.py): HTTP 500
  with the pydantic error naming ``('body', 'tools', 0, 'function', 'parameters')``;
- the handler's grammar falls back to any JSON for a schema it can't convert, so a dangling
  ``$ref`` and an unknown type are accepted;
- without ``tool_choice`` (``auto``) the handler lets the model answer freely and returns no
  ``tool_calls``; a named ``tool_choice`` is honoured (the grammar forces that function);
- with tools and ``stream: true`` the server sends 200 and its headers, then fails
  ("Automatic streaming tool choice is not supported").
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conchcheck.results import CellMode, Outcome, Stage
from scripts import pinned_venv
from tests.live.conftest import ProbeServer, need_venv

pytestmark = pytest.mark.live
FOCUS = Path(__file__).parent.parent / "data" / "recordings" / "focus.yaml"
VALIDATION = "('body', 'tools', 0, 'function', 'parameters')"


@pytest.fixture(scope="module")
def probed(probe_server: ProbeServer) -> Iterator[dict[str, Any]]:
    need_venv(pinned_venv.LLAMA_CPP_PYTHON)
    server = pinned_venv.llama_cpp_python_server()
    try:
        run = probe_server(server, FOCUS, target="llamacpp:qwen2.5-coder-0.5b")
    finally:
        server.stop()
    assert server.process.poll() is not None, "llama-cpp-python's server still running"
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", server.port)) != 0, "the port still answers"
    yield run


def native(run: dict[str, Any]) -> dict[str, Any]:
    return {c.case: c for c in run["cells"] if c.stage is Stage.NATIVE}


def test_a_tool_without_parameters_is_a_schema_refusal(probed: dict[str, Any]) -> None:
    # The 500 is the request model's validation error naming the tool's missing field: a
    # schema refusal of that case, in every dialect (none adds `parameters`), sent once each.
    verdict = probed["result"].verdict
    refused = [r for r in verdict.dialect.refused if r.case == "no-parameters"]
    assert {r.dialect for r in refused} == {"permissive", "anthropic", "gemini", "strict"}
    assert {r.kind for r in refused} == {"schema"}
    assert all(VALIDATION in r.message for r in refused)
    cells = [c for c in probed["cells"] if c.stage is Stage.DIALECT and c.case == "no-parameters"]
    assert all(c.reply is not None and c.reply.status == 500 for c in cells)
    assert all(c.requests == 1 for c in cells), [(c.id, c.requests) for c in cells]


def test_the_dialect_is_permissive_except_that_case(probed: dict[str, Any]) -> None:
    dialect = probed["result"].verdict.dialect
    # Every other case is taken as sent, the invalid ones too (its grammar falls back to any
    # JSON); the one case no dialect carries doesn't make it "none fits".
    assert sorted(dialect.invalid_accepted) == ["dangling-ref", "unknown-type"]
    assert dict(dialect.carriers) == {"no-parameters": ()}
    report = (probed["out"] / "report.md").read_text()
    assert "none fits" not in report.splitlines()[0]
    assert "permissive, except" in report.splitlines()[0]


def test_tools_are_ignored_unless_a_tool_is_chosen(probed: dict[str, Any]) -> None:
    cells = native(probed)
    # tool_choice auto: no tool_calls at all.
    for case in ("weather-enum", "remember-fact"):
        assert cells[case].facts.native_calls == 0, case
        assert cells[case].outcome is not Outcome.PASS
    # A named tool_choice is honoured: the grammar writes a remember call.
    forced = cells["forced-choice"]
    assert forced.facts.native_calls == 1 and forced.reply is not None
    assert [c.name for c in forced.reply.calls] == ["remember"]


def test_streaming_with_tools_fails(probed: dict[str, Any]) -> None:
    checks = [
        c for c in probed["cells"] if c.stage is Stage.FOLLOW_UP and c.mode is CellMode.STREAMING
    ]
    assert sorted(c.case for c in checks) == ["remember-fact", "weather-enum"]
    assert all(c.outcome is Outcome.ERROR for c in checks), [(c.id, c.detail) for c in checks]


def test_the_catalogue_is_unknown(probed: dict[str, Any]) -> None:
    # llama-cpp-python has no /props (llama-server's): 404, so nothing is declared.
    verdict = probed["result"].verdict
    assert verdict.tools_declared is None
