"""`conchcheck probe --targets` against loopback emulators: one folder a target, the index,
the worst exit code, each provider's shared concurrency and rate limits, and bad input
refused before the first request."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile
from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from conchcheck.run.fleet import worst
from conchcheck.run.targets import TargetEntry
from conchcheck.wire.providers import parse_target
from tests.emulators.one_server import one_server
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Received, Response

Serve = Callable[[Handler], EmulatorServer]
TINY = Path(__file__).parent / "data" / "targets" / "tiny.yaml"
runner = CliRunner()


class InFlight:
    """Counts the requests being answered at once over every server that shares it, and
    when each arrived."""

    def __init__(self, hold: float = 0.0) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.arrivals: list[float] = []
        self.hold = hold

    def around(self, handler: Handler) -> Handler:
        def counted(received: Received) -> Response:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
                self.arrivals.append(time.monotonic())
            try:
                time.sleep(self.hold)
                return handler(received)
            finally:
                with self.lock:
                    self.now -= 1

        return counted


def folder(target: str, url: str) -> str:
    return TargetEntry(parse_target(target, base_url=url)).folder


def run(tmp_path: Path, targets: str, *extra: str) -> tuple[int, str, str]:
    path = tmp_path / "targets.yaml"
    path.write_text(targets)
    result = runner.invoke(
        app, ["probe", "--targets", str(path), "--out", str(tmp_path / "out"), *extra]
    )
    return result.exit_code, result.stdout, result.stderr


def index(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "out" / "index.json").read_text())


def test_three_targets_one_unusable(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix("default")
    native = serve(OpenAIEmulator(oracle(matrix)))
    words = serve(OpenAIEmulator(oracle(matrix), flavour="llamacpp", template_tools=False))
    targets = f"""\
targets:
  - target: vllm:m
    base_url: {native.url}/v1
  - target: llamacpp:local
    base_url: {words.url}/v1
  - target: openrouter:qwen/qwen3-8b
"""
    code, out, err = run(tmp_path, targets, "--quiet")
    # The missing key is the third target's own exit 3; the others were probed in full.
    assert code == 3, err
    data = index(tmp_path)
    rows = [
        (t["target"], t["exit_code"], t["verdict"] and t["verdict"]["mode"], t["folder"])
        for t in data["targets"]
    ]
    assert rows == [
        ("vllm:m", 0, "native", folder("vllm:m", native.url + "/v1")),
        ("llamacpp:local", 0, "words", folder("llamacpp:local", words.url + "/v1")),
        ("openrouter:qwen/qwen3-8b", 3, None, folder("openrouter:qwen/qwen3-8b", None)),
    ]
    unusable = data["targets"][2]
    assert unusable["message"] == (
        "The target can't be probed: No API key for provider 'openrouter': "
        "$OPENROUTER_API_KEY is not set. Set it, or give the entry an api_key_env."
    )
    assert unusable["requests"] == 0
    assert data["exit_code"] == 3 and data["shard"] is None
    assert {t["matrix"] for t in data["targets"]} == {"default"}
    assert {t["matrix_digest"] for t in data["targets"]} == {matrix.digest}
    for row in data["targets"]:
        written = sorted(p.name for p in (tmp_path / "out" / row["folder"]).iterdir())
        assert written == ["junit.xml", "report.html", "report.md", "results.json"]
    results = json.loads((tmp_path / "out" / rows[0][3] / "results.json").read_text())
    assert results["verdict"]["mode"] == "native"
    assert "vllm:m" in out and "wrote " + str(tmp_path / "out" / "index.json") in out
    assert len(native.received) > 0 and len(words.received) > 0


def test_one_servers_three_apis_are_three_targets(serve: Serve, tmp_path: Path) -> None:
    server = serve(one_server())
    url = server.url + "/v1"
    targets = f"""\
targets:
  - {{target: llamacpp:local, base_url: {url}}}
  - {{target: llamacpp:local, base_url: {url}, api: responses}}
  - {{target: llamacpp:local, base_url: {url}, api: anthropic}}
