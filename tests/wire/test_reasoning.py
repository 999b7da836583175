"""The reasoning channel in every API family's spelling, whole and streamed: it becomes
``Reply.reasoning``, never part of ``text``, and its words never raise a marker finding.

Spellings (each adapter's comment names its source): chat completions ``reasoning_content``
(llama-server --reasoning-format deepseek, DeepSeek, SGLang) and ``reasoning`` (vLLM, which
sends both, alike; OpenRouter); Responses ``reasoning`` items (``reasoning_text`` content,
``summary_text`` summary) and their delta events; Anthropic ``thinking`` blocks and
``thinking_delta`` (``redacted_thinking`` is seen, with no text); Gemini parts with
``"thought": true``; Ollama ``message.thinking``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from conchcheck.wire.adapter import ChatAdapter, Framing
from conchcheck.wire.anthropic import AnthropicAdapter
from conchcheck.wire.chat import ChatRequest, Message, Reply, Role
from conchcheck.wire.framing import NDJSONDecoder, SSEDecoder
from conchcheck.wire.gemini import GeminiAdapter
from conchcheck.wire.keys import Secret, scrub_reply
from conchcheck.wire.ollama import OllamaAdapter
from conchcheck.wire.openai import OpenAIAdapter
from conchcheck.wire.responses import ResponsesAdapter
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.gemini_api import GeminiEmulator
from tests.emulators.model import Answer, Asked
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import Handler, Received

WIRE = Path(__file__).parent
ASK = Message(Role.USER, "Hello!")
THOUGHT = 'The user wants Paris. <tool_call>{"name": "get_weather"}</tool_call>'
"""Reasoning that holds a call's markers: in the text they would be a finding; here, none."""


def streamed(adapter: ChatAdapter, body: bytes) -> Reply:
    """``body`` through the adapter's framing and a fresh reducer, as the transport reads it."""
    reducer = adapter.reducer()
    if adapter.framing is Framing.NDJSON:
        lines = NDJSONDecoder()
        for event, data in [*lines.feed(body), *lines.close()]:
            reducer.feed(data, event)
        return reducer.finish(terminated=False)
    sse = SSEDecoder(done_marker=getattr(adapter, "done_marker", "[DONE]"))
    for event, data in [*sse.feed(body), *sse.close()]:
        reducer.feed(data, event)
    return reducer.finish(terminated=sse.done)


def sse(*events: dict[str, Any], done: bool = False) -> bytes:
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def chat(message: dict[str, Any]) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}
    return json.dumps({"choices": [choice]}).encode()


def chunks(*deltas: dict[str, Any]) -> bytes:
    events = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return sse(*events, end, done=True)


def response(*output: dict[str, Any]) -> dict[str, Any]:
    return {"status": "completed", "output": list(output)}


def said(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}  # fmt: skip


def typed(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


def responses_stream(*events: dict[str, Any], output: tuple[dict[str, Any], ...] = ()) -> bytes:
    created = typed("response.created", response={"status": "in_progress", "output": []})
    completed = typed("response.completed", response=response(*output))
    return sse(created, *events, completed)


def anthropic_stream(*blocks: tuple[dict[str, Any], list[dict[str, Any]]]) -> bytes:
    start = {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 9}}}
    events: list[dict[str, Any]] = [start]
    for index, (block, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
               {"type": "message_stop"}]  # fmt: skip
    return sse(*events)


def gemini(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)},
                            "finishReason": "STOP"}]}  # fmt: skip


def ollama(message: dict[str, Any], *, done: bool = True) -> dict[str, Any]:
    line: dict[str, Any] = {"model": "qwen3", "message": {"role": "assistant", **message}}
    line["done"] = done
    if done:
        line["done_reason"] = "stop"
    return line


