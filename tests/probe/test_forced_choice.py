"""A forced tool choice passes only where forcing was honoured.

The built-in ``forced-choice`` prompt asks for the weather and forces ``remember``: a model
left to itself calls ``get_weather``. llama-server's chat replaces an object ``tool_choice``
by ``auto`` (its log: "Wrong type supplied for parameter 'tool_choice'"; provider-facts,
real servers measured by hand 2026-12-04), so there the model answers what was asked. When
the prompt wanted the forced tool anyway, such a server passed ("forced choice 2/2").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck import read_results
from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from conchcheck.results import Cell, Outcome
from tests.emulators.model import Answer, Asked, Behaviour, Call
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

MATRIX = load_matrix("default")
Serve = Callable[[Handler], EmulatorServer]


def _asked_tool(asked: Asked) -> dict[str, object]:
    """The offered tool the user's words name (``get_weather`` for "weather"), else the first."""
    user = next(m["content"] for m in reversed(asked.messages) if m["role"] == "user")
    words = set(re.findall(r"[a-z]+", user.lower()))
    named = [t for t in asked.tools if set(t["name"].split("_")) & words]
    return (named or asked.tools)[0]


def ignores_forcing(*, leak: bool) -> Behaviour:
    """A model behind a server that drops ``tool_choice``: it calls the tool it was asked for
    (natively, or with ``leak`` as bare JSON in the text the server didn't parse)."""
    correct = oracle(MATRIX)

    def behave(asked: Asked) -> Answer:
        if not asked.tools or asked.messages[-1]["role"] == "tool":
            return correct(asked)
        name = str(_asked_tool(asked)["name"])
        args = {"city": "Paris"} if name == "get_weather" else {"fact": "The user asked."}
        if leak:
            return Answer(text=json.dumps({"name": name, "arguments": args}))
        return Answer(calls=[Call(name, json.dumps(args))], finish="tool_calls")

    return behave


IGNORED = (
    "tool_choice forced remember, but the model called get_weather: the endpoint ignored the "
    "forced choice."
)

CASES = [
    pytest.param(lambda: oracle(MATRIX), Outcome.PASS, None, id="forcing-honoured"),
    pytest.param(
        lambda: ignores_forcing(leak=False),
        Outcome.WRONG_TOOL,
        IGNORED,
        id="llama-server-chat-drops-an-object-tool-choice",
    ),
    pytest.param(
        lambda: ignores_forcing(leak=True),
        Outcome.LEAKED,
        IGNORED,
        id="forcing-dropped-and-the-call-left-in-the-text",
    ),
]


@pytest.mark.parametrize(("behaviour", "outcome", "ignored"), CASES)
def test_forced_choice_passes_only_where_forcing_is_honoured(
    serve: Serve,
    tmp_path: Path,
    behaviour: Callable[[], Behaviour],
    outcome: Outcome,
    ignored: str | None,
) -> None:
    server = serve(OpenAIEmulator(behaviour()))
    out = tmp_path / "out"
    args = ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(out), "--quiet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    cells: list[Cell] = [
        c for c in read_results(out / "results.json").cells if c.case == "forced-choice"
    ]
    native = [c for c in cells if c.id.startswith("native/")]
    assert [c.outcome for c in native] == [outcome]
    findings = [f for f in native[0].findings if f.code == "forced_choice_ignored"]
    if ignored is None:
        assert findings == []
    else:
        assert [f.detail for f in findings] == [ignored]
        assert native[0].detail.startswith(ignored)


def test_in_words_the_forced_tool_is_said(serve: Serve, tmp_path: Path) -> None:
    """Words mode has no tool_choice field: the model is told, after the list, as a client that
    lists its tools in the prompt would tell it (else forced-choice could never pass there)."""
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    out = tmp_path / "out"
    args = ["probe", "vllm:m", "--base-url", server.url + "/v1", "--out", str(out), "--quiet"]
    assert CliRunner().invoke(app, args).exit_code == 0
    cells = {c.id: c for c in read_results(out / "results.json").cells}
    systems = {}
    for ident in ("words/forced-choice/1", "words/weather-enum/1"):
        request = cells[ident].request
        assert request is not None and isinstance(request.body, dict)
        messages = request.body["messages"]
        assert isinstance(messages, list) and isinstance(messages[0], dict)
        systems[ident] = str(messages[0]["content"])
    assert systems["words/forced-choice/1"].endswith(
        "\n\nThis time you must call remember: answer with a call to it."
    )
    assert "must call" not in systems["words/weather-enum/1"]
    assert cells["words/forced-choice/1"].outcome is Outcome.PASS