"""
    cache = tmp_path / "capabilities.yaml"
    code, _, err = run(tmp_path, targets, "--quiet", "--matrix", str(TINY), "--cache", str(cache))
    assert code == 0, err
    rows = [
        (t["target"], t["api"], t["exit_code"], t["folder"]) for t in index(tmp_path)["targets"]
    ]
    assert rows == [
        ("llamacpp:local", api, 0, TargetEntry(parse_target("llamacpp:local", base_url=url,
                                                            api=api)).folder)
        for api in ("openai", "responses", "anthropic")
    ]  # fmt: skip
    assert len({row[3] for row in rows}) == 3
    paths = [p.path for p in server.received if p.method == "POST"]
    assert {"/v1/chat/completions", "/v1/responses", "/v1/messages"} <= set(paths)
    written = [json.loads((tmp_path / "out" / r[3] / "results.json").read_text())["api"]
               for r in rows]  # fmt: skip
    assert written == ["openai", "responses", "anthropic"]
    assert [e.api.value for e in CapabilityFile(cache).entries()] == [
        "anthropic", "openai", "responses",
    ]  # fmt: skip


LIMITS = [
    pytest.param("  vllm: {concurrency: 1}\n", 1, id="one-at-a-time-over-both-servers"),
    pytest.param("  vllm: {concurrency: 2}\n", 2, id="two-at-a-time-over-both-servers"),
    # Without its own, a provider shares --concurrency: eight would fit the two probes' slots.
    pytest.param("  vllm: {}\n", 4, id="the-concurrency-option-shared"),
]


@pytest.mark.parametrize(("limits", "most"), LIMITS)
def test_a_provider_limit_holds_across_its_targets(
    serve: Serve, tmp_path: Path, limits: str, most: int
) -> None:
    matrix = load_matrix(str(TINY))
    flight = InFlight(hold=0.05)
    first = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    second = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    targets = f"""\
providers:
{limits}targets:
  - target: vllm:a
    base_url: {first.url}/v1
    matrix: {TINY}
  - target: vllm:b
    base_url: {second.url}/v1
    matrix: {TINY}
"""
    code, _, err = run(tmp_path, targets, "--quiet", "--concurrency", "4", "--repeat", "4")
    assert code == 0, err
    assert flight.most == most
    assert len(first.received) > 4 and len(second.received) > 4


def test_different_providers_run_at_once(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix(str(TINY))
    flight = InFlight(hold=0.05)
    first = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    second = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    targets = f"""\
providers:
  vllm: {{concurrency: 1}}
  sglang: {{concurrency: 1}}
targets:
  - target: vllm:a
    base_url: {first.url}/v1
  - target: sglang:b
    base_url: {second.url}/v1
"""
    code, _, err = run(tmp_path, targets, "--quiet", "--matrix", str(TINY), "--repeat", "4")
    assert code == 0, err
    assert flight.most == 2


def test_a_rate_limit_spaces_a_providers_requests(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix(str(TINY))
    flight = InFlight()
    first = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    second = serve(flight.around(OpenAIEmulator(oracle(matrix))))
    targets = f"""\
providers:
  vllm: {{requests_per_minute: 600}}
targets:
  - target: vllm:a
    base_url: {first.url}/v1
  - target: vllm:b
    base_url: {second.url}/v1
