"""A refusal that carries the model's failed generation (Groq's 400 ``tool_use_failed``, issue 22):
the refusal stays the record, of kind ``tools``; the cell is ``unparsed_by_server``, its failed
generation read by the words reader and judged against the prompt as a leaked call is.

Groq's envelope is the one of vector groq-tool-use-failed-carries-failed-generation (S34); the
generations inside it are written for the default matrix's prompts in the forms Groq's vectors
show (``<function=name>{…}</function>``, S34; a headless ``name{…}</function>``, S35).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.core.refusals import RefusalKind, classify
from conchcheck.matrix import load_matrix
from conchcheck.probe.judging import judge_native
from conchcheck.results import Cell, Outcome
from conchcheck.wire.chat import ChatRequest, Finding, Message, Reply, Role
from conchcheck.wire.exchange import Exchange
from conchcheck.wire.exchange import refused as as_outcome
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.emulators.vectors import vector
from tests.wire.test_transport import send

MATRIX = load_matrix("default")
PROMPTS = {p.id: p for p in MATRIX.prompts}
CAUSE = "The server couldn't parse the model's call (HTTP 400)."
GROQ_SAYS = (
    "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more "
    "details."
)
PARIS = '<function=get_weather>{"city": "Paris", "unit": "celsius"}</function>'


def groq_body(generation: str) -> str:
    """Groq's 400 body (vector groq-tool-use-failed-carries-failed-generation) around
    ``generation``."""
    body = json.loads(vector("groq-tool-use-failed-carries-failed-generation")["body"])
    body["error"]["failed_generation"] = generation
    return json.dumps(body)


def judged(exchange: Exchange, prompt_id: str) -> Cell:
    prompt = PROMPTS[prompt_id]
    tools = [MATRIX.tools[name] for name in prompt.tools]
    return judge_native(f"native/{prompt_id}/1", prompt, exchange, tools, Dialect.PERMISSIVE)


def refused(status: int, body: str, partial: Reply | None = None) -> Exchange:
    # As the transport makes it: a refusal carrying a failed generation is output unparsed.
    outcome = as_outcome(classify(status, body), partial)
    return Exchange("POST", "https://api.groq.com/openai/v1/chat/completions", {}, {}, outcome)


@pytest.mark.parametrize(
    ("prompt_id", "generation", "detail", "calls"),
    [
        pytest.param("weather-enum", PARIS,
                     f"{CAUSE} Its output held a call to get_weather; read from it, it would be "
                     "pass.",
                     [("function_tag", "get_weather", True, {"city": "Paris", "unit": "celsius"})],
                     id="function-tag-call-would-pass"),
        pytest.param("weather-enum",
                     '<function=get_weather>{"city": "Lyon", "unit": "celsius"}</function>',
                     f"{CAUSE} Its output held a call to get_weather; read from it, it would be "
                     "wrong_arguments.",
                     [("function_tag", "get_weather", True, {"city": "Lyon", "unit": "celsius"})],
                     id="function-tag-call-with-the-wrong-city"),
        pytest.param("no-tool-needed", PARIS,
                     f"{CAUSE} Its output held a call to get_weather; read from it, it would be "
                     "unwanted_call.",
                     [("function_tag", "get_weather", True, {"city": "Paris", "unit": "celsius"})],
                     id="a-call-the-prompt-did-not-need"),
        # S35's headless tail: no family the reader knows, so no call is read from it.
        pytest.param("weather-enum", 'get_weather{"city": "Paris", "unit": "celsius"}</function>',
                     f"{CAUSE} Its output held no call that could be read.", [],
                     id="headless-function-tail-reads-no-call"),
    ],
)  # fmt: skip
def test_the_failed_generation_is_read_and_judged(
    prompt_id: str, generation: str, detail: str, calls: list[tuple[object, ...]]
) -> None:
    cell = judged(refused(400, groq_body(generation)), prompt_id)
    assert (cell.outcome, cell.detail, cell.label) == (
        Outcome.UNPARSED_BY_SERVER,
        detail,
        "unparsed_by_server",
    )
    assert cell.reading is not None
    assert [(c.form, c.name, c.ok, c.arguments) for c in cell.reading.calls] == calls
    assert cell.reading.text == generation  # the output as the server quoted it
    # The refusal is kept as evidence, its kind unchanged: words are the cure.
    assert cell.refusal is not None
    assert (cell.refusal.kind, cell.refusal.code, cell.refusal.failed_generation) == (
        RefusalKind.TOOLS,
        "tool_use_failed",
        generation,
    )
    assert cell.findings == (Finding("server_could_not_parse_output", f"{CAUSE} {GROQ_SAYS}"),)
    assert cell.calls == ()


def test_an_empty_failed_generation_quotes_no_output() -> None:
    found = vector("groq-tool-use-failed-empty-failed-generation")
    cell = judged(refused(found["status"], found["body"]), "weather-enum")
    assert (cell.outcome, cell.detail, cell.reading) == (
        Outcome.UNPARSED_BY_SERVER,
        f"{CAUSE} The server quoted none of the output.",
        None,
    )


def test_a_streamed_error_event_reads_its_failed_generation_not_the_partial_text() -> None:
    # Groq's error event inside a 200 stream (vector groq-stream-error-event-with-status-200),
    # here carrying a readable generation; the text streamed before it is not the output.
    body = json.loads(vector("groq-stream-error-event-with-status-200")["body"])
    body["error"]["failed_generation"] = PARIS
    cell = judged(refused(200, json.dumps(body), Reply("Let me check.")), "weather-enum")
    assert (cell.outcome, cell.detail) == (
        Outcome.UNPARSED_BY_SERVER,
        "The server couldn't parse the model's call (HTTP 200). Its output held a call to "
        "get_weather; read from it, it would be pass.",
    )


def test_a_refusal_without_a_generation_stays_refused() -> None:
    # Groq's schema check of the model's arguments quotes no generation (vector
    # groq-tool-call-validation-failed-names-schema-is-still-tools): nothing to read.
    found = vector("groq-tool-call-validation-failed-names-schema-is-still-tools")
    cell = judged(refused(found["status"], found["body"]), "weather-enum")
    assert (cell.outcome, cell.label, cell.reading) == (
        Outcome.REFUSED,
        "refused:tools",
        None,
    )


def test_through_the_wire_a_groq_400_becomes_the_cell(
    serve: Callable[[Handler], EmulatorServer],
) -> None:
    """The 400 as an OpenAI-compatible server sends it, read by the transport, then judged."""
    answer = Response(400, groq_body(PARIS).encode(), {"content-type": "application/json"})
    server = serve(OpenAIEmulator(ignores_tools(), queue=[answer]))
    prompt = PROMPTS["weather-enum"]
    tools = tuple(MATRIX.tools[name] for name in prompt.tools)
    exchange = send(server, ChatRequest("local", (Message(Role.USER, prompt.user),), tools=tools))
    assert exchange.attempts == 1  # never retried: the same request writes the same output
    cell = judged(exchange, "weather-enum")
    assert (cell.outcome, cell.detail, cell.requests) == (
        Outcome.UNPARSED_BY_SERVER,
        f"{CAUSE} Its output held a call to get_weather; read from it, it would be pass.",
        1,
    )
    assert cell.reading is not None
    assert [(c.name, c.arguments) for c in cell.reading.calls] == [
        ("get_weather", {"city": "Paris", "unit": "celsius"})
    ]
