"""MCP over stdio: the real reference servers from PyPI, and servers that misbehave."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from conchcheck.errors import InputError
from conchcheck.sources import read_source, read_tools
from conchcheck.sources.mcp import CacheHint, CacheScope
from conchcheck.sources.mcp_stdio import read_stdio_listing, read_stdio_tools

FAKE = Path(__file__).parent.parent / "emulators" / "mcp_stdio.py"
PYTHON = shlex.quote(sys.executable)


def fake(mode: str) -> str:
    return f"{PYTHON} {shlex.quote(str(FAKE))} {mode}"


def required(schema: object) -> list[str]:
    assert isinstance(schema, dict)
    return sorted(schema.get("required", []))


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param(
            "mcp_server_time",
            {
                "get_current_time": ["timezone"],
                "convert_time": ["source_timezone", "target_timezone", "time"],
            },
            id="time",
        ),
        pytest.param(
            "mcp_server_git",
            {
                "git_status": ["repo_path"],
                "git_diff_unstaged": ["repo_path"],
                "git_diff_staged": ["repo_path"],
                "git_diff": ["repo_path", "target"],
                "git_commit": ["message", "repo_path"],
                "git_add": ["files", "repo_path"],
                "git_reset": ["repo_path"],
                "git_log": ["repo_path"],
                "git_create_branch": ["branch_name", "repo_path"],
                "git_checkout": ["branch_name", "repo_path"],
                "git_show": ["repo_path", "revision"],
                "git_branch": ["branch_type", "repo_path"],
            },
            id="git",
        ),
        pytest.param("mcp_server_fetch", {"fetch": ["url"]}, id="fetch"),
    ],
)
def test_reference_servers(module: str, expected: dict[str, list[str]]) -> None:
    listing = read_source(f"mcp:stdio:{PYTHON} -m {module}")
    tools = listing.tools
    # SDK 1.30 answers server/discover, which it doesn't know, with -32602 before initialize
    # (mcp/shared/session.py); the handshake then agrees on the version conchcheck asks for.
    assert (listing.revision, listing.cache) == ("2025-06-18", None)
    assert {tool.name: required(tool.parameters) for tool in tools} == expected
    assert [tool.name for tool in tools] == list(expected)
    assert all(tool.description and tool.parameters["type"] == "object" for tool in tools)


def test_pages_are_followed_past_notifications() -> None:
    tools = read_stdio_tools(fake("pages"))
    assert [tool.name for tool in tools] == ["tool_0", "tool_1", "tool_2"]
    assert tools[0].parameters == {"type": "object"}


PAGES = ["tool_0", "tool_1", "tool_2"]


@pytest.mark.parametrize(
    ("mode", "tools", "revision", "cache"),
    [
        pytest.param("pages", PAGES, "2024-11-05", None, id="discover-unknown-falls-back"),
        pytest.param("quiet", PAGES, "2024-11-05", None, id="quiet-before-initialize"),
        pytest.param(
            "discover-handshake", PAGES, "2024-11-05", None, id="discover-names-old-versions"
        ),
        pytest.param("future-or-old", ["ping"], "2025-06-18", None, id="refuses-2026-names-old"),
        pytest.param(
            "slow-start",
            ["ping"],
            "2026-07-28",
            CacheHint(60_000, CacheScope.PUBLIC),
            id="late-discover-then-32022-on-initialize",
        ),
    ],
)
def test_the_revision_is_the_servers_answer(
    mode: str, tools: list[str], revision: str, cache: CacheHint | None
) -> None:
    started = time.monotonic()
    listing = read_stdio_listing(fake(mode), deadline=4.0)
    assert ([t.name for t in listing.tools], listing.revision, listing.cache) == (
        tools,
        revision,
        cache,
    )
    # Only a server that keeps quiet costs the probe's patience: half the deadline here.
    waited = time.monotonic() - started
    assert (waited >= 2.0) == (mode in {"quiet", "slow-start"}), waited


@pytest.mark.parametrize(
    ("command", "message"),
    [
        pytest.param(
            f"{PYTHON} -c \"import sys; print('loading config', file=sys.stderr); sys.stderr.write('KeyError: GIT_ROOT\\n'); sys.exit(3)\"",
            "exited with code 3 before answering server/discover; its stderr ended: KeyError:"
            " GIT_ROOT.",
            id="exits-at-once",
        ),
        pytest.param(
            fake("no-tools"),
            "does not offer tools (no 'tools' capability).",
            id="no-tools-capability",
        ),
        pytest.param(
            fake("chatty"),
            "wrote a line that is not JSON-RPC on stdout ('Server started on stdio').",
            id="log-on-stdout",
        ),
        pytest.param(
            fake("huge"),
            "lists more than 8 MB of tools, the most conchcheck reads.",
            id="list-too-large",
        ),
        pytest.param(
            fake("giant"),
            "sent a message larger than 4 MB on tools/list, the most conchcheck reads.",
            id="message-too-large",
        ),
        pytest.param(
            fake("future"),
            "speaks MCP 2027-03-01; conchcheck speaks 2026-07-28 and, through initialize, the"
            " revisions before it.",
            id="2026-server-of-a-later-revision-only",
        ),
        pytest.param(
            fake("capability"),
            "broke the protocol on server/discover: it answered error -32021: Missing required"
            " client capability: elicitation.",
            id="2026-error-is-no-fallback",
        ),
        pytest.param(
            fake("modern-no-tools"),
            "does not offer tools (no 'tools' capability).",
            id="2026-no-tools-capability",
        ),
        pytest.param(
            fake("input-required"),
            "broke the protocol on tools/list: it asked for input (resultType 'input_required').",
            id="2026-list-asks-for-input",
        ),
        pytest.param(
            fake("odd-result"),
            "broke the protocol on tools/list: its resultType 'partial' is not one MCP defines.",
            id="2026-unknown-result-type",
        ),
    ],
)
def test_bad_servers(command: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_stdio_tools(command)
    text = str(caught.value)
    assert text.endswith(message)
    assert "\n" not in text
    assert caught.value.hint


def test_silent_server_is_stopped_at_the_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        read_stdio_tools(fake("silent"), deadline=1.0)
    assert 1.0 <= time.monotonic() - started < 5.0
    assert str(caught.value) == (
        f"The MCP server `{sys.executable} {FAKE} silent` did not answer server/discover or"
        " initialize within the deadline; it was stopped."
    )


def test_server_ignoring_sigterm_is_killed() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    started = time.monotonic()
    with pytest.raises(InputError, match="answer server/discover or initialize within the dead"):
        read_stdio_tools(f"{PYTHON} -c {shlex.quote(code)}", deadline=0.5)
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param(
            "mcp:stdio:no-such-mcp-server --flag",
            "The MCP server `no-such-mcp-server --flag` could not be started: No such file or directory.",
            id="command-not-found",
        ),
        pytest.param("mcp:stdio:", "The MCP source has no command.", id="empty-command"),
        pytest.param(
            "mcp:stdio:run 'unclosed",
            "The MCP command line `run 'unclosed` cannot be split: No closing quotation.",
            id="unbalanced-quote",
        ),
    ],
)
def test_bad_commands(source: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_tools(source)
    assert str(caught.value) == message