def ndjson(*lines: dict[str, Any]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


WHOLE = [
    pytest.param(OpenAIAdapter(), chat({"content": "Hi.", "reasoning_content": THOUGHT}),
                 "Hi.", THOUGHT, [], id="openai-reasoning-content-llamacpp-deepseek"),
    pytest.param(OpenAIAdapter(), chat({"content": "Hi.", "reasoning": THOUGHT}),
                 "Hi.", THOUGHT, [], id="openai-reasoning-openrouter-vllm"),
    pytest.param(OpenAIAdapter(),
                 chat({"content": "Hi.", "reasoning": THOUGHT, "reasoning_content": THOUGHT}),
                 "Hi.", THOUGHT, [], id="openai-both-keys-alike-vllm-one-copy"),
    pytest.param(OpenAIAdapter(),
                 chat({"content": None, "reasoning": THOUGHT, "reasoning_content": "older"}),
                 "", THOUGHT, [], id="openai-both-keys-differ-reasoning-counts-vllm"),
    pytest.param(OpenAIAdapter(), chat({"content": "Hi.", "reasoning_content": None}),
                 "Hi.", "", [], id="openai-reasoning-null-is-none"),
    pytest.param(ResponsesAdapter(),
                 json.dumps(response(
                     typed("reasoning", id="rs_1", summary=[],
                           content=[{"type": "reasoning_text", "text": THOUGHT}]),
                     said("Hi."),
                 )).encode(),
                 "Hi.", THOUGHT, [], id="responses-reasoning-text-content-vllm"),
    pytest.param(ResponsesAdapter(),
                 json.dumps(response(
                     typed("reasoning", id="rs_1",
                           summary=[{"type": "summary_text", "text": "**Weather**"},
                                    {"type": "summary_text", "text": " in Paris."}]),
                     said("Hi."),
                 )).encode(),
                 "Hi.", "**Weather** in Paris.", [], id="responses-summary-text-openai"),
    pytest.param(AnthropicAdapter(),
                 json.dumps({"content": [
                     {"type": "thinking", "thinking": THOUGHT, "signature": "EqQB"},
                     {"type": "text", "text": "Hi."},
                 ], "stop_reason": "end_turn"}).encode(),
                 "Hi.", THOUGHT, [], id="anthropic-thinking-block"),
    pytest.param(AnthropicAdapter(),
                 json.dumps({"content": [
                     {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                     {"type": "text", "text": "Hi."},
                 ], "stop_reason": "end_turn"}).encode(),
                 "Hi.", "", ["reasoning_redacted"], id="anthropic-redacted-thinking-seen-no-text"),
    pytest.param(GeminiAdapter(), (WIRE / "gemini" / "thought-parts-skipped.json").read_bytes(),
                 "Hello! How can I help?",
                 '**Choosing a tool**\n\nI could call get_weather(city="Paris"), but the user '
                 "only said hello.", [], id="gemini-thought-part"),
    pytest.param(OllamaAdapter(), json.dumps(ollama({"content": "Hi.", "thinking": THOUGHT})).encode(),
                 "Hi.", THOUGHT, [], id="ollama-message-thinking"),
]  # fmt: skip


@pytest.mark.parametrize(("adapter", "body", "text", "reasoning", "codes"), WHOLE)
def test_whole_reply_reasoning(
    adapter: ChatAdapter, body: bytes, text: str, reasoning: str, codes: list[str]
) -> None:
    reply = adapter.parse(body)
    assert (reply.text, reply.reasoning) == (text, reasoning)
    assert [f.code for f in reply.findings] == codes


STREAMED = [
    pytest.param(OpenAIAdapter(),
                 chunks({"role": "assistant", "reasoning_content": THOUGHT[:9]},
                        {"reasoning_content": THOUGHT[9:]}, {"content": "Hi."}),
                 "Hi.", THOUGHT, [], id="openai-delta-reasoning-content-llamacpp"),
    pytest.param(OpenAIAdapter(),
                 chunks({"reasoning": THOUGHT[:9], "reasoning_content": THOUGHT[:9]},
                        {"reasoning": THOUGHT[9:], "reasoning_content": THOUGHT[9:]},
                        {"content": "Hi."}),
                 "Hi.", THOUGHT, [], id="openai-delta-both-keys-vllm-one-copy"),
    pytest.param(OpenAIAdapter(), chunks({"reasoning": THOUGHT}, {"content": "Hi."}),
                 "Hi.", THOUGHT, [], id="openai-delta-reasoning-openrouter"),
    pytest.param(ResponsesAdapter(),
                 responses_stream(
                     typed("response.reasoning_text.delta", output_index=0, delta=THOUGHT[:9]),
                     typed("response.reasoning_text.delta", output_index=0, delta=THOUGHT[9:]),
                     typed("response.output_text.delta", output_index=1, delta="Hi."),
                 ),
                 "Hi.", THOUGHT, [], id="responses-reasoning-text-delta"),
    pytest.param(ResponsesAdapter(),
                 responses_stream(
                     typed("response.reasoning_summary_text.delta", output_index=0,
                           summary_index=0, delta="**Weather**"),
                     typed("response.output_text.delta", output_index=1, delta="Hi."),
                 ),
                 "Hi.", "**Weather**", [], id="responses-reasoning-summary-text-delta"),
    pytest.param(ResponsesAdapter(),
                 responses_stream(output=(
                     typed("reasoning", id="rs_1", summary=[],
                           content=[{"type": "reasoning_text", "text": THOUGHT}]),
                     said("Hi."),
                 )),
                 "Hi.", THOUGHT, [], id="responses-reasoning-only-in-completed"),
    pytest.param(AnthropicAdapter(),
                 anthropic_stream(
                     ({"type": "thinking", "thinking": ""},
                      [{"type": "thinking_delta", "thinking": THOUGHT[:9]},
                       {"type": "thinking_delta", "thinking": THOUGHT[9:]},
                       {"type": "signature_delta", "signature": "EqQB"}]),
                     ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Hi."}]),
                 ),
                 "Hi.", THOUGHT, [], id="anthropic-thinking-delta"),
    pytest.param(AnthropicAdapter(),
                 anthropic_stream(
                     ({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}, []),
                     ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Hi."}]),
                 ),
                 "Hi.", "", ["reasoning_redacted"], id="anthropic-redacted-thinking-streamed"),
    pytest.param(GeminiAdapter(),
                 sse({"candidates": [{"content": {"role": "model",
                                                  "parts": [{"text": THOUGHT[:9], "thought": True}]}}]},
                     {"candidates": [{"content": {"role": "model",
                                                  "parts": [{"text": THOUGHT[9:], "thought": True}]}}]},
                     gemini({"text": "Hi."})),
                 "Hi.", THOUGHT, [], id="gemini-thought-parts-streamed"),
    pytest.param(OllamaAdapter(),
                 ndjson(ollama({"content": "", "thinking": THOUGHT[:9]}, done=False),
                        ollama({"content": "", "thinking": THOUGHT[9:]}, done=False),
                        ollama({"content": "Hi."}, done=False), ollama({"content": ""})),
                 "Hi.", THOUGHT, [], id="ollama-thinking-pieces"),
]  # fmt: skip


@pytest.mark.parametrize(("adapter", "body", "text", "reasoning", "codes"), STREAMED)
def test_streamed_reply_reasoning(
    adapter: ChatAdapter, body: bytes, text: str, reasoning: str, codes: list[str]
) -> None:
    reply = streamed(adapter, body)
    assert (reply.text, reply.reasoning) == (text, reasoning)
    assert [f.code for f in reply.findings] == codes


def test_a_call_only_in_reasoning_content_is_no_call_and_no_marker_finding() -> None:
    """vLLM's reasoning parser keeping a call in the reasoning (vllm-project/vllm#39056): the
    reply has no call and its text no markers; the call is in ``reasoning`` alone."""
    body = chat({"content": None, "reasoning_content": THOUGHT, "tool_calls": []})
    reply = OpenAIAdapter().parse(body)
    assert (reply.text, reply.tool_calls, reply.findings) == ("", (), ())
    assert reply.reasoning == THOUGHT


def emulated(stream: bool) -> list[Any]:
    """Each API's emulator with a model that reasons, and the adapter that speaks its API."""

    def model(asked: Asked) -> Answer:
        return Answer(text="Hi.", reasoning=THOUGHT)

    cases = [
        (OpenAIAdapter(), OpenAIEmulator(model), "reasoning_content"),
        (ResponsesAdapter(), ResponsesEmulator(model), "reasoning-item"),
        (AnthropicAdapter(), AnthropicEmulator(model), "thinking-block"),
        (GeminiAdapter(), GeminiEmulator(model), "thought-part"),
        (OllamaAdapter(), OllamaEmulator({"m": (["completion"], 8192, model)}), "thinking"),
    ]
    how = "streamed" if stream else "whole"
    return [
        pytest.param(a, e, stream, id=f"{a.api.value}-{spelling}-{how}") for a, e, spelling in cases
    ]


@pytest.mark.parametrize(("adapter", "emulator", "stream"), emulated(False) + emulated(True))
def test_each_emulator_renders_reasoning_in_its_api_spelling(
    adapter: ChatAdapter, emulator: Handler, stream: bool
) -> None:
    """The emulators (tests/emulators) send ``Answer.reasoning`` the way their API does, and
    the adapter of that API reads it back as the reply's reasoning, out of its text."""
    request = adapter.build("http://127.0.0.1:1/v1", ChatRequest("m", (ASK,), stream=stream), "k")
    url = urlsplit(request.url)
    headers = {k.lower(): v for k, v in request.headers.items()}
    body = json.dumps(request.body).encode()
    sent = emulator(Received(request.method, url.path, parse_qs(url.query), headers, body))
    assert sent.status == 200
    if sent.chunks is None:
        reply = adapter.parse(sent.body)
    else:
        reply = streamed(adapter, b"".join(sent.chunks))
    assert (reply.text, reply.reasoning) == ("Hi.", THOUGHT)
    assert [f.code for f in reply.findings if f.code == "call_markers_in_text"] == []


@pytest.mark.parametrize(
    ("content", "codes"),
    [
        pytest.param(f"<think>{THOUGHT}</think>Hi.", [], id="markers-inside-think-are-reasoning"),
        pytest.param(f"{THOUGHT}</think>Hi.", [], id="markers-before-a-template-opened-closer"),
        pytest.param(f"<think>Hmm.</think>{THOUGHT}", ["call_markers_in_text"],
                     id="markers-after-the-reasoning-are-a-call-left-as-text"),
    ],
)  # fmt: skip
def test_marker_findings_read_the_visible_text_only(content: str, codes: list[str]) -> None:
    reply = OpenAIAdapter().parse(chat({"content": content}))
    assert [f.code for f in reply.findings] == codes


def test_a_key_streamed_in_pieces_of_reasoning_withholds_the_raw_stream() -> None:
    """A key in the reasoning, a few characters an event, matches no mask in the raw events:
    the raw and the body are withheld, as for the text (keys never leak anywhere)."""
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6"
    events = "".join(f'data: {{"reasoning": "{key[i : i + 3]}"}}\n\n' for i in range(0, 40, 3))
    reply = Reply("", raw=events, reasoning=f"the key is {key}")
    clean, body = scrub_reply(reply, events, (Secret(key),))
    note = f"[withheld: the reply carried a key in pieces; {len(events)} characters]"
    assert (clean.raw, body) == (note, note)
    assert key not in clean.reasoning
