"""The pinned Python servers' live probes, replayed offline: llama-cpp-python 0.3.36's own
server (chatml-function-calling) and a LiteLLM 1.108.7 proxy in front of llama-server with the
derived template. Recorded by ``python -m scripts.record_live llama-cpp-python litellm``;
tests/live/test_llama_cpp_python.py and tests/live/test_litellm.py probe the same servers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conchcheck.core.refusals import RefusalKind
from conchcheck.results import ProbeResult
from conchcheck.results.reader import read_results
from conchcheck.run import ProbeSpec, build, execute

RECORDINGS = Path(__file__).parent / "data" / "recordings"
FOCUS = str(RECORDINGS / "focus.yaml")


def replay(name: str, tmp_path: Path, api: str | None = None) -> ProbeResult:
    recording = RECORDINGS / f"{name}.json"
    spec = ProbeSpec(
        json.loads(recording.read_text())["target"], matrix=FOCUS, api_family=api,
        out_dir=tmp_path / name, capability_file=tmp_path / "caps.yaml", replay=recording,
    )  # fmt: skip
    execute(build(spec))
    return read_results(tmp_path / name / "results.json")


def test_llama_cpp_python_is_permissive_except_a_tool_without_parameters(
    tmp_path: Path,
) -> None:
    """Its 500 names tools[1] of the group (a pydantic "Field required" for parameters): the
    group's other case must be sent again alone, or no dialect is seen to carry it."""
    result = replay("llama-cpp-python.focus", tmp_path)
    assert result.verdict is not None
    dialect = result.verdict.dialect
    assert dialect.dialect == "permissive"
    assert [r.case for r in dialect.excepted] == ["no-parameters"]
    assert {(r.case, r.kind, r.path) for r in dialect.refused} == {
        ("no-parameters", RefusalKind.SCHEMA, "tools[1].function.parameters")
    }
    assert dialect.carriers == {"no-parameters": ()}
    # Its grammar falls back to any JSON: the invalid schemas are taken.
    assert dialect.invalid_accepted == ("dangling-ref", "unknown-type")
    sent = [c.id for c in result.cells if c.id.startswith("dialect/permissive/")]
    assert sorted(sent) == [
        "dialect/permissive/baseline", "dialect/permissive/dangling-ref",
        "dialect/permissive/no-parameters", "dialect/permissive/unknown-type",
    ]  # fmt: skip


@pytest.mark.parametrize("api", [None, "anthropic"], ids=["chat", "messages"])
def test_litellm_passes_the_native_calls_through(tmp_path: Path, api: str | None) -> None:
    name = "litellm.anthropic" if api else "litellm.chat"
    result = replay(name, tmp_path, api)
    assert result.verdict is not None
    assert (result.verdict.mode, result.verdict.dialect.dialect) == ("native", "permissive")
    # The upstream's 400s for the invalid schemas come back wrapped, still read as schema.
    assert {(r.case, r.kind) for r in result.verdict.dialect.refused} == {
        ("dangling-ref", RefusalKind.SCHEMA), ("unknown-type", RefusalKind.SCHEMA),
    }  # fmt: skip
