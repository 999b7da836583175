"""One request against a hostile server on loopback: every fault ends as a value, within the
attempt's total deadline, retried only within bounds; decoding never passes the body cap.
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import Callable

import pytest

from conchcheck.core.tools import Tool
from conchcheck.wire.adapter import ShapeKind, WireShapeError
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.exchange import Exchange, Failed, Refused, Replied
from conchcheck.wire.framing import Inflater
from conchcheck.wire.lookup import Fetched, fetch_json
from conchcheck.wire.ollama import OllamaAdapter
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Policy, Wire
from tests.emulators import faults
from tests.emulators.faults import MB, Breaker, Injector
from tests.emulators.model import Answer, calls_cleanly
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Fault, Handler, Response

Serve = Callable[[Handler], EmulatorServer]
POLICY = Policy(read_timeout=1.0, connect_timeout=1.0, retries=1, backoff=0.04, max_wait=2.0)
ARGS = {"city": "Paris"}
WEATHER = Tool(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


class Sleeps:
    """A sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def send(url: str, *, stream: bool = False, policy: Policy = POLICY, ollama: bool = False,
         sleeps: Sleeps | None = None) -> Exchange:  # fmt: skip
    async def go() -> Exchange:
        async with Wire(policy=policy, sleep=sleeps or Sleeps(), jitter=lambda: 0.5) as wire:
            target = parse_target(
                "ollama:m" if ollama else "vllm:m", base_url=url if ollama else url + "/v1"
            )
            adapter = OllamaAdapter() if ollama else OpenAIAdapter()
            request = ChatRequest(
                "m", (Message(Role.USER, "Weather in Paris?"),), tools=(WEATHER,),
                stream=stream, max_tokens=64,
            )  # fmt: skip
            return await wire.send(target, adapter, request, None)

    return asyncio.run(go())


def label(exchange: Exchange) -> str:
    match exchange.outcome:
        case Replied():
            return "replied"
        case Refused(refusal):
            return f"refused:{refusal.kind.value}"
        case Failed(error):
            return f"error:{error.kind.value}" + (f"/{error.shape}" if error.shape else "")


def detail(exchange: Exchange) -> str:
    match exchange.outcome:
        case Failed(error):
            return error.detail
        case Refused(refusal):
            return refusal.message
        case Replied(reply):
            return reply.text


CHAT = "/v1/chat/completions"

