"""Server errors that are the model's answer (issue 20, item 4): a 5xx saying the server couldn't
parse the model's output is read as such, with the format it expected and the output it quotes;
every other error is not (tests/data/unparsed.yaml holds the real bodies and their sources).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conchcheck.core.refusals import classify
from conchcheck.core.unparsed import ParseFailure, read_failed_generation, read_parse_failure

VECTORS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "unparsed.yaml").read_text()
)
REFUSALS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "refusals.yaml").read_text()
)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["id"]) for e in VECTORS])
def test_a_parse_failure_is_read_with_what_it_tells(entry: dict[str, Any]) -> None:
    failure = read_parse_failure(entry["status"], entry["body"])
    assert failure is not None
    assert failure.status == entry["status"]
    assert failure.format == entry["want"].get("format")
    assert failure.output == entry["want"].get("output")
    assert failure.message == " ".join(classify(entry["status"], entry["body"]).message.split())


def test_the_cause_names_the_format_the_server_expects() -> None:
    body = VECTORS[0]["body"]
    failure = read_parse_failure(500, body)
    assert failure is not None
    assert failure.cause == (
        "The server couldn't parse the model's call: it expects the peg-native format (HTTP 500)."
    )


def test_inside_a_stream_the_error_event_counts_whatever_the_status() -> None:
    message = "The model produced output that does not match the expected peg-native format"
    assert read_parse_failure(200, message) is None
    failure = read_parse_failure(200, message, in_stream=True)
    assert failure is not None and failure.format == "peg-native"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # The client's own history, not the model's output: llama-server can't read the
        # arguments a request carries (ggml-org/llama.cpp#22072, am17an/llama.cpp#43).
        pytest.param(500, '{"error":{"code":500,"message":"Failed to parse tool call arguments as '
                     'JSON: parse error at line 1, column 27","type":"server_error"}}',
                     id="llamacpp-history-arguments-are-the-request"),
        pytest.param(400, VECTORS[0]["body"], id="a-4xx-is-never-the-models-answer"),
    ],
)  # fmt: skip
def test_other_errors_are_not_parse_failures(status: int, body: str) -> None:
    assert read_parse_failure(status, body) is None


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["id"]) for e in REFUSALS])
def test_no_refusal_vector_is_a_parse_failure(entry: dict[str, Any]) -> None:
    assert read_parse_failure(entry["status"], entry["body"]) is None


def test_keys_in_the_quoted_output_are_redacted() -> None:
    key = "sk-" + "a1B2" * 8
    body = json.dumps({"error": f'error parsing tool call: raw=\'{{"k":"{key}"}}\', err=x'})
    failure = read_parse_failure(500, body)
    assert failure is not None and failure.output == '{"k":"[redacted]"}'
    assert key not in failure.message


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["id"]) for e in REFUSALS])
def test_a_refusal_carrying_a_failed_generation_reads_as_the_models_output(
    entry: dict[str, Any],
) -> None:
    # Groq's tool_use_failed (vectors groq-tool-use-failed-*, groq-stream-error-event-...): the
    # generation is the output, an empty one quotes none; every other refusal is no output.
    refusal = classify(entry["status"], entry["body"])
    failure = read_failed_generation(refusal)
    generation = entry["want"].get("failed_generation")
    if generation is None:
        assert failure is None
    else:
        assert failure == ParseFailure(entry["status"], refusal.message, None, generation or None)


def test_keys_in_a_failed_generation_are_redacted() -> None:
    key = "gsk_" + "a1B2" * 8
    body = json.dumps({"error": {"message": "m", "code": "tool_use_failed",
                                 "failed_generation": f'<function=f>{{"k": "{key}"}}</function>'}})  # fmt: skip
    failure = read_failed_generation(classify(400, body))
    assert failure is not None and failure.output == '<function=f>{"k": "[redacted]"}</function>'
