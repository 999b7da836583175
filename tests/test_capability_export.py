"""`conchcheck export`: measured capability written for LiteLLM, models.dev and as
conchcheck's own JSON; a fact only where it was measured, unknown never written as false."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile, Entry, entry_to_data
from conchcheck.capabilities.exports import (
    json_document,
    litellm_config,
    models_dev_model,
    models_dev_path,
    schema,
)
from conchcheck.capabilities.formats import ExportFormat
from conchcheck.capabilities.measured import Measured, measured
from conchcheck.cli import app
from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.knobs import (
    Fidelity,
    Ids,
    Knobs,
    KnobsAndLosses,
    KnobState,
    Streaming,
)
from conchcheck.errors import InputError
from conchcheck.jsonschemas import problems
from conchcheck.matrix import load_matrix
from conchcheck.wire.providers import ApiFamily
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

runner = CliRunner()
H, IG, R, U, N = (
    KnobState.HONOURED,
    KnobState.IGNORED,
    KnobState.REFUSED,
    KnobState.UNTESTED,
    KnobState.NOT_OFFERED,
)

BASE = Entry(
    provider="openrouter",
    model="qwen/qwen3-8b",
    endpoint="https://openrouter.ai/api/v1",
    api=ApiFamily.OPENAI,
    dialect="permissive",
    mode="native",
    rates={"native": 0.9, "native_clean": 0.8, "words": 0.5, "words_clean": 0.5},
    repairs_seen=(),
    refused_keywords=(),
    context_window=40960,
    tools_declared=True,
    tools_observed=True,
    conchcheck_version="0.1.0",
    matrix="default",
    matrix_digest="ab" * 32,
    probed_at="2026-12-01T10:00:00Z",
    expires_at="2026-12-08T10:00:00Z",
)
SECTION = KnobsAndLosses(
    knobs=Knobs(tool_choice_none=H, tool_choice_required=H, tool_choice_named=H),
    ids=Ids(present=True, unique_in_reply=True),
    fidelity=Fidelity.ALTERED,
    fidelity_changes=(FidelityChange.NUMBER_ROUNDED,),
    streaming=Streaming(agree=3),
)
FULL = dataclasses.replace(BASE, knobs_and_losses=SECTION)


def knobs(**states: KnobState) -> Entry:
    return dataclasses.replace(BASE, knobs_and_losses=KnobsAndLosses(knobs=Knobs(**states)))


def section(**fields: Any) -> Entry:
    return dataclasses.replace(BASE, knobs_and_losses=KnobsAndLosses(**fields))


UNKNOWN = Measured(None, None, "permissive", None, None, None, None)
MEASURED = [
    pytest.param(
        dataclasses.replace(BASE, tools_observed=None, mode="none"),
        UNKNOWN,
        id="no-native-prompt-answered-is-unknown-not-false",
    ),
    pytest.param(
        dataclasses.replace(BASE, mode="words", tools_observed=False),
        dataclasses.replace(UNKNOWN, native=False, mode="words"),
        id="words-means-no-native-calling",
    ),
    pytest.param(
        FULL,
        Measured(True, "native", "permissive", True, True, True, True),
        id="everything-measured",
    ),
    pytest.param(
        knobs(tool_choice_none=H, tool_choice_required=U, tool_choice_named=U),
        dataclasses.replace(UNKNOWN, native=True, mode="native", tool_choice=True),
        id="tool-choice-honoured-where-measured",
    ),
    pytest.param(
        knobs(tool_choice_none=H, tool_choice_required=IG),
        dataclasses.replace(UNKNOWN, native=True, mode="native", tool_choice=False),
        id="tool-choice-required-ignored",
    ),
    pytest.param(
        knobs(tool_choice_named=R),
        dataclasses.replace(UNKNOWN, native=True, mode="native", tool_choice=False),
        id="tool-choice-named-refused",
    ),
    pytest.param(
        knobs(tool_choice_none=N, tool_choice_required=N, tool_choice_named=N),
        dataclasses.replace(UNKNOWN, native=True, mode="native", tool_choice=False),
        id="tool-choice-not-offered-by-ollamas-api",
    ),
    pytest.param(
        knobs(parallel_false=H, strict=H),
        dataclasses.replace(UNKNOWN, native=True, mode="native"),
        id="tool-choice-untested-is-unknown",
    ),
    pytest.param(
        section(ids=Ids(present=True, unique_in_reply=False)),
        dataclasses.replace(UNKNOWN, native=True, mode="native", parallel=True),
        id="two-calls-in-a-reply-even-with-one-id-is-parallel",
    ),
    pytest.param(
        section(streaming=Streaming(agree=2, disagree=1)),
        dataclasses.replace(UNKNOWN, native=True, mode="native", streaming=False),
        id="a-stream-that-disagreed",
    ),
    pytest.param(
        section(fidelity=Fidelity.EXACT),
        dataclasses.replace(UNKNOWN, native=True, mode="native", coerces_types=False),
        id="arguments-exact",
    ),
    pytest.param(
        section(fidelity=Fidelity.ALTERED, fidelity_changes=(FidelityChange.NEWLINES_STRIPPED,)),
        dataclasses.replace(UNKNOWN, native=True, mode="native", coerces_types=False),
        id="text-changed-but-no-type",
    ),
    pytest.param(
        section(fidelity=Fidelity.ALTERED, fidelity_changes=(FidelityChange.OTHER,)),
        dataclasses.replace(UNKNOWN, native=True, mode="native", coerces_types=True),
        id="a-value-of-another-type",
    ),
    pytest.param(
        dataclasses.replace(BASE, dialect=None),
        dataclasses.replace(UNKNOWN, native=True, mode="native", dialect=None),
        id="no-dialect-carried-everything",
    ),
]


@pytest.mark.parametrize(("entry", "expected"), MEASURED)
def test_what_an_entry_measured(entry: Entry, expected: Measured) -> None:
    assert measured(entry) == expected


LITELLM = """\
# LiteLLM model_list from tool-calling capability measured by conchcheck.
# A supports_* field is written only where it was measured: a field left out is
# unknown, and LiteLLM keeps its own default for it.
# "qwen/qwen3-8b" at "https://openrouter.ai/api/v1" (openai API): probed 2026-12-01T10:00:00Z\
 by conchcheck 0.1.0, matrix "default"; fresh until 2026-12-08T10:00:00Z.
