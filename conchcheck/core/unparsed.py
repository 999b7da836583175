"""A server error that is the model's answer: the model generated, and the server couldn't parse
its output into calls (a 5xx saying so). Pure and bounded like ``refusals``: no I/O, and the
patterns see at most the text ``refusals`` scans.

Such an error is not a refusal: the request and its tools were accepted (the model ran on them),
and at temperature 0 the same request gets the same output and the same error every time.
Groq says the same of one generation in a 400 that carries it (``tool_use_failed`` with
``failed_generation``): classified as a refusal of kind ``tools`` for what it means to the next
request, and read here as the model's output for what it says of this one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conchcheck.core.credentials import redact_keys
from conchcheck.core.envelopes import read_envelope
from conchcheck.core.refusals import Refusal

__all__ = ["ParseFailure", "read_failed_generation", "read_parse_failure"]

_MAX_SCAN = 1 << 16
_MAX_MESSAGE = 1000
_MAX_OUTPUT = 1 << 15

# llama-server builds its call parser from the chat template ("chat format: peg-native") and
# throws when the output doesn't match it; ex_wrapper turns the throw into a 500 server_error
# (llama.cpp as vendored in llama-cpp-python 0.3.36: common/chat.cpp:1498, raised by
# common_chat_peg_parse; tools/server/server.cpp:54-79 ex_wrapper; format_error_response in
# tools/server/server-common.cpp:36). Vector llamacpp-500-output-does-not-match-peg-native.
_EXPECTED = re.compile(
    r"The model produced output that does not match the expected ([\w.-]{1,60}) format"
)
# Earlier llama.cpp builds said where the parse stopped and quoted the rest of the output
# (common/chat.cpp: "Failed to parse input at pos " + pos + ": " + input.substr(pos)).
# Vector llamacpp-500-failed-to-parse-input-at-pos-quotes-the-output.
_AT_POS = re.compile(r"Failed to parse input at pos (\d{1,9})(?:: ?(.*))?\Z", re.S)
# Ollama's harmony parser fails on the arguments it accumulated and says so in a 500
# (model/parsers/harmony.go: "error parsing tool call: raw='%s', err=%w"); raw is the arguments.
# Vector ollama-500-error-parsing-tool-call-quotes-the-arguments.
_OLLAMA = re.compile(r"error parsing tool call: raw='(.*)', err=", re.S)


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """The server's words for output it couldn't parse, with what they tell of it."""

    status: int
    message: str
    """The server's own words, keys redacted, trimmed."""
    format: str | None = None
    """The call format the server expected (llama.cpp's ``peg-native``), when it names one."""
    output: str | None = None
    """The model's output, or the part of it the server quotes; None when it quotes none."""

    @property
    def cause(self) -> str:
        """One sentence naming the cause, for a cell's detail and its finding."""
        expects = f": it expects the {self.format} format" if self.format else ""
        return f"The server couldn't parse the model's call{expects} (HTTP {self.status})."


def read_parse_failure(status: int, body: str, *, in_stream: bool = False) -> ParseFailure | None:
    """The parse failure a 5xx ``body`` reports (or, ``in_stream``, an error event inside a 2xx
    stream: llama-server sends its throw there once the headers are out), or None.

    A gateway's wrapping keeps the server's words (LiteLLM's "litellm.InternalServerError:
    InternalServerError: OpenAIException - …"), so they are searched for, not matched whole.
    """
    if status < 500 and not in_stream:
        return None
    envelope = read_envelope(body, _MAX_SCAN)
    text = envelope.message if envelope is not None and envelope.message else body
    text = text[:_MAX_SCAN]
    expected = _EXPECTED.search(text)
    if expected is not None:
        return ParseFailure(status, _trim(text), expected.group(1))
    at_pos = _AT_POS.search(text)
    if at_pos is not None:
        quoted = at_pos.group(2)
        return ParseFailure(status, _trim(text), None, _output(quoted) if quoted else None)
    ollama = _OLLAMA.search(text)
    if ollama is not None:
        return ParseFailure(status, _trim(text), None, _output(ollama.group(1)))
    return None


def read_failed_generation(refusal: Refusal) -> ParseFailure | None:
    """The parse failure a refusal reports when it carries the model's failed generation, or
    None. Groq answers a generation its parser can't turn into calls with a 400 (or an error
    event in a 200 stream) whose ``failed_generation`` is the model's text (vectors
    groq-tool-use-failed-carries-failed-generation, groq-stream-error-event-with-status-200);
    an empty one is no output quoted (vector groq-tool-use-failed-empty-failed-generation)."""
    failed = refusal.failed_generation
    if failed is None:
        return None
    return ParseFailure(refusal.status, refusal.message, None, _output(failed) if failed else None)


def _output(text: str) -> str:
    return redact_keys(text[:_MAX_OUTPUT])


def _trim(text: str) -> str:
    text = redact_keys(" ".join(text.split()))
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"
