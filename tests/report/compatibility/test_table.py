"""The compatibility table's rows: each target named so that no two rows read the same."""

from __future__ import annotations

import dataclasses

import pytest

from conchcheck.report.compatibility import build_table, compare
from tests.report.conftest import build_result

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
