"""The command line: exact JSON on stdout, one-line errors on stderr, documented exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.core.dialects import to_dialect

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
runner = CliRunner()


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_read_a_reply_with_tools_as_json() -> None:
    code, out, _ = run(
        "read", str(EXAMPLES / "reply.txt"), "--tools", str(EXAMPLES / "tools.json"), "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["fake_responses"] == 1
    assert data["text"].strip() == "Let me look that up."
    (call,) = data["calls"]
    assert (call["form"], call["name"], call["arguments"], call["error"]) == (
        "tool_call",
        "search_mail",
        {"query": "invoice", "limit": 5, "order": "newest"},
        None,
    )
    assert call["repairs"] == [
        "single_quotes",
        "trailing_comma",
        "number_from_text",
        "enum_case",
        "dropped_field",
    ]


def test_read_arguments_that_dont_fit_exits_1_with_the_message() -> None:
    code, out, _ = run(
        "read",
        str(EXAMPLES / "arguments.txt"),
        "--schema",
        str(EXAMPLES / "search_mail.schema.json"),
        "--name",
        "search_mail",
        "--json",
    )
    assert code == 1
    assert json.loads(out)["message"] == (
        "The arguments for search_mail don't fit. Fix these and call it again:\n"
        "- query: required (text), but it was missing.\n"
        '- limit: expected a number, got the text "ten".\n'
        '- order: expected one of "newest", "oldest", got the text "latest".\n'
        'It takes: {query: string, limit?: integer, order?: "newest"|"oldest"}'
    )


@pytest.mark.parametrize(
    ("stdin", "code", "data"),
    [
        pytest.param(
            "{'a': 1,}",
            0,
            {"value": {"a": 1}, "repairs": ["single_quotes", "trailing_comma"]},
            id="mended",
        ),
        pytest.param(
            "not json",
            1,
            {
                "readable": False,
                "reason": "expected a value",
                "message": "Could not read the text as JSON at line 1, column 1: expected a value.",
            },
            id="unreadable-exits-1",
        ),
    ],
)
def test_read_plain_json_from_stdin(stdin: str, code: int, data: object) -> None:
    assert run("read", "--json", stdin=stdin)[:2] == (code, json.dumps(data, indent=2) + "\n")


def test_cut_off_is_never_mended() -> None:
    code, out, _ = run("read", "--cut-off", "--json", stdin='{"cmd": "rm -rf /tmp/bu')
    assert (code, json.loads(out)["reason"]) == (1, "cut off inside a string")


def test_dialect_prints_the_converted_schema() -> None:
    code, out, _ = run("dialect", str(EXAMPLES / "schema.json"), "--to", "strict")
    assert code == 0
    schema = json.loads((EXAMPLES / "schema.json").read_text())
    assert json.loads(out) == to_dialect(schema, "strict")
    assert "additionalProperties" not in out and "$schema" not in out


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(
            ("read", "missing.txt"),
            "conchcheck: missing.txt: no such file. Check the path.\n",
            id="missing-file",
        ),
        pytest.param(
            ("dialect", "SCHEMA", "--to", "gemni"),
            "conchcheck: Unknown schema dialect 'gemni'. Choose one of: permissive, gemini, anthropic, strict. Did you mean 'gemini'?\n",
            id="unknown-family",
        ),
        pytest.param(
            ("dialect", "BAD", "--to", "strict"),
            "conchcheck: BAD:2: not JSON: Expecting property name enclosed in double quotes (column 1).\n",
            id="not-json-with-line",
        ),
        pytest.param(
            ("dialect", "LIST", "--to", "strict"),
            "conchcheck: LIST:1: $: a schema must be a JSON object, not a list.\n",
            id="schema-not-an-object",
        ),
        pytest.param(
            ("read", "-", "--tools", "TOOLS"),
            "conchcheck: TOOLS:3: $[1]: A tool must have a 'name' (text), in the plain form or under 'function'.\n",
            id="tool-without-name-with-line",
        ),
        pytest.param(
            ("read", "-", "--tools", "SCHEMA", "--schema", "SCHEMA"),
            "conchcheck: Give --tools or --schema, not both.\n",
            id="both-flags",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], stderr: str
) -> None:
    files = {
        "SCHEMA": (EXAMPLES / "schema.json").read_text(),
        "BAD": "{\n[",
        "LIST": "[]",
        "TOOLS": '[\n  {"name": "ok"},\n  {"description": "no name"}\n]',
    }
    paths = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths[name] = str(tmp_path / name)
    argv = [paths.get(a, a) for a in args]
    code, _, err = run(*argv, stdin="{}")
    assert code == 2
    assert err.replace(str(tmp_path) + "/", "") == stderr


def test_python_dash_m_and_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conchcheck", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "conchcheck 0.1.0\n")


def test_providers_lists_the_registry() -> None:
    code, out, _ = run("providers", "--json")
    rows = json.loads(out)
    assert code == 0
    assert [r["name"] for r in rows][:4] == ["openai", "openai-responses", "anthropic", "gemini"]
    assert rows[0] == {
        "name": "openai",
        "api": "openai",
        "base_url": "https://api.openai.com/v1",
        "key_env": "OPENAI_API_KEY",
        "dialect": "permissive",
        "catalogue": "openai",
        "note": "",
    }
    code, out, _ = run("providers")
    assert code == 0 and "llamacpp" in out and out.endswith("any of them elsewhere.\n")


def test_the_dialect_help_names_every_dialect() -> None:
    from conchcheck.cli import FAMILIES
    from conchcheck.core.dialects import Dialect

    assert sorted(FAMILIES.split(", ")) == sorted(d.value for d in Dialect)


def test_progress_advances_each_stage_on_its_own_bar(monkeypatch) -> None:
    # Stages run at once, so a cell advances its own stage's bar, not the last one started.
    import io

    from rich.console import Console

    import conchcheck.console as console
    from conchcheck.results import Cell, Outcome, Stage

    screen = io.StringIO()
    monkeypatch.setattr(console.screen, "err", Console(file=screen, force_terminal=True, width=80))
    with console.progress(quiet=False) as observer:
        observer.stage(Stage.DIALECT, 3)
        observer.stage(Stage.WORDS, 2)
        observer.cell(Cell("w", Stage.WORDS, "w", Outcome.PASS))
        observer.cell(Cell("f", Stage.FOLLOW_UP, "f", Outcome.PASS))
        observer.cell(Cell("d", Stage.DIALECT, "d", Outcome.ACCEPTED))
    last = screen.getvalue().rsplit("\x1b[?25l", 1)[-1]
    import re

    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", last)
    lines = [" ".join(line.split()) for line in plain.splitlines() if line.strip()]
    assert [(line.split()[0], line.split()[-2]) for line in lines[-3:]] == [
        ("dialect", "1/3"),
        ("words", "1/2"),
        ("follow_up", "1/?"),
    ]


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(
            ("probe", "vllm:m", "--timeout", "abc"),
            "conchcheck: --timeout: Input should be a valid number, unable to parse string as a number. See `root probe --help`.\n",
            id="not-a-number",
        ),
        pytest.param(
            ("probe", "vllm:m", "--tiemout", "5"),
            "conchcheck: --tiemout: no such option; did you mean --out or --quiet or --timeout? See `root probe --help`.\n",
            id="misspelt-option",
        ),
        pytest.param(
            ("probe", "vllm:m", "--repeat", "often"),
            "conchcheck: --repeat: `often` is not a whole number or auto. Give a whole number from 1 to 100, or auto.\n",
            id="repeat-neither-a-number-nor-auto",
        ),
        pytest.param(
            ("probe", "vllm:m", "--repeat", "0"),
            "conchcheck: --repeat: 0 is out of range. Give a whole number from 1 to 100, or auto.\n",
            id="repeat-zero",
        ),
        pytest.param(
            ("probe", "vllm:m", "--repeat", "auto", "--confidence", "1"),
            "conchcheck: --confidence: 1 is out of range. Give 0.5 to 0.999.\n",
            id="confidence-one",
        ),
        pytest.param(
            ("probe", "vllm:m", "--confidence", "nan"),
            "conchcheck: --confidence: nan is not a finite number. Give 0.5 to 0.999.\n",
            id="confidence-nan",
        ),
        pytest.param(
            ("probe", "vllm:m", "--confidence", "high"),
            "conchcheck: --confidence: Input should be a valid number, unable to parse string as a number. See `root probe --help`.\n",
            id="confidence-a-word",
        ),
        pytest.param(
            ("probe", "vllm:m", "--max-repeat", "20"),
            "conchcheck: --max-repeat: only with --repeat auto. A fixed --repeat N sends each prompt N times.\n",
            id="max-repeat-without-auto",
        ),
        pytest.param(
            ("probe", "vllm:m", "--repeat", "auto", "--max-repeat", "101"),
            "conchcheck: --max-repeat: 101 is out of range. Give a whole number from 2 to 100.\n",
            id="max-repeat-101",
        ),
        pytest.param(
            ("cache", "show"),
            "conchcheck: TARGET: required, but not given. See `root cache show --help`.\n",
            id="missing-argument",
        ),
        pytest.param(
            ("probe",),
            "conchcheck: Give a TARGET or --targets, one of the two. See `conchcheck probe --help`.\n",
            id="probe-without-target-or-targets",
        ),
        pytest.param(
            ("cache", "list", "--json", "--cache"),
            "conchcheck: Option '--cache' requires an argument.\n",
            id="option-without-value",
        ),
        pytest.param(
            ("matrix", "valdate"),
            "conchcheck: No such command 'valdate'. Did you mean 'validate'? See `root matrix --help`.\n",
            id="misspelt-subcommand",
        ),
    ],
)
def test_usage_errors_are_one_line(args: tuple[str, ...], stderr: str) -> None:
    assert run(*args)[::2] == (2, stderr)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--help",), id="help"),
        pytest.param(("probe", "--help"), id="command-help"),
        pytest.param(("--version",), id="version"),
    ],
)
def test_help_and_version_still_exit_0(args: tuple[str, ...]) -> None:
    code, out, err = run(*args)
    assert (code, err) == (0, "")
    assert out.startswith(("Usage: root", "conchcheck 0.1.0"))


def test_a_bare_command_prints_its_help() -> None:
    code, out, err = run("matrix")
    assert code == 2 and "Usage: root matrix" in out + err and "validate" in out + err


def test_an_error_with_control_characters_stays_one_line() -> None:
    code, _, err = run("cache", "show", "vllm:m\n\x1b[2J")
    assert (code, err) == (
        2,
        "conchcheck: The target 'vllm:m\\n\\x1b[2J' holds a control character. Write it provider:model, in printable characters.\n",
    )


def test_the_command_starts_without_yaml_jsonschema_or_httpx() -> None:
    """The CLI names every option, the export formats included, before anything is read:
    YAML, JSON Schema and httpx load only when a command needs them (bench/probe.py times
    the start-up). Before: naming ``--to``'s formats loaded YAML and JSON Schema."""
    import subprocess
    import sys

    code = (
        "import sys, conchcheck.cli; "
        "print(sorted(m for m in ('yaml', 'jsonschema', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
