"""`conchcheck probe` against endpoint profiles that real deployments present, end to end.

Each profile (tests/emulators/profiles.py) is an OpenAI-compatible server on loopback that
answers with real provider error texts; the CLI probes it with the default matrix (29 schema
cases, 2 of them deliberately invalid; 11 prompts) and the tests assert what DESIGN.md says
the verdict must be. The rules they state:

- The dialect verdict is measured, not assumed (rule 4): the most permissive of
  permissive > anthropic > gemini > strict that was tried on every valid case and carried
  all of them, whatever the provider's family. A generic target (``vllm:m`` at a
  ``--base-url``) whose backend refuses like Gemini gets ``gemini``, not ``strict``; one that
  refuses only a non-object root gets ``anthropic``.
- The dialect stage is economical: at most a quarter of 29 cases x 4 dialects requests,
  retries included (``stage_requests``).
- A request that failed (no usable reply) is never evidence (rule 4): a target that answers
  nothing usable (HTML pages, cut JSON, closed connections) is unusable, exit 3, with the
  reason on one line, ``unusable`` in results.json, no capability entry and no dialect.
- Budgets count every HTTP request, retries included, and are never exceeded (Data flow):
  ``requests`` equals what the server received, and ``--max-requests 12`` means at most 12
  requests reach the server (exit 4).
- A rate limit is retried after the wait it names (rule 5): a 429 with ``Retry-After: 0``
  before every answer still gives the true verdict.

The first tests check the profiles themselves against ``to_dialect``, so a failure of the
probe tests is the probe's, not the emulators'.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import to_dialect
from conchcheck.core.refusals import classify
from conchcheck.matrix import load_matrix
from tests.emulators import profiles
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Response
from tests.emulators.vectors import vector

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
VALID = [c for c in MATRIX.schema_cases if c.valid]
DIALECTS = ("permissive", "anthropic", "gemini", "strict")
ECONOMY = 0.25 * 29 * 4
"""The dialect stage's request budget: a quarter of every case in every dialect (29)."""
runner = CliRunner()


# -- what each endpoint sees ----------------------------------------------------------------


def sent(case: Any, dialect: str) -> dict[str, Any]:
    """The tool of ``case`` in ``dialect`` as the OpenAI wire carries it (no ``parameters``
    for a tool without any)."""
    function: dict[str, Any] = {"name": case.tool.name}
    if case.tool.description:
        function["description"] = case.tool.description
    parameters = dict(case.tool.parameters)
    if parameters:
        function["parameters"] = to_dialect(parameters, dialect)
    return {"type": "function", "function": function}


def refused(check: Callable[[list[dict[str, Any]]], Response | None], dialect: str) -> set[str]:
    """The valid cases ``check`` refuses in ``dialect``, each sent alone."""
    return {c.id for c in VALID if check([sent(c, dialect)]) is not None}


def test_the_default_matrix_has_the_shape_the_budgets_assume() -> None:
    assert (len(MATRIX.schema_cases), len(VALID), len(MATRIX.prompts)) == (29, 27, 11)
    assert ECONOMY == 29


def test_strict_dialect_uses_only_the_six_keywords_on_every_valid_case() -> None:
    for case in VALID:
        schema = sent(case, "strict")["function"].get("parameters", {})
        for node in profiles.nodes(schema):
            assert set(node) <= profiles.STRICT, (case.id, node)
    assert refused(profiles.strict_refusal, "strict") == set()


def test_strict_only_refuses_every_more_permissive_dialect_somewhere() -> None:
    # So strict is the only dialect that carries every case there.
    needs_more = {"ref-defs", "definitions", "ref-recursive", "anyof-null", "one-of", "all-of",
                  "const", "additional-properties-false", "additional-properties-true",
                  "pattern-properties", "formats", "annotations", "constraints", "prefix-items",
                  "schema-id"}  # fmt: skip
    assert refused(profiles.strict_refusal, "permissive") == needs_more
    assert refused(profiles.strict_refusal, "anthropic") == needs_more
    # Gemini keeps nullable, anyOf and the bounds, which strict leaves out.
    assert refused(profiles.strict_refusal, "gemini") == {
        "anyof-null", "type-list-null", "one-of", "constraints"
    }  # fmt: skip


def test_strict_only_refusal_is_the_unknown_name_vector_moved() -> None:
    real = vector(profiles.UNKNOWN_NAME)
    assert profiles.unknown_name("$schema", 0).body == real["body"].encode()
    moved = profiles.unknown_name("additionalProperties", 7, ".properties[1].value")
    found = classify(moved.status, moved.body.decode())
    assert (found.kind.value, found.tool_index, found.keyword) == (
        "schema",
        7,
        "additionalProperties",
    )
    assert classify(400, profiles.unknown_name("$ref", 2).body.decode()).keyword == "$ref"


