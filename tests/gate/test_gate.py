"""`conchcheck check`: expectations and baselines over real results files (the golden probe's
``results.json`` and copies of it changed the way a later probe would differ)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conchcheck.errors import InputError
from conchcheck.gate import CheckFormat, render
from conchcheck.gate.gatekeeper import check, write_summary
from conchcheck.gate.github import commands

ROOT = Path(__file__).parent.parent.parent
GOLDEN = json.loads((ROOT / "tests/golden/results.json").read_text())
TARGET = GOLDEN["target"]  # openrouter:qwen/qwen3-8b


def results(tmp_path: Path, name: str = "new", change: Any = None) -> Path:
    data = copy.deepcopy(GOLDEN)
    if change is not None:
        change(data)
    path = tmp_path / name / "results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def expect(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expect.yaml"
    path.write_text(text)
    return path


def got(result) -> list[tuple[str, str, str, str, bool]]:
    return [(c.target, c.name, c.wanted, c.got, c.met) for c in result.checks]


EXPECTATIONS = [
    pytest.param("mode: native", [("mode", "native", "native", True)], id="mode-exact"),
    pytest.param(
        "mode: [words, none]",
        [("mode", "one of words, none", "native", False)],
        id="mode-list-misses",
    ),
    pytest.param(
        "dialect: [permissive, gemini]",
        [("dialect", "one of permissive, gemini", "gemini", True)],
        id="dialect-any-of",
    ),
    pytest.param(
        "dialect: permissive",
        [("dialect", "permissive", "gemini", False)],
        id="dialect-less-permissive",
    ),
    pytest.param(
        'native.rate: ">= 0.5"', [("native.rate", ">= 0.5", "0.5", True)], id="ge-at-the-bound"
    ),
    pytest.param(
        'native.rate: "> 0.5"', [("native.rate", "> 0.5", "0.5", False)], id="gt-at-the-bound"
    ),
    pytest.param('words.rate: "<= 0.6"', [("words.rate", "<= 0.6", "0.667", False)], id="le"),
    pytest.param('words.rate: "< 0.7"', [("words.rate", "< 0.7", "0.667", True)], id="lt"),
    pytest.param(
        'native.clean_rate: "== 0.5"', [("native.clean_rate", "== 0.5", "0.333", False)], id="eq"
    ),
    pytest.param('words.clean_rate: "!= 0"', [("words.clean_rate", "!= 0", "0.5", True)], id="ne"),
    pytest.param(
        "words.clean_rate: 0.5",
        [("words.clean_rate", ">= 0.5", "0.5", True)],
        id="bare-number-is-at-least",
    ),
    pytest.param(
        "accepted: [ref-defs, many-tools, unknown-case]",
        [
            ("accepted ref-defs", "accepted in gemini", "accepted", True),
            ("accepted many-tools", "accepted in gemini", "refused:context_length", False),
            ("accepted unknown-case", "accepted in gemini", "not tried", False),
        ],
        id="schema-cases-in-the-verdicts-dialect",
    ),
    pytest.param(
        "passes: [remember, weather-enum, words/three-args, words/pick-tool]",
        [
            ("passes remember", "passes in native", "2/2 passed", True),
            ("passes weather-enum", "passes in native", "1/2 passed (wrong_arguments)", False),
            ("passes words/three-args", "passes in words", "0/2 passed (no_call, cut_off)", False),
            ("passes words/pick-tool", "passes in words", "no answer", False),
        ],
        id="prompts-in-the-verdicts-mode-or-named",
    ),
    pytest.param(
        "no_findings: [calls_leaked_as_text, call_markers_in_text]",
        [
            ("no_findings calls_leaked_as_text", "absent", "absent", True),
            ("no_findings call_markers_in_text", "absent", "in 1 cell: native/three-args/2", False),
        ],
        id="findings-that-must-not-appear",
    ),
]


@pytest.mark.parametrize(("section", "want"), EXPECTATIONS)
def test_each_expectation(tmp_path, section, want):
    file = expect(tmp_path, 'targets:\n  "*":\n    ' + section.replace("\n", "\n    ") + "\n")
    result = check([results(tmp_path)], expect=file)
    assert got(result) == [(TARGET, *row) for row in want]
    assert result.exit_code == (0 if all(row[-1] for row in want) else 1)


def test_a_targets_own_section_overrides_the_default_key_by_key(tmp_path):
    file = expect(
        tmp_path,
        f'targets:\n  "*":\n    mode: words\n    dialect: gemini\n  "{TARGET}":\n    mode: native\n  "vllm:other":\n    mode: native\n',
    )
    result = check([results(tmp_path)], expect=file)
    assert got(result) == [
        (TARGET, "mode", "native", "native", True),
        (TARGET, "dialect", "gemini", "gemini", True),
        ("vllm:other", "results", "a results.json for the target", "none given", False),
    ]


def test_an_unusable_target_meets_nothing(tmp_path):
    def unusable(data):
        data["verdict"], data["unusable"] = None, "auth refused"

    file = expect(tmp_path, 'targets:\n  "*":\n    mode: native\n    native.rate: 0.1\n')
    result = check([results(tmp_path, change=unusable)], expect=file)
    assert got(result) == [
        (TARGET, "mode", "native", "no verdict (auth refused)", False),
        (TARGET, "native.rate", ">= 0.1", "no verdict (auth refused)", False),
    ]


BAD_FILES = [
    pytest.param(
        "targets:\n  '*':\n    mode: natve\n",
        'expect.yaml:3: $.targets.*.mode: expected native, words or none, or a list of them, got "natve".',
        id="unknown-mode",
    ),
    pytest.param(
        "targets:\n  x:\n    mode: native\n",
        'expect.yaml:2: $.targets.x: expected a target label provider:model, or "*" for every target, got "x".',
        id="label-without-provider",
    ),
    pytest.param(
        "targets:\n  '*':\n    native.rate: '>= 1.5'\n",
        'expect.yaml:3: $.targets.*.native.rate: expected a bound such as ">= 0.8" (>=, >, <=, <, == or != and a rate from 0 to 1), got ">= 1.5".',
        id="rate-past-one",
    ),
    pytest.param(
        "targets:\n  '*':\n    speed: fast\n",
        "expect.yaml:3: $.targets.*.speed: unknown key; expected one of mode, dialect, native.rate, native.clean_rate, words.rate, words.clean_rate, accepted, passes, no_findings, knobs.tool_choice_none, knobs.tool_choice_required, knobs.tool_choice_named, knobs.parallel_false, knobs.strict, ids.present, ids.unique_in_reply, ids.unique_across_rounds, ids.round_trip, finish_reason, fidelity, reasoning.seen, reasoning.swallowed, streaming.agree, streaming.disagree.",
        id="unknown-key",
    ),
    pytest.param(
        "targets: &a\n  '*': {mode: native}\n",
        "expect.yaml:1: $.targets: YAML anchors and aliases (&name, *name) are not allowed; write the value out.",
        id="anchor",
    ),
    pytest.param(
        "targets:\n  '*': [\n",
        "expect.yaml:3: $: not YAML: expected the node content, but found '<stream end>'.",
        id="not-yaml",
    ),
    pytest.param(
        "mode: native\n",
        "expect.yaml:1: $: missing 'targets' (1 more after it).",
        id="no-targets-section",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_expectation_files_say_where(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    expect(tmp_path, text)
    with pytest.raises(InputError) as caught:
        check([results(tmp_path)], expect="expect.yaml")
    assert str(caught.value) == message


def test_a_json_expectations_file_is_read_as_json(tmp_path: Path) -> None:
    """PyYAML takes no key past 1,024 characters; a valid JSON file with one was 'not YAML'."""
    from conchcheck.gate.expectations import load_expectations

    label = "mylab:" + "m" * 1100
    path = tmp_path / "expect.json"
    path.write_text(
        json.dumps({"targets": {label: {"mode": "native"}, "*": {"dialect": "strict"}}})
    )
    loaded = load_expectations(path)
    assert list(loaded.targets) == [label]
    assert loaded.default is not None


def _worse(data):
    verdict = data["verdict"]
    verdict["mode"] = "words"
    # Rates are read from the counts (the written rates are derived from them).
    native, words = verdict["native"], verdict["words"]
    native.update(total=10, passed=4, clean=3, rate=0.4, clean_rate=0.3)  # 0.5 -> 0.4
    # 0.667 -> 0.7 and 0.333 -> 0.3: within the tolerance; clean 0.5 -> 0.7: better.
    words.update(total=20, passed=14, clean=14, rate=0.7, clean_rate=0.7)
    for cell in data["cells"]:
        if cell["id"] == "dialect/gemini/ref-defs":
            cell["outcome"], cell["label"] = "refused", "refused:schema"
            cell["refusal"] = {"kind": "schema", "status": 400, "message": "no $ref"}
        if cell["id"] == "native/remember/2":
            cell["outcome"], cell["label"] = "wrong_arguments", "wrong_arguments"
        if cell["id"] == "native/weather-enum/1":
            cell["outcome"], cell["label"] = "pass", "pass"


def test_baseline_regressions_and_improvements(tmp_path):
    old = results(tmp_path, "old")
    new = results(tmp_path, "new", _worse)
    result = check([new], baseline=[old], tolerance=0.05)
    assert [(c.what, c.before, c.after, c.direction.value) for c in result.changes] == [
        ("mode", "native", "words", "regression"),
        ("native.rate", "0.5", "0.4", "regression"),
        ("words.clean_rate", "0.5", "0.7", "improvement"),
        ("case ref-defs", "accepted", "refused:schema", "regression"),
        ("prompt native/remember", "2/2 passed", "1/2 passed (wrong_arguments)", "regression"),
        ("prompt native/weather-enum", "1/2 passed (wrong_arguments)", "2/2 passed", "improvement"),
    ]
    assert result.exit_code == 1
    back = check([old], baseline=[new]).changes
    assert [c.direction.value for c in back] == [
        "improvement", "improvement", "regression", "improvement", "improvement", "regression",
    ]  # fmt: skip
    assert check([old], baseline=[old]).changes == ()
    assert check([old], baseline=[old]).exit_code == 0


def test_a_wider_tolerance_forgives_a_rate(tmp_path):
    result = check(
        [results(tmp_path, "new", _worse)], baseline=[results(tmp_path, "old")], tolerance=0.3
    )
    assert [c.what for c in result.changes] == [
        "mode",
        "case ref-defs",
        "prompt native/remember",
        "prompt native/weather-enum",
    ]


def test_a_target_gone_from_the_results_is_a_regression(tmp_path):
    def other(data):
        data["target"] = "vllm:m"

    result = check([results(tmp_path, "new", other)], baseline=[results(tmp_path, "old")])
    assert [(c.target, c.what, c.before, c.after, c.direction.value) for c in result.changes] == [
        ("vllm:m", "target", "absent", "probed", "improvement"),
        (TARGET, "target", "probed", "absent", "regression"),
    ]


def _gate(tmp_path):
    file = expect(tmp_path, 'targets:\n  "*":\n    mode: native\n    native.rate: ">= 0.8"\n')
    return check(
        [results(tmp_path, "new", _worse)], expect=file, baseline=[results(tmp_path, "old")]
    )


def test_github_annotations_and_summary(tmp_path):
    result = _gate(tmp_path)
    title = "::error title=openrouter%3Aqwen/qwen3-8b%3A "
    notice = "::notice title=openrouter%3Aqwen/qwen3-8b%3A "
    assert commands(result).splitlines() == [
        title + "mode::wanted native, got words",
        title + "native.rate::wanted >= 0.8, got 0.4",
        title + "regression in mode::native -> words",
        title + "regression in native.rate::0.5 -> 0.4",
        title + "regression in case ref-defs::accepted -> refused:schema",
        title + "regression in prompt native/remember::2/2 passed -> 1/2 passed (wrong_arguments)",
        notice + "improvement in words.clean_rate::0.5 -> 0.7",
        notice
        + "improvement in prompt native/weather-enum::1/2 passed (wrong_arguments) -> 2/2 passed",
    ]
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    assert write_summary(result, summary) == ""
    text = summary.read_text()
    assert text.startswith(
        "earlier step\n## conchcheck check: failed\n\n1 target: 0 of 2 expectations met; 4 regressions and 2 improvements from the baseline (tolerance 0.05).\n"
    )
    assert "| openrouter:qwen/qwen3-8b | native.rate | >= 0.8 | 0.4 |" in text
    assert (
        "| openrouter:qwen/qwen3-8b | case ref-defs | accepted | refused:schema |"
        in text.split("### Improvements")[0]
    )
    assert (
        "| openrouter:qwen/qwen3-8b | words.clean_rate | 0.5 | 0.7 |"
        in text.split("### Improvements")[1]
    )


def test_junit_a_suite_per_target_a_case_per_expectation_and_cell(tmp_path):
    result = _gate(tmp_path)
    root = ET.fromstring(render(result, CheckFormat.JUNIT))
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == TARGET
    cases = suite.findall("testcase")
    expectations = [c for c in cases if c.get("classname") == f"{TARGET}.expectations"]
    assert [(c.get("name"), c.find("failure").get("message")) for c in expectations] == [
        ("mode", "mode: wanted native, got words"),
        ("native.rate", "native.rate: wanted >= 0.8, got 0.4"),
    ]
    baseline = [c.get("name") for c in cases if c.get("classname") == f"{TARGET}.baseline"]
    assert baseline == [
        "baseline mode",
        "baseline native.rate",
        "baseline case ref-defs",
        "baseline prompt native/remember",
    ]
    cells = [c for c in cases if c.get("classname", "").startswith(f"{TARGET}.cells.")]
    assert len(cells) == len(GOLDEN["cells"])
    failed = {
        c.get("name"): c.find("failure").get("message")
        for c in cells
        if c.find("failure") is not None
    }
    assert failed["native/remember/2"] == (
        "wrong_arguments: Called the expected tool with the expected arguments. Repairs: trailing_comma."
    )
    assert (suite.get("tests"), suite.get("failures")) == (
        str(len(cases)),
        str(sum(c.find("failure") is not None for c in cases)),
    )
    assert root.get("tests") == suite.get("tests")


def test_json_format(tmp_path):
    data = json.loads(render(_gate(tmp_path), CheckFormat.JSON))
    assert (
        data["passed"],
        data["exit_code"],
        len(data["regressions"]),
        len(data["improvements"]),
    ) == (False, 1, 4, 2)
    assert data["checks"][0] == {
        "expectation": "mode",
        "got": "words",
        "met": False,
        "name": "mode",
        "subject": "",
        "target": TARGET,
        "wanted": "native",
    }


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ.pop("GITHUB_STEP_SUMMARY", None) if "GITHUB_STEP_SUMMARY" not in (env or {}) else None
    return subprocess.run(
        [sys.executable, "-m", "conchcheck", "check", *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )


def test_the_cli_exit_codes(tmp_path):
    new = str(results(tmp_path, "new"))
    good = expect(tmp_path, 'targets:\n  "*":\n    mode: native\n')
    done = cli(new, "--expect", str(good))
    assert (done.returncode, done.stdout) == (
        0,
        "conchcheck check: passed. 1 target: 1 of 1 expectations met.\n",
    )
    worse = str(results(tmp_path, "worse", _worse))
    done = cli(worse, "--baseline", new)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == f"REGRESSION {TARGET}  mode: native -> words"
    done = cli(new)
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == "conchcheck: Nothing to check against: give --expect, --baseline or both. See `conchcheck check --help`.\n"
    )
    bad = expect(tmp_path, "targets:\n  '*':\n    mode: natve\n")
    done = cli(new, "--expect", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith(f"conchcheck: {bad}:3: $.targets.*.mode: expected native")


def test_the_cli_github_format_appends_to_the_step_summary(tmp_path):
    summary = tmp_path / "step-summary.md"
    worse, new = str(results(tmp_path, "worse", _worse)), str(results(tmp_path, "new"))
    done = cli(
        worse, "--baseline", new, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert done.returncode == 1
    assert (
        done.stdout.splitlines()[0]
        == "::error title=openrouter%3Aqwen/qwen3-8b%3A regression in mode::native -> words"
    )
    assert all(line.startswith("::") for line in done.stdout.splitlines())
    assert summary.read_text().startswith("## conchcheck check: failed\n")


def test_folders_are_searched_and_a_target_twice_is_refused(tmp_path):
    results(tmp_path, "a")
    results(tmp_path, "b")
    with pytest.raises(InputError) as caught:
        check([tmp_path], baseline=[tmp_path])
    assert (
        str(caught.value)
        == f"{tmp_path}/b/results.json: results for {TARGET} (openai) again (also in "
        f"{tmp_path}/a/results.json)."
    )
