"""The transport against emulated providers on loopback: round trips, refusals, trouble, keys."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.core.tools import Tool
from conchcheck.wire.chat import ChatRequest, Finish, Message, Role
from conchcheck.wire.exchange import Unparsed
from conchcheck.wire.keys import Secret
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Exchange, Policy, Wire, WireErrorKind
from tests.emulators.model import (
    answers_in_words,
    calls_cleanly,
    calls_sloppily,
    calls_without_need,
    ignores_tools,
    rambles,
)
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.emulators.vectors import refusal, vector

WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)
ASK = (Message(Role.USER, "Weather in Paris?"),)
Serve = Callable[[Handler], EmulatorServer]


class Sleeps:
    """A sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def send(
    server: EmulatorServer,
    request: ChatRequest,
    *,
    key: str | None = None,
    policy: Policy | None = None,
    sleeps: Sleeps | None = None,
    target: str = "llamacpp:local",
) -> Exchange:
    async def go() -> Exchange:
        wire = Wire(policy=policy, sleep=sleeps or Sleeps(), jitter=lambda: 0.5)
        async with wire:
            return await wire.send(
                parse_target(target, base_url=server.url + "/v1"),
                OpenAIAdapter(),
                request,
                Secret(key) if key else None,
            )

    return asyncio.run(go())


def ask(stream: bool = False, **kwargs: Any) -> ChatRequest:
    return ChatRequest("local", ASK, tools=(WEATHER,), stream=stream, max_tokens=64, **kwargs)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_native_call_round_trip(serve: Serve, stream: bool) -> None:
    server = serve(OpenAIEmulator(calls_cleanly(arguments={"city": "Paris", "days": 3})))
    exchange = send(server, ask(stream))
    assert exchange.reply is not None and exchange.error is None and exchange.refusal is None
    assert [(c.name, json.loads(c.arguments)) for c in exchange.reply.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    assert exchange.reply.finish is Finish.TOOL_CALLS
    sent = server.received[0].json()
    assert (
        sent["tools"][0]["function"]["name"] == "get_weather"
        and sent.get("stream", False) == stream
    )
    assert exchange.reply.usage.prompt_tokens is not None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("how", "arguments"),
    [
        pytest.param("number_as_text", '{"city": "Paris", "days": "3"}', id="number-as-text"),
        pytest.param("trailing_comma", '{"city": "Paris", "days": 3,}', id="trailing-comma"),
        pytest.param("fenced", '```json\n{"city": "Paris", "days": 3}\n```', id="fenced-json"),
    ],
)
def test_sloppy_arguments_arrive_as_sent(
    serve: Serve, stream: bool, how: str, arguments: str
) -> None:
    server = serve(OpenAIEmulator(calls_sloppily(how, {"city": "Paris", "days": 3})))
    exchange = send(server, ask(stream))
    assert exchange.reply is not None
    assert [c.arguments for c in exchange.reply.tool_calls] == [arguments]


@pytest.mark.parametrize(
    ("form", "marker"),
    [
        pytest.param("hermes", True, id="hermes"),
        pytest.param("llama_function", True, id="llama-function"),
        pytest.param("qwen_xml", True, id="qwen-xml"),
        pytest.param("fence", False, id="fence"),
        pytest.param("bare_json", False, id="bare-json"),
    ],
)
def test_calls_in_words_arrive_as_text(serve: Serve, form: str, marker: bool) -> None:
    server = serve(OpenAIEmulator(answers_in_words(form, "get_weather", {"city": "Paris"})))
    reply = send(server, ask(True)).reply
    assert reply is not None and reply.tool_calls == () and "get_weather" in reply.text
    assert ("call_markers_in_text" in [f.code for f in reply.findings]) == marker


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_llamacpp_template_without_tools_ignores_them_silently(serve: Serve, stream: bool) -> None:
    # provider-facts: with SmolLM2's own template, tools are accepted and never reach the model.
    server = serve(OpenAIEmulator(calls_cleanly(), flavour="llamacpp", template_tools=False))
    reply = send(server, ask(stream)).reply
    assert reply is not None and reply.tool_calls == () and reply.text == "I have no tools."


def test_cut_off_reply(serve: Serve) -> None:
    reply = send(serve(OpenAIEmulator(rambles())), ask(True)).reply
    assert reply is not None and reply.finish is Finish.LENGTH and reply.cut_off


