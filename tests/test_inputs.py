"""Files given to conchcheck: lines and paths of what is wrong."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conchcheck.errors import InputError
from conchcheck.files import load_tools
from conchcheck.yamlevents import json_path, locate

TEXT = '{\n  "tools": [\n    {"name": "a"},\n    {\n      "name": 3\n    }\n  ]\n}\n'

CROWDED = "holds more than 300000 objects and lists, the most conchcheck reads"
INFINITE = "is not a finite number; JSON has none"


@pytest.mark.parametrize(
    ("path", "line"),
    [
        pytest.param([], 1, id="root"),
        pytest.param(["tools"], 2, id="key"),
        pytest.param(["tools", 0], 3, id="first-item"),
        pytest.param(["tools", 1, "name"], 5, id="nested-key"),
        pytest.param(["tools", 9], 2, id="missing-index-gives-parent"),
        pytest.param(["nope"], 1, id="missing-key-gives-parent"),
    ],
)
def test_locate(path: list[str | int], line: int) -> None:
    assert locate(TEXT, path) == line


@pytest.mark.parametrize(
    ("value", "path", "line"),
    [
        pytest.param('"\\ud83c\\udf6e"', ["b"], 3, id="a-surrogate-pair-escaped"),
        pytest.param('"\\udf6e"', ["b"], 3, id="a-lone-surrogate-escaped"),
        pytest.param('"\\\\ud83c"', ["b"], 3, id="an-escaped-backslash-before-text"),
        pytest.param('"\\\\\\ud83c"', ["b"], 3, id="an-escaped-backslash-then-a-surrogate"),
    ],
)
def test_locate_reads_json_that_escapes_what_yaml_does_not(
    value: str, path: list[str], line: int
) -> None:
    # json.dumps escapes every non-ASCII character by default, an emoji as a surrogate pair,
    # which YAML's \u escapes refuse: a file so written must still be located.
    text = '{\n  "a": ' + value + ',\n  "b": 1\n}\n'
    assert locate(text, path) == line


def test_locate_unparseable_is_unknown() -> None:
    assert locate("{\t\x00", ["a"]) is None


def test_json_path() -> None:
    assert json_path(["tools", 2, "name"]) == "$.tools[2].name"


def test_tools_under_a_key(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(TEXT)
    with pytest.raises(InputError) as caught:
        load_tools(path)
    assert (
        str(caught.value)
        == f"{path}:4: $.tools[1]: A tool must have a 'name' (text), in the plain form or under 'function'."
    )


def test_tools_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"tools": 3}')
    with pytest.raises(
        InputError, match=r"t.json:1: \$.tools: expected a list of tools, got a number."
    ):
        load_tools(path)


# -- limits every file is read within -------------------------------------------------------


def test_a_file_past_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from conchcheck.files import MAX_FILE_BYTES, read_text

    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_FILE_BYTES + 1))
    with pytest.raises(InputError) as caught:
        read_text(path)
    assert str(caught.value) == f"{path}: larger than 16 MB, the most conchcheck reads."
    path.write_bytes(b" " * MAX_FILE_BYTES)
    assert len(read_text(path)[0]) == MAX_FILE_BYTES


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda p: os.mkfifo(p), "a named pipe", id="a-fifo-would-wait-for-ever"),
        pytest.param(lambda p: p.symlink_to("/dev/zero"), "a device", id="dev-zero"),
        pytest.param(lambda p: p.symlink_to("/dev/null"), "a device", id="dev-null"),
    ],
)
def test_only_a_regular_file_is_opened(
    tmp_path: Path, make: Callable[[Path], None], kind: str
) -> None:
    from conchcheck.files import read_text

    path = tmp_path / "tools.json"
    make(path)
    with pytest.raises(InputError) as caught:
        read_text(path)
    assert str(caught.value) == f"{path}: is {kind}, not a regular file."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "[" * 129 + "]" * 129,
            "1: $: nested more than 128 levels deep (column 129).",
            id="one-past-the-limit",
        ),
        pytest.param(
            '{"a":\n  ' + "[" * 100_000,
            "2: $: nested more than 128 levels deep (column 130).",
            id="100k-deep-unclosed",
        ),
        pytest.param(
            "[" + "{}," * 299_999 + "\n[]]",
            f"2: $: {CROWDED} (column 1).",
            id="one-list-past-300000-containers",
        ),
        pytest.param(
            '["' + "{" * 400_000 + '"]',
            f"1: $: {CROWDED} (column 300002).",
            id="brackets-in-text-count-too",
        ),
        pytest.param('{"a": NaN}', "1: not JSON: NaN is not a JSON number (column 7).", id="nan"),
        pytest.param(
            '{"a": "1e400",\n "b": [1, -1e400]}',
            "2: -1e400 is not a finite number; it reads as infinity (column 11).",
            id="a-number-past-a-double",
        ),
        pytest.param(
            '{"NaN": "Infinity",\n "b": Infinity}',
            "2: not JSON: Infinity is not a JSON number (column 7).",
            id="infinity-after-strings-that-name-it",
        ),
    ],
)
def test_json_files_are_strict_and_shallow(tmp_path: Path, text: str, message: str) -> None:
    from conchcheck.files import load_json

    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_json(path)
    assert str(caught.value) == f"{path}:{message}"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 128 + "]" * 128, id="as-deep-as-the-limit"),
        pytest.param("[" + "{}," * 299_998 + "[]]", id="as-many-containers-as-the-limit"),
    ],
)
def test_json_at_the_limits_is_read(tmp_path: Path, text: str) -> None:
    from conchcheck.files import load_json

    path = tmp_path / "f.json"
    path.write_text(text)
    assert load_json(path)[0] is not None


ALIASES = "YAML anchors and aliases (&name, *name) are not allowed; write the value out"


@pytest.mark.parametrize(
    ("text", "hazard"),
    [
        pytest.param("a: 1\nb: [x, {c: d}]\n", None, id="plain"),
        pytest.param("a: &x 1\n", (1, "$.a", ALIASES), id="anchor-alone"),
        pytest.param(
            "a:\n  - 1\n  - {c: 2, d: [x, *y]}\n", (3, "$.a[1].d[1]", ALIASES), id="alias-in-flow"
        ),
        pytest.param("? [k]\n: &v 1\n", (2, "$.?", ALIASES), id="anchor-under-a-complex-key"),
        pytest.param(
            "a: " + "[" * 129,
            (1, "$", "nested more than 128 levels deep"),
            id="flow-past-the-limit",
        ),
        pytest.param(
            "a: " + "[" * 100_000,
            (1, "$", "nested more than 128 levels deep"),
            id="past-libyamls-own-limit",
        ),
        pytest.param(
            "".join(" " * i + "-\n" for i in range(200)),
            (129, "$", "nested more than 128 levels deep"),
            id="block-past-the-limit",
        ),
        pytest.param(
            "- a: 1\n" * 300_000, (300_000, "$", CROWDED), id="a-list-and-300000-mappings"
        ),
        pytest.param("- a: 1\n" * 299_999, None, id="a-list-and-299999-mappings"),
        pytest.param("a:\n  b: .inf\n", (2, "$.a.b", f".inf {INFINITE}"), id="dot-inf"),
        pytest.param("- -.Inf\n", (1, "$[0]", f"-.Inf {INFINITE}"), id="minus-inf"),
        pytest.param("a: [1, .NaN]\n", (1, "$.a[1]", f".NaN {INFINITE}"), id="nan"),
        pytest.param(
            "a: 1.0e+400\n", (1, "$.a", f"1.0e+400 {INFINITE}"), id="a-decimal-past-a-double"
        ),
        pytest.param("a: !!float .inf\n", (1, "$.a", f".inf {INFINITE}"), id="tagged-float"),
        pytest.param(
            "a: '.inf'\nb: 1e400\nc: 1.5e+300\nd: 1:30.5\n", None, id="text-and-finite-numbers"
        ),
        pytest.param("a: [1, 2\n", None, id="not-yaml-is-the-loaders-to-report"),
        pytest.param("[" * 128 + "]" * 128, None, id="at-the-limit"),
    ],
)
def test_yaml_hazards(text: str, hazard: tuple[int, str, str] | None) -> None:
    from conchcheck.yamlevents import yaml_hazard

    found = yaml_hazard(text)
    assert (None if found is None else (found.line, json_path(found.path), found.message)) == hazard


BOMB = "a: &a [x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(20)
)


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        pytest.param("a: " + "[" * 100_000, ["a"], 1, id="stops-before-a-deep-value"),
        pytest.param("a: " + "[" * 100_000, ["a", 0, 0], None, id="into-past-libyamls-limit"),
        pytest.param("a: " + "[" * 100_000, ["b"], None, id="past-a-deep-value"),
        pytest.param(BOMB + "z:\n  k: 1\n", ["z", "k"], 23, id="past-an-alias-bomb-unexpanded"),
        pytest.param(BOMB, ["u", 1], 21, id="an-alias-is-one-node"),
        pytest.param("a:\n  - 1\n  - 2\n", ["a", 5], 1, id="index-past-the-end"),
        pytest.param("a:\n  - 1\n  - {b: 2}\n", ["a", 1, "b"], 3, id="into-a-list"),
        pytest.param("a: {b: 1}\n", ["a", 0], 1, id="an-index-into-a-mapping"),
        pytest.param("a: [1, 2\n", ["b"], None, id="not-yaml-past-the-error"),
    ],
)
def test_locate_walks_events_without_composing(
    text: str, path: list[str | int], line: int | None
) -> None:
    assert locate(text, path) == line


# -- folders a probe will write to --------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "given", "problem"),
    [
        pytest.param("", "out", None, id="missing-is-made-later"),
        pytest.param("out/", "out", None, id="an-empty-folder"),
        pytest.param("", "a/b/c", None, id="missing-parents-too"),
        pytest.param("out", "out", "is a file, not a folder", id="a-file"),
        pytest.param(
            "f", "f/out", "cannot be made: {tmp}/f is a file, not a folder", id="under-a-file"
        ),
        pytest.param(
            "f", "f/a/b", "cannot be made: {tmp}/f is a file, not a folder", id="deep-under-a-file"
        ),
    ],
)
def test_folder_problem(tmp_path: Path, make: str, given: str, problem: str | None) -> None:
    from conchcheck.files import folder_problem

    if make.endswith("/"):
        (tmp_path / make).mkdir()
    elif make:
        (tmp_path / make).write_text("x")
    found = folder_problem(tmp_path / given)
    assert found == (None if problem is None else problem.replace("{tmp}", str(tmp_path)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ([make.rstrip("/")] if make else [])


def test_a_folder_the_kernel_wont_let_us_write_is_refused(tmp_path: Path, monkeypatch) -> None:
    # Root writes through permission bits, so the kernel's answer is stood in for here;
    # tests/test_bad_inputs.py runs the real read-only folder when not root.
    import conchcheck.files as files

    monkeypatch.setattr(files.os, "access", lambda path, mode: Path(path) != tmp_path)
    assert files.folder_problem(tmp_path) == "is not writable"
    assert files.folder_problem(tmp_path / "new") == f"cannot be made: {tmp_path} is not writable"


# -- a ProbeSpec and build check everything from Python, as the CLI does -------------------


def _policy(**values: object):
    from conchcheck.probe import ProbeOptions
    from conchcheck.wire.transport import Policy

    policy = {k: v for k, v in values.items() if k in ("read_timeout", "concurrency")}
    options = {k: v for k, v in values.items() if k not in policy}
    return ProbeOptions(policy=Policy(**policy), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            {"read_timeout": float("inf")},
            "--timeout: inf is not a finite number. Give 0.1 to 86400.",
            id="timeout-inf",
        ),
        pytest.param(
            {"read_timeout": float("nan")},
            "--timeout: nan is not a finite number. Give 0.1 to 86400.",
            id="timeout-nan",
        ),
        pytest.param(
            {"read_timeout": 0.0},
            "--timeout: 0 is out of range. Give 0.1 to 86400.",
            id="timeout-zero",
        ),
        pytest.param(
            {"read_timeout": True},
            "--timeout: True is not a finite number. Give 0.1 to 86400.",
            id="timeout-a-bool",
        ),
        pytest.param(
            {"threshold": -0.1},
            "--threshold: -0.1 is out of range. Give 0 to 1.",
            id="threshold-negative",
        ),
        pytest.param(
            {"concurrency": 0},
            "--concurrency: 0 is out of range. Give a whole number from 1 to 64.",
            id="concurrency-zero",
        ),
        pytest.param(
            {"repeat": 2.5},
            "--repeat: 2.5 is not a whole number. Give a whole number from 1 to 100, or auto.",
            id="repeat-a-fraction",
        ),
        pytest.param(
            {"repeat": "often"},
            "--repeat: 'often' is not a whole number. Give a whole number from 1 to 100, or auto.",
            id="repeat-a-word",
        ),
        pytest.param(
            {"confidence": 1.0},
            "--confidence: 1 is out of range. Give 0.5 to 0.999.",
            id="confidence-one",
        ),
        pytest.param(
            {"confidence": 0.4},
            "--confidence: 0.4 is out of range. Give 0.5 to 0.999.",
            id="confidence-below-a-half",
        ),
        pytest.param(
            {"max_repeat": 20},
            "--max-repeat: only with --repeat auto. A fixed --repeat N sends each prompt N times.",
            id="max-repeat-without-auto",
        ),
        pytest.param(
            {"repeat": "auto", "max_repeat": 1},
            "--max-repeat: 1 is out of range. Give a whole number from 2 to 100.",
            id="max-repeat-one",
        ),
        pytest.param(
            {"max_requests": 0},
            "--max-requests: 0 is out of range. Give a whole number from 1 up.",
            id="max-requests-zero",
        ),
        pytest.param(
            {"max_tokens": -1},
            "--max-tokens: -1 is out of range. Give a whole number from 1 up.",
            id="max-tokens-negative",
        ),
    ],
)
def test_a_probespec_refuses_numbers_out_of_range(values: dict[str, object], message: str) -> None:
    from conchcheck.run import ProbeSpec

    with pytest.raises(InputError) as caught:
        ProbeSpec("vllm:m", options=_policy(**values))
    assert f"{caught.value} {caught.value.hint}" == message


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        pytest.param(
            "expected_mode",
            "nativ",
            "--expect-mode: `nativ` is not a mode; did you mean `native`? The modes are native, words, none.",
            id="mode-misspelt",
        ),
        pytest.param(
            "expected_mode",
            "",
            "--expect-mode: `` is not a mode. The modes are native, words, none.",
            id="mode-empty",
        ),
        pytest.param(
            "expected_dialect",
            "STRICT",
            "--expect-dialect: `STRICT` is not a dialect; did you mean `strict`? The dialects are permissive, gemini, anthropic, strict.",
            id="dialect-in-capitals",
        ),
    ],
)
def test_a_probespec_refuses_unknown_expectations(field: str, value: str, message: str) -> None:
    from conchcheck.run import ProbeSpec

    with pytest.raises(InputError) as caught:
        ProbeSpec("vllm:m", **{field: value})  # type: ignore[arg-type]
    assert f"{caught.value} {caught.value.hint}" == message


def test_build_refuses_a_corrupt_cache_before_anything_is_sent(tmp_path: Path) -> None:
    from conchcheck.capabilities import CacheError
    from conchcheck.run import ProbeSpec, build

    cache = tmp_path / "capabilities.yaml"
    cache.write_text("schema_version: 1\nentries: [\n")
    spec = ProbeSpec(
        "vllm:m", base_url="http://127.0.0.1:9/v1", out_dir=tmp_path / "out", capability_file=cache
    )
    with pytest.raises(CacheError):
        build(spec)  # the test network refuses anything but loopback; nothing was tried
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capabilities.yaml"]
