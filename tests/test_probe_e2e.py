"""`conchcheck probe` end to end against emulated providers, one typical provider profile each.

Each profile is a real HTTP server on loopback answering as a provider does; the CLI probes
it with the default matrix and the test asserts the verdict, the capability entry and the
reports.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.responses_api import ResponsesEmulator
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
runner = CliRunner()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hosted providers need a key even when an emulator stands in for them.
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaEmulatedKey0123456789abcdef")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-emulated-0123456789abcdef")


def probe(
    server: EmulatorServer, target: str, tmp_path: Path, *extra: str
) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "probe",
            target,
            "--base-url",
            server.url + "/v1",
            "--out",
            str(out),
            "--quiet",
            "--json",
            *extra,
        ],
    )
    data = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, data, result.stderr


PROFILES = [
    pytest.param(
        lambda: OpenAIEmulator(oracle(MATRIX)),
        "vllm:m",
        "permissive",
        "native",
        11,
        0,
        id="accepts-everything-calls-natively",
    ),
    pytest.param(
        lambda: OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"),
        "gemini-openai:gemini-x",
        "gemini",
        "native",
        11,
        0,
        id="gemini-style-schema-refusals-need-the-gemini-dialect",
    ),
    pytest.param(
        lambda: OpenAIEmulator(
            oracle(MATRIX),
            flavour="openrouter",
            catalogue=[{"id": "m", "supported_parameters": ["max_tokens"]}],
        ),
        "openrouter:m",
        None,
        "words",
        0,
        11,
        id="tools-refused-so-words",
    ),
    pytest.param(
        lambda: OpenAIEmulator(oracle(MATRIX), flavour="llamacpp", template_tools=False),
        "llamacpp:local",
        "permissive",
        "words",
        1,
        11,
        id="ignores-tools-but-answers-in-words",
    ),
    pytest.param(
        lambda: OpenAIEmulator(ignores_tools()),
        "vllm:m",
        "permissive",
        "none",
        1,
        1,
        id="cannot-call-at-all",
    ),
    pytest.param(
        lambda: OpenAIEmulator(oracle(MATRIX, sloppy="trailing_comma")),
        "vllm:m",
        "permissive",
        "native",
        11,
        0,
        id="sloppy-native-arguments-pass-after-repair",
    ),
]


@pytest.mark.parametrize(("emulator", "target", "dialect", "mode", "native", "words_min"), PROFILES)
def test_profile(serve: Serve, tmp_path: Path, emulator: Callable[[], OpenAIEmulator], target: str,
                 dialect: str | None, mode: str, native: int, words_min: int) -> None:  # fmt: skip
    server = serve(emulator())
    code, outcome, err = probe(server, target, tmp_path)
    assert code == 0, err
    verdict = outcome["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"]) == (dialect, mode)
    assert verdict["native"]["passed"] == native
    assert verdict["words"]["passed"] >= words_min
    entry = outcome["entry"]
    assert (entry["dialect"], entry["mode"], entry["endpoint"]) == (
        dialect,
        mode,
        server.url + "/v1",
    )
    # Chat Completions has no strict-mode trial: null says "not tried", not "none refused".
    assert verdict["strict_mode"] is entry["strict_mode"] is None
    cache = yaml.safe_load(Path(__import__("os").environ["CONCHCHECK_CACHE"]).read_text())
    assert [(e["provider"], e["mode"]) for e in cache["entries"]] == [(target.split(":")[0], mode)]
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith(
        f"**{target}** — dialect **{dialect or 'none fits'}**, mode **{mode}**"
    )
    for name in ("results.json", "report.html", "junit.xml"):
        assert (tmp_path / "out" / name).exists()


def test_sloppy_arguments_are_counted_as_repaired(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX, sloppy="trailing_comma")))
    _, outcome, _ = probe(server, "vllm:m", tmp_path)
    verdict = outcome["result"]["verdict"]
    # Only the prompt that needs no call passes clean: every call needed its comma dropped.
    assert (verdict["native"]["clean"], verdict["repairs_seen"]) == (1, ["trailing_comma"])
    entry = outcome["entry"]
    assert entry["rates"]["native_clean"] == round(1 / 11, 4) and entry["rates"]["native"] == 1.0


def test_gemini_refusals_name_the_keywords(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX), flavour="gemini-openai"))
    _, outcome, _ = probe(server, "gemini-openai:gemini-x", tmp_path)
    keywords = outcome["result"]["verdict"]["refused_keywords"]
    assert {"$ref", "additionalProperties", "const"} <= set(keywords)
    requests = outcome["result"]["requests"]
    # Grouped cases and splitting at the named tool keep the dialect stage cheap.
    assert requests < 29 * 3


def test_budget_stop_then_resume_repeats_nothing(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    code, outcome, _ = probe(server, "vllm:m", tmp_path, "--max-requests", "8")
    assert code == 4 and outcome["result"]["stopped"] == "the request budget (8) is spent"
    first = len(server.received)
    assert first == 8
    results = tmp_path / "out" / "results.json"
    code, outcome, err = probe(server, "vllm:m", tmp_path, "--resume", str(results))
    assert code == 0, err
    assert outcome["result"]["verdict"]["mode"] == "native"
    bodies = [r.body for r in server.received]
    assert len(bodies[first:]) == outcome["result"]["requests"]
    cells = outcome["result"]["cells"]
    assert len({c["id"] for c in cells}) == len(cells)


def test_unreachable_target_exits_3(tmp_path: Path) -> None:
    server = EmulatorServer(lambda r: None)  # type: ignore[arg-type,return-value]
    url = server.url
    server.close()
    result = runner.invoke(
        app, ["probe", "vllm:m", "--base-url", url + "/v1", "--out", str(tmp_path), "--quiet"]
    )
    assert result.exit_code == 3
    # Why it can't be probed is commentary: stderr, one line; stdout keeps the product.
    (line,) = [line for line in result.stderr.splitlines() if "can't be probed" in line]
    assert line.startswith("The target can't be probed: connect:")
    assert "can't be probed" not in result.stdout


def test_unknown_model_exits_3(serve: Serve, tmp_path: Path) -> None:
    from tests.emulators.vectors import refusal

    server = serve(OpenAIEmulator(ignores_tools(), queue=[refusal("openai-404-model-not-found")]))
    code, outcome, _ = probe(server, "vllm:nope", tmp_path)
    assert code == 3 and outcome["result"]["unusable"].startswith("not_found: ")


def test_bad_matrix_exits_2_with_lines(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: mine\nprompts:\n  - id: Bad Id\n")
    result = runner.invoke(
        app, ["probe", "vllm:m", "--base-url", "http://127.0.0.1:9/v1", "--matrix", str(bad)]
    )
    assert result.exit_code == 2
    assert f"{bad}:" in result.stderr


def test_matrix_commands(tmp_path: Path) -> None:
    shown = runner.invoke(app, ["matrix", "show", "default"])
    assert shown.exit_code == 0 and "many-tools" in shown.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 2\n")
    checked = runner.invoke(app, ["matrix", "validate", str(bad)])
    assert checked.exit_code == 2 and checked.stderr.startswith(f"{bad}:")


def test_use_cache_skips_a_fresh_target(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    probe(server, "vllm:m", tmp_path)
    before = len(server.received)
    code, entry, _ = probe(server, "vllm:m", tmp_path, "--use-cache")
    assert code == 0 and entry["mode"] == "native" and len(server.received) == before
    listed = runner.invoke(app, ["cache", "list", "--json"])
    assert [e["model"] for e in json.loads(listed.stdout)] == ["m"]
    cleared = runner.invoke(app, ["cache", "clear", "vllm:m"])
    assert cleared.exit_code == 0 and "Removed 1 entry" in cleared.stdout


@pytest.mark.parametrize(
    ("signal_name", "said"),
    [
        pytest.param("SIGINT", "Ctrl-C", id="ctrl-c"),
        pytest.param("SIGTERM", "SIGTERM", id="sigterm-from-timeout-or-kill"),
        pytest.param("SIGHUP", "SIGHUP", id="sighup-from-a-closed-terminal"),
    ],
)
def test_a_stopped_probe_writes_partial_results_and_exits_4(
    serve: Serve, tmp_path: Path, signal_name: str, said: str
) -> None:
    import signal
    import subprocess
    import sys
    import time

    slow = OpenAIEmulator(oracle(MATRIX))

    def handler(received: Any) -> Any:
        time.sleep(0.2)
        return slow(received)

    server = serve(handler)
    process = subprocess.Popen(
        [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url", server.url + "/v1",
         "--out", str(tmp_path), "--quiet", "--concurrency", "1",
         "--cache", str(tmp_path / "cache.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while len(server.received) < 3:
        time.sleep(0.05)
    process.send_signal(getattr(signal, signal_name))
    out, err = process.communicate(timeout=60)
    assert process.returncode == 4, err
    assert f"Stopped early: interrupted ({said})." in out
    assert "Traceback" not in err
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["stopped"] == f"interrupted ({said})" and len(written["cells"]) >= 2
    assert not (tmp_path / "cache.yaml").exists()  # a stopped probe has no verdict to keep


def test_a_probe_past_its_deadline_writes_partial_results_and_exits_4(
    serve: Serve, tmp_path: Path
) -> None:
    import time

    slow = OpenAIEmulator(oracle(MATRIX))

    def handler(received: Any) -> Any:
        time.sleep(0.2)
        return slow(received)

    server = serve(handler)
    started = time.perf_counter()
    code, _, err = probe(server, "vllm:m", tmp_path, "--deadline", "1", "--concurrency", "1")
    assert code == 4, err
    assert time.perf_counter() - started < 10
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["stopped"] == "the deadline of 1 s passed" and written["cells"]


def test_requests_are_counted_per_stage(serve: Serve, tmp_path: Path) -> None:
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    _, outcome, _ = probe(server, "vllm:m", tmp_path)
    spent = outcome["result"]["stage_requests"]
    assert sum(spent.values()) == outcome["result"]["requests"] == len(server.received)
    assert spent["reach"] == 1 and spent["native"] == 11


@pytest.mark.parametrize(
    ("target", "extra"),
    [
        pytest.param("openai-responses:gpt-x", (), id="openai-responses-provider"),
        pytest.param("vllm:m", ("--api", "responses"), id="any-base-url-with-api-responses"),
    ],
)
def test_responses_api_probe(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str,
    extra: tuple[str, ...],
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-emulated-0123456789abcdef")
    server = serve(ResponsesEmulator(oracle(MATRIX)))
    code, outcome, err = probe(server, target, tmp_path, *extra)
    assert code == 0, err
    verdict = outcome["result"]["verdict"]
    assert (verdict["dialect"]["dialect"], verdict["mode"], verdict["native"]["passed"]) == (
        "permissive",
        "native",
        11,
    )
    posts = [r for r in server.received if r.method == "POST"]
    assert {r.path for r in posts} == {"/v1/responses"}
    # Every tool the probe sent carried strict explicitly: false where the dialect is measured,
    # true only in the strict-mode trial, which sends every tool of a request the same way,
    # and in the strict knob's two requests (a closed schema and an open one).
    flags = [{t["strict"] for t in r.json().get("tools") or []} for r in posts]
    assert all(len(f) <= 1 for f in flags)
    assert sum(f == {True} for f in flags) == 24 + 2  # 23 refusals, each naming one, + 1 accepted
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    strict = {c["case"]: c["outcome"] for c in results["cells"] if c["dialect"] == "strict_mode"}
    took = {"additional-properties-false", "array-root", "no-parameters"}
    assert {k for k, v in strict.items() if v == "accepted"} == took
    assert {v for k, v in strict.items() if k not in took} == {"refused"} and len(strict) == 26
    refused = sorted(set(strict) - took)
    assert (
        f"Strict mode (strict: true) refused 23 of 26 schema cases ({', '.join(refused)}); the"
        " probe's other requests send strict: false." in verdict["findings"]
    )
    # Strict mode's refusals say nothing of the dialects: no keyword of theirs is reported.
    assert verdict["refused_keywords"] == []
    # The verdict and the capability entry keep the trial, case by case, for apps to read.
    trial = {"accepted": sorted(took), "refused": refused}
    assert verdict["strict_mode"] == outcome["entry"]["strict_mode"] == trial
