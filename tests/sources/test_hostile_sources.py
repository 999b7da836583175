"""The hostile-source tier: MCP servers that misbehave on purpose, over stdio and HTTP.

Each behaviour is ``tests/sources/hostile_servers.py``'s. Through the library, each is one
``InputError`` line; through the real command line (``python -m conchcheck probe --tools``),
each must end in one line and its exit code with no traceback, write nothing outside
``--out`` (nothing at all when it fails), leave no process of the server running, and show
no key anywhere: stdout, stderr, every file under ``--out``, or a request to the provider.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conchcheck.errors import InputError
from conchcheck.sources import read_tools
from conchcheck.sources.environment import DEFAULT_NAMES
from tests.emulators.model import ignores_tools
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.server import EmulatorServer, Fault, Handler, Received, Response
from tests.sources.documents import api, fan_out, operations, self_refs
from tests.sources.hostile_servers import http_reply
from tests.test_secrets import PLAIN, PREFIXED, forms

Serve = Callable[[Handler], EmulatorServer]
ROOT = Path(__file__).parent.parent.parent
HOSTILE = Path(__file__).parent / "hostile_servers.py"
TOKEN = "ghp_c4n4ry0tok3n7f3a9c2e41b04d5f8a6e1c0b9d"
"""A token the user passes to the server with --tools-env GITHUB_TOKEN."""
UNPASSED = "sk-ant-api03-unp4ss3dKq8Zr2Wm5Tn7Yb4Hc6Jd9Lf3Pg1Vx0"
"""A key in the user's environment that no server is given."""
OTHER = "sk-proj-0th3rk3yAbCdEfGhIjKlMnOpQrStUvWxYz0123"
"""Someone's key conchcheck never read, known only by its shape."""
DEEP_AT = 2747
"""Where the deep-schema tool's tools/list message passes 128 levels."""
RSS_BOUND_MB = 200
"""A probe's peak memory, whatever its sources do (issue 10's bound)."""
BODY = "$.paths./r0.post.requestBody.content.application/json.schema"


