"""Record and replay: a probe recorded against an emulated provider replays with no network,
to the same results.json apart from timestamps, latencies and the command line.

Latencies in a replay are the replay's own (measured around each attempt as always), so they
are normalised here, with the run's timestamps and the command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.jsonschemas import problems
from conchcheck.matrix import load_matrix
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
KEY = "sk-or-recorded-0123456789abcdef"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["probe", *args, "--quiet", "--json"])
    return result.exit_code, result.stdout, result.stderr


def normalised(path: Path) -> dict[str, Any]:
    """results.json without what a replay can't repeat: when, how long, and the command."""
    data = json.loads(path.read_text())
    data.pop("run")
    data["budget"].pop("stage_ms")
    data["budget"].pop("critical_path")
    for cell in data["cells"]:
        cell.pop("latency_ms")
    return data


@pytest.fixture
def recorded(serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A default-matrix probe of an emulated OpenRouter (a key, SSE streams), recorded."""
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    server = serve(OpenAIEmulator(oracle(MATRIX)))
    recording = tmp_path / "probe.recording.json"
    code, out, err = run(
        "openrouter:qwen/qwen3-8b", "--base-url", server.url + "/v1",
        "--out", str(tmp_path / "live"), "--record", str(recording),
    )  # fmt: skip
    assert code == 0, err
    server.close()
    return {"recording": recording, "out": tmp_path / "live", "requests": len(server.received),
            "outcome": json.loads(out)}  # fmt: skip


def test_the_recording_is_complete_valid_and_keyless(recorded: dict[str, Any]) -> None:
    text = recorded["recording"].read_text()
    data = json.loads(text)
    assert problems("recording", data) == []
    assert (data["format"], data["version"], data["target"]) == (
        "conchcheck-recording", 1, "openrouter:qwen/qwen3-8b",
    )  # fmt: skip
    assert len(data["exchanges"]) == recorded["requests"]
    assert KEY not in text and KEY[:12] not in text
    streamed = [e for e in data["exchanges"] if e["request"] and e["request"].get("stream")]
    assert streamed and all(e["body"].startswith("data: ") for e in streamed)


def test_a_replay_gives_the_same_results_without_a_network(
    recorded: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No key in the environment either: the recording's are masked, a stand-in is sent.
    monkeypatch.delenv("OPENROUTER_API_KEY")
    code, out, err = run(
        "openrouter:qwen/qwen3-8b", "--out", str(tmp_path / "again"),
        "--replay", str(recorded["recording"]),
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["result"]["verdict"] == recorded["outcome"]["result"]["verdict"]
    assert normalised(tmp_path / "again" / "results.json") == normalised(
        recorded["out"] / "results.json"
    )


def test_a_request_the_recording_lacks_is_named(recorded: dict[str, Any], tmp_path: Path) -> None:
    code, out, err = run(
        "openrouter:qwen/qwen3-8b", "--out", str(tmp_path / "other"), "--repeat", "2",
        "--replay", str(recorded["recording"]),
    )  # fmt: skip
    assert code == 2 and out == ""
    message = " ".join(err.split())
    assert f"The recording {recorded['recording']} has no" in message
    assert "/v1/chat/completions with body sha256 " in message
    assert "it was recorded with matrix default (sha256:" in message
    assert "Replay with the matrix and options it was recorded with" in message


@pytest.mark.parametrize(
    ("change", "wanted"),
    [
        pytest.param(lambda d: d.update(version=2), "bad.json:3: $.version: expected version 1 (the one this conchcheck reads), got 2.",
                     id="unknown-version"),
        pytest.param(lambda d: d["exchanges"][0].pop("url"), "bad.json:13: $.exchanges[0]: missing 'url'.",
                     id="exchange-without-url"),
    ],
)  # fmt: skip
def test_a_bad_recording_is_refused_before_any_request(
    recorded: dict[str, Any], tmp_path: Path, change: Callable[[dict[str, Any]], None], wanted: str
) -> None:
    data = json.loads(recorded["recording"].read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    code, _, err = run(
        "openrouter:qwen/qwen3-8b", "--out", str(tmp_path / "o"), "--replay", str(bad)
    )
    assert code == 2
    assert wanted in " ".join(err.split())


def test_a_header_that_is_not_ascii_replays(recorded: dict[str, Any], tmp_path: Path) -> None:
    """httpx takes a text header as ASCII only: a recording's UTF-8 header value was a
    UnicodeEncodeError traceback at the first replayed reply."""
    data = json.loads(recorded["recording"].read_text())
    for exchange in data["exchanges"]:
        exchange["headers"].append(["retry-after", "héllo ✓"])
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data, ensure_ascii=False))
    code, _, err = run(
        "openrouter:qwen/qwen3-8b", "--out", str(tmp_path / "o"), "--replay", str(edited)
    )
    assert (code, err) == (0, "")
    assert normalised(tmp_path / "o" / "results.json") == normalised(
        recorded["out"] / "results.json"
    )


def test_replaying_another_target_is_refused(recorded: dict[str, Any], tmp_path: Path) -> None:
    code, _, err = run(
        "vllm:m", "--out", str(tmp_path / "o"), "--replay", str(recorded["recording"])
    )
    assert code == 2
    assert "was recorded against openrouter:qwen/qwen3-8b, not vllm:m" in " ".join(err.split())


def test_record_and_replay_together_are_refused(tmp_path: Path) -> None:
    code, _, err = run("vllm:m", "--record", str(tmp_path / "a"), "--replay", str(tmp_path / "b"))
    assert code == 2
    assert "--record and --replay: give one, not both." in err


@pytest.mark.parametrize(
    ("askers", "served"),
    [
        pytest.param(["native/p/2", "native/p/1"], [b"second", b"first"], id="each-cell-its-own"),
        pytest.param(["", ""], [b"first", b"second"], id="unknown-asker-in-recorded-order"),
        pytest.param(["other", "native/p/2"], [b"first", b"second"], id="stranger-takes-the-first"),
    ],
)
def test_the_same_request_from_two_cells_gets_each_its_own_reply(
    askers: list[str], served: list[bytes]
) -> None:
    import asyncio

    import httpx

    from conchcheck.wire.recording import ASKER, Recorded, Recording, ReplayTransport, body_digest

    body = json.dumps({"model": "m", "messages": []}).encode()
    value, digest = body_digest(body)
    url = "http://127.0.0.1:9/v1/chat/completions"
    recording = Recording("vllm:m", "http://127.0.0.1:9/v1", "default", "x", 4, "0")
    for asker, reply in (("native/p/1", b"first"), ("native/p/2", b"second")):
        recording.exchanges.append(
            Recorded("POST", url, value, digest, 200, [], reply, asker=asker)
        )
    replay = ReplayTransport(recording, "r.json")

    async def ask(asker: str) -> bytes:
        ASKER.set(asker)
        response = await replay.handle_async_request(httpx.Request("POST", url, content=body))
        return b"".join([chunk async for chunk in response.aiter_raw()])

    async def both() -> list[bytes]:
        return [await ask(asker) for asker in askers]

    assert asyncio.run(both()) == served


def test_a_reply_cut_at_its_deadline_replays_as_the_same_deadline(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request cancelled at its deadline (a loaded machine: llama-server slots past 120 s)
    was kept with no status and no error, and replayed as an empty reply. It is kept as the
    deadline, and the replay meets the same deadline, to the same results."""
    import time

    from tests.emulators.model import Answer, Asked

    correct = oracle(MATRIX)

    def slow_weather(asked: Asked) -> Answer:
        if asked.tools and asked.messages[-1]["content"].startswith(
            "What's the weather in Paris in"
        ):
            time.sleep(1.5)
        return correct(asked)

    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    server = serve(OpenAIEmulator(slow_weather))
    recording = tmp_path / "slow.recording.json"
    code, _, err = run(
        "openrouter:qwen/qwen3-8b", "--base-url", server.url + "/v1", "--timeout", "0.5",
        "--out", str(tmp_path / "live"), "--record", str(recording),
    )  # fmt: skip
    assert code == 0, err
    cut = [e for e in json.loads(recording.read_text())["exchanges"] if e["error"]]
    # The whole request is the native cell's; its streamed copy goes at the same time.
    assert {e["asker"] for e in cut} == {
        "native/weather-enum/1",
        "follow_up/streaming/weather-enum",
    }
    assert {(e["status"], e["error"]["type"]) for e in cut} == {(None, "Deadline")}
    code, _, err = run(
        "openrouter:qwen/qwen3-8b", "--timeout", "0.5", "--out", str(tmp_path / "again"),
        "--replay", str(recording),
    )  # fmt: skip
    assert code == 0, err
    again = normalised(tmp_path / "again" / "results.json")
    assert again == normalised(tmp_path / "live" / "results.json")
    (cell,) = [c for c in again["cells"] if c["id"] == "native/weather-enum/1"]
    assert cell["outcome"] == "error"
    assert cell["detail"].startswith("No complete reply within the 0.5 s deadline")