FAULTS = [
    pytest.param(faults.on_socket(Fault.RESET_BEFORE), False, "error:connect", 2,
                 "The request failed: ", id="reset-before-the-request-is-read"),
    pytest.param(faults.on_socket(Fault.RESET_AFTER), False, "error:connect", 2,
                 "The request failed: ", id="reset-after-the-request-is-read"),
    pytest.param(faults.on_socket(Fault.HANG), False, "error:timeout", 2,
                 "No complete reply within the 1 s deadline (connect, send, status and headers).",
                 id="hang"),
    pytest.param(faults.on_socket(Fault.DRIP_STATUS), False, "error:timeout", 2,
                 "No complete reply within the 1 s deadline (connect, send, status and headers).",
                 id="drip-in-the-status-line"),
    pytest.param(faults.on_socket(Fault.DRIP_HEADERS), False, "error:timeout", 2,
                 "No complete reply within the 1 s deadline (connect, send, status and headers).",
                 id="drip-in-the-headers"),
    pytest.param(faults.on_socket(Fault.DRIP_BODY), False, "error:timeout", 2,
                 "No complete reply within the 1 s deadline after ", id="drip-in-the-body"),
    pytest.param(faults.on_socket(Fault.LENGTH_LONGER), False, "error:connect", 2,
                 "The reply broke off: ", id="content-length-longer-than-the-body"),
    pytest.param(faults.on_socket(Fault.LENGTH_SHORTER), False, "error:bad_shape/not_json", 1,
                 "The provider answered 2xx with a body that is not JSON: ",
                 id="content-length-shorter-than-the-body"),
    pytest.param(faults.truncated, False, "error:bad_shape/not_json", 1,
                 "The provider answered 2xx with a body that is not JSON: ", id="truncated-json"),
    pytest.param(faults.body_of(50 * MB), False, "error:too_large", 1,
                 "The reply passed 8388608 bytes and was abandoned.", id="a-50-mb-body"),
    pytest.param(faults.gzip_bomb(), False, "error:too_large", 1,
                 "The reply passed 8388608 bytes and was abandoned.", id="gzip-bomb"),
    pytest.param(faults.deep_json(), False, "error:bad_shape/too_deep", 1,
                 "The reply nests deeper than 128 levels (at character 128); it was not parsed.",
                 id="deep-json"),
    pytest.param(faults.huge_arguments(7 * MB), False, "error:too_large", 1,
                 "A tool call's arguments are 7340032 characters long, over the limit of "
                 "1048576; the reply was not kept.", id="huge-arguments"),
    pytest.param(faults.instead(Response(200, b"{}", {"content-encoding": "br"})), False,
                 "error:bad_shape/encoding", 1,
                 "The reply is in content-encoding 'br', which conchcheck can't read (it reads "
                 "gzip and deflate).", id="unknown-content-encoding"),
    pytest.param(faults.instead(Response(200, b"this is not gzip", {"content-encoding": "gzip"})),
                 False, "error:bad_shape/encoding", 1,
                 "The reply's compressed body is corrupt: Error -3 while decompressing data: "
                 "incorrect header check.", id="corrupt-gzip"),
    pytest.param(faults.instead(Response(200, faults.gzip_bytes(b'{"a": 1}')[:12],
                                         {"content-encoding": "gzip"})),
                 False, "error:bad_shape/encoding", 1,
                 "The reply's compressed body is cut short.", id="truncated-gzip"),
    pytest.param(faults.redirect("http://elsewhere.invalid/v1/chat/completions"), False,
                 "error:redirect", 1, "The provider answered 307, a redirect to "
                 "http://elsewhere.invalid/v1/chat/completions; not followed.",
                 id="redirect-to-another-host"),
    pytest.param(faults.cut_mid_event, True, "error:connect", 2, "The reply broke off: ",
                 id="sse-cut-mid-event"),
    pytest.param(faults.without_last_event, True, "error:bad_shape/stream_unterminated", 1,
                 "The stream ended without its terminator (data: [DONE]); the reply may be cut.",
                 id="sse-without-its-terminator"),
    pytest.param(faults.on_socket(Fault.STALL_STREAM), True, "error:timeout", 2,
                 "No complete reply within the 1 s deadline after ", id="sse-goes-quiet"),
    pytest.param(faults.on_socket(Fault.DRIP_BODY), True, "error:timeout", 2,
                 "No complete reply within the 1 s deadline after ", id="sse-drips"),
]  # fmt: skip


@pytest.mark.parametrize(("breaker", "stream", "want", "attempts", "said"), FAULTS)
def test_every_fault_is_a_value_within_the_deadline(
    serve: Serve, breaker: Breaker, stream: bool, want: str, attempts: int, said: str
) -> None:
    injector = Injector(OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True, breaker)
    server = serve(injector)
    started = time.monotonic()
    exchange = send(server.url, stream=stream)
    took = time.monotonic() - started
    assert (label(exchange), exchange.attempts, len(injector.hits)) == (want, attempts, attempts)
    assert detail(exchange).startswith(said), detail(exchange)
    # Each attempt ends at its 1 s deadline; 3 s for two is a generous margin, not a timing.
    assert took < 3 * attempts


@pytest.mark.parametrize(
    ("fault", "reading"),
    [
        pytest.param(Fault.STALL_STREAM, "The", id="quiet"),
        pytest.param(Fault.DRIP_BODY, "The", id="drip"),
    ],
)
def test_a_stream_cut_at_the_deadline_keeps_its_partial_reply(
    serve: Serve, fault: Fault, reading: str
) -> None:
    words = "The weather in Paris is sunny and mild today, with a light breeze."
    emulator = OpenAIEmulator(lambda asked: Answer(text=words))
    server = serve(Injector(emulator, lambda r: True, faults.on_socket(fault)))
    exchange = send(server.url, stream=True, policy=Policy(read_timeout=1.0, retries=0))
    assert exchange.error is not None and exchange.error.partial is not None
    partial = exchange.error.partial.text
    assert partial.startswith(reading) and words.startswith(partial) and partial != words
    assert exchange.body.startswith("data: ")