def test_gemini_gateway_needs_the_gemini_dialect_and_strict_is_not_the_answer() -> None:
    assert refused(profiles.gemini_refusal, "gemini") == set()
    assert refused(profiles.gemini_refusal, "strict") == set()
    # Both carry everything: only permissiveness decides, and gemini is the more permissive.
    assert {"ref-defs", "const", "additional-properties-false", "schema-id"} <= refused(
        profiles.gemini_refusal, "permissive"
    )
    assert refused(profiles.gemini_refusal, "anthropic") == refused(
        profiles.gemini_refusal, "permissive"
    )


def test_anthropic_like_needs_the_anthropic_dialect_only_for_the_array_root() -> None:
    assert refused(profiles.anthropic_refusal, "permissive") == {"array-root"}
    for dialect in ("anthropic", "gemini", "strict"):
        assert refused(profiles.anthropic_refusal, dialect) == set(), dialect
    # The array root is refused with Anthropic's own words and the tool's index.
    answer = profiles.anthropic_refusal(
        [sent(VALID[0], "permissive"), sent(next(c for c in VALID if c.id == "array-root"), "permissive")]
    )  # fmt: skip
    assert answer is not None
    found = classify(answer.status, answer.body.decode())
    assert (found.kind.value, found.tool_index) == ("schema", 1)
    oneof = profiles.anthropic_refusal(
        [{"type": "function", "function": {"name": "x", "parameters": {"oneOf": [{}]}}}]
    )
    assert oneof is not None and b"does not support oneOf, allOf, or anyOf at the top level" in (
        oneof.body
    )


# -- probing --------------------------------------------------------------------------------


def probe(
    server: EmulatorServer, target: str, tmp_path: Path, *extra: str, as_json: bool = True
) -> tuple[int, dict[str, Any], str, str]:
    """Exit code, the JSON outcome (when ``as_json``), stdout and stderr."""
    result = runner.invoke(
        app,
        ["probe", target, "--base-url", server.url + "/v1", "--out", str(tmp_path / "out"),
         "--quiet", "--concurrency", "4", *(["--json"] if as_json else []), *extra],
    )  # fmt: skip
    data = json.loads(result.stdout) if as_json and result.stdout.lstrip().startswith("{") else {}
    return result.exit_code, data, result.stdout, result.stderr


def written(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "out" / "results.json").read_text())
    return data


def cache_entries() -> list[dict[str, Any]]:
    path = Path(os.environ["CONCHCHECK_CACHE"])
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text()) or {}
    return list(data.get("entries") or [])


def assert_measured(results: dict[str, Any], dialect: str) -> None:
    """Every valid case was tried in ``dialect`` and accepted; the dialect stage was cheap."""
    cells = {c["id"]: c for c in results["cells"]}
    missing = [c.id for c in VALID if f"dialect/{dialect}/{c.id}" not in cells]
    assert not missing, f"valid cases never tried in {dialect}: {missing}"
    not_accepted = {
        c.id: cells[f"dialect/{dialect}/{c.id}"]["outcome"]
        for c in VALID
        if cells[f"dialect/{dialect}/{c.id}"]["outcome"] != "accepted"
    }
    assert not not_accepted, not_accepted
    spent = results["budget"]["stage_requests"]["dialect"]
    assert spent <= ECONOMY, f"the dialect stage sent {spent} requests (at most {ECONOMY:g})"


DIALECT_PROFILES = [
    pytest.param(profiles.gemini_gateway, "gemini", id="gemini-behind-a-generic-url"),
    pytest.param(profiles.strict_only, "strict", id="strict-only"),
    pytest.param(profiles.anthropic_like, "anthropic", id="anthropic-like"),
]


@pytest.mark.parametrize(("profile", "dialect"), DIALECT_PROFILES)
def test_dialect_is_measured_whatever_the_family(
    serve: Serve, tmp_path: Path, profile: Callable[[Any], Handler], dialect: str
) -> None:
    """A generic OpenAI-compatible target (family permissive) gets the dialect its backend
    takes: gemini behind a gateway (check_declarations, S01-S09), strict for a strict-only
    backend (S01's text moved), anthropic for a backend that wants one object at the root
    (S20, S21). Native calling works there, so the mode is native."""
    server = serve(profile(oracle(MATRIX)))
    code, outcome, _, err = probe(server, "vllm:m", tmp_path)
    assert code == 0, err
    verdict = outcome["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"]) == (dialect, "native")
    assert verdict["native"]["passed"] == verdict["native"]["total"] == 11
    entry = outcome["entry"]
    assert (entry["provider"], entry["dialect"], entry["mode"]) == ("vllm", dialect, "native")
    results = written(tmp_path)
    assert results["verdict"]["dialect"]["dialect"] == dialect
    assert_measured(results, dialect)


