"""Server errors that are answers (issue 20, item 4), against emulated local servers on loopback
that answer with the real bodies (tests/data/unparsed.yaml, tests/data/refusals.yaml):

- llama-server's 500 "does not match the expected peg-native format" is the model's answer: its
  own outcome, sent once at temperature 0, in the mode's summary line;
- llama-cpp-python's 500 for a tool without ``parameters`` is a schema refusal with its path,
  never retried, and the dialect stage stays within the README's bound (29 requests) with the
  verdict "permissive, except: no-parameters";
- an identical error twice for an identical request at temperature 0 is not retried again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conchcheck.matrix import load_matrix
from conchcheck.wire.policy import Policy
from tests.emulators.local_servers import llama_server_peg, llamacpp_python
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.test_probe_profiles import probe, written
from tests.wire.test_transport import Sleeps, ask, send

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
BOUND = 29
"""README: the dialect stage sends at most a quarter of a request per case and dialect."""


def report_line(tmp_path: Path, start: str) -> str:
    lines = (tmp_path / "out" / "report.md").read_text().splitlines()
    return next(line for line in lines if line.startswith(start))


def test_a_tool_without_parameters_refused_everywhere_is_the_one_exception(
    serve: Serve, tmp_path: Path
) -> None:
    server = llamacpp_python(oracle(MATRIX))
    code, _, _, _ = probe(serve(server), "llamacpp:qwen", tmp_path)
    results = written(tmp_path)
    assert code == 0
    assert results["budget"]["stage_requests"]["dialect"] == 14 <= BOUND  # 102 before
    assert report_line(tmp_path, "**llamacpp:qwen**") == (
        "**llamacpp:qwen** — dialect **permissive**, except: no-parameters (schema: "
        "function.parameters), mode **native** (native 11/11, 11 clean; words 11/11, 11 clean)"
    )
    dialect = results["verdict"]["dialect"]
    assert (dialect["dialect"], dialect["best"]) == ("permissive", None)
    assert [(r["case"], r["dialect"], r["kind"]) for r in dialect["excepted"]] == [
        ("no-parameters", "permissive", "schema")
    ]
    refused = [c for c in results["cells"] if c["case"] == "no-parameters"]
    assert sorted(c["dialect"] for c in refused) == ["anthropic", "gemini", "permissive", "strict"]
    for cell in refused:
        # Sent once each: a schema refusal is final, 500 or not.
        assert (cell["label"], cell["requests"], cell["reply"]["status"]) == (
            "refused:schema",
            1,
            500,
        )
        assert cell["refusal"]["path"].endswith(".function.parameters")


def test_output_the_server_could_not_parse_is_the_models_answer_sent_once(
    serve: Serve, tmp_path: Path
) -> None:
    # The model fences its JSON: the template's parser refuses it (Qwen2.5-Coder, measured).
    server = llama_server_peg(oracle(MATRIX, leak="fence"))
    code, _, _, _ = probe(serve(server), "llamacpp:qwen", tmp_path)
    results = written(tmp_path)
    assert code == 0
    native = [c for c in results["cells"] if c["stage"] == "native"]
    unparsed = [c for c in native if c["outcome"] == "unparsed_by_server"]
    assert len(unparsed) == 10  # the 11th prompt needs no call: the model writes no fence
    for cell in unparsed:
        assert (cell["requests"], cell["refusal"], cell["reply"]["status"]) == (1, None, 500)
        assert cell["detail"] == (
            "The server couldn't parse the model's call: it expects the peg-native format "
            "(HTTP 500). The server quoted none of the output."
        )
        assert cell["findings"][0]["code"] == "server_could_not_parse_output"
    # Each failing request reached the server once (a native prompt and its streaming twin
    # send the same body): never the 4 attempts a retried 500 took.
    assert max(server.posts.values()) <= 2
    assert results["budget"]["stage_requests"]["native"] == 11  # 41 before
    assert report_line(tmp_path, "- **native**") == (
        "- **native**: 1/11 passed (9%): 1 clean (9%), 0 after repair; 10 unparsed by server"
    )
    assert any(
        f.startswith("10 native prompts got output the server couldn't parse")
        for f in results["verdict"]["findings"]
    )


def test_a_dialect_request_the_server_could_not_parse_was_accepted(
    serve: Serve, tmp_path: Path
) -> None:
    # The model answers "ok" in a fence even to the dialect stage's requests.
    def fenced(asked: Any) -> Any:
        return ignores_tools("```json\n{}\n```")(asked)

    server = llama_server_peg(fenced)
    probe(serve(server), "llamacpp:qwen", tmp_path)
    results = written(tmp_path)
    cells = [
        c for c in results["cells"] if c["stage"] == "dialect" and c["dialect"] == "permissive"
    ]
    valid = [c for c in cells if c["case"] not in ("dangling-ref", "unknown-type")]
    assert valid and {c["outcome"] for c in valid} == {"accepted"}
    assert all("the model generated output the server couldn't parse" in c["detail"] for c in valid)
    assert results["verdict"]["dialect"]["dialect"] == "permissive"


PEG_500 = json.dumps(
    {
        "error": {
            "code": 500,
            "message": "The model produced output that does not match the expected peg-native "
            "format",
            "type": "server_error",
        }
    }
).encode()
SAME_500 = b'{"error":{"code":500,"message":"Internal error","type":"server_error"}}'


@pytest.mark.parametrize(
    ("queue", "temperature", "attempts", "label"),
    [
        pytest.param([SAME_500] * 4, 0.0, 2, "refused", id="identical-500-at-temperature-0-twice"),
        pytest.param([SAME_500] * 4, 0.7, 4, "refused", id="identical-500-sampled-is-retried"),
        pytest.param([SAME_500, SAME_500.replace(b"Internal", b"Other"), SAME_500, SAME_500],
                     0.0, 4, "refused", id="different-500s-are-retried"),
        pytest.param([PEG_500] * 4, 0.0, 1, "unparsed", id="peg-native-500-is-an-answer"),
        pytest.param([PEG_500] * 4, 0.7, 1, "unparsed", id="peg-native-500-sampled-too"),
    ],
)  # fmt: skip
def test_retries_of_a_deterministic_error(
    serve: Serve, queue: list[bytes], temperature: float, attempts: int, label: str
) -> None:
    responses = [Response(500, body, {"content-type": "application/json"}) for body in queue]
    server = serve(OpenAIEmulator(ignores_tools(), queue=responses))
    exchange = send(server, ask(temperature=temperature), sleeps=Sleeps(), policy=Policy())
    got = "unparsed" if exchange.unparsed is not None else "refused" if exchange.refusal else "?"
    assert (got, exchange.attempts, len(server.received)) == (label, attempts, attempts)


def test_an_overloaded_server_is_retried_however_alike_its_answers(serve: Serve) -> None:
    # Anthropic's 529 always reads "Overloaded": alike, and still "later".
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server = serve(OpenAIEmulator(ignores_tools(), queue=[Response(529, body)] * 4))
    exchange = send(server, ask(temperature=0.0), sleeps=Sleeps(), policy=Policy())
    assert (exchange.attempts, len(server.received)) == (4, 4)
