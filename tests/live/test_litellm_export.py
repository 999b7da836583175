"""`conchcheck export --to litellm`, loaded by LiteLLM's own proxy loader (the pinned
litellm[proxy] in its own virtualenv, never a dependency of conchcheck): what LiteLLM then
believes of each model is what the probe measured, and a field left unmeasured keeps
LiteLLM's own default (marker ``live``: it needs the pinned virtualenv)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile, Entry
from conchcheck.cli import app
from conchcheck.core.knobs import Ids, Knobs, KnobsAndLosses, KnobState
from conchcheck.wire.providers import ApiFamily
from tests.live.litellm_loader import load_in_litellm

pytestmark = pytest.mark.live
H, IG = KnobState.HONOURED, KnobState.IGNORED
BASE = Entry(
    provider="vllm",
    model="able",
    endpoint="http://127.0.0.1:8000/v1",
    api=ApiFamily.OPENAI,
    dialect="permissive",
    mode="native",
    rates={"native": 1.0, "native_clean": 1.0, "words": 1.0, "words_clean": 1.0},
    repairs_seen=(),
    refused_keywords=(),
    context_window=None,
    tools_declared=None,
    tools_observed=True,
    conchcheck_version="0.1.0",
    matrix="default",
    matrix_digest="ab" * 32,
    probed_at="2026-12-01T10:00:00Z",
    expires_at="2026-12-08T10:00:00Z",
)
ABLE = dataclasses.replace(
    BASE,
    knobs_and_losses=KnobsAndLosses(
        knobs=Knobs(tool_choice_none=H, tool_choice_required=H, tool_choice_named=H),
        ids=Ids(present=True, unique_in_reply=True),
    ),
)
# The local model as measured (tests/live/test_qwen_coder.py): no native calls, and
# tool_choice required and a named tool ignored.
WORDY = dataclasses.replace(
    BASE,
    provider="llamacpp",
    model="wordy",
    mode="none",
    tools_observed=False,
    knobs_and_losses=KnobsAndLosses(
        knobs=Knobs(tool_choice_none=H, tool_choice_required=IG, tool_choice_named=IG)
    ),
)
# gpt-4o is in LiteLLM's own model map as able to do all three: an entry that measured
# nothing leaves LiteLLM's word standing, where writing false would have overruled it.
UNMEASURED = dataclasses.replace(
    BASE, provider="openrouter", model="gpt-4o", endpoint="https://openrouter.ai/api/v1",
    tools_observed=None,
)  # fmt: skip


def test_litellm_reads_what_was_measured(tmp_path: Path) -> None:
    cache = tmp_path / "capabilities.yaml"
    for entry in (ABLE, WORDY, UNMEASURED):
        CapabilityFile(cache).put(entry)
    config = tmp_path / "litellm.yaml"
    result = CliRunner().invoke(
        app, ["export", str(cache), "--to", "litellm", "--out", str(config)]
    )
    assert result.exit_code == 0, result.stderr
    assert load_in_litellm(config) == {
        "able": {
            "model": "openai/able",
            "supports_function_calling": True,
            "supports_tool_choice": True,
            "supports_parallel_function_calling": True,
        },
        "gpt-4o": {
            "model": "openai/gpt-4o",
            "supports_function_calling": True,
            "supports_tool_choice": True,
            "supports_parallel_function_calling": True,
        },
        "wordy": {
            "model": "openai/wordy",
            "supports_function_calling": False,
            "supports_tool_choice": False,
            "supports_parallel_function_calling": False,
        },
    }
