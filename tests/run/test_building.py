"""``build``: every input read and checked before the first request, each problem one exact
line; what it resolves (the folder, the key or why there is none, a fresh cached entry)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conchcheck.capabilities import CapabilityFile, Entry
from conchcheck.errors import ConchcheckError, InputError
from conchcheck.redaction import held
from conchcheck.run import ExitCode, ProbeSpec, build, execute
from conchcheck.run.recording import REPLAY_KEY
from conchcheck.wire.keys import CredentialsError
from conchcheck.wire.providers import ApiFamily
from tests.run.emulated import NOTHING_SENT

URL = "http://127.0.0.1:9/v1"
RECORDING = Path(__file__).parent.parent / "data" / "recordings" / "qwen-coder.default.json"
RECORDED = "llamacpp:qwen2.5-coder-0.5b"


def a_file(tmp: Path) -> dict[str, Any]:
    (tmp / "taken").write_text("")
    return {"out_dir": tmp / "taken"}


def under_a_file(tmp: Path) -> dict[str, Any]:
    (tmp / "taken").write_text("")
    return {"out_dir": tmp / "taken" / "out"}


def a_report_folder(tmp: Path) -> dict[str, Any]:
    (tmp / "out" / "report.md").mkdir(parents=True)
    return {"out_dir": tmp / "out"}


def a_record_folder(tmp: Path) -> dict[str, Any]:
    (tmp / "rec.json").mkdir()
    return {"record": tmp / "rec.json"}


def no_results(tmp: Path) -> dict[str, Any]:
    return {"resume_from": tmp / "gone" / "results.json"}


def no_matrix(tmp: Path) -> dict[str, Any]:
    return {"matrix": "nonesuch"}


def another_target(tmp: Path) -> dict[str, Any]:
    return {"replay": RECORDING}


REFUSED = [
    pytest.param(
        a_file,
        "--out: {tmp}/taken: is a file, not a folder. Choose another folder.",
        id="out-is-a-file",
    ),
    pytest.param(
        under_a_file,
        "--out: {tmp}/taken/out: cannot be made: {tmp}/taken is a file, not a folder."
        " Choose another folder.",
        id="out-under-a-file",
    ),
    pytest.param(
        a_report_folder,
        "--out: {tmp}/out/report.md: is a folder, so the report can't be written."
        " Move it aside, or choose another folder.",
        id="a-report-is-a-folder",
    ),
    pytest.param(
        a_record_folder,
        "--record: {tmp}/rec.json: is a folder. Choose another file.",
        id="record-is-a-folder",
    ),
    pytest.param(
        no_results,
        "{tmp}/gone/results.json: no such file. Check the path.",
        id="resume-from-nothing",
    ),
    pytest.param(
        no_matrix,
        "nonesuch: no such file, and no built-in matrix of that name. Built in: default.",
        id="unknown-matrix",
    ),
    pytest.param(
        another_target,
        f"--replay: {RECORDING} was recorded against {RECORDED}, not vllm:m."
        f" Replay it as `conchcheck probe {RECORDED} --replay {RECORDING}`.",
        id="replay-of-another-target",
    ),
]


@pytest.mark.parametrize(("given", "message"), REFUSED)
def test_build_refuses_before_any_request(
    tmp_path: Path, given: Callable[[Path], dict[str, Any]], message: str
) -> None:
    values = {"out_dir": tmp_path / "out", "capability_file": tmp_path / "caps.yaml"}
    values |= given(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(InputError) as caught:
        build(ProbeSpec("vllm:m", base_url=URL, **values), NOTHING_SENT)
    assert f"{caught.value} {caught.value.hint}" == message.format(tmp=tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_the_default_folder_is_named_after_the_target(tmp_path: Path) -> None:
    spec = ProbeSpec("openrouter:qwen/qwen3-8b", capability_file=tmp_path / "caps.yaml")
    assert build(spec, NOTHING_SENT).out_dir == Path("conchcheck-out/openrouter_qwen_qwen3-8b")


KEY_PROBLEMS = [
    pytest.param(
        {},
        CredentialsError,
        "No API key for provider 'openrouter': $OPENROUTER_API_KEY is not set."
        " Export $OPENROUTER_API_KEY, or name another variable with --api-key-env.",
        id="unset",
    ),
    pytest.param(
        {"key_variable": "sk-or-0123456789abcdef0123"},
        InputError,
        "--api-key-env takes the NAME of a variable, not a key; what was given is not a"
        " variable name (it is not shown, in case it is a key)."
        " Export the key (export MY_KEY=...) and pass --api-key-env MY_KEY.",
        id="a-key-for-a-name",
    ),
]


@pytest.mark.parametrize(("values", "kind", "message"), KEY_PROBLEMS)
def test_a_key_problem_is_kept_and_raised_when_the_probe_starts(
    tmp_path: Path, values: dict[str, Any], kind: type[ConchcheckError], message: str
) -> None:
    spec = ProbeSpec(
        "openrouter:qwen/qwen3-8b",
        out_dir=tmp_path / "out",
        capability_file=tmp_path / "caps.yaml",
        **values,
    )
    plan = build(spec, NOTHING_SENT)
    assert plan.key is None and type(plan.key_problem) is kind
    with pytest.raises(kind) as caught:
        execute(plan)
    assert f"{caught.value} {caught.value.hint}" == message
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_replay_of_a_keyed_provider_sends_a_stand_in_key(tmp_path: Path) -> None:
    recording = json.loads(RECORDING.read_text())
    recording |= {"target": "openrouter:qwen/qwen3-8b", "exchanges": []}
    (tmp_path / "rec.json").write_text(json.dumps(recording))
    spec = ProbeSpec(
        "openrouter:qwen/qwen3-8b",
        replay=tmp_path / "rec.json",
        out_dir=tmp_path / "out",
        capability_file=tmp_path / "caps.yaml",
    )
    plan = build(spec)
    assert plan.key is not None and plan.key.reveal() == REPLAY_KEY
    assert plan.key_problem is None
    # A replay goes to the URL it recorded.
    assert plan.target.base_url == recording["base_url"]


def fresh_entry(endpoint: str) -> Entry:
    return Entry(
        provider="openrouter",
        model="qwen/qwen3-8b",
        endpoint=endpoint,
        api=ApiFamily.OPENAI,
        dialect="gemini",
        mode="native",
        rates={"native": 1.0, "native_clean": 1.0, "words": 1.0, "words_clean": 1.0},
        repairs_seen=(),
        refused_keywords=(),
        context_window=None,
        tools_declared=True,
        tools_observed=True,
        conchcheck_version="0.1.0",
        matrix="default",
        matrix_digest="0" * 64,
        probed_at="2026-01-01T00:00:00Z",
        expires_at="2999-01-01T00:00:00Z",
    )


def test_a_fresh_entry_answers_without_a_key_or_a_request(tmp_path: Path) -> None:
    caps = tmp_path / "caps.yaml"
    spec = ProbeSpec("openrouter:qwen/qwen3-8b", capability_file=caps, reuse_cached=True)
    entry = fresh_entry(build(spec, NOTHING_SENT).target.base_url)
    CapabilityFile(caps).put(entry)
    plan = build(spec, NOTHING_SENT)
    assert plan.cached == entry and isinstance(plan.key_problem, CredentialsError)
    outcome = execute(plan)
    assert (outcome.result, outcome.cached, outcome.written, outcome.exit_code) == (
        None,
        entry,
        (),
        ExitCode.DONE,
    )
    assert outcome.message == "Dialect gemini, mode native, from the capability file."


@pytest.mark.parametrize(
    ("api", "answers"),
    [(None, True), ("openai", True), ("responses", False), ("anthropic", False)],
    ids=["own-api", "own-api-named", "responses-api-is-another-endpoint",
         "messages-api-is-another-endpoint"],
)  # fmt: skip
def test_only_the_entry_of_the_api_probed_answers(
    tmp_path: Path, api: str | None, answers: bool
) -> None:
    caps = tmp_path / "caps.yaml"
    spec = ProbeSpec(
        "openrouter:qwen/qwen3-8b", api_family=api, capability_file=caps, reuse_cached=True
    )
    entry = fresh_entry("https://openrouter.ai/api/v1")
    CapabilityFile(caps).put(entry)
    assert build(spec, NOTHING_SENT).cached == (entry if answers else None)


GOLDEN = Path(__file__).parent.parent / "golden" / "results.json"


@pytest.mark.parametrize(
    ("target", "api", "wanted"),
    [
        ("openrouter:qwen/qwen3-8b", None, None),
        ("openrouter:qwen/qwen3-8b", "responses", "openrouter:qwen/qwen3-8b in the responses API"),
        ("openrouter:other", None, "openrouter:other in the openai API"),
    ],
    ids=["same-target-and-api", "another-api-of-the-server", "another-model"],
)  # fmt: skip
def test_resume_takes_only_results_of_the_same_target_and_api(
    tmp_path: Path, target: str, api: str | None, wanted: str | None
) -> None:
    spec = ProbeSpec(
        target, api_family=api, resume_from=GOLDEN, capability_file=tmp_path / "caps.yaml"
    )
    if wanted is None:
        # Every cell of the golden results, the cost stage's included.
        assert len(build(spec, NOTHING_SENT).prior) == 47
        return
    with pytest.raises(InputError) as caught:
        build(spec, NOTHING_SENT)
    assert str(caught.value) == (
        f"--resume: {GOLDEN} holds the results of openrouter:qwen/qwen3-8b in the openai API, "
        f"not of {wanted}."
    )


def test_the_credentials_in_the_sources_are_held_before_one_is_read(tmp_path: Path) -> None:
    token, key = "tok3nQ8v2Lm5Rx9Wp4Zj7Hd1Kc6", "sk-proj-abcdefghijklmnop"
    spec = ProbeSpec(
        "vllm:m",
        base_url=URL,
        tools=(f"mcp:http://127.0.0.1:9/mcp?token={token}", f"mcp:stdio:server --api-key {key}"),
        out_dir=tmp_path / "out",
    )
    with pytest.raises(InputError) as caught:
        build(spec)  # nothing listens on port 9: the first source fails as it is read
    assert held().keys == {token, key}
    said = held().text(str(caught.value))
    assert said.startswith("The MCP server at http://127.0.0.1:9/mcp?token=[redacted] failed ")