"""
    code, _, err = run(tmp_path, targets, "--quiet", "--matrix", str(TINY))
    assert code == 0, err
    arrivals = sorted(flight.arrivals)
    assert len(arrivals) >= 6
    # 600 a minute is one each 0.1 s: the n-th can't go before (n-1) * 0.1 s after the first.
    # Generous bounds: a request may arrive a little late, never early by much.
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) * 0.1 * 0.95
    # Released 0.1 s apart, two requests can still arrive together when the first was held up
    # on its way (seen once in CI, 0.0009 s apart on a loaded machine); three never can.
    assert all(
        later - earlier >= (j - i - 1) * 0.1 * 0.95
        for i, earlier in enumerate(arrivals)
        for j, later in enumerate(arrivals)
        if j > i
    )


def test_shards_split_the_targets_and_the_index_says_which(serve: Serve, tmp_path: Path) -> None:
    matrix = load_matrix(str(TINY))
    server = serve(OpenAIEmulator(oracle(matrix)))
    names = [f"m{n}" for n in range(6)]
    targets = "targets:\n" + "".join(
        f"  - target: vllm:{n}\n    base_url: {server.url}/v1\n" for n in names
    )
    seen: list[str] = []
    for shard in ("1/2", "2/2"):
        code, _, err = run(tmp_path, targets, "--quiet", "--matrix", str(TINY), "--shard", shard)
        assert code == 0, err
        data = index(tmp_path)
        index_, count = (int(x) for x in shard.split("/"))
        assert data["shard"] == {"index": index_, "count": count}
        mine = [t for t in data["targets"] if not t.get("earlier")]
        assert {t["shard"] for t in mine} <= {index_}
        seen += [t["target"] for t in mine]
    assert sorted(seen) == [f"vllm:{n}" for n in names]
    # The second shard's index keeps the first's targets, marked (before: it forgot them).
    listed = index(tmp_path)["targets"]
    assert sorted(t["target"] for t in listed) == [f"vllm:{n}" for n in names]
    assert {t["shard"] for t in listed if t.get("earlier")} == {1}
    assert {t["shard"] for t in listed if not t.get("earlier")} == {2}


BAD_INPUT = [
    pytest.param(["--targets", "{file}", "vllm:m"],
                 "conchcheck: Give a TARGET or --targets, one of the two. "
                 "See `conchcheck probe --help`.", id="both-target-and-targets"),
    pytest.param([], "conchcheck: Give a TARGET or --targets, one of the two. "
                 "See `conchcheck probe --help`.", id="neither"),
    pytest.param(["vllm:m", "--shard", "1/2"],
                 "conchcheck: --shard: only with --targets. See `conchcheck probe --help`.",
                 id="shard-without-targets"),
    pytest.param(["--targets", "{file}", "--shard", "3/2"],
                 "conchcheck: --shard: 3/2 is out of range. "
                 "Write I/N with 1 <= I <= N, for example --shard 1/4.", id="shard-out-of-range"),
    pytest.param(["--targets", "{file}", "--base-url", "http://127.0.0.1:1/v1"],
                 "conchcheck: --base-url: not with --targets; it is an option of a single "
                 "target's probe. Probe that target on its own, or write base_url, api or api_key_env"
                 " in its entry of the targets file.",
                 id="base-url-belongs-in-the-file"),
    pytest.param(["--targets", "{file}", "--tools", "tools.json"],
                 "conchcheck: --tools: not with --targets; it is an option of a single "
                 "target's probe. Probe that target on its own, or write base_url, api or api_key_env"
                 " in its entry of the targets file.",
                 id="own-tools-are-for-one-target"),
    pytest.param(["--targets", "{bad}"],
                 "conchcheck: {bad}:3: $.targets[0].repeat: expected at most 100, got 101. "
                 "Each entry is {{target: provider:model}}, optionally with base_url, "
                 "api, api_key_env, matrix and repeat.", id="bad-targets-file"),
    pytest.param(["--targets", "{file}", "--api", "responses"],
                 "conchcheck: --api: not with --targets; it is an option of a single "
                 "target's probe. Probe that target on its own, or write base_url, api or "
                 "api_key_env in its entry of the targets file.", id="api-belongs-in-the-file"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "line"), BAD_INPUT)
def test_bad_input_is_exit_2_before_any_request(
    serve: Serve, tmp_path: Path, args: list[str], line: str
) -> None:
    server = serve(OpenAIEmulator(oracle(load_matrix(str(TINY)))))
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(f"targets:\n  - target: vllm:m\n    base_url: {server.url}/v1\n")
    bad.write_text(f"targets:\n  - target: vllm:m\n    repeat: 101\n    base_url: {server.url}\n")
    args = [a.format(file=good, bad=bad) for a in args]
    result = runner.invoke(app, ["probe", *args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.strip() == line.format(bad=bad)
    assert server.received == []
    assert not (tmp_path / "out").exists()


def test_a_target_folder_that_is_a_link_is_refused_before_any_request(
    serve: Serve, tmp_path: Path
) -> None:
    """A folder inside --out that links elsewhere would take the target's results there."""
    server = serve(OpenAIEmulator(oracle(load_matrix(str(TINY)))))
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    out.mkdir()
    link = out / folder("vllm:m", f"{server.url}/v1")
    link.symlink_to(elsewhere, target_is_directory=True)
    code, _, err = run(tmp_path, f"targets:\n  - target: vllm:m\n    base_url: {server.url}/v1\n")
    assert (code, err) == (
        2,
        f"conchcheck: {link}: is a symbolic link inside {out}; conchcheck never writes through"
        " one. Remove the link, or choose another folder with --out.\n",
    )
    assert server.received == [] and list(elsewhere.iterdir()) == []


def test_a_long_model_gets_a_folder_a_file_system_takes(serve: Serve, tmp_path: Path) -> None:
    """A 400-character model was 'File name too long' after every request had been sent."""
    server = serve(OpenAIEmulator(oracle(load_matrix(str(TINY)))))
    target = "vllm:" + "m" * 400
    code, _, err = run(
        tmp_path, f"targets:\n  - target: {target}\n    base_url: {server.url}/v1\n",
        "--matrix", str(TINY), "--quiet",
    )  # fmt: skip
    assert (code, err) == (0, "")
    name = folder(target, f"{server.url}/v1")
    assert name.startswith("vllm_" + "m" * 95 + "-") and len(name) == 109
    assert [t["folder"] for t in index(tmp_path)["targets"]] == [name]
    assert (tmp_path / "out" / name / "results.json").is_file()


