"""`conchcheck check` on the knobs-and-losses section: an expectation for each field by its
path, not measured never meeting one, bad values one line and exit 2, and regressions from a
baseline (the golden probe's ``results.json``: none honoured, required and parallel ignored,
named untested (refused for a reason that says nothing of it), strict failing open, ids
repeated across rounds, newlines stripped, nothing streamed)."""

from __future__ import annotations

import pytest

from conchcheck.errors import InputError
from conchcheck.gate.gatekeeper import check
from tests.gate.test_gate import TARGET, cli, expect, got, results

EXPECTATIONS = [
    pytest.param("knobs.tool_choice_none: honoured",
                 [("knobs.tool_choice_none", "honoured", "honoured", True)], id="knob-honoured"),
    pytest.param("knobs.strict: [honoured, ignored]",
                 [("knobs.strict", "one of honoured, ignored", "fails_open", False)],
                 id="strict-failing-open-is-neither"),
    pytest.param("knobs.tool_choice_named: [honoured, not_offered]",
                 [("knobs.tool_choice_named", "one of honoured, not_offered", "not measured",
                   False)], id="untested-knob-is-not-measured"),
    pytest.param("knobs.tool_choice_required: ignored",
                 [("knobs.tool_choice_required", "ignored", "ignored", True)],
                 id="a-known-failure-can-be-pinned"),
    pytest.param("ids.unique_across_rounds: true",
                 [("ids.unique_across_rounds", "true", "false", False)], id="ids-repeat-across-rounds"),
    pytest.param("ids.round_trip: true", [("ids.round_trip", "true", "true", True)],
                 id="ids-round-trip"),
    pytest.param("finish_reason: agrees", [("finish_reason", "agrees", "agrees", True)],
                 id="finish-reason-agrees"),
    pytest.param("fidelity: exact", [("fidelity", "exact", "altered", False)],
                 id="fidelity-altered"),
    pytest.param("reasoning.swallowed: 0", [("reasoning.swallowed", "<= 0", "0", True)],
                 id="bare-count-of-losses-is-at-most"),
    pytest.param('reasoning.swallowed: "> 0"', [("reasoning.swallowed", "> 0", "0", False)],
                 id="count-bound-as-written"),
    pytest.param("reasoning.seen: false", [("reasoning.seen", "false", "false", True)],
                 id="reasoning-seen"),
    pytest.param("streaming.disagree: 0",
                 [("streaming.disagree", "<= 0", "not measured", False)],
                 id="no-streamed-pair-is-not-measured"),
    pytest.param("streaming.agree: 3", [("streaming.agree", ">= 3", "not measured", False)],
                 id="bare-count-of-agreements-is-at-least"),
    pytest.param("fidelity: exact\nknobs.strict: honoured\nids.present: true",
                 [("knobs.strict", "honoured", "fails_open", False),
                  ("ids.present", "true", "true", True),
                  ("fidelity", "exact", "altered", False)],
                 id="checked-in-the-sections-order"),
]  # fmt: skip


@pytest.mark.parametrize(("section", "want"), EXPECTATIONS)
def test_each_field(tmp_path, section, want):
    file = expect(tmp_path, 'targets:\n  "*":\n    ' + section.replace("\n", "\n    ") + "\n")
    result = check([results(tmp_path)], expect=file)
    assert got(result) == [(TARGET, *row) for row in want]
    assert result.exit_code == (0 if all(row[-1] for row in want) else 1)


def _before_the_section(data):
    del data["verdict"]["knobs_and_losses"]


def _unusable(data):
    data["verdict"], data["unusable"] = None, "auth refused"


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        pytest.param(
            _before_the_section,
            "not measured (results written before knobs and losses)",
            id="results-before-the-section",
        ),
        pytest.param(_unusable, "no verdict (auth refused)", id="no-verdict"),
    ],
)
def test_without_a_section_nothing_is_met(tmp_path, change, shown):
    file = expect(tmp_path, 'targets:\n  "*":\n    knobs.strict: honoured\n    ids.present: true\n')
    result = check([results(tmp_path, change=change)], expect=file)
    assert got(result) == [
        (TARGET, "knobs.strict", "honoured", shown, False),
        (TARGET, "ids.present", "true", shown, False),
    ]


