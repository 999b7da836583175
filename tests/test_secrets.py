"""The canary: a key echoed back everywhere a provider can put it never reaches an output.

For every provider conchcheck knows, the real CLI probes an emulator of its API family with a
canary key (one shaped like a provider key, one shaped like nothing known). The emulator
echoes the key in the reply's text, a call's arguments, a refusal's message, a Groq-style
``failed_generation`` (JSON-escaped, "/" written "\\/"), the catalogue's fields, every
streamed reply and a response header. Every file written (the reports, the capability file)
and both streams are then searched for the key in every form it can take: it is nowhere,
while the mask shows the echoes did arrive.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from conchcheck.matrix import load_matrix
from conchcheck.wire.providers import PROVIDERS, Catalogue
from tests.emulators.anthropic_api import AnthropicEmulator
from tests.emulators.gemini_api import GeminiEmulator
from tests.emulators.model import Answer, Asked, Behaviour, Call
from tests.emulators.ollama_api import OllamaEmulator
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import EmulatorServer, Handler, Received, Response

ROOT = Path(__file__).parent.parent
MATRIX = load_matrix("default")
MASK = "[redacted]"

PREFIXED = "sk-proj-c4n4ry7f3a9c2e41b04d5f8a6e1c0b9d7f3a2e"
"""Shaped like an OpenAI key: shape-based masking alone would catch it."""
PLAIN = "canary-7f3a9c2e41b04d5f/Qx+Zt8wLm=Rk4vN2p0sY9hJ6"
"""Shaped like nothing known, with "/", "+" and "=" that JSON, URLs and HTML write apart."""

API_PATH = {
    "openai": "/v1",
    "responses": "/v1",
    "anthropic": "/v1",
    "gemini": "/v1beta",
    "ollama": "",
}
READS_FIELDS = {Catalogue.OPENROUTER, Catalogue.OLLAMA, Catalogue.LLAMACPP, Catalogue.GEMINI}
"""Catalogues whose fields reach the evidence (the others only count the models listed)."""


def forms(key: str) -> set[str]:
    """The key as is and as JSON, URLs, HTML, XML and Python write it; and a piece of it.

    Written out here, not taken from conchcheck, so a form conchcheck forgets is found.
    """
    once = {json.dumps(key)[1:-1], json.dumps(key)[1:-1].replace("/", "\\/")}
    twice = {json.dumps(f)[1:-1] for f in once}
    found = {key, *once, *twice, quote(key, safe=""), quote(key), quote_plus(key)}
    found |= {html.escape(key), html.escape(key, quote=False), repr(key)[1:-1]}
    found |= {f.lower() for f in (quote(key, safe=""), quote_plus(key))}
    # Sixteen characters from the middle: a key cut short or masked at its ends still leaks.
    found.add(key[len(key) // 2 - 8 : len(key) // 2 + 8])
    return found


def echoing(key: str) -> Behaviour:
    """The oracle, with the key in its words and an extra ``note`` argument in every call."""
    inner = oracle(MATRIX)

    def behave(asked: Asked) -> Answer:
        answer = inner(asked)
        calls = [Call(c.name, _noted(c.arguments, key)) for c in answer.calls]
        return Answer(f"{answer.text}\nref {key}".strip(), calls, answer.finish)

    return behave


def _noted(arguments: Any, key: str) -> Any:
    value = json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
    value["note"] = key
    return json.dumps(value) if isinstance(arguments, str) else value


@dataclass
class Echo:
    """Wraps a family's emulator: serves the catalogues with the key in their fields, refuses
    the first request with tools with the key in the refusal, and sends the key back in a
    header of every response."""

    inner: Handler
    key: str
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, received: Received) -> Response:
        response = self.serve(received)
        response.headers = {**response.headers, "x-request-echo": self.key}
        return response

    def serve(self, received: Received) -> Response:
        path = received.path
        if path.endswith("/props"):
            caps = {"supports_tools": True, "supports_tool_calls": True, "echo": self.key}
            return Response.json({"chat_template_caps": caps, "n_ctx": 32768})
        if path.endswith("/api/show"):
            return Response.json({
                "capabilities": ["completion", "tools", self.key],
                "model_info": {"general.architecture": "llama", "llama.context_length": 32768},
            })  # fmt: skip
        if received.method == "GET" and "/models/" in path:
            methods = ["generateContent", self.key]
            return Response.json({"name": "models/m", "inputTokenLimit": 32768,
                                  "supportedGenerationMethods": methods})  # fmt: skip
        if received.method == "POST" and (received.json() or {}).get("tools"):
            with self.lock:
                count, self.refused = self.refused, self.refused + 1
            if count == 0:
                return self.failed_generation()
        return self.inner(received)

    def failed_generation(self) -> Response:
        # Groq's 400 (vector groq-tool-use-failed-carries-failed-generation): the model's
        # output as a JSON string, here with the call's arguments a JSON string inside it.
        arguments = json.dumps({"fact": self.key})
        generation = f'<tool_call>{{"name": "remember", "arguments": {json.dumps(arguments)}}}'
        error = {
            "message": f"Failed to call a function with the key {self.key}. Please adjust "
            "your prompt. See 'failed_generation' for more details.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": generation + "</tool_call>",
        }
        # PHP's json_encode and Go's HTML-safe encoder write "/" as "\/".
        body = json.dumps({"error": error}).replace("/", "\\/")
        return Response(400, body.encode(), {"content-type": "application/json"})


def emulator(provider: str, key: str) -> Handler:
    api = PROVIDERS[provider].api
    behaviour = echoing(key)
    inner: Handler
    if api == "anthropic":
        inner = AnthropicEmulator(behaviour, key=key)
    elif api == "gemini":
        inner = GeminiEmulator(behaviour, key=key)
    elif api == "ollama":
        inner = OllamaEmulator({"m": (["completion", "tools"], 32768, behaviour)})
    elif api == "responses":
        inner = ResponsesEmulator(behaviour, key=key)
    else:
        entry = {"id": "m", "supported_parameters": ["tools", key], "context_length": 32768}
        flavour = "openrouter" if provider == "openrouter" else "openai"
        inner = OpenAIEmulator(behaviour, flavour=flavour, key=key, catalogue=[entry])
    return Echo(inner, key)


def carried_key(received: Received, key: str) -> bool:
    headers = received.headers
    return key in {
        headers.get("authorization", "").removeprefix("Bearer "),
        headers.get("x-api-key"),
        headers.get("x-goog-api-key"),
    }


CASES = [
    pytest.param(provider, key, as_json, id=f"{provider}-{name}")
    for provider in PROVIDERS
    for key, name, as_json in ((PREFIXED, "prefixed-key", False), (PLAIN, "unprefixed-key", True))
]


@pytest.mark.parametrize(("provider", "key", "as_json"), CASES)
def test_the_key_echoed_back_is_written_nowhere(
    serve: Callable[[Handler], EmulatorServer],
    tmp_path: Path,
    provider: str,
    key: str,
    as_json: bool,
) -> None:
    server = serve(emulator(provider, key))
    known = PROVIDERS[provider]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    args = []
    if known.key_env is not None:
        env[known.key_env] = key
    else:
        env["CANARY_KEY"] = key
        args = ["--api-key-env", "CANARY_KEY"]
    out, cache = tmp_path / "out", tmp_path / "capabilities.yaml"
    base = server.url + ("/v1beta/openai" if provider == "gemini-openai" else API_PATH[known.api])
    run = subprocess.run(
        [sys.executable, "-m", "conchcheck", "probe", f"{provider}:m", "--base-url", base,
         "--out", str(out), "--cache", str(cache), *args, *(["--json"] if as_json else [])],
        env=env, capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr

    written = {path.name: path.read_text(encoding="utf-8") for path in out.iterdir()}
    written |= {"capability file": cache.read_text(encoding="utf-8")}
    written |= {"stdout": run.stdout, "stderr": run.stderr}
    assert set(written) == {"results.json", "report.md", "report.html", "junit.xml",
                            "capability file", "stdout", "stderr"}  # fmt: skip
    leaks = {(name, form) for name, text in written.items() for form in forms(key) if form in text}
    assert leaks == set()

    # The key went out, and came back in every place: the mask stands where it was.
    assert any(carried_key(r, key) for r in server.received)
    data = json.loads(written["results.json"])
    seen = echoes(data)
    wanted = {"reply text", "call arguments", "refusal", "failed_generation", "streamed reply"}
    if known.catalogue in READS_FIELDS:
        wanted.add("catalogue")
    assert seen >= wanted
    if as_json:
        # --json prints every cell's evidence on stdout: the echoes show there too.
        shown = json.loads(run.stdout)["result"]
        assert echoes({**shown, "cells": shown["cells"]}) == seen


def echoes(data: dict[str, Any]) -> set[str]:
    """Where results.json shows the mask: each place the emulator echoed the key."""
    seen = set()
    if MASK in json.dumps((data.get("catalogue") or {}).get("evidence")):
        seen.add("catalogue")
    for cell in data["cells"]:
        reply, refusal = cell.get("reply") or {}, cell.get("refusal") or {}
        if MASK in (reply.get("text") or ""):
            seen.add("reply text")
        if any(MASK in call["arguments"] for call in reply.get("calls") or ()):
            seen.add("call arguments")
        if MASK in refusal.get("message", ""):
            seen.add("refusal")
        if MASK in (refusal.get("failed_generation") or ""):
            seen.add("failed_generation")
        if cell.get("mode") == "streaming" and reply.get("body", "").startswith("[withheld"):
            seen.add("streamed reply")
    return seen


# -- the mask and its forms ------------------------------------------------------------------

ODD = "k3y/with+odd=chars&<\"'\\é"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        pytest.param(f"as is: {ODD}.", f"as is: {MASK}.", id="as-is"),
        pytest.param(json.dumps({"k": ODD}), '{"k": "[redacted]"}', id="json-escaped"),
        pytest.param(
            json.dumps({"k": ODD}, ensure_ascii=False),
            '{"k": "[redacted]"}',
            id="json-escaped-utf8",
        ),
        pytest.param(
            json.dumps(json.dumps({"k": ODD})),
            '"{\\"k\\": \\"[redacted]\\"}"',
            id="json-escaped-twice",
        ),
        pytest.param(
            json.dumps({"k": ODD}).replace("/", "\\/"),
            '{"k": "[redacted]"}',
            id="json-slash-escaped",
        ),
        pytest.param(f"?key={quote(ODD, safe='')}&x=1", "?key=[redacted]&x=1", id="url-encoded"),
        pytest.param(f"?key={quote_plus(ODD)}", "?key=[redacted]", id="form-encoded"),
        pytest.param(
            f"?key={quote(ODD, safe='').lower()}", "?key=[redacted]", id="url-encoded-lower-hex"
        ),
        pytest.param(f"<td>{html.escape(ODD)}</td>", "<td>[redacted]</td>", id="html-escaped"),
        pytest.param(
            f"<p>{html.escape(ODD, quote=False)}</p>", "<p>[redacted]</p>", id="html-escaped-text"
        ),
        pytest.param(f"key={ODD!r}", "key='[redacted]'", id="python-repr"),
        pytest.param(f"got {ODD[:14]}…", f"got {MASK}…", id="cut-short-at-the-end"),
        pytest.param(f"got …{ODD[-13:]}", f"got …{MASK}", id="cut-short-at-the-start"),
        pytest.param(f"a {ODD[:11]} b", f"a {ODD[:11]} b", id="too-short-a-piece-stays"),
        pytest.param("nothing of it", "nothing of it", id="untouched"),
    ],
)
def test_a_key_is_masked_in_every_form(text: str, masked: str) -> None:
    from conchcheck.redaction import Redactor

    assert Redactor([ODD]).text(text) == masked


def test_a_placeholder_key_is_no_secret() -> None:
    from conchcheck.redaction import Redactor

    # "EMPTY" and "ollama" are what local servers are given: masking them would rewrite
    # ordinary words (and "td" the HTML itself).
    assert Redactor(["EMPTY", "ollama", "td"]).text("ollama said EMPTY <td>") == (
        "ollama said EMPTY <td>"
    )


def test_every_string_of_a_value_is_masked() -> None:
    from conchcheck.redaction import Redactor
    from conchcheck.wire.chat import Finding, Reply, ToolCall

    reply = Reply(
        f"text {PLAIN}",
        (ToolCall("c1", "remember", json.dumps({"fact": PLAIN})),),
        findings=(Finding("code", f"detail {PLAIN}"),),
        raw=json.dumps({"content": PLAIN}),
    )
    masked = Redactor([PLAIN]).value(reply)
    assert masked == Reply(
        f"text {MASK}",
        (ToolCall("c1", "remember", '{"fact": "[redacted]"}'),),
        findings=(Finding("code", f"detail {MASK}"),),
        raw='{"content": "[redacted]"}',
    )
    assert Redactor([PLAIN]).value({PLAIN: [PLAIN, 3, None]}) == {MASK: [MASK, 3, None]}


def test_a_stream_that_carried_a_key_in_pieces_is_withheld() -> None:
    from conchcheck.wire.chat import Reply
    from conchcheck.wire.keys import Secret, scrub_reply

    events = "".join(f'data: {{"content": "{PLAIN[i : i + 3]}"}}\n\n' for i in range(0, 48, 3))
    reply = Reply(f"ref {PLAIN}", raw=events)
    clean, body = scrub_reply(reply, events, (Secret(PLAIN),))
    note = f"[withheld: the reply carried a key in pieces; {len(events)} characters]"
    assert (clean.text, clean.raw, body) == (f"ref {MASK}", note, note)
    whole = Reply(f"ref {PLAIN}", raw=json.dumps({"content": f"ref {PLAIN}"}))
    clean, body = scrub_reply(whole, whole.raw, (Secret(PLAIN),))
    assert (clean.raw, body) == ('{"content": "ref [redacted]"}', '{"content": "ref [redacted]"}')


# -- keys refused at the start, without being shown -------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        pytest.param(
            "sk-proj-0123456789abcdef0123",
            None,
            "--api-key-env takes the NAME of a variable, not a key",
            id="api-key-env-given-a-key",
        ),
        pytest.param(PLAIN, None, "--api-key-env takes the NAME", id="api-key-env-not-a-name"),
        pytest.param(
            "gsk_0123456789abcdefghij0123",
            None,
            "--api-key-env takes the NAME",
            id="api-key-env-a-groq-key-that-is-a-valid-name",
        ),
        pytest.param(
            "CANARY_KEY",
            f"{PLAIN[:20]}\n{PLAIN[20:]}",
            "holds a control character",
            id="key-with-a-newline",
        ),
        pytest.param(
            "CANARY_KEY",
            f"{PLAIN[:20]}\x1b[2J{PLAIN[20:]}",
            "holds a control",
            id="key-with-an-escape",
        ),
        pytest.param(
            "CANARY_KEY", f"{PLAIN[:20]}\x9b{PLAIN[20:]}", "holds a control", id="key-with-a-c1-csi"
        ),
        pytest.param(
            "CANARY_KEY", f"{PLAIN[:20]}\t{PLAIN[20:]}", "holds a control", id="key-with-a-tab"
        ),
    ],
)
def test_a_bad_key_or_key_name_is_refused_unseen(
    serve: Callable[[Handler], EmulatorServer], tmp_path: Path, name: str, value: str | None,
    shown: str,
) -> None:  # fmt: skip
    server = serve(emulator("vllm", PLAIN))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    if value is not None:
        env[name] = value
    run = subprocess.run(
        [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url", server.url + "/v1",
         "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.yaml"), "--api-key-env", name],
        env=env, capture_output=True, text=True, encoding="utf-8", timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2
    assert shown in run.stderr
    secret = value if value is not None else name
    pieces = {secret, *(secret[i : i + 8] for i in range(0, len(secret) - 8, 4))}
    assert {p for p in pieces if p in run.stdout + run.stderr} == set()
    assert server.received == []
    assert not (tmp_path / "out").exists()


def test_a_key_with_a_nul_is_refused_unseen() -> None:
    # No process environment can hold a NUL; a caller's own mapping can.
    from conchcheck.errors import InputError
    from conchcheck.wire.keys import resolve_key

    with pytest.raises(InputError) as caught:
        resolve_key(PROVIDERS["openai"], environ={"OPENAI_API_KEY": f"{PLAIN}\x00x"})
    assert str(caught.value) == (
        "The key in $OPENAI_API_KEY holds a control character (a line break, tab, NUL or "
        "escape), so it can't be sent; it is not shown here."
    )
    assert caught.value.exit_code == 2