def stdio(behaviour: str, marker: Path) -> str:
    """The command line of the hostile server; ``marker`` (a path) names its processes."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(HOSTILE))} {behaviour} {marker}"


def http_server(serve: Serve, behaviour: str, echoed: str = "") -> EmulatorServer:
    def handle(received: Received) -> Response:
        if behaviour == "silent":
            return Response(fault=Fault.HANG)
        authorization = received.headers.get("authorization")
        status, kind, body = http_reply(behaviour, received.json(), echoed, authorization)
        return Response(status, body, {"content-type": kind})

    return serve(handle)


def running(marker: Path) -> list[str]:
    """The live processes (zombies are not) whose command line holds ``marker``."""
    listed = subprocess.run(
        ["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    return [
        line.strip()
        for line in listed.splitlines()
        if str(marker) in line and not line.split()[1].startswith("Z")
    ]


def gone(marker: Path, within: float = 3.0) -> list[str]:
    """``running(marker)`` once it is empty, or as it is after ``within`` seconds."""
    until = time.monotonic() + within
    while (left := running(marker)) and time.monotonic() < until:
        time.sleep(0.05)
    return left


# -- through the library ----------------------------------------------------------------------

NAMED = "MCP server `{cmd}` broke the protocol on tools/list: "


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        pytest.param("deep-schema", f"The MCP server `{{cmd}}` sent a message nested deeper than 128 levels on tools/list (at character {DEEP_AT}); it was not parsed.", id="schema-nested-100-deep"),
        pytest.param("deep-line", "The MCP server `{cmd}` sent a message nested deeper than 128 levels on tools/list (at character 128); it was not parsed.", id="line-100000-deep"),
        pytest.param("nan", NAMED + "a non-JSON-compliant number (NaN) in the schema of tool 'weigh'.", id="nan-in-a-schema"),
        pytest.param("infinity", NAMED + "a non-JSON-compliant number (-Infinity) in the schema of tool 'weigh'.", id="infinity-in-a-schema"),
        pytest.param("huge-number", NAMED + "a non-JSON-compliant number (Infinity) in the schema of tool 'weigh'.", id="1e400-read-as-infinity"),
        pytest.param("loop-cursor", "MCP server `{cmd}` sent more than 100 pages of tools/list.", id="looping-cursor"),
        pytest.param("chatter", "The MCP server `{cmd}` wrote a line that is not JSON-RPC on stdout ('Starting hostile MCP server v1.0 (press Ctrl-C to quit)').", id="chatter-before-json-rpc"),
        pytest.param("silent-flood", "The MCP server `{cmd}` did not answer server/discover or initialize within the deadline; it was stopped.", id="endless-stderr-and-silence"),
        pytest.param("fork-exit", "The MCP server `{cmd}` exited with code 0 before answering server/discover.", id="forks-a-child-and-exits"),
    ],
)  # fmt: skip
def test_a_hostile_stdio_server_is_one_line(tmp_path: Path, behaviour: str, message: str) -> None:
    command = stdio(behaviour, tmp_path / "child.pid")
    with pytest.raises(InputError) as caught:
        read_tools(f"mcp:stdio:{command}", deadline=2.0)
    assert str(caught.value) == message.replace("{cmd}", command)
    assert gone(tmp_path) == []


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        pytest.param("deep-line", "failed on tools/list: a reply nested deeper than 128 levels (at character 128), not parsed.", id="json-100000-deep"),
        pytest.param("deep-sse", "failed on tools/list: a reply nested deeper than 128 levels (at character 128), not parsed.", id="sse-event-100000-deep"),
        pytest.param("deep-schema", f"failed on tools/list: a reply nested deeper than 128 levels (at character {DEEP_AT}), not parsed.", id="schema-nested-100-deep"),
        pytest.param("nan", "broke the protocol on tools/list: a non-JSON-compliant number (NaN) in the schema of tool 'weigh'.", id="nan-in-a-schema"),
        pytest.param("loop-cursor", "sent more than 100 pages of tools/list.", id="looping-cursor"),
    ],
)  # fmt: skip
def test_a_hostile_http_server_is_one_line(serve: Serve, behaviour: str, message: str) -> None:
    server = http_server(serve, behaviour)
    with pytest.raises(InputError) as caught:
        read_tools(server.url, deadline=5.0)
    assert str(caught.value).endswith(message)
    assert str(caught.value).count(server.url) == 1


def test_a_server_gets_the_default_environment_and_what_is_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", UNPASSED)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    [tool] = read_tools(
        f"mcp:stdio:{stdio('env', tmp_path)}", env={"GITHUB_TOKEN": TOKEN, "GREETING": "hi"}
    )
    given = json.loads(tool.description)
    # Python adds LC_CTYPE itself when the locale it is given is C (PEP 538).
    given.pop("LC_CTYPE", None)
    defaults = {name: os.environ[name] for name in DEFAULT_NAMES if name in os.environ}
    # The token reached the server, and comes back masked in what the server said.
    assert given == {**defaults, "GITHUB_TOKEN": "[redacted]", "GREETING": "hi"}


def test_an_env_in_the_command_line_is_the_servers(tmp_path: Path) -> None:
    # The source format has no field of its own for variables: `env NAME=value` sets one.
    [tool] = read_tools(f"mcp:stdio:env GREETING=hello {stdio('env', tmp_path)}")
    assert json.loads(tool.description)["GREETING"] == "hello"


@pytest.mark.parametrize(
    ("behaviour", "pid_left"),
    [
        pytest.param("fork", False, id="child-in-the-group-is-stopped"),
        pytest.param("escape", True, id="child-that-left-the-group-is-beyond-reach"),
    ],
)
def test_a_forked_child(tmp_path: Path, behaviour: str, pid_left: bool) -> None:
    pid_file = tmp_path / "child.pid"
    tools = read_tools(f"mcp:stdio:{stdio(behaviour, pid_file)}", deadline=5.0)
    assert [t.name for t in tools] == ["ping"]
    pid = int(pid_file.read_text())
    try:
        # The README says so: a daemon's double fork and setsid leave the group for good.
        assert [line.split()[0] for line in gone(tmp_path, 1.0)] == ([str(pid)] if pid_left else [])
    finally:
        if pid_left:
            os.kill(pid, signal.SIGKILL)


# -- through the command line -------------------------------------------------------------------


@dataclass(frozen=True)
class Probed:
    code: int
    stdout: str
    stderr: str
    files: dict[str, str]
    """Every file under the test's folder but the server's pid file, by relative path."""
    sent: list[str]
    """The body of every request the provider got."""
    rss_mb: float
    """The probe's peak resident memory (the kernel's ``ru_maxrss`` of the finished child)."""
    heads: tuple[str, ...] = ()
    """The headers of every request the provider got, each request's as ``name: value``
    lines (its key among them)."""


def probe(
    serve: Serve, tmp_path: Path, source: str, *extra: str, environ: dict[str, str] | None = None
) -> Probed:
    """``conchcheck probe --tools source`` with the key CANARY_KEY, GITHUB_TOKEN, an
    unpassed key and ``environ`` in its environment, in an empty working folder and home."""
    provider = serve(OpenAIEmulator(ignores_tools()))
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(ROOT),
        "CONCHCHECK_CACHE": str(tmp_path / "capabilities.yaml"), "NO_COLOR": "1",
        "CANARY_KEY": PLAIN, "GITHUB_TOKEN": TOKEN, "ANTHROPIC_API_KEY": UNPASSED,
        "OPENAI_API_KEY": PREFIXED, **(environ or {}),
    }  # fmt: skip
    args = [sys.executable, "-m", "conchcheck", "probe", "vllm:m", "--base-url",
            f"{provider.url}/v1", "--api-key-env", "CANARY_KEY", "--out", str(tmp_path / "out"),
            "--quiet", "--checks", "dialect,mode", "--timeout", "5", "--tools", source, *extra]  # fmt: skip
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # Measured from a launcher of its own (tests/peak.py): started from this test run,
        # the probe's peak would start at the test run's own.
        measured = tmp_path / "peak.json"
        launch = [sys.executable, str(ROOT / "tests" / "peak.py"), str(measured), *args]
        process = subprocess.Popen(launch, stdout=out, stderr=err, cwd=work, env=env)
        # Stopped past a minute: a probe that never ends fails, and its memory is still told.
        timer = threading.Timer(60, process.terminate)
        timer.start()
        process.wait()
        timer.cancel()
        peak = json.loads(measured.read_text())
        measured.unlink()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    files = {
        str(p.relative_to(tmp_path)): p.read_text(errors="replace")
        for p in sorted(tmp_path.rglob("*"))
        if p.is_file() and p.name != "child.pid"
    }
    sent = [r.body.decode(errors="replace") for r in provider.received]
    heads = tuple("\n".join(f"{k}: {v}" for k, v in r.headers.items()) for r in provider.received)
    return Probed(peak["code"], stdout, stderr, files, sent, peak["rss_mb"], heads)


def leaks(probed: Probed) -> list[str]:
    """Where any form of a key shows: stdout, stderr, a file, a request."""
    places = {"stdout": probed.stdout, "stderr": probed.stderr, **probed.files}
    places |= {f"request {i}": body for i, body in enumerate(probed.sent)}
    keys = (PLAIN, PREFIXED, TOKEN, UNPASSED, OTHER)
    return sorted(
        {where for where, text in places.items() for k in keys for f in forms(k) if f in text}
    )


PASSED = ("--tools-env", "CANARY_KEY", "--tools-env", "GITHUB_TOKEN")


@pytest.mark.parametrize(
    ("behaviour", "extra", "code", "line"),
    [
        pytest.param("deep-schema", (), 2, f"conchcheck: The MCP server `{{cmd}}` sent a message nested deeper than 128 levels on tools/list (at character {DEEP_AT}); it was not parsed. Check that the command or URL starts an MCP server that answers tools/list.", id="schema-nested-100-deep"),
        pytest.param("deep-line", (), 2, "conchcheck: The MCP server `{cmd}` sent a message nested deeper than 128 levels on tools/list (at character 128); it was not parsed. Check that the command or URL starts an MCP server that answers tools/list.", id="line-100000-deep"),
        pytest.param("nan", (), 2, "conchcheck: MCP server `{cmd}` broke the protocol on tools/list: a non-JSON-compliant number (NaN) in the schema of tool 'weigh'. Check that the command or URL starts an MCP server that answers tools/list.", id="nan-in-a-schema"),
        pytest.param("long-name", (), 2, "conchcheck: --tools: mcp:stdio:{cmd} lists a tool whose name is 100000 characters long ('nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…'), more than 128. MCP tool names are at most 128 characters; providers take 64.", id="a-name-of-100000-characters"),
        pytest.param("many-tools", (), 2, "conchcheck: --tools: the sources list 100000 tools, more than 512. Probe the sources one at a time.", id="100000-tools"),
        pytest.param("loop-cursor", (), 2, "conchcheck: MCP server `{cmd}` sent more than 100 pages of tools/list. The server may be repeating its cursor; check it.", id="looping-cursor"),
        pytest.param("chatter", (), 2, "conchcheck: The MCP server `{cmd}` wrote a line that is not JSON-RPC on stdout ('Starting hostile MCP server v1.0 (press Ctrl-C to quit)'). An MCP stdio server writes only JSON-RPC on stdout; logs go to stderr.", id="chatter-before-json-rpc"),
        pytest.param("silent-flood", (), 2, "conchcheck: The MCP server `{cmd}` did not answer server/discover or initialize within the deadline; it was stopped. Check that the command or URL starts an MCP server that answers tools/list.", id="endless-stderr-and-silence"),
        pytest.param("notify-flood", (), 2, "conchcheck: The MCP server `{cmd}` did not answer server/discover or initialize within the deadline; it was stopped. Check that the command or URL starts an MCP server that answers tools/list.", id="endless-notifications"),
        pytest.param("error", PASSED, 2, "conchcheck: MCP server `{cmd}` broke the protocol on initialize: it answered error -32603: bad configuration: [redacted] [redacted]. Check that the command or URL starts an MCP server that answers tools/list.", id="key-in-a-json-rpc-error"),
        pytest.param("echo-name", PASSED, 2, "conchcheck: MCP server `{cmd}` lists a tool whose name holds a key ('tool_[redacted]'); conchcheck sends no key to a provider. Check the server and what it is given (--tools-env).", id="key-in-a-tool-name"),
        pytest.param("echo-exit", PASSED, 2, "conchcheck: The MCP server `{cmd}` exited with code 1 before answering server/discover; its stderr ended: KeyError: no repository for [redacted] [redacted]. Check that the command or URL starts an MCP server that answers tools/list.", id="keys-in-its-last-words"),
        pytest.param("echo-version", PASSED, 2, "conchcheck: MCP server `{cmd}` broke the protocol on initialize: its 'protocolVersion' is not the name of a revision (such as 2025-06-18). Check that the command or URL starts an MCP server that answers tools/list.", id="key-as-the-protocol-version"),
        pytest.param("echo", PASSED, 0, "", id="keys-in-stderr-description-and-schema"),
        pytest.param("stderr-flood", (), 0, "", id="endless-stderr"),
        pytest.param("fork", (), 0, "", id="forks-a-child"),
    ],
)  # fmt: skip
def test_a_hostile_stdio_server_through_the_command_line(
    serve: Serve, tmp_path: Path, behaviour: str, extra: tuple[str, ...], code: int, line: str
) -> None:
    command = stdio(behaviour, tmp_path / "child.pid")
    probed = probe(serve, tmp_path, f"mcp:stdio:{command}", *extra)
    assert probed.code == code, probed.stderr
    assert probed.rss_mb < RSS_BOUND_MB
    assert leaks(probed) == []
    assert gone(tmp_path) == []
    line = line.replace("{cmd}", command)
    if code == 2:
        assert (probed.stdout, probed.stderr) == ("", line + "\n")
        assert probed.files == {} and probed.sent == []
        return
    assert "Traceback" not in probed.stderr
    assert {name.split("/")[0] for name in probed.files} == {"out"}
    if behaviour == "echo":
        results = json.loads(probed.files["out/results.json"])
        [noted] = results["own_tools"]
        # The server had both keys and said them everywhere; every place shows the mask.
        assert noted["description"].startswith("[redacted] [redacted] ")
        assert noted["parameters"]["properties"]["note"]["enum"] == [noted["description"]]


@pytest.mark.parametrize(
    ("behaviour", "code", "tail"),
    [
        pytest.param("echo-401", 2, "failed on initialize: HTTP 401: Bearer [redacted] is not valid for this server.", id="token-in-a-401"),
        pytest.param("echo-500", 2, 'failed on server/discover: HTTP 500: {"detail": "Bearer [redacted] is not valid for this server"}.', id="token-in-a-500"),
        pytest.param("echo-rpc", 2, "broke the protocol on initialize: it answered error -32001: Bearer [redacted] is not valid for this server.", id="token-in-a-json-rpc-error"),
        pytest.param("deep-sse", 2, "failed on tools/list: a reply nested deeper than 128 levels (at character 128), not parsed.", id="sse-100000-deep"),
        pytest.param("echo-tools", 0, "", id="token-in-a-tool"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("key", [PLAIN, OTHER], ids=["our-key", "a-key-by-its-shape"])
def test_a_hostile_http_server_through_the_command_line(
    serve: Serve, tmp_path: Path, behaviour: str, code: int, tail: str, key: str
) -> None:
    server = http_server(serve, behaviour, echoed=key)
    probed = probe(serve, tmp_path, f"mcp:{server.url}/mcp")
    assert probed.code == code, probed.stderr
    assert probed.rss_mb < RSS_BOUND_MB
    assert leaks(probed) == []
    if code == 2:
        assert probed.stdout == "" and probed.files == {} and probed.sent == []
        assert probed.stderr.startswith("conchcheck: ") and server.url in probed.stderr
        assert probed.stderr.endswith(f"{tail} Check that the command or URL starts an MCP server that answers tools/list.\n")  # fmt: skip
        assert probed.stderr.count("\n") == 1
        return
    [noted] = json.loads(probed.files["out/results.json"])["own_tools"]
    assert noted["description"] == "Bearer [redacted] is not valid for this server"


@pytest.mark.parametrize(
    ("document", "code", "line"),
    [
        pytest.param(api(fan_out(10, 8)), 2, f"conchcheck: {{path}}:1: {BODY}: the schema of tool 'op0' passes 10000 nodes with each $ref written out.", id="refs-fanning-out-to-10e8-nodes"),
        pytest.param(operations(100_000), 2, "conchcheck: {path}:1: $.paths: 100000 operations, more than the 512 tools a probe takes.", id="100000-operations"),
        # 600,000 objects: refused before they are parsed, which would take 300 MB.
        pytest.param(operations(100_000, body=True), 2, "conchcheck: {path}:1: $: holds more than 300000 objects and lists, the most conchcheck reads (column 6527776).", id="100000-operations-with-bodies"),
        pytest.param(operations(20_000, same_id=True), 2, "conchcheck: {path}:1: $.paths: 20000 operations, more than the 512 tools a probe takes.", id="20000-operations-of-one-operationid"),
        pytest.param(api(self_refs(6)), 0, "", id="six-refs-to-itself"),
        pytest.param(api(fan_out(3, 2)), 0, "", id="a-small-fan-out"),
    ],
)  # fmt: skip
def test_a_hostile_openapi_document_through_the_command_line(
    serve: Serve, tmp_path: Path, document: str, code: int, line: str
) -> None:
    path = tmp_path / "doc" / "api.json"
    path.parent.mkdir()
    path.write_text(document)
    probed = probe(serve, tmp_path, str(path))
    assert probed.code == code, probed.stderr
    assert probed.rss_mb < RSS_BOUND_MB
    files = {name for name in probed.files if not name.startswith("doc/")}
    if code == 2:
        assert (probed.stdout, probed.stderr) == ("", line.replace("{path}", str(path)) + "\n")
        assert files == set() and probed.sent == []
        return
    assert {name.split("/")[0] for name in files} == {"out"}