def test_rate_limits_wait_as_told_within_max_wait(serve: Serve) -> None:
    table = {
        "with": ({"retry-after": "1"}, 2, [1.0]),
        "without": ({}, 2, [0.03]),
        "absurd": ({"retry-after": "999999"}, 1, []),
    }
    for name, (headers, attempts, waits) in table.items():
        breaker = faults.error(429, "Rate limit reached.", headers)
        injector = Injector(OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True, breaker)
        sleeps = Sleeps()
        exchange = send(serve(injector).url, sleeps=sleeps)
        got = (label(exchange), exchange.attempts, sleeps.waits, list(exchange.waits))
        assert got == ("refused:rate_limit", attempts, waits, waits), name


@pytest.mark.parametrize(
    ("breaker", "want"),
    [
        pytest.param(faults.error(500, "Internal server error"), "refused:other", id="500"),
        pytest.param(
            faults.instead(Response(502, faults.HTML_502, {"content-type": "text/html"})),
            "refused:other",
            id="502-html-page",
        ),
        pytest.param(faults.error(503, "Service unavailable"), "refused:other", id="503"),
        pytest.param(
            faults.instead(
                Response.json(
                    {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                    },
                    529,
                )
            ),
            "refused:other",
            id="529-overloaded",
        ),
    ],
)
def test_server_errors_are_retried_within_bounds(serve: Serve, breaker: Breaker, want: str) -> None:
    injector = Injector(OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True, breaker)
    exchange = send(serve(injector).url)
    assert (label(exchange), exchange.attempts, len(injector.hits)) == (want, 2, 2)


def test_a_fault_on_the_first_attempt_only_is_retried_to_a_reply(serve: Serve) -> None:
    injector = Injector(
        OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True,
        faults.on_socket(Fault.RESET_AFTER), times=1,
    )  # fmt: skip
    exchange = send(serve(injector).url)
    assert (label(exchange), exchange.attempts, len(injector.hits)) == ("replied", 2, 1)
    assert exchange.reply is not None
    assert [json.loads(c.arguments) for c in exchange.reply.tool_calls] == [ARGS]


def test_invalid_utf8_is_read_with_replacement_characters(serve: Serve) -> None:
    injector = Injector(OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True,
                        faults.invalid_utf8)  # fmt: skip
    exchange = send(serve(injector).url)
    assert exchange.reply is not None
    assert exchange.reply.text == "caf\ufffd \ufffd\ufffd ok \ufffd"
    assert [json.loads(c.arguments) for c in exchange.reply.tool_calls] == [ARGS]


@pytest.mark.parametrize(
    ("size", "want"),
    [
        pytest.param(1000, "replied", id="at-the-limit"),
        pytest.param(1001, "error:too_large", id="one-past-the-limit"),
    ],
)
def test_arguments_are_capped_at_max_arguments(serve: Serve, size: int, want: str) -> None:
    injector = Injector(OpenAIEmulator(calls_cleanly(arguments=ARGS)), lambda r: True,
                        faults.huge_arguments(size))  # fmt: skip
    policy = Policy(read_timeout=1.0, retries=0, max_arguments=1000)
    assert label(send(serve(injector).url, policy=policy)) == want


def test_an_ndjson_stream_cut_mid_line_keeps_what_it_carried(serve: Serve) -> None:
    emulator = OllamaEmulator({"m": (["completion", "tools"], 8192,
                                     lambda asked: Answer(text="Sunny in Paris today."))})  # fmt: skip
    server = serve(Injector(emulator, lambda r: r.path == "/api/chat", faults.cut_mid_line))
    exchange = send(server.url, stream=True, ollama=True)
    assert (label(exchange), exchange.attempts) == ("error:bad_shape/stream_unterminated", 1)
    assert exchange.error is not None and exchange.error.partial is not None
    assert exchange.error.partial.text == "Sunny in Par"


# Catalogues: the same deadline, the same decoding cap, the same depth guard.


