"""Two local servers whose errors are answers (issue 20, item 4), as handlers for
``EmulatorServer``, each counting the POSTs it was sent.

- ``LlamaServerPeg``: llama-server whose call parser is built from the template
  ("peg-native"): when the model writes its call in a code fence the template doesn't render,
  a non-streamed request gets the 500 of vector llamacpp-500-output-does-not-match-peg-native
  (tests/data/unparsed.yaml), every time, since temperature 0 gives the same output. A
  streamed request is answered as the inner emulator answers it (the real server sends its
  throw as an event after the headers; that path is not emulated here).
- ``LlamaCppPython``: llama-cpp-python's server refusing a function without ``parameters``
  with the 500 of vector llamacpp-python-500-validation-error-names-the-tool-field
  (tests/data/refusals.yaml), the body FastAPI 0.165 writes (its file and line as in the vector).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.emulators.model import Behaviour
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import Received, Response
from tests.emulators.vectors import vector

UNPARSED = Path(__file__).parent.parent / "data" / "unparsed.yaml"
PEG_NATIVE = "llamacpp-500-output-does-not-match-peg-native"
VALIDATION = "llamacpp-python-500-validation-error-names-the-tool-field"


@cache
def unparsed_vector(vector_id: str) -> dict[str, Any]:
    """The entry of tests/data/unparsed.yaml with this id."""
    return next(v for v in yaml.safe_load(UNPARSED.read_text()) if v["id"] == vector_id)


@dataclass
class Counted:
    """Serves ``inner``, counting the POSTs by body (the same request twice is one key)."""

    inner: OpenAIEmulator
    posts: Counter[bytes] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, received: Received) -> Response:
        if received.method == "POST":
            with self.lock:
                self.posts[received.body] += 1
        return self.answer(received)

    def answer(self, received: Received) -> Response:
        return self.inner(received)


@dataclass
class LlamaServerPeg(Counted):
    failed: int = 0
    """Requests answered with the parse failure."""

    def answer(self, received: Received) -> Response:
        response = self.inner(received)
        if received.method != "POST" or response.chunks is not None:
            return response
        sent = json.loads(received.body)
        said = json.loads(response.body) if response.status == 200 else {}
        text = (said.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        if sent.get("tools") and "```" in text:
            with self.lock:
                self.failed += 1
            found = unparsed_vector(PEG_NATIVE)
            body = found["body"].encode()
            return Response(found["status"], body, {"content-type": "application/json"})
        return response


def llama_server_peg(model: Behaviour) -> LlamaServerPeg:
    return LlamaServerPeg(OpenAIEmulator(model, flavour="llamacpp"))


def validation_error(tools: list[dict[str, Any]]) -> Response | None:
    """llama-cpp-python's 500 for the first function without ``parameters``, else None."""
    for index, tool in enumerate(tools):
        function = tool.get("function") or {}
        if "parameters" in function:
            continue
        found = vector(VALIDATION)
        message = json.loads(found["body"])["error"]["message"]
        # The vector's own tool, index 0, replaced by the one sent: the same repr pydantic
        # writes of the input it could not validate.
        head, _, tail = message.partition("\n\n")
        error = {
            "type": "missing",
            "loc": ("body", "tools", index, "function", "parameters"),
            "msg": "Field required",
            "input": function,
        }
        message = f"1 validation error:\n  {error}\n\n{tail}"
        assert head.startswith("1 validation error:")
        body = {
            "error": {
                "message": message,
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        }
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))  # as Starlette writes
        return Response(found["status"], text.encode(), {"content-type": "application/json"})
    return None


def llamacpp_python(model: Behaviour) -> Counted:
    return Counted(OpenAIEmulator(model, check_tools=validation_error))