UNUSABLE_PROFILES = [
    # llama.cpp's catalogue is a GET (/props): the HTML page answers it too.
    pytest.param(lambda: profiles.html_200, "llamacpp:local", "html", id="html-200"),
    pytest.param(
        lambda: profiles.truncated_json(oracle(MATRIX)), "vllm:m", None, id="truncated-json"
    ),
]


def assert_unusable(code: int, out: str, err: str, tmp_path: Path) -> str:
    """Exit 3, the reason on one line of the output, results.json with ``unusable``, no
    capability entry, and no verdict naming a dialect."""
    assert code == 3, out + err
    results = written(tmp_path)
    reason = results["unusable"]
    assert isinstance(reason, str) and reason.strip(), reason
    # One line holds the whole reason (an HTML excerpt's line breaks collapsed).
    lines = [line for line in (out + "\n" + err).splitlines() if "can't be probed" in line]
    assert len(lines) == 1, out + err
    assert lines[0].split() == f"The target can't be probed: {reason}".split(), out + err
    assert cache_entries() == []
    assert "capability entry written" not in out
    verdict = results.get("verdict")
    assert verdict is None or verdict["dialect"]["dialect"] is None, verdict["dialect"]
    return reason


@pytest.mark.parametrize(("handler", "target", "says"), UNUSABLE_PROFILES)
def test_nothing_usable_is_an_unusable_target(
    serve: Serve, tmp_path: Path, handler: Callable[[], Handler], target: str, says: str | None
) -> None:
    """200 with an HTML page, or 200 with JSON cut in the middle, to every request: no reply
    was usable, so nothing was measured (rule 4: a failed request is never evidence) and the
    target is unusable (exit 3: "nothing but failures")."""
    server = serve(handler())
    code, _, out, err = probe(server, target, tmp_path, as_json=False)
    reason = assert_unusable(code, out, err, tmp_path)
    if says is not None:
        assert says in reason.lower(), reason


def test_rate_limited_before_every_answer_still_gives_the_verdict(
    serve: Serve, tmp_path: Path
) -> None:
    """Each request's first try is R01's 429 with ``Retry-After: 0``; the retry is answered.
    The verdict is the one the same backend gives unlimited, and every HTTP request is
    counted: ``requests`` and the stages' counts add up to what the server received."""
    handler = profiles.rate_limited(oracle(MATRIX))
    server = serve(handler)
    code, outcome, _, err = probe(server, "vllm:m", tmp_path)
    assert code == 0, err
    verdict = outcome["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"]) == ("permissive", "native")
    assert verdict["native"]["passed"] == 11
    # Every request met its 429 and was tried again: no 429 was the last word.
    assert handler.seen and all(n % 2 == 0 for n in handler.seen.values()), handler.seen
    results = written(tmp_path)
    assert_measured(results, "permissive")
    budget = results["budget"]
    assert budget["requests"] == len(server.received), (budget["requests"], len(server.received))
    assert sum(budget["stage_requests"].values()) == len(server.received)


def test_rate_limited_request_budget_counts_the_retries(serve: Serve, tmp_path: Path) -> None:
    """``--max-requests 12`` against the same endpoint: at most 12 HTTP requests reach it,
    retries included, and the probe stops early (exit 4) with partial results."""
    server = serve(profiles.rate_limited(oracle(MATRIX)))
    code, outcome, _, err = probe(server, "vllm:m", tmp_path, "--max-requests", "12")
    assert len(server.received) <= 12, f"the server received {len(server.received)} requests"
    assert code == 4, err
    assert outcome["result"]["stopped"] == "the request budget (12) is spent"
    results = written(tmp_path)
    assert results["stopped"] and results["budget"]["requests"] <= 12


def test_endpoint_that_dies_after_its_first_answer_is_unusable(
    serve: Serve, tmp_path: Path
) -> None:
    """The first POST (reach) is answered; every later one meets a closed connection and no
    reply. Nothing after reach is usable, so the target is unusable (exit 3), as if it were
    unreachable. Run in a subprocess with a time limit: retries of a dead endpoint must end."""
    server = serve(profiles.dies_after_first(oracle(MATRIX)))
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url",
             server.url + "/v1", "--out", str(tmp_path / "out"), "--quiet",
             "--concurrency", "4"],
            capture_output=True, text=True, timeout=60, env=dict(os.environ),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"still probing a dead endpoint after {time.monotonic() - started:.0f}s")
    assert_unusable(done.returncode, done.stdout, done.stderr, tmp_path)