# "qwen2.5-coder" at "http://127.0.0.1:8080" (responses API): probed 2026-12-01T10:00:00Z\
 by conchcheck 0.1.0, matrix "default"; fresh until 2026-12-08T10:00:00Z.
model_list:
- model_name: qwen/qwen3-8b
  litellm_params:
    model: openai/qwen/qwen3-8b
    api_base: https://openrouter.ai/api/v1
    api_key: os.environ/OPENROUTER_API_KEY
  model_info:
    supports_function_calling: true
    supports_tool_choice: true
    supports_parallel_function_calling: true
- model_name: qwen2.5-coder
  litellm_params:
    model: openai/responses/qwen2.5-coder
    api_base: http://127.0.0.1:8080
    api_key: none
  model_info: {}
"""
LOCAL = dataclasses.replace(
    BASE,
    provider="llamacpp",
    model="qwen2.5-coder",
    endpoint="http://127.0.0.1:8080",
    api=ApiFamily.RESPONSES,
    tools_observed=None,
)


def test_the_litellm_config_exactly() -> None:
    assert litellm_config([FULL, LOCAL]) == LITELLM


def test_one_model_at_two_endpoints_is_two_model_names() -> None:
    other = dataclasses.replace(FULL, provider="vllm", endpoint="http://127.0.0.1:8000/v1")
    names = [d["model_name"] for d in yaml.safe_load(litellm_config([FULL, other]))["model_list"]]
    assert names == ["qwen/qwen3-8b (openrouter, openai)", "qwen/qwen3-8b (vllm, openai)"]


MODELS_DEV = """\
# "qwen/qwen3-8b" at "https://openrouter.ai/api/v1" (openai API): probed 2026-12-01T10:00:00Z\
 by conchcheck 0.1.0, matrix "default"; fresh until 2026-12-08T10:00:00Z.
# Merge into the model's file in models.dev (its provider folder may be named
# otherwise there); conchcheck writes only what it measured.