def fetch(url: str) -> Fetched:
    async def go() -> Fetched:
        async with Wire(policy=POLICY) as wire:
            return await fetch_json(wire, "GET", url + "/props")

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("breaker", "error"),
    [
        pytest.param(faults.on_socket(Fault.DRIP_BODY),
                     "No complete reply within the 1 s deadline.", id="drip"),
        pytest.param(faults.on_socket(Fault.DRIP_HEADERS),
                     "No complete reply within the 1 s deadline.", id="drip-headers"),
        pytest.param(faults.gzip_bomb(), "The reply passed 8388608 bytes and was abandoned.",
                     id="gzip-bomb"),
        pytest.param(faults.deep_json(), "The reply nests deeper than 128 levels (at character "
                     "128); it was not parsed.", id="deep-json"),
    ],
)  # fmt: skip
def test_catalogue_faults_are_errors_within_the_deadline(
    serve: Serve, breaker: Breaker, error: str
) -> None:
    emulator = OpenAIEmulator(calls_cleanly(), flavour="llamacpp")
    server = serve(Injector(emulator, lambda r: True, breaker))
    started = time.monotonic()
    fetched = fetch(server.url)
    assert (fetched.error, fetched.data) == (error, None)
    assert time.monotonic() - started < 3


def test_catalogue_gzip_is_read(serve: Serve) -> None:
    data = {"n_ctx": 4096}
    body = zlib.compress(json.dumps(data).encode())
    response = Response(
        200, body, {"content-type": "application/json", "content-encoding": "deflate"}
    )
    fetched = fetch(serve(lambda r: response).url)
    assert (fetched.status, fetched.data, fetched.error) == (200, data, None)


# The inflater on its own: what it gives back never passes the cap by more than one byte.


def raw_deflate(data: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        pytest.param(None, lambda d: d, id="none"),
        pytest.param("identity", lambda d: d, id="identity"),
        pytest.param("gzip", faults.gzip_bytes, id="gzip"),
        pytest.param("GZip", faults.gzip_bytes, id="gzip-any-case"),
        pytest.param("deflate", zlib.compress, id="deflate-zlib"),
        pytest.param("deflate", raw_deflate, id="deflate-raw"),
    ],
)
def test_inflater_reads_every_encoding_in_any_pieces(
    encoding: str | None, encode: Callable[[bytes], bytes]
) -> None:
    data = json.dumps({"text": "x" * 5000, "n": list(range(500))}).encode()
    sent = encode(data)
    inflater = Inflater(encoding, 1 << 20)
    pieces = [inflater.feed(sent[i : i + 7]) for i in range(0, len(sent), 7)]
    assert b"".join(pieces) + inflater.close() == data


def test_inflater_never_holds_more_than_the_cap_of_a_bomb() -> None:
    bomb = faults.gzip_bytes(bytes(64 * MB))
    assert len(bomb) < 100_000
    limit = 1 * MB
    inflater = Inflater("gzip", limit)
    given = [len(inflater.feed(bomb[i : i + 65536])) for i in range(0, len(bomb), 65536)]
    assert sum(given) == limit + 1 and max(given) <= limit + 1
    assert inflater.close() == b""


@pytest.mark.parametrize(
    ("encoding", "data", "message"),
    [
        pytest.param("br", b"", "The reply is in content-encoding 'br', which conchcheck can't "
                     "read (it reads gzip and deflate).", id="brotli"),
        pytest.param("gzip, gzip", b"", "The reply is in content-encoding 'gzip, gzip', which "
                     "conchcheck can't read (it reads gzip and deflate).", id="two-encodings"),
        pytest.param("gzip", b"not gzip", "The reply's compressed body is corrupt: Error -3 "
                     "while decompressing data: incorrect header check.", id="not-gzip"),
    ],
)  # fmt: skip
def test_inflater_refuses_what_it_cant_read(encoding: str, data: bytes, message: str) -> None:
    with pytest.raises(WireShapeError) as caught:
        Inflater(encoding, MB).feed(data)
    assert (caught.value.kind, str(caught.value)) == (ShapeKind.ENCODING, message)
