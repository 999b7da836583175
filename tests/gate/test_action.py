"""The composite Action and the example workflow: valid by GitHub's documented syntax.

``action.yml`` is checked against ``tests/data/action-metadata.schema.json`` (written from
GitHub's metadata syntax page); the workflows against tests/data/workflow.schema.json (written
from GitHub's workflow syntax reference), and by actionlint too when it is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

ROOT = Path(__file__).parent.parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
WORKFLOW = ROOT / "docs/workflows/nightly-probe.yml"


def test_the_action_fits_the_metadata_schema():
    schema = json.loads((ROOT / "tests/data/action-metadata.schema.json").read_text())
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(ACTION)]
    assert errors == []


def test_the_action_sets_the_outputs_from_steps_it_has():
    assert sorted(ACTION["outputs"]) == ["dialect", "mode", "passed", "report"]
    ids = {step.get("id") for step in ACTION["runs"]["steps"]}
    for output in ACTION["outputs"].values():
        (step,) = re.findall(r"steps\.([\w-]+)\.outputs", output["value"])
        assert step in ids
    uses = [step["uses"] for step in ACTION["runs"]["steps"] if "uses" in step]
    assert "actions/upload-artifact@v4" in uses
    runs = "\n".join(step.get("run", "") for step in ACTION["runs"]["steps"])
    for needed in (
        'pip install "$GITHUB_ACTION_PATH"',
        'conchcheck "${args[@]}"',
        "GITHUB_STEP_SUMMARY",
    ):
        assert needed in runs


def test_the_example_workflow_shards_gates_and_uploads():
    flow = yaml.safe_load(WORKFLOW.read_text())
    probe, gate = flow["jobs"]["probe"], flow["jobs"]["gate"]
    assert probe["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    runs = [s.get("run", "") for s in probe["steps"]]
    assert any("--shard ${{ matrix.shard }}/4" in r for r in runs)
    assert gate["needs"] == "probe"
    assert any(
        "conchcheck check all --expect expectations.yaml --format github" in s.get("run", "")
        for s in gate["steps"]
    )


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="actionlint is not installed")
def test_actionlint_finds_nothing_in_the_example_workflow():
    done = subprocess.run(
        ["actionlint", "-no-color", str(WORKFLOW)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, "")


# YAML 1.1, as PyYAML reads it, takes a bare `on` key for true; GitHub reads it as "on".
def _workflow(path: Path) -> dict[str, object]:
    flow = yaml.safe_load(path.read_text())
    if True in flow:
        flow["on"] = flow.pop(True)
    return flow


CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy",
            "matrix", "needs", "inputs"}  # fmt: skip


@pytest.mark.parametrize("path", sorted((ROOT / "docs/workflows").glob("*.yml")), ids=str)
def test_the_example_workflows_fit_githubs_workflow_syntax(path: Path) -> None:
    schema = json.loads((ROOT / "tests/data/workflow.schema.json").read_text())
    flow = _workflow(path)
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in Draft202012Validator(schema).iter_errors(flow)
    ]
    assert errors == []
    text = path.read_text()
    # Every expression is closed and reads only contexts GitHub provides.
    assert text.count("${{") == text.count("}}")
    used = set(re.findall(r"\$\{\{\s*!?\s*([a-z]+)[.\s]", text))
    assert used <= CONTEXTS, used - CONTEXTS


@pytest.mark.parametrize(
    ("mistake", "path"),
    [
        pytest.param({"runs_on": "x"}, "jobs/probe", id="misspelt-job-key"),
        pytest.param(
            {"steps": [{"name": "nothing to do"}]},
            "jobs/probe/steps/0",
            id="step-without-uses-or-run",
        ),
        pytest.param(
            {"steps": [{"uses": "actions/checkout"}]},
            "jobs/probe/steps/0/uses",
            id="action-without-a-version",
        ),
    ],
)
def test_the_workflow_schema_catches_mistakes(mistake: dict[str, object], path: str) -> None:
    schema = json.loads((ROOT / "tests/data/workflow.schema.json").read_text())
    flow = _workflow(WORKFLOW)
    job = dict(flow["jobs"]["probe"])  # type: ignore[index]
    job.update(mistake)
    flow["jobs"] = {"probe": job}
    found = {
        "/".join(map(str, e.absolute_path)) for e in Draft202012Validator(schema).iter_errors(flow)
    }
    assert path in found