UNKNOWN = (
    "mode, dialect, native.rate, native.clean_rate, words.rate, words.clean_rate, accepted, "
    "passes, no_findings, knobs.tool_choice_none, knobs.tool_choice_required, "
    "knobs.tool_choice_named, knobs.parallel_false, knobs.strict, ids.present, "
    "ids.unique_in_reply, ids.unique_across_rounds, ids.round_trip, finish_reason, fidelity, "
    "reasoning.seen, reasoning.swallowed, streaming.agree, streaming.disagree"
)
COUNT = (
    "expected a count such as 0 (at most that many losses, at least that many agreements) or "
    'a bound such as "<= 2"'
)
BAD = [
    pytest.param("knobs.strict: untested",
                 '$.targets.*.knobs.strict: expected honoured, ignored, refused, fails_open or '
                 'not_offered, or a list of them, got "untested".', id="untested-is-no-value-to-ask"),
    pytest.param("knobs.strict: [honoured, honored]",
                 '$.targets.*.knobs.strict: expected honoured, ignored, refused, fails_open or '
                 'not_offered, or a list of them, got ["honoured", "honored"].',
                 id="misspelt-state-in-a-list"),
    pytest.param("ids.round_trip: sometimes",
                 "$.targets.*.ids.round_trip: expected true or false, got text.",
                 id="flag-not-a-boolean"),
    pytest.param("finish_reason: stop",
                 '$.targets.*.finish_reason: expected agrees or wrong, or a list of them, got "stop".',
                 id="finish-reason-value"),
    pytest.param("fidelity: untested",
                 '$.targets.*.fidelity: expected exact or altered, or a list of them, got "untested".',
                 id="fidelity-untested-is-no-value-to-ask"),
    pytest.param("reasoning.swallowed: -1", f"$.targets.*.reasoning.swallowed: {COUNT}, got -1.",
                 id="negative-count"),
    pytest.param('streaming.disagree: "<= 0.5"',
                 f'$.targets.*.streaming.disagree: {COUNT}, got "<= 0.5".', id="count-bound-of-a-rate"),
    pytest.param("knobs.tool_choice: honoured",
                 f"$.targets.*.knobs.tool_choice: unknown key; expected one of {UNKNOWN}.",
                 id="unknown-knob"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "message"), BAD)
def test_bad_values_say_where(tmp_path, monkeypatch, line, message):
    monkeypatch.chdir(tmp_path)
    expect(tmp_path, f"targets:\n  '*':\n    mode: native\n    {line}\n")
    with pytest.raises(InputError) as caught:
        check([results(tmp_path)], expect="expect.yaml")
    assert str(caught.value) == f"expect.yaml:4: {message}"


def test_a_bad_value_exits_2_on_one_line(tmp_path):
    bad = expect(tmp_path, "targets:\n  '*':\n    knobs.strict: untested\n")
    done = cli(str(results(tmp_path)), "--expect", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith(f"conchcheck: {bad}:3: $.targets.*.knobs.strict: expected ")
    assert done.stderr.count("\n") == 1


def _changed(data):
    section = data["verdict"]["knobs_and_losses"]
    section["knobs"].update(
        tool_choice_none="ignored",  # honoured -> ignored: worse
        tool_choice_required="honoured",  # ignored -> honoured: better
        parallel_false="refused",  # ignored -> refused: neither is honoured, no change
    )
    section["ids"]["round_trip"] = None  # true -> not measured: worse
    section["finish_reason"] = "wrong"
    section["fidelity"], section["fidelity_changes"] = "exact", []
    section["reasoning"]["swallowed"] = 2
    # Streamed pairs now, none before: nothing to compare.
    section["streaming"] = {"agree": 3, "disagree": 1}


def test_baseline_regressions_and_improvements(tmp_path):
    old, new = results(tmp_path, "old"), results(tmp_path, "new", _changed)
    result = check([new], baseline=[old])
    assert [(c.what, c.before, c.after, c.direction.value) for c in result.changes] == [
        ("knobs.tool_choice_none", "honoured", "ignored", "regression"),
        ("knobs.tool_choice_required", "ignored", "honoured", "improvement"),
        ("ids.round_trip", "true", "not measured", "regression"),
        ("finish_reason", "agrees", "wrong", "regression"),
        ("fidelity", "altered", "exact", "improvement"),
        ("reasoning.swallowed", "0", "2", "regression"),
    ]
    assert result.exit_code == 1
    # Back the other way, each change turns round; a count grew only when both measured it.
    back = check([old], baseline=[new]).changes
    assert [(c.what, c.direction.value) for c in back] == [
        ("knobs.tool_choice_none", "improvement"),
        ("knobs.tool_choice_required", "regression"),
        ("ids.round_trip", "improvement"),
        ("finish_reason", "improvement"),
        ("fidelity", "regression"),
        ("reasoning.swallowed", "improvement"),
    ]


def test_streaming_disagreements_that_grew(tmp_path):
    def streamed(agree, disagree):
        def change(data):
            data["verdict"]["knobs_and_losses"]["streaming"] = {
                "agree": agree,
                "disagree": disagree,
            }

        return change

    old = results(tmp_path, "old", streamed(5, 0))
    new = results(tmp_path, "new", streamed(3, 2))
    assert [(c.what, c.before, c.after) for c in check([new], baseline=[old]).regressions] == [
        ("streaming.disagree", "0", "2")
    ]


def test_a_baseline_before_the_section_compares_no_knob(tmp_path):
    old = results(tmp_path, "old", _before_the_section)
    new = results(tmp_path, "new", _changed)
    assert check([new], baseline=[old]).changes == ()


def test_a_targets_own_section_overrides_a_field_and_keeps_the_others(tmp_path):
    file = expect(
        tmp_path,
        'targets:\n  "*":\n    knobs.strict: honoured\n    fidelity: exact\n'
        f'  "{TARGET}":\n    knobs.strict: fails_open\n',
    )
    result = check([results(tmp_path)], expect=file)
    assert got(result) == [
        (TARGET, "knobs.strict", "fails_open", "fails_open", True),
        (TARGET, "fidelity", "exact", "altered", False),
    ]