@pytest.mark.parametrize(
    ("emulator", "kind", "status"),
    [
        pytest.param(
            OpenAIEmulator(
                ignores_tools(),
                flavour="openrouter",
                catalogue=[{"id": "local", "supported_parameters": ["temperature"]}],
            ),
            RefusalKind.TOOLS,
            404,
            id="openrouter-no-endpoints-for-tools",
        ),
        pytest.param(
            OpenAIEmulator(ignores_tools(), flavour="llamacpp", jinja=False),
            RefusalKind.TOOLS,
            500,
            id="llamacpp-needs-jinja",
        ),
        pytest.param(
            OpenAIEmulator(ignores_tools(), queue=[refusal("openai-context-length-exceeded")]),
            RefusalKind.CONTEXT_LENGTH,
            400,
            id="context-length",
        ),
        pytest.param(
            OpenAIEmulator(ignores_tools(), queue=[refusal("openai-404-model-not-found")]),
            RefusalKind.NOT_FOUND,
            404,
            id="model-not-found",
        ),
        pytest.param(
            OpenAIEmulator(
                ignores_tools(), queue=[refusal("openai-429-insufficient-quota-is-quota")]
            ),
            RefusalKind.QUOTA,
            429,
            id="quota-never-retried",
        ),
    ],
)
def test_refusals_are_classified_and_not_retried(
    serve: Serve, emulator: OpenAIEmulator, kind: RefusalKind, status: int
) -> None:
    server = serve(emulator)
    sleeps = Sleeps()
    exchange = send(server, ask(), sleeps=sleeps)
    assert exchange.refusal is not None and exchange.reply is None
    assert (exchange.refusal.kind, exchange.status, exchange.attempts, sleeps.waits) == (
        kind,
        status,
        1,
        [],
    )
    assert len(server.received) == 1


def test_a_refusal_carrying_the_models_generation_is_output_unparsed(serve: Serve) -> None:
    # Groq's 400 tool_use_failed: the model generated and Groq's parser failed. The request
    # was accepted; the refusal (kind tools) is kept as the record; nothing is sent again.
    vector_id = "groq-tool-use-failed-carries-failed-generation"
    server = serve(OpenAIEmulator(ignores_tools(), queue=[refusal(vector_id)]))
    sleeps = Sleeps()
    exchange = send(server, ask(), sleeps=sleeps)
    outcome = exchange.outcome
    assert isinstance(outcome, Unparsed) and outcome.refusal is not None
    assert (outcome.refusal.kind, outcome.failure.status, outcome.failure.output) == (
        RefusalKind.TOOLS,
        400,
        '<function=brave_search>{"query": "Hello!"}</function>',
    )
    assert (exchange.refusal, exchange.attempts, sleeps.waits, len(server.received)) == (
        outcome.refusal,
        1,
        [],
        1,
    )