def test_a_target_folder_that_is_a_file_is_refused_before_any_request(
    serve: Serve, tmp_path: Path
) -> None:
    server = serve(OpenAIEmulator(oracle(load_matrix(str(TINY)))))
    (tmp_path / "out").mkdir()
    taken = tmp_path / "out" / folder("vllm:m", f"{server.url}/v1")
    taken.write_text("mine")
    code, _, err = run(tmp_path, f"targets:\n  - target: vllm:m\n    base_url: {server.url}/v1\n")
    assert (code, err) == (
        2, f"conchcheck: --out: {taken}: is a file, not a folder. Choose another folder.\n"
    )  # fmt: skip
    assert server.received == [] and taken.read_text() == "mine"


def test_a_second_run_into_one_out_keeps_the_first_in_its_index(
    serve: Serve, tmp_path: Path
) -> None:
    """Before: the index listed only the last run, while `report` rendered both runs'
    folders, with no warning."""
    server = serve(OpenAIEmulator(oracle(load_matrix(str(TINY)))))
    url = f"{server.url}/v1"
    first = f"targets:\n  - target: vllm:a\n    base_url: {url}\n"
    assert run(tmp_path, first, "--quiet", "--matrix", str(TINY))[0] == 0
    # The same file again writes over its own folder: one entry, its own.
    assert run(tmp_path, first, "--quiet", "--matrix", str(TINY))[0] == 0
    assert [(t["target"], t.get("earlier")) for t in index(tmp_path)["targets"]] == [
        ("vllm:a", None)
    ]
    second = f"targets:\n  - target: vllm:b\n    base_url: {url}\n"
    assert run(tmp_path, second, "--quiet", "--matrix", str(TINY))[0] == 0
    listed = index(tmp_path)["targets"]
    assert [(t["target"], t.get("earlier")) for t in listed] == [
        ("vllm:b", None),
        ("vllm:a", True),
    ]
    assert listed[1]["folder"] == folder("vllm:a", url)
    # A folder gone is not kept.
    shutil.rmtree(tmp_path / "out" / folder("vllm:a", url))
    assert run(tmp_path, second, "--quiet", "--matrix", str(TINY))[0] == 0
    assert [t["target"] for t in index(tmp_path)["targets"]] == ["vllm:b"]


@pytest.mark.parametrize(
    "after",
    [
        pytest.param(1, id="at-the-first-request"),
        pytest.param(12, id="while-every-target-is-busy"),
        pytest.param(60, id="with-targets-in-their-later-stages"),
    ],
)
def test_sigterm_stops_every_target_cleanly(serve: Serve, tmp_path: Path, after: int) -> None:
    """Before: stderr carried asyncio's "coroutine … was never awaited" after a SIGTERM."""
    import signal
    import subprocess
    import sys

    slow = OpenAIEmulator(oracle(load_matrix("default")))

    def handler(received: Received) -> Response:
        time.sleep(0.05)
        return slow(received)

    server = serve(handler)
    lines = [f"  - target: vllm:m{n}\n    base_url: {server.url}/v1" for n in range(4)]
    (tmp_path / "targets.yaml").write_text("targets:\n" + "\n".join(lines) + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "conchcheck", "probe", "--targets", str(tmp_path / "targets.yaml"),
         "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while len(server.received) < after and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (4, "")
    assert out.count("Stopped early: interrupted (SIGTERM).") == 4
    assert [t["exit_code"] for t in index(tmp_path)["targets"]] == [4, 4, 4, 4]
    assert not (tmp_path / "cache.yaml").exists()


WORST = [
    pytest.param([0, 1, 4, 3], 3, id="unusable-first"),
    pytest.param([0, 1, 4], 4, id="then-stopped"),
    pytest.param([1, 0], 1, id="then-an-expectation"),
    pytest.param([0, 0], 0, id="all-done"),
    pytest.param([], 0, id="an-empty-shard"),
]


@pytest.mark.parametrize(("codes", "code"), WORST)
def test_the_run_exits_with_the_worst_code(codes: list[int], code: int) -> None:
    assert worst(codes) == code
