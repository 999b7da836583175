"""The credentials written inside a ``--tools`` source, and what is shaped like a key."""

from __future__ import annotations

import pytest

from conchcheck.core.credentials import credentials_in, looks_like_key, redact_keys, secret_name

TOKEN = "tok3nQ8v2Lm5Rx9Wp4Zj7Hd1Kc6"
GITHUB = "ghp_c4n4ry0tok3n7f3a9c2e41b04d5f8a6e1c0b9d"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # An MCP server over HTTP.
        pytest.param(f"mcp:http://host/mcp?token={TOKEN}", (TOKEN,), id="query-value"),
        pytest.param(f"https://host/mcp?token={TOKEN}", (TOKEN,), id="bare-url-query-value"),
        pytest.param("mcp:http://host/mcp?a=1&key=abc", ("1", "abc"), id="every-query-value-even-short"),
        pytest.param("mcp:http://host/mcp?token=a%2Fb+c", ("a%2Fb+c", "a/b c"), id="query-value-encoded-and-decoded"),
        pytest.param("mcp:http://host/mcp?flag&token=", (), id="query-without-values"),
        pytest.param(f"mcp:http://host/mcp?{TOKEN}", (TOKEN,), id="query-that-is-a-token"),
        pytest.param(f"mcp:http://user:{TOKEN}@host:8080/mcp", ("user", TOKEN), id="userinfo"),
        pytest.param(f"mcp:http://{TOKEN}@host/mcp", (TOKEN,), id="userinfo-token-alone"),
        pytest.param("mcp:http://me:p@ss%40word@host/mcp", ("me", "p@ss%40word", "p@ss@word"), id="userinfo-with-at-signs"),
        pytest.param(f"mcp:http://host/mcp/{TOKEN}/", (TOKEN,), id="path-segment-long-mix"),
        pytest.param(f"mcp:http://host/{GITHUB}/mcp", (GITHUB,), id="path-segment-github-token"),
        pytest.param("mcp:http://host/v1/sk-proj-abcdefghijklmnop/mcp", ("sk-proj-abcdefghijklmnop",), id="path-segment-openai-key"),
        pytest.param("mcp:http://host/mcp#secret-fragment", ("secret-fragment",), id="fragment"),
        pytest.param(f"mcp:http://[::1/mcp?token={TOKEN}", (TOKEN,), id="malformed-host"),
        pytest.param("mcp:http://127.0.0.1:8080/servers/filesystem/mcp", (), id="plain-url"),
        pytest.param("mcp:http://host/mcp-server-filesystem-streamable/mcp", (), id="long-segment-without-digits"),
        pytest.param("mcp:http://host/2024110520241105202411", (), id="long-segment-of-digits"),
        pytest.param(f"mcp:wss://host/mcp?token={TOKEN}", (TOKEN,), id="url-of-a-scheme-not-read"),
        # A stdio server's command line.
        pytest.param(f"mcp:stdio:server --token={TOKEN}", (TOKEN,), id="flag-equals"),
        pytest.param(f"mcp:stdio:server --token {TOKEN} --port 8080", (TOKEN,), id="flag-space"),
        pytest.param(f"mcp:stdio:server -token {TOKEN}", (TOKEN,), id="single-dash-flag"),
        pytest.param("mcp:stdio:server --api-key abc --API_KEY=def", ("abc", "def"), id="api-key-any-case"),
        pytest.param("mcp:stdio:server --password hunter22 --auth-token t1", ("hunter22", "t1"), id="password-and-auth-token"),
        pytest.param("mcp:stdio:server --github-pat p1 --client-secret s1 --bearer b1", ("p1", "s1", "b1"), id="pat-secret-bearer"),
        pytest.param("mcp:stdio:server --credentials-file /etc/creds.json", ("/etc/creds.json",), id="credential-file"),
        pytest.param(f"mcp:stdio:env GITHUB_TOKEN={GITHUB} server", (GITHUB,), id="env-assignment"),
        pytest.param("mcp:stdio:server --token 'two words'", ("two words",), id="quoted-value"),
        pytest.param(f"mcp:stdio:server --name it's --token {TOKEN}", (TOKEN,), id="quoting-error-splits-on-spaces"),
        pytest.param(f"mcp:stdio:server {GITHUB}", (GITHUB,), id="argument-shaped-like-a-key"),
        pytest.param(f"mcp:stdio:server postgresql://app:{TOKEN}@db/prod", ("app", TOKEN), id="argument-url-userinfo"),
        pytest.param(f"mcp:stdio:server --url=http://h/mcp?key={TOKEN}", (TOKEN,), id="flag-url-query"),
        pytest.param("mcp:stdio:server --token --verbose", (), id="flag-without-its-value"),
        pytest.param("mcp:stdio:server --no-auth /home/me/projects", (), id="switch-off-takes-no-value"),
        pytest.param("mcp:stdio:npx -y @modelcontextprotocol/server-filesystem /tmp --verbose --port 8080", (), id="plain-command"),
        pytest.param("mcp:stdio:server --path /srv/data --patch", (), id="path-is-not-pat"),
        pytest.param("mcp:stdio:pip install sk-learn", (), id="short-prefixed-word"),
        # Sources that hold no URL or command line.
        pytest.param("tools.json", (), id="tools-file"),
        pytest.param(f"openapi-{TOKEN}.yaml", (), id="a-file-name"),
        pytest.param(GITHUB, (GITHUB,), id="a-key-given-as-the-source"),
    ],
)  # fmt: skip
def test_credentials_in(source: str, expected: tuple[str, ...]) -> None:
    assert credentials_in(source) == expected


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        pytest.param("--token", True, id="token"),
        pytest.param("--Api-Key", True, id="api-key-mixed-case"),
        pytest.param("--passwd", True, id="passwd"),
        pytest.param("--oauth-client", True, id="auth-inside"),
        pytest.param("GITLAB_PAT", True, id="pat-variable"),
        pytest.param("--no-auth", False, id="switch-off"),
        pytest.param("--disable_token_check", False, id="switch-off-underscore"),
        pytest.param("--path", False, id="path"),
        pytest.param("--compat", False, id="compat"),
        pytest.param("--verbose", False, id="verbose"),
    ],
)
def test_secret_name(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(f"token {GITHUB} refused", "token [redacted] refused", id="github"),
        pytest.param("pat github_pat_11ABCDEFG0123456789_abcdef", "pat [redacted]", id="github-fine-grained"),
        pytest.param("glpat-abcdefghij0123456789 x", "[redacted] x", id="gitlab"),
        pytest.param("xoxb-1234567890-abcdefghij", "[redacted]", id="slack-bot"),
        pytest.param("ghp_short", "ghp_short", id="too-short"),
        pytest.param("aghp_abcdefghijklmnopqrstu", "aghp_abcdefghijklmnopqrstu", id="prefix-inside-a-word"),
    ],
)  # fmt: skip
def test_redact_keys_knows_the_token_prefixes(text: str, expected: str) -> None:
    assert redact_keys(text) == expected


def test_looks_like_key_takes_the_whole_word() -> None:
    assert (looks_like_key(GITHUB), looks_like_key(f"x {GITHUB}"), looks_like_key("sk-learn")) == (
        True,
        False,
        False,
    )
