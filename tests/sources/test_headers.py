"""``--tools-header``: each ``Name: value`` checked, its ``${VAR}`` expanded, every value held."""

from __future__ import annotations

import pytest

from conchcheck.errors import InputError
from conchcheck.redaction import held
from conchcheck.sources.headers import check_headers, header_values

TOKEN = "mcpT0k3nZ9x8W7v6U5t4S3r2Q1p0"
NAMING = (
    "--tools-header takes `Name: value`, the name in letters, digits and !#$%&'*+-.^_`|~; what"
    " was given is not that (it is not shown, in case it holds a key)."
)


@pytest.mark.parametrize(
    ("headers", "environ", "expected", "kept"),
    [
        pytest.param(("Authorization: Bearer ${MCP_TOKEN}",), {"MCP_TOKEN": TOKEN}, {"Authorization": f"Bearer {TOKEN}"}, {TOKEN, f"Bearer {TOKEN}"}, id="bearer-from-a-variable"),
        pytest.param(("X-Api-Key:${MCP_TOKEN}  ",), {"MCP_TOKEN": f" {TOKEN}\n"}, {"X-Api-Key": TOKEN}, {TOKEN}, id="spaces-and-a-final-newline-trimmed"),
        pytest.param(("X-Pair: ${A}:${B}:${A}",), {"A": "first-half", "B": "second-half"}, {"X-Pair": "first-half:second-half:first-half"}, {"first-half", "second-half", "first-half:second-half:first-half"}, id="two-variables-one-twice"),
        pytest.param((f"Authorization: Bearer {TOKEN}",), {}, {"Authorization": f"Bearer {TOKEN}"}, {f"Bearer {TOKEN}"}, id="written-out-held-whole"),
        pytest.param(("X-Cost: $5 a call",), {}, {"X-Cost": "$5 a call"}, {"$5 a call"}, id="a-dollar-alone-is-text"),
        pytest.param(("X-Tenant: acme", "X-Region: eu"), {}, {"X-Tenant": "acme", "X-Region": "eu"}, set(), id="short-values-too-short-to-hold"),
    ],
)  # fmt: skip
def test_header_values(
    headers: tuple[str, ...], environ: dict[str, str], expected: dict[str, str], kept: set[str]
) -> None:
    assert header_values(headers, environ) == expected
    assert held().keys == kept


@pytest.mark.parametrize(
    ("header", "message"),
    [
        pytest.param(f"Bearer {TOKEN}", NAMING, id="no-colon"),
        pytest.param(": value", NAMING, id="no-name"),
        pytest.param("X Token: abc", NAMING, id="space-in-the-name"),
        pytest.param("Authorizätion: abc", NAMING, id="letter-outside-ascii"),
        pytest.param("sk-proj-c4n4ry7f3a9c2e41b04d5f: x", NAMING, id="a-key-as-the-name"),
        pytest.param("X-A: a\r\nX-B: b", "--tools-header X-A: the value holds a line break or another control character, so it can't be sent; it is not shown here.", id="cr-lf-in-the-value"),
        pytest.param("X-A: a\x00b", "--tools-header X-A: the value holds a line break or another control character, so it can't be sent; it is not shown here.", id="nul-in-the-value"),
        pytest.param("Mcp-Session-Id: abc", "--tools-header Mcp-Session-Id: conchcheck sets this header itself, as the MCP protocol over HTTP asks.", id="a-protocol-header"),
        pytest.param("Authorization: Bearer ${MCP TOKEN}", "--tools-header Authorization: a ${…} in the value does not name a variable (it is not shown, in case it holds a key).", id="not-a-variable-name"),
        pytest.param("Authorization: ${ghp_c4n4ry0tok3n7f3a9c2e41b04d5f8a6e1c0b9d}", "--tools-header Authorization: a ${…} in the value does not name a variable (it is not shown, in case it holds a key).", id="a-key-as-the-variable"),
    ],
)  # fmt: skip
def test_a_header_not_written_so_is_one_line(header: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        check_headers([header])
    assert str(caught.value) == message


def test_a_header_given_twice_is_refused_in_any_case() -> None:
    with pytest.raises(InputError) as caught:
        check_headers(["X-Tenant: a", "x-tenant: b"])
    assert str(caught.value) == "--tools-header x-tenant: given twice."


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        pytest.param({}, "--tools-header Authorization: $MCP_TOKEN is not set, so the header can't be sent.", id="unset"),
        pytest.param({"MCP_TOKEN": "  "}, "--tools-header Authorization: $MCP_TOKEN is not set, so the header can't be sent.", id="blank"),
        pytest.param({"MCP_TOKEN": f"{TOKEN}\r\nX-Injected: yes"}, "--tools-header Authorization: $MCP_TOKEN holds a line break or another control character, so it can't be sent; it is not shown here.", id="line-break-inside"),
    ],
)  # fmt: skip
def test_a_variable_that_cant_be_sent_is_one_line(environ: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as caught:
        header_values(["Authorization: Bearer ${MCP_TOKEN}"], environ)
    assert str(caught.value) == message
    assert TOKEN not in str(caught.value) and held().keys == set()
