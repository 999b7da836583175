"""The compatibility table's rows: each target named so that no two rows read the same."""

from __future__ import annotations

import dataclasses

import pytest

from conchcheck.report.compatibility import build_table, compare
from conchcheck.wire.providers import ApiFamily
from tests.report.conftest import build_result

OPENAI, RESPONSES, ANTHROPIC = ApiFamily.OPENAI, ApiFamily.RESPONSES, ApiFamily.ANTHROPIC

A = "http://127.0.0.1:8080/v1"
B = "http://127.0.0.1:9090/v1"
C = "http://gpu-box:8080/v1"


@pytest.mark.parametrize(
    ("targets", "names"),
    [
        ([("llamacpp:qwen", A)], ["llamacpp:qwen"]),
        ([("llamacpp:qwen", A), ("llamacpp:smol", B)], ["llamacpp:qwen", "llamacpp:smol"]),
        (
            [("llamacpp:qwen", A), ("llamacpp:qwen", C)],
            ["llamacpp:qwen (127.0.0.1:8080)", "llamacpp:qwen (gpu-box:8080)"],
        ),
        (
            [("llamacpp:qwen", A), ("llamacpp:qwen", "http://127.0.0.1:8080/v1/responses")],
            [
                "llamacpp:qwen (http://127.0.0.1:8080/v1)",
                "llamacpp:qwen (http://127.0.0.1:8080/v1/responses)",
            ],
        ),
    ],
    ids=["one-target", "two-targets", "one-model-two-hosts", "one-host-two-endpoints"],
)
def test_rows_that_would_read_the_same_show_their_endpoint(targets, names):
    results = [build_result(target=target, endpoint=endpoint) for target, endpoint in targets]
    assert [row.name for row in build_table(results).rows] == names


@pytest.mark.parametrize(
    ("endpoints", "rows"),
    [
        (
            [(A, OPENAI), (A, RESPONSES), (A, ANTHROPIC)],
            [("llamacpp:qwen", "anthropic"), ("llamacpp:qwen", "openai"),
             ("llamacpp:qwen", "responses")],
        ),
        (
            [(A, OPENAI), (C, OPENAI), (A, ANTHROPIC)],
            [("llamacpp:qwen (127.0.0.1:8080)", "anthropic"),
             ("llamacpp:qwen (127.0.0.1:8080)", "openai"),
             ("llamacpp:qwen (gpu-box:8080)", "openai")],
        ),
        (
            [(A, ANTHROPIC), (C, OPENAI)],
            [("llamacpp:qwen", "anthropic"), ("llamacpp:qwen", "openai")],
        ),
    ],
    ids=["one-server-three-apis-need-no-host", "two-hosts-in-one-api-show-their-hosts",
         "two-hosts-two-apis-the-api-column-tells-them-apart"],
)  # fmt: skip
def test_one_servers_apis_are_rows_told_apart_by_the_api_column(endpoints, rows):
    results = [build_result(target="llamacpp:qwen", endpoint=e, api=a) for e, a in endpoints]
    assert [(row.name, row.api) for row in build_table(results).rows] == rows


def test_a_baseline_on_another_port_meets_its_row():
    now = build_table([build_result(target="llamacpp:qwen", endpoint=A)])
    before = build_table([build_result(target="llamacpp:qwen", endpoint=B)])
    diff = compare(now, before)
    assert (diff.added, diff.removed, diff.changes) == ((), (), ())


def test_two_rows_of_one_target_are_two_rows_in_the_diff():
    twins = [build_result(target="llamacpp:qwen", endpoint=e) for e in (A, C)]
    worse = dataclasses.replace(twins[1], verdict=None, unusable="auth: no key")
    diff = compare(build_table([twins[0], worse]), build_table(twins))
    assert {c.target for c in diff.changes} == {"llamacpp:qwen (gpu-box:8080)"}


def test_a_row_meets_its_own_apis_baseline_only():
    chat, messages = (build_result(target="llamacpp:qwen", endpoint=A, api=a)
                      for a in (OPENAI, ANTHROPIC))  # fmt: skip
    worse = dataclasses.replace(messages, verdict=None, unusable="auth: no key")
    diff = compare(build_table([chat, worse]), build_table([chat, messages]))
    assert {(c.target, c.api) for c in diff.changes} == {("llamacpp:qwen", "anthropic")}
    gone = compare(build_table([chat]), build_table([chat, messages]))
    assert (gone.added, gone.removed, gone.changes) == ((), ("llamacpp:qwen (anthropic)",), ())