[tool_call]
supported = true
streaming = true
parallel = true
coerces_types = true
dialect = "permissive"
mode = "native"
"""


def test_the_models_dev_file_exactly() -> None:
    text = models_dev_model(FULL)
    assert text == MODELS_DEV
    assert str(models_dev_path(FULL)) == "providers/openrouter/models/qwen/qwen3-8b.toml"
    assert problems("models-dev", tomllib.loads(text)) == []


def test_models_dev_leaves_out_what_was_not_measured() -> None:
    words = dataclasses.replace(BASE, mode="words", tools_observed=False, dialect=None)
    table = tomllib.loads(models_dev_model(words))
    assert table == {"tool_call": {"supported": False, "mode": "words"}}


def test_models_dev_needs_the_native_prompts() -> None:
    with pytest.raises(InputError) as caught:
        models_dev_model(dataclasses.replace(BASE, tools_observed=None))
    assert str(caught.value) == (
        "openrouter qwen/qwen3-8b: no native prompt got an answer, so whether it calls tools"
        " (models.dev's tool_call.supported) wasn't measured."
    )


@pytest.mark.parametrize(
    "model",
    [
        pytest.param("../../etc/x", id="climbs-out"),
        pytest.param("a//b", id="empty-segment"),
        pytest.param("a\\b", id="backslash"),
        pytest.param("x" * 300, id="longer-than-a-file-name"),
    ],
)
def test_a_model_id_that_is_no_file_name(model: str) -> None:
    with pytest.raises(InputError, match=r"is no models\.dev file name"):
        models_dev_path(dataclasses.replace(BASE, model=model))


@pytest.mark.parametrize(
    "model",
    [
        pytest.param('evil"\n[tool_call]\nsupported = false', id="newline-and-a-table"),
        pytest.param("del\x7fchar", id="delete-character"),
        pytest.param("🦜 model # not a comment", id="emoji-and-hash"),
    ],
)
def test_hostile_names_stay_in_their_comment(model: str) -> None:
    entry = dataclasses.replace(FULL, model=model)
    assert tomllib.loads(models_dev_model(entry))["tool_call"]["supported"] is True
    config = yaml.safe_load(litellm_config([entry]))
    assert config["model_list"][0]["model_name"] == model


def test_the_json_document_and_its_standalone_schema() -> None:
    document = json_document([FULL, LOCAL])
    assert document["format"] == "conchcheck-capability" and document["version"] == 1
    assert document["endpoints"][0]["measured"] == {
        "native": True,
        "mode": "native",
        "dialect": "permissive",
        "tool_choice": True,
        "parallel": True,
        "streaming": True,
        "coerces_types": True,
    }
    assert document["endpoints"][1]["measured"]["native"] is None
    assert document["endpoints"][1]["entry"]["api"] == "responses"
    # Bundled, the schema needs no registry: what an adopter of the format gets.
    standalone = Draft202012Validator(schema())
    assert list(standalone.iter_errors(document)) == []
    broken = json.loads(json.dumps(document))
    broken["endpoints"][0]["measured"]["parallel"] = "yes"
    assert [e.message for e in standalone.iter_errors(broken)] == [
        "'yes' is not of type 'boolean', 'null'"
    ]


# --- the command ------------------------------------------------------------------------------


def cache_file(tmp_path: Path, *entries: Entry) -> Path:
    path = tmp_path / "capabilities.yaml"
    for entry in entries:
        CapabilityFile(path).put(entry)
    return path


def test_export_prints_one_document(tmp_path: Path) -> None:
    path = cache_file(tmp_path, FULL, LOCAL)
    result = runner.invoke(app, ["export", str(path), "--to", "litellm"])
    # The capability file keeps its entries sorted; the export keeps the order read.
    assert (result.exit_code, result.stdout) == (0, litellm_config([LOCAL, FULL]))


def test_export_writes_models_dev_files_in_a_folder(tmp_path: Path) -> None:
    other = dataclasses.replace(FULL, provider="vllm", model="qwen3", endpoint="http://x:1/v1")
    path = cache_file(tmp_path, FULL, other)
    out = tmp_path / "models.dev"
    result = runner.invoke(app, ["export", str(path), "--to", "models-dev", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.toml"))
    assert written == [
        "providers/openrouter/models/qwen/qwen3-8b.toml",
        "providers/vllm/models/qwen3.toml",
    ]
    assert (out / written[0]).read_text() == MODELS_DEV
    assert result.stdout.startswith("Exported 2 entries to models-dev: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--to", "models-dev"],
            "2 models.dev files to write: give --out a folder for them.",
            id="models-dev-files-to-stdout",
        ),
        pytest.param(
            ["--to", "models-dev", "--out", "one.toml"],
            "--out one.toml: 2 models.dev files need a folder, not a file.",
            id="models-dev-files-into-one-file",
        ),
        pytest.param([], "--to: required: litellm, models-dev or json.", id="no-format"),
        pytest.param(["--to", "yaml"], "--to: 'yaml' is not one of", id="unknown-format"),
        pytest.param(
            ["--schema"],
            "--schema: alone; it prints the schema and reads nothing.",
            id="schema-with-sources",
        ),
    ],
)
def test_bad_usage_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    other = dataclasses.replace(FULL, provider="vllm", model="qwen3", endpoint="http://x:1/v1")
    path = cache_file(tmp_path, FULL, other)
    result = runner.invoke(app, ["export", str(path), *args], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"conchcheck: {message}"), result.stderr
    assert "Traceback" not in result.stderr


def test_the_schema_alone(tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--schema"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == schema()


def test_never_writes_through_a_link_inside_out(tmp_path: Path) -> None:
    path = cache_file(tmp_path, FULL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    (out / "providers").mkdir(parents=True)
    (out / "providers" / "openrouter").symlink_to(elsewhere)
    result = runner.invoke(app, ["export", str(path), "--to", "models-dev", "--out", str(out)])
    assert result.exit_code == 2
    assert "is a symbolic link inside" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_one_endpoint_twice_is_refused(tmp_path: Path) -> None:
    first = cache_file(tmp_path, FULL)
    (tmp_path / "b").mkdir()
    second = cache_file(tmp_path / "b", FULL)
    result = runner.invoke(app, ["export", str(first), str(second), "--to", "json"])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "conchcheck: openrouter qwen/qwen3-8b at https://openrouter.ai/api/v1 (openai) is in the"
        " sources twice."
    )


def test_export_format_names() -> None:
    assert [f.value for f in ExportFormat] == ["litellm", "models-dev", "json"]


def test_a_fleets_folder_exports_what_finished(serve: Any, tmp_path: Path) -> None:
    """Probes of loopback emulators, end to end: the entries exported from their results are
    the ones the probes wrote to the capability file; the unusable target is skipped, said."""
    matrix = load_matrix("default")
    native = serve(OpenAIEmulator(oracle(matrix)))
    words = serve(OpenAIEmulator(oracle(matrix), flavour="llamacpp", template_tools=False))
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        f"targets:\n  - target: vllm:m\n    base_url: {native.url}/v1\n"
        f"  - target: llamacpp:local\n    base_url: {words.url}/v1\n"
        "  - target: openrouter:qwen/qwen3-8b\n"
    )
    cache = tmp_path / "capabilities.yaml"
    out = tmp_path / "out"
    probe = ["probe", "--targets", str(targets), "--out", str(out), "--cache", str(cache)]
    assert runner.invoke(app, [*probe, "--quiet"]).exit_code == 3
    result = runner.invoke(app, ["export", str(out), "--to", "json"])
    assert result.exit_code == 0, result.stderr
    unusable = next(p for p in out.glob("openrouter*/results.json"))
    assert result.stderr == (
        f"Skipped {unusable}: its probe has no verdict to export (No API key for provider"
        " 'openrouter': $OPENROUTER_API_KEY is not set. Set it, or give the entry an"
        " api_key_env).\n"
    )
    endpoints = json.loads(result.stdout)["endpoints"]
    by_model = {e["entry"]["model"]: e for e in endpoints}
    assert {m: (e["measured"]["native"], e["measured"]["mode"]) for m, e in by_model.items()} == {
        "m": (True, "native"),
        "local": (False, "words"),
    }
    written = {e.model: entry_to_data(e) for e in CapabilityFile(cache).entries()}
    assert {m: e["entry"] for m, e in by_model.items()} == written
    # The unusable target named on its own is refused, in one line.
    alone = runner.invoke(app, ["export", str(unusable), "--to", "litellm"])
    assert alone.exit_code == 2
    assert alone.stderr.startswith(f"conchcheck: {unusable}: its probe has no verdict")