def test_schema_refusal_names_the_place(serve: Serve) -> None:
    bad = Tool("f", "", {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    exchange = send(
        serve(OpenAIEmulator(ignores_tools(), flavour="llamacpp")),
        ChatRequest("local", ASK, tools=(bad,)),
    )
    assert exchange.refusal is not None
    assert (exchange.refusal.kind, exchange.refusal.path, exchange.refusal.keyword) == (
        RefusalKind.SCHEMA,
        "#/properties/a",
        "$ref",
    )


def test_failed_generation_kept_for_the_words_reader(serve: Serve) -> None:
    exchange = send(
        serve(
            OpenAIEmulator(
                ignores_tools(), queue=[refusal("groq-tool-use-failed-carries-failed-generation")]
            )
        ),
        ask(),
    )
    assert exchange.refusal is not None
    assert (
        exchange.refusal.failed_generation
        == '<function=brave_search>{"query": "Hello!"}</function>'
    )


def test_rate_limit_waits_as_told_then_succeeds(serve: Serve) -> None:
    limited = refusal("groq-429-try-again-in-fractional-seconds")
    server = serve(OpenAIEmulator(ignores_tools("ok"), queue=[limited]))
    sleeps = Sleeps()
    exchange = send(server, ask(), sleeps=sleeps, policy=Policy(max_wait=60))
    assert exchange.reply is not None and exchange.reply.text == "ok"
    assert (exchange.attempts, sleeps.waits) == (
        2,
        [vector("groq-429-try-again-in-fractional-seconds")["want"]["retry_after"]],
    )


def test_a_wait_longer_than_allowed_is_not_taken(serve: Serve) -> None:
    server = serve(
        OpenAIEmulator(
            ignores_tools("ok"), queue=[refusal("groq-429-try-again-in-fractional-seconds")]
        )
    )
    exchange = send(server, ask(), policy=Policy(max_wait=5))
    assert (
        exchange.refusal is not None
        and exchange.refusal.kind is RefusalKind.RATE_LIMIT
        and exchange.attempts == 1
    )


def test_server_errors_retry_with_backoff_and_give_up(serve: Serve) -> None:
    failing = [Response(503, b"Service Unavailable") for _ in range(10)]
    server = serve(OpenAIEmulator(ignores_tools(), queue=failing))
    sleeps = Sleeps()
    exchange = send(server, ask(), sleeps=sleeps, policy=Policy(retries=3, backoff=0.5))
    assert exchange.refusal is not None and exchange.status == 503
    assert (exchange.attempts, sleeps.waits, len(server.received)) == (4, [0.375, 0.75, 1.5], 4)


@pytest.mark.parametrize(
    ("response", "shape"),
    [
        pytest.param(
            Response(
                200,
                b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                {"content-type": "text/html"},
            ),
            "html_page",
            id="html-page-as-200",
        ),
        pytest.param(
            Response(200, b'{"choices": [{"message": {"content": "He'),
            "not_json",
            id="truncated-json",
        ),
        pytest.param(Response.json({"choices": []}), "empty_choices", id="empty-choices"),
        pytest.param(
            Response(200, chunks=[b'data: {"choices": [{"delta": {"content": "Hi"}}]}\n\n']),
            "stream_unterminated",
            id="sse-without-done",
        ),
    ],
)
def test_wrong_shapes_are_wire_errors(serve: Serve, response: Response, shape: str) -> None:
    stream = response.chunks is not None
    exchange = send(serve(OpenAIEmulator(ignores_tools(), queue=[response])), ask(stream))
    assert exchange.error is not None
    assert (exchange.error.kind, exchange.error.shape) == (WireErrorKind.BAD_SHAPE, shape)
    if shape == "stream_unterminated":
        assert exchange.error.partial is not None and exchange.error.partial.text == "Hi"


@pytest.mark.parametrize(
    ("quirks", "finding"),
    [
        pytest.param({"no_index"}, "delta_without_index", id="deltas-without-index"),
        pytest.param({"args_object"}, "arguments_as_object", id="arguments-as-object"),
        pytest.param({"args_null"}, "arguments_null", id="arguments-null-then-pieces"),
    ],
)
def test_stream_quirks_are_findings_not_crashes(
    serve: Serve, quirks: set[str], finding: str
) -> None:
    server = serve(OpenAIEmulator(calls_cleanly(arguments={"city": "Paris"}), quirks=quirks))
    reply = send(server, ask(True)).reply
    assert reply is not None
    assert [json.loads(c.arguments) for c in reply.tool_calls] == [{"city": "Paris"}]
    assert finding in [f.code for f in reply.findings]


def test_lmstudio_error_event_inside_a_200_stream(serve: Serve) -> None:
    server = serve(
        OpenAIEmulator(ignores_tools("Some words before it fails."), quirks={"error_event"})
    )
    exchange = send(server, ask(True))
    assert (
        exchange.status == 200
        and exchange.refusal is not None
        and exchange.refusal.kind is RefusalKind.TOOLS
    )


def test_body_size_is_capped(serve: Serve) -> None:
    server = serve(OpenAIEmulator(ignores_tools("x" * 50_000)))
    exchange = send(server, ask(), policy=Policy(max_body=10_000))
    assert exchange.error is not None and exchange.error.kind is WireErrorKind.TOO_LARGE


def test_redirects_are_not_followed_with_a_key(serve: Serve) -> None:
    elsewhere = serve(OpenAIEmulator(ignores_tools()))
    server = serve(
        OpenAIEmulator(
            ignores_tools(),
            queue=[Response(307, b"", {"location": elsewhere.url + "/v1/chat/completions"})],
        )
    )
    exchange = send(server, ask(), key="sk-test-0123456789abcdef", target="openai:gpt")
    assert exchange.error is not None and exchange.error.kind is WireErrorKind.REDIRECT
    assert elsewhere.received == []


def test_key_refused_over_plain_http_to_another_host() -> None:
    async def go() -> Exchange:
        def fail(request: httpx.Request) -> httpx.Response:
            raise AssertionError("nothing may be sent")

        async with Wire(transport=httpx.MockTransport(fail)) as wire:
            target = parse_target("openai:gpt", base_url="http://example.invalid/v1")
            return await wire.send(
                target, OpenAIAdapter(), ask(), Secret("sk-test-0123456789abcdef")
            )

    exchange = asyncio.run(go())
    assert exchange.error is not None and exchange.error.kind is WireErrorKind.INSECURE
    assert exchange.attempts == 0


KEY = "sk-live-KEEPTHISSECRET0123456789"


def test_keys_never_reach_the_record(serve: Serve) -> None:
    echo = Response.json(
        {
            "error": {
                "message": f"Incorrect API key provided: {KEY}.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
        401,
    )
    server = serve(OpenAIEmulator(ignores_tools(), queue=[echo]))
    exchange = send(server, ask(), key=KEY, target="openai:gpt")
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"
    record = repr(exchange) + json.dumps(exchange.request_headers) + exchange.body
    assert KEY not in record
    assert exchange.refusal is not None and exchange.refusal.kind is RefusalKind.AUTH
    assert exchange.request_headers["authorization"] == "[redacted]"
    assert repr(Secret(KEY)) == "Secret([redacted])" and str(Secret(KEY)) == "[redacted]"


def test_timeouts_are_wire_errors(serve: Serve) -> None:
    def slow(received: Any) -> Response:
        import time

        time.sleep(0.5)
        return Response.json({})

    exchange = send(serve(slow), ask(), policy=Policy(read_timeout=0.1, retries=1))
    assert (
        exchange.error is not None
        and exchange.error.kind is WireErrorKind.TIMEOUT
        and exchange.attempts == 2
    )


def test_connection_refused_is_a_wire_error() -> None:
    server = EmulatorServer(lambda r: Response())
    url = server.url
    server.close()

    async def go() -> Exchange:
        async with Wire(policy=Policy(retries=0)) as wire:
            return await wire.send(
                parse_target("llamacpp:local", base_url=url + "/v1"), OpenAIAdapter(), ask(), None
            )

    exchange = asyncio.run(go())
    assert exchange.error is not None and exchange.error.kind is WireErrorKind.CONNECT


def test_gemini_openai_endpoint_refuses_outside_its_subset_with_an_array(serve: Serve) -> None:
    bad = Tool(
        "f",
        "",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string", "const": "x"}},
            "additionalProperties": False,
        },
    )
    server = serve(OpenAIEmulator(ignores_tools(), flavour="gemini-openai"))
    exchange = send(
        server,
        ChatRequest("gemini-2.5-flash", ASK, tools=(bad,)),
        target="gemini-openai:gemini-2.5-flash",
    )
    assert exchange.refusal is not None
    assert exchange.body.startswith("[{")
    assert (exchange.refusal.kind, exchange.refusal.keyword, exchange.refusal.tool_index) == (
        RefusalKind.SCHEMA,
        "const",
        0,
    )
    assert (
        exchange.refusal.path == "tools[0].function_declarations[0].parameters.properties[1].value"
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_call_when_none_is_needed_arrives_with_its_words(serve: Serve, stream: bool) -> None:
    server = serve(OpenAIEmulator(calls_without_need()))
    request = ChatRequest("local", (Message(Role.USER, "Hello!"),), tools=(WEATHER,), stream=stream)
    reply = send(server, request).reply
    assert reply is not None and reply.text == "Let me check."
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]


def test_groq_failed_generation_reads_as_a_call_in_words(serve: Serve) -> None:
    from conchcheck.core.words import read_calls

    exchange = send(
        serve(
            OpenAIEmulator(
                ignores_tools(), queue=[refusal("groq-tool-use-failed-carries-failed-generation")]
            )
        ),
        ask(),
    )
    assert exchange.refusal is not None and exchange.refusal.failed_generation is not None
    brave = {
        "name": "brave_search",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    (call,) = read_calls(exchange.refusal.failed_generation, [brave]).calls
    assert (call.form.value, call.name, call.arguments) == (
        "function_tag",
        "brave_search",
        {"query": "Hello!"},
    )
