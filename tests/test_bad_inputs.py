"""Every bad input, through the real command line: exit 2, one line on stderr, nothing sent.

The corpus is ``tests/data/bad-inputs/`` (files a user might hand conchcheck by mistake or
malice) plus files made here (too large to commit, or shaped by the machine) and a table of
bad option values. Each case runs ``python -m conchcheck`` in a subprocess, all of them at
once, and must:

* exit 2, print nothing on stdout, and exactly the expected line on stderr (no traceback);
* leave its report folder and capability file exactly as they were (names, bytes, mtimes);
* send nothing: every probe points at a loopback server that counts what arrives.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.emulators.server import EmulatorServer, Response

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "data" / "bad-inputs"
SENTINEL_CACHE = CORPUS / "cache-valid-reference.txt"
"""A valid capability file: each case's own copy must come out of the run untouched."""
REFERENCES = {"matrix-valid-reference.txt", SENTINEL_CACHE.name}
"""Valid files the bad ones were made from; not cases themselves."""
BIG = 17 << 20
"""Past the 16 MB conchcheck reads."""
PROBE = ("probe", "vllm:m", "--base-url", "{url}", "--out", "{out}", "--quiet")
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    stderr: str
    stdin: str | None = None
    not_as_root: bool = False
    """Permission bits stop only other users: as root this input is not bad, so not run."""
    cache_file: str | None = None
    """A corpus file to stand as the capability file ($CONCHCHECK_CACHE) instead of a valid one."""


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    before: dict[str, tuple[int, bytes]]
    after: dict[str, tuple[int, bytes]]


def probe(*extra: str) -> tuple[str, ...]:
    return (*PROBE, *extra)


def make_generated(gen: Path) -> None:
    """What is too large to commit, or can only be made on this machine."""
    filler = "# a comment line that makes this file large, and nothing else\n"
    lines = BIG // len(filler) + 1
    (gen / "big-matrix.yaml").write_text(filler * lines)
    (gen / "big-cache.yaml").write_text(filler * lines)
    (gen / "big-results.json").write_text('{"cells": [' + " " * BIG + "]}")
    (gen / "big-schema.json").write_text('{"description": "' + "x" * BIG + '"}')
    (gen / "deep-100k.json").write_text("[" * 100_000 + "]" * 100_000)
    (gen / "crowded.json").write_text("[" + "{}," * 300_000 + "{}]")
    (gen / "deep-100k.yaml").write_text("version: 1\nprompts: " + "[" * 100_000 + "\n")
    (gen / "a-file").write_text("not a folder\n")
    (gen / "a-folder").mkdir()
    (gen / "report-is-a-folder" / "report.md").mkdir(parents=True)
    (gen / "read-only").mkdir()
    (gen / "read-only").chmod(0o555)


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``folder``: its mtime and bytes."""
    return {
        str(path.relative_to(folder)): (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def run_case(name: str, case: Case, base: Path, gen: Path, url: str) -> Run:
    """Run one case in its own folder, holding a report folder and a capability file that
    must stay exactly as they are."""
    home = base / name
    out = home / "out"
    out.mkdir(parents=True)
    (out / "report.md").write_text("# an earlier report, which must survive\n")
    (out / "results.json").write_text('{"earlier": true}\n')
    cache = home / "capabilities.yaml"
    shutil.copyfile(CORPUS / case.cache_file if case.cache_file else SENTINEL_CACHE, cache)
    before = snapshot(home)
    fill = {"url": url, "out": str(out), "cache": str(cache), "gen": str(gen)}
    argv = [_fill(arg, fill) for arg in case.args]
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_PROXY", "_proxy"))}
    env |= {"PYTHONPATH": str(ROOT), "CONCHCHECK_CACHE": str(cache), "NO_COLOR": "1"}
    env |= {"COLUMNS": "80", "LANG": "C.UTF-8"}
    done = subprocess.run(
        [sys.executable, "-m", "conchcheck", *argv],
        input=case.stdin, capture_output=True, text=True, cwd=CORPUS, env=env, timeout=120,
        check=False,
    )  # fmt: skip
    return Run(done.returncode, done.stdout, done.stderr, before, snapshot(home))


def expected(case: Case, gen: Path, base: Path, name: str) -> str:
    home = base / name
    fill = {"gen": str(gen), "out": str(home / "out"), "cache": str(home / "capabilities.yaml")}
    return _fill(case.stderr, fill)


def _fill(text: str, values: dict[str, str]) -> str:
    # Not str.format: messages hold braces of their own ({"name": …}).
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


CASES: dict[str, Case] = {}


def case(name: str, args: tuple[str, ...], stderr: str, *, stdin: str | None = None,
         not_as_root: bool = False, cache_file: str | None = None) -> None:  # fmt: skip
    assert name not in CASES, name
    CASES[name] = Case(args, stderr, stdin, not_as_root, cache_file)


# One case a line (the table is read across): name, arguments, the line on stderr.
# fmt: off
# -- matrices: --matrix, `matrix validate`, `matrix show` ------------------------------------
case("matrix-a-list", probe("--matrix", "matrix-a-list.yaml"), "conchcheck: matrix-a-list.yaml:1: $: expected an object, got a list. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-alias-bomb", probe("--matrix", "matrix-alias-bomb.yaml"), "conchcheck: matrix-alias-bomb.yaml:3: $.a0: YAML anchors and aliases (&name, *name) are not allowed; write the value out. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-copies-huge", probe("--matrix", "matrix-copies-huge.yaml"), "conchcheck: matrix-copies-huge.yaml:16: $.schema_cases[0].copies: expected at most 999, got 100000000000000000000. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-copies-text", probe("--matrix", "matrix-copies-text.yaml"), "conchcheck: matrix-copies-text.yaml:16: $.schema_cases[0].copies: expected a whole number, got text. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-copies-zero", probe("--matrix", "matrix-copies-zero.yaml"), "conchcheck: matrix-copies-zero.yaml:16: $.schema_cases[0].copies: expected at least 1, got 0. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-dangling-ref", probe("--matrix", "matrix-dangling-ref.yaml"), 'conchcheck: matrix-dangling-ref.yaml:10: $.tools.weather.parameters.properties.city.$ref: "#/$defs/city" points at nothing (set valid: false if that is the point). `conchcheck matrix show default` prints a complete matrix.')
case("matrix-deep-block", probe("--matrix", "matrix-deep-block.yaml"), "conchcheck: matrix-deep-block.yaml:131: $: nested more than 128 levels deep. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-deep-flow", probe("--matrix", "matrix-deep-flow.yaml"), "conchcheck: matrix-deep-flow.yaml:3: $: nested more than 128 levels deep. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-deep-json", probe("--matrix", "matrix-deep-json.yaml"), "conchcheck: matrix-deep-json.yaml:1: $: nested more than 128 levels deep. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-duplicate-key", probe("--matrix", "matrix-duplicate-key.yaml"), "conchcheck: matrix-duplicate-key.yaml:3: $.name: duplicate key; also at line 2. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-empty", probe("--matrix", "matrix-empty.yaml"), "conchcheck: matrix-empty.yaml:1: $: expected an object, got null. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-latin1", probe("--matrix", "matrix-latin1.yaml"), "conchcheck: matrix-latin1.yaml: not UTF-8 text (byte 340).")
case("matrix-merge-key", probe("--matrix", "matrix-merge-key.yaml"), "conchcheck: matrix-merge-key.yaml:12: $.defaults: YAML anchors and aliases (&name, *name) are not allowed; write the value out. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-nul-byte", probe("--matrix", "matrix-nul-byte.yaml"), "conchcheck: matrix-nul-byte.yaml:14: YAML: character 0x0: special characters are not allowed. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-one-anchor", probe("--matrix", "matrix-one-anchor.yaml"), "conchcheck: matrix-one-anchor.yaml:4: $.tools.weather: YAML anchors and aliases (&name, *name) are not allowed; write the value out. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-python-tag", probe("--matrix", "matrix-python-tag.yaml"), "conchcheck: matrix-python-tag.yaml:2: YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-tab-indent", probe("--matrix", "matrix-tab-indent.yaml"), "conchcheck: matrix-tab-indent.yaml:5: YAML: found character '\\t' that cannot start any token. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-two-documents", probe("--matrix", "matrix-two-documents.yaml"), "conchcheck: matrix-two-documents.yaml:23: YAML: but found another document (expected a single document in the stream at line 1). `conchcheck matrix show default` prints a complete matrix.")
case("matrix-unclosed-quote", probe("--matrix", "matrix-unclosed-quote.yaml"), "conchcheck: matrix-unclosed-quote.yaml:23: YAML: found unexpected end of stream (while scanning a quoted scalar at line 18). `conchcheck matrix show default` prints a complete matrix.")
case("matrix-unknown-tool", probe("--matrix", "matrix-unknown-tool.yaml"), "conchcheck: matrix-unknown-tool.yaml:15: $.schema_cases[0].tool: no tool with id 'wether' in $.tools. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-unquoted-date", probe("--matrix", "matrix-unquoted-date.yaml"), 'conchcheck: matrix-unquoted-date.yaml:18: $.prompts[0].user: an unquoted date is not text; write "2026-12-02" in quotes. `conchcheck matrix show default` prints a complete matrix.')
case("matrix-version-2", probe("--matrix", "matrix-version-2.yaml"), "conchcheck: matrix-version-2.yaml:1: $.version: expected 1, got 2. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-too-large", probe("--matrix", "{gen}/big-matrix.yaml"), "conchcheck: {gen}/big-matrix.yaml: larger than 16 MB, the most conchcheck reads. Check that this is the file you meant.")
case("matrix-100k-deep", probe("--matrix", "{gen}/deep-100k.yaml"), "conchcheck: {gen}/deep-100k.yaml:2: $: nested more than 128 levels deep. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-validate-alias-bomb", ("matrix", "validate", "matrix-alias-bomb.yaml"), "matrix-alias-bomb.yaml:3: $.a0: YAML anchors and aliases (&name, *name) are not allowed; write the value out")
case("matrix-validate-deep-flow", ("matrix", "validate", "matrix-deep-flow.yaml"), "matrix-deep-flow.yaml:3: $: nested more than 128 levels deep")
case("matrix-validate-100k-deep", ("matrix", "validate", "{gen}/deep-100k.yaml"), "{gen}/deep-100k.yaml:2: $: nested more than 128 levels deep")
case("matrix-validate-too-large", ("matrix", "validate", "{gen}/big-matrix.yaml"), "conchcheck: {gen}/big-matrix.yaml: larger than 16 MB, the most conchcheck reads. Check that this is the file you meant.")
case("matrix-show-deep-block", ("matrix", "show", "matrix-deep-block.yaml"), "conchcheck: matrix-deep-block.yaml:131: $: nested more than 128 levels deep. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-unknown-builtin", probe("--matrix", "defualt"), "conchcheck: defualt: no such file, and no built-in matrix of that name. Built in: default.")
case("matrix-missing-file", probe("--matrix", "nowhere/m.yaml"), "conchcheck: nowhere/m.yaml: no such file. Check the path.")
case("matrix-a-folder", probe("--matrix", "{gen}/a-folder"), "conchcheck: {gen}/a-folder: is a folder, not a file.")

case("matrix-infinity", probe("--matrix", "matrix-infinity.yaml"), "conchcheck: matrix-infinity.yaml:10: $.tools.weather.parameters.properties.city.maximum: .inf is not a finite number; JSON has none. `conchcheck matrix show default` prints a complete matrix.")
case("matrix-key-a-number", probe("--matrix", "matrix-key-a-number.yaml"), "conchcheck: matrix-key-a-number.yaml:11: $.tools.weather.parameters.properties.404: a key must be text, got a number; quote it. `conchcheck matrix show default` prints a complete matrix.")

# -- capability files: --cache, $CONCHCHECK_CACHE, `cache list` -----------------------------
case("cache-a-list", probe("--cache", "cache-a-list.yaml"), "conchcheck: cache-a-list.yaml:1: $: [{'schema_version': 1}] is not of type 'object'. Move it aside or run `conchcheck cache clear --force`.")
case("cache-alias-bomb", probe("--cache", "cache-alias-bomb.yaml"), "conchcheck: cache-alias-bomb.yaml:2: $.a0: YAML anchors and aliases (&name, *name) are not allowed; write the value out. Move it aside or run `conchcheck cache clear --force`.")
case("cache-anchored-entry", probe("--cache", "cache-anchored-entry.yaml"), "conchcheck: cache-anchored-entry.yaml:3: $.entries[0]: YAML anchors and aliases (&name, *name) are not allowed; write the value out. Move it aside or run `conchcheck cache clear --force`.")
case("cache-deep-block", probe("--cache", "cache-deep-block.yaml"), "conchcheck: cache-deep-block.yaml:130: $: nested more than 128 levels deep. Move it aside or run `conchcheck cache clear --force`.")
case("cache-deep", probe("--cache", "cache-deep.yaml"), "conchcheck: cache-deep.yaml:2: $: nested more than 128 levels deep. Move it aside or run `conchcheck cache clear --force`.")
case("cache-impossible-date", probe("--cache", "cache-impossible-date.yaml"), "conchcheck: cache-impossible-date.yaml:17: $.entries[0].probed_at: '2026-13-45T10:00:00Z' is not a real date. Move it aside or run `conchcheck cache clear --force`.")
case("cache-latin1", probe("--cache", "cache-latin1.yaml"), "conchcheck: cache-latin1.yaml: not UTF-8 text (byte 58). Move it aside or run `conchcheck cache clear --force`.")
case("cache-no-entries", probe("--cache", "cache-no-entries.yaml"), "conchcheck: cache-no-entries.yaml:1: $: 'entries' is a required property. Move it aside or run `conchcheck cache clear --force`.")
case("cache-not-yaml", probe("--cache", "cache-not-yaml.yaml"), "conchcheck: cache-not-yaml.yaml:3: $: not YAML: expected the node content, but found '<stream end>' (column 1). Move it aside or run `conchcheck cache clear --force`.")
case("cache-python-tag", probe("--cache", "cache-python-tag.yaml"), "conchcheck: cache-python-tag.yaml:4: $: not YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system' (column 12). Move it aside or run `conchcheck cache clear --force`.")
case("cache-rate-text", probe("--cache", "cache-rate-text.yaml"), "conchcheck: cache-rate-text.yaml:8: $.entries[0].rates.native: 'high' is not of type 'number'. Move it aside or run `conchcheck cache clear --force`.")
case("cache-unknown-mode", probe("--cache", "cache-unknown-mode.yaml"), "conchcheck: cache-unknown-mode.yaml:7: $.entries[0].mode: 'sometimes' is not one of ['native', 'words', 'none']. Move it aside or run `conchcheck cache clear --force`.")
case("cache-version-9", probe("--cache", "cache-version-9.yaml"), "conchcheck: cache-version-9.yaml:1: $.schema_version: version 9 is not one this conchcheck reads (it reads 1, 2, 3 and 4). A newer conchcheck may have written it: upgrade. Or: Move it aside or run `conchcheck cache clear --force`.")
case("cache-list-alias-bomb", ("cache", "list", "--cache", "cache-alias-bomb.yaml"), "conchcheck: cache-alias-bomb.yaml:2: $.a0: YAML anchors and aliases (&name, *name) are not allowed; write the value out. Move it aside or run `conchcheck cache clear --force`.")
case("cache-list-deep", ("cache", "list", "--cache", "cache-deep.yaml"), "conchcheck: cache-deep.yaml:2: $: nested more than 128 levels deep. Move it aside or run `conchcheck cache clear --force`.")
case("cache-list-too-large", ("cache", "list", "--cache", "{gen}/big-cache.yaml"), "conchcheck: {gen}/big-cache.yaml: larger than 16 MB, the most conchcheck reads. Move it aside or run `conchcheck cache clear --force`.")
case("cache-too-large", probe("--cache", "{gen}/big-cache.yaml"), "conchcheck: {gen}/big-cache.yaml: larger than 16 MB, the most conchcheck reads. Move it aside or run `conchcheck cache clear --force`.")
case("cache-a-folder", probe("--cache", "{gen}/a-folder"), "conchcheck: {gen}/a-folder: is a folder. Check the permissions and free space, or choose another file with --cache.")
case("cache-under-a-file", probe("--cache", "{gen}/a-file/capabilities.yaml"), "conchcheck: {gen}/a-file/capabilities.yaml: cannot be read (Not a directory). Check the permissions and free space, or choose another file with --cache.")
case("cache-default-corrupt", probe(), "conchcheck: {cache}:3: $: not YAML: expected the node content, but found '<stream end>' (column 1). Move it aside or run `conchcheck cache clear --force`.", cache_file="cache-not-yaml.yaml")
case("use-cache-corrupt", probe("--use-cache", "--cache", "cache-not-yaml.yaml"), "conchcheck: cache-not-yaml.yaml:3: $: not YAML: expected the node content, but found '<stream end>' (column 1). Move it aside or run `conchcheck cache clear --force`.")

case("cache-nul-byte", probe("--cache", "cache-nul-byte.yaml"), "conchcheck: cache-nul-byte.yaml: not YAML. Move it aside or run `conchcheck cache clear --force`.")
case("cache-two-documents", probe("--cache", "cache-two-documents.yaml"), "conchcheck: cache-two-documents.yaml:19: $: not YAML: but found another document (column 1). Move it aside or run `conchcheck cache clear --force`.")

# -- results for --resume ---------------------------------------------------------------------
case("results-a-list", probe("--resume", "results-a-list.json"), "conchcheck: results-a-list.json:1: $: ['openrouter:qwen/qwen3-8b'] is not of type 'object'. results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out.")
case("results-deep", probe("--resume", "results-deep.json"), "conchcheck: results-deep.json:1: $: nested more than 128 levels deep (column 159).")
case("results-empty", probe("--resume", "results-empty.json"), "conchcheck: results-empty.json:1: not JSON: Expecting value (column 1).")
case("results-latin1", probe("--resume", "results-latin1.json"), "conchcheck: results-latin1.json: not UTF-8 text (byte 12).")
case("results-no-cells", probe("--resume", "results-no-cells.json"), "conchcheck: results-no-cells.json:1: $: 'cells' is a required property. results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out.")
case("results-not-json", probe("--resume", "results-not-json.json"), "conchcheck: results-not-json.json:3: not JSON: Expecting property name enclosed in double quotes (column 3).")
case("results-trailing-comma", probe("--resume", "results-trailing-comma.json"), "conchcheck: results-trailing-comma.json:1: not JSON: Expecting property name enclosed in double quotes (column 22).")
case("results-unknown-outcome", probe("--resume", "results-unknown-outcome.json"), "conchcheck: results-unknown-outcome.json:41: $.cells[0].outcome: 'maybe' is not one of ['accepted', 'pass', 'pass_after_repair', 'wrong_arguments', 'wrong_tool', 'no_call', 'leaked', 'swallowed', 'unwanted_call', 'cut_off', 'unparsed_by_server', 'not_honoured', 'refused', 'error', 'skipped']. results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out.")
case("results-unknown-finish", probe("--resume", "results-unknown-finish.json"), "conchcheck: results-unknown-finish.json:53: $.cells[0].reply.finish: 'finished' is not one of ['stop', 'tool_calls', 'length', 'content_filter', 'error', 'other', 'unknown', None]. results.json follows conchcheck/jsonschemas/results.schema.json; write it with --out.")
case("results-version-9", probe("--resume", "results-version-9.json"), "conchcheck: results-version-9.json:1669: $.schema_version: version 9 is not one this conchcheck reads (it reads 1, 2 and 3). A newer conchcheck may have written it: upgrade, or probe again without --resume.")
case("results-too-large", probe("--resume", "{gen}/big-results.json"), "conchcheck: {gen}/big-results.json: larger than 16 MB, the most conchcheck reads. Check that this is the file you meant.")
case("results-100k-deep", probe("--resume", "{gen}/deep-100k.json"), "conchcheck: {gen}/deep-100k.json:1: $: nested more than 128 levels deep (column 129).")
case("results-a-folder", probe("--resume", "{gen}/a-folder"), "conchcheck: {gen}/a-folder: is a folder, not a file.")
case("results-missing", probe("--resume", "nowhere.json"), "conchcheck: nowhere.json: no such file. Check the path.")

case("results-nan", probe("--resume", "results-nan.json"), "conchcheck: results-nan.json:3: not JSON: NaN is not a JSON number (column 26).")

# -- schemas: `dialect`, `read --schema` ------------------------------------------------------
case("schema-a-list", ("dialect", "schema-a-list.json", "--to", "strict"), "conchcheck: schema-a-list.json:1: $: a schema must be a JSON object, not a list.")
case("schema-deep", ("dialect", "schema-deep.json", "--to", "strict"), "conchcheck: schema-deep.json:1: $: nested more than 128 levels deep (column 1300).")
case("schema-empty", ("dialect", "schema-empty.json", "--to", "strict"), "conchcheck: schema-empty.json:1: not JSON: Expecting value (column 1).")
case("schema-latin1", ("dialect", "schema-latin1.json", "--to", "strict"), "conchcheck: schema-latin1.json: not UTF-8 text (byte 22).")
case("schema-nan", ("dialect", "schema-nan.json", "--to", "strict"), "conchcheck: schema-nan.json:4: not JSON: NaN is not a JSON number (column 14).")
case("schema-not-json", ("dialect", "schema-not-json.json", "--to", "strict"), "conchcheck: schema-not-json.json:1: not JSON: Expecting value (column 1).")
case("schema-text", ("dialect", "schema-text.json", "--to", "strict"), "conchcheck: schema-text.json:1: $: a schema must be a JSON object, not text.")
case("schema-trailing-comma", ("dialect", "schema-trailing-comma.json", "--to", "strict"), "conchcheck: schema-trailing-comma.json:3: not JSON: Expecting property name enclosed in double quotes (column 1).")
case("schema-read-deep", ("read", "-", "--schema", "schema-deep.json"), "conchcheck: schema-deep.json:1: $: nested more than 128 levels deep (column 1300).", stdin="{}")
case("schema-100k-deep", ("dialect", "{gen}/deep-100k.json", "--to", "strict"), "conchcheck: {gen}/deep-100k.json:1: $: nested more than 128 levels deep (column 129).")
case("schema-too-large", ("dialect", "{gen}/big-schema.json", "--to", "strict"), "conchcheck: {gen}/big-schema.json: larger than 16 MB, the most conchcheck reads. Check that this is the file you meant.")
case("schema-stdin-too-large", ("dialect", "-", "--to", "strict"), "conchcheck: <stdin>: larger than 16 MB, the most conchcheck reads. Check that this is the file you meant.", stdin=" " * BIG)
case("dialect-unknown", ("dialect", "../../../docs/examples/schema.json", "--to", "gemni"), "conchcheck: Unknown schema dialect 'gemni'. Choose one of: permissive, gemini, anthropic, strict. Did you mean 'gemini'?")

case("schema-infinity", ("dialect", "schema-infinity.json", "--to", "strict"), "conchcheck: schema-infinity.json:4: not JSON: -Infinity is not a JSON number (column 40).")

# -- tools: `read --tools` --------------------------------------------------------------------
case("tools-deep", ("read", "-", "--tools", "tools-deep.json"), "conchcheck: tools-deep.json:1: $: nested more than 128 levels deep (column 156).", stdin="hello")
case("tools-empty", ("read", "-", "--tools", "tools-empty.json"), "conchcheck: tools-empty.json:1: not JSON: Expecting value (column 1).", stdin="hello")
case("tools-item-a-number", ("read", "-", "--tools", "tools-item-a-number.json"), "conchcheck: tools-item-a-number.json:3: $[1]: expected a tool object, got a number.", stdin="hello")
case("tools-name-a-number", ("read", "-", "--tools", "tools-name-a-number.json"), "conchcheck: tools-name-a-number.json:3: $.tools[0]: A tool must have a 'name' (text), in the plain form or under 'function'.", stdin="hello")
case("tools-number-past-a-double", ("read", "-", "--tools", "tools-number-past-a-double.json"), "conchcheck: tools-number-past-a-double.json:2: 1e400 is not a finite number; it reads as infinity (column 54).", stdin="hello")
case("tools-not-a-list", ("read", "-", "--tools", "tools-not-a-list.json"), 'conchcheck: tools-not-a-list.json:1: $.tools: expected a list of tools, got a number. Write [{"name": "get_weather", "parameters": {…}}, …].', stdin="hello")
case("tools-not-json", ("read", "-", "--tools", "tools-not-json.json"), "conchcheck: tools-not-json.json:1: not JSON: Expecting property name enclosed in double quotes (column 3).", stdin="hello")
case("recording-bad-base64", probe("--replay", "recording-bad-base64.json"), 'conchcheck: recording-bad-base64.json:2: $.exchanges[0].body_base64: expected text matching ^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$, got "bm90IGJhc2U2NA=!".')
case("recording-request-edited", probe("--replay", "recording-request-edited.json"), "conchcheck: recording-request-edited.json:2: $.exchanges[0].request_sha256: is not the sha256 of the exchange's request; the recording was changed after it was written, record again.")
case("recording-truncated-claim", probe("--replay", "recording-truncated-claim.json"), "conchcheck: recording-truncated-claim.json:2: $.exchanges[0].truncated: true, but the body is 48 bytes, within the 8 MB cap; the recording was changed after it was written, record again.")
case("recording-status-999", probe("--replay", "recording-status-999.json"), "conchcheck: recording-status-999.json:2: $.exchanges[0].status: expected at most 599, got 999.")
case("tools-crowded", ("read", "-", "--tools", "{gen}/crowded.json"), "conchcheck: {gen}/crowded.json:1: $: holds more than 300000 objects and lists, the most conchcheck reads (column 899999).", stdin="hello")
case("tools-alias-bomb", ("read", "-", "--tools", "tools-alias-bomb.yaml"), "conchcheck: tools-alias-bomb.yaml:1: $.a: YAML anchors and aliases (&name, *name) are not allowed; write the value out.", stdin="hello")
case("targets-alias-bomb", ("probe", "--targets", "targets-alias-bomb.yaml", "--out", "{out}", "--quiet"), "conchcheck: targets-alias-bomb.yaml:1: $.a: YAML anchors and aliases (&name, *name) are not allowed; write the value out. Each entry is {target: provider:model}, optionally with base_url, api, api_key_env, matrix and repeat.")
case("tools-without-name", ("read", "-", "--tools", "tools-without-name.json"), "conchcheck: tools-without-name.json:3: $[1]: A tool must have a 'name' (text), in the plain form or under 'function'.", stdin="hello")
case("read-tools-and-schema", ("read", "-", "--tools", "tools-empty.json", "--schema", "schema-empty.json"), "conchcheck: Give --tools or --schema, not both.", stdin="{}")

# -- option values and arguments -------------------------------------------------------------
case("timeout-infinite", probe("--timeout", "inf"), "conchcheck: --timeout: inf is not a finite number. Give 0.1 to 86400.")
case("timeout-nan", probe("--timeout", "nan"), "conchcheck: --timeout: nan is not a finite number. Give 0.1 to 86400.")
case("timeout-negative", probe("--timeout", "-1"), "conchcheck: --timeout: -1 is out of range. Give 0.1 to 86400.")
case("timeout-zero", probe("--timeout", "0"), "conchcheck: --timeout: 0 is out of range. Give 0.1 to 86400.")
case("timeout-overflows-to-inf", probe("--timeout", "1e999"), "conchcheck: --timeout: inf is not a finite number. Give 0.1 to 86400.")
case("timeout-not-a-number", probe("--timeout", "abc"), "conchcheck: --timeout: Input should be a valid number, unable to parse string as a number. See `python -m conchcheck probe --help`.")
case("timeout-past-a-day", probe("--timeout", "100000"), "conchcheck: --timeout: 100000 is out of range. Give 0.1 to 86400.")
case("deadline-infinite", probe("--deadline", "inf"), "conchcheck: --deadline: inf is not a finite number. Give 1 to 604800.")
case("deadline-zero", probe("--deadline", "0"), "conchcheck: --deadline: 0 is out of range. Give 1 to 604800.")
case("deadline-negative", probe("--deadline", "-5"), "conchcheck: --deadline: -5 is out of range. Give 1 to 604800.")
case("timeout-without-value", probe("--timeout"), "conchcheck: Option '--timeout' requires an argument.")
case("threshold-above-one", probe("--threshold", "1.5"), "conchcheck: --threshold: 1.5 is out of range. Give 0 to 1.")
case("threshold-nan", probe("--threshold", "nan"), "conchcheck: --threshold: nan is not a finite number. Give 0 to 1.")
case("concurrency-zero", probe("--concurrency", "0"), "conchcheck: --concurrency: 0 is out of range. Give a whole number from 1 to 64.")
case("concurrency-65", probe("--concurrency", "65"), "conchcheck: --concurrency: 65 is out of range. Give a whole number from 1 to 64.")
case("concurrency-a-fraction", probe("--concurrency", "2.5"), "conchcheck: --concurrency: Input should be a valid integer, unable to parse string as an integer. See `python -m conchcheck probe --help`.")
case("repeat-zero", probe("--repeat", "0"), "conchcheck: --repeat: 0 is out of range. Give a whole number from 1 to 100, or auto.")
case("repeat-101", probe("--repeat", "101"), "conchcheck: --repeat: 101 is out of range. Give a whole number from 1 to 100, or auto.")
case("tools-env-without-tools", probe("--tools-env", "GITHUB_TOKEN"), "conchcheck: --tools-env: it passes variables to the MCP servers of --tools, and no --tools was given. Add --tools mcp:stdio:<command line>, or leave --tools-env out.")
case("tools-env-a-key", probe("--tools", "tools-empty.json", "--tools-env", "sk-proj-c4n4ry7f3a9c2e41b04d5f"), "conchcheck: --tools-env takes the NAME of a variable; what was given is not a variable name (it is not shown, in case it is a key). Name a variable of your environment (--tools-env GITHUB_TOKEN), not its value.")
case("tools-env-unset", probe("--tools", "tools-empty.json", "--tools-env", "CONCHCHECK_UNSET_VARIABLE"), "conchcheck: --tools-env CONCHCHECK_UNSET_VARIABLE: the variable is not set, so the MCP server can't be given it. Export CONCHCHECK_UNSET_VARIABLE, or leave --tools-env CONCHCHECK_UNSET_VARIABLE out.")
case("tools-header-without-tools", probe("--tools-header", "X-Tenant: acme"), "conchcheck: --tools-header: it is sent to MCP servers over HTTP, and no --tools source is one. Add --tools mcp:https://<server>/mcp, or leave --tools-header out.")
case("tools-header-without-an-mcp-url", probe("--tools", "tools-empty.json", "--tools-header", "Authorization: Bearer ${MCP_TOKEN}"), "conchcheck: --tools-header: it is sent to MCP servers over HTTP, and no --tools source is one. Add --tools mcp:https://<server>/mcp, or leave --tools-header out.")
case("tools-header-a-key-without-a-name", probe("--tools", "mcp:http://127.0.0.1:9/mcp", "--tools-header", "Bearer sk-proj-c4n4ry7f3a9c2e41b04d5f"), "conchcheck: --tools-header takes `Name: value`, the name in letters, digits and !#$%&'*+-.^_`|~; what was given is not that (it is not shown, in case it holds a key). Write --tools-header 'Authorization: Bearer ${MCP_TOKEN}', with the token in $MCP_TOKEN.")
case("tools-header-line-break", probe("--tools", "mcp:http://127.0.0.1:9/mcp", "--tools-header", "X-Tenant: acme\r\nX-Admin: yes"), "conchcheck: --tools-header X-Tenant: the value holds a line break or another control character, so it can't be sent; it is not shown here. Write the value on one line.")
case("tools-header-unset-variable", probe("--tools", "mcp:http://127.0.0.1:9/mcp", "--tools-header", "Authorization: Bearer ${CONCHCHECK_UNSET_VARIABLE}"), "conchcheck: --tools-header Authorization: $CONCHCHECK_UNSET_VARIABLE is not set, so the header can't be sent. Export CONCHCHECK_UNSET_VARIABLE, or leave --tools-header Authorization out.")
case("max-requests-zero", probe("--max-requests", "0"), "conchcheck: --max-requests: 0 is out of range. Give a whole number from 1 up.")
case("max-tokens-negative", probe("--max-tokens", "-5"), "conchcheck: --max-tokens: -5 is out of range. Give a whole number from 1 up.")
case("expect-mode-misspelt", probe("--expect-mode", "nativ"), "conchcheck: --expect-mode: `nativ` is not a mode; did you mean `native`? The modes are native, words, none.")
case("expect-mode-unknown", probe("--expect-mode", "telepathy"), "conchcheck: --expect-mode: `telepathy` is not a mode. The modes are native, words, none.")
case("expect-mode-capitalised", probe("--expect-mode", "Words"), "conchcheck: --expect-mode: `Words` is not a mode; did you mean `words`? The modes are native, words, none.")
case("expect-dialect-misspelt", probe("--expect-dialect", "gemni"), "conchcheck: --expect-dialect: `gemni` is not a dialect; did you mean `gemini`? The dialects are permissive, gemini, anthropic, strict.")
case("format-unknown", probe("--format", "xml"), "conchcheck: --format: 'xml' is not one of 'json', 'markdown', 'html', 'junit'. See `python -m conchcheck probe --help`.")
case("option-unknown", probe("--bogus"), "conchcheck: --bogus: no such option; did you mean --out? See `python -m conchcheck probe --help`.")
case("option-misspelt", probe("--timout", "5"), "conchcheck: --timout: no such option; did you mean --out or --timeout? See `python -m conchcheck probe --help`.")
case("command-unknown", ("prob", "vllm:m"), "conchcheck: No such command 'prob'. Did you mean 'probe'? See `python -m conchcheck --help`.")
case("target-missing", ("probe", "--base-url", "{url}"), "conchcheck: Give a TARGET or --targets, one of the two. See `conchcheck probe --help`.")
case("target-extra-argument", probe("another:target"), "conchcheck: Got unexpected extra argument(s) (another:target). See `python -m conchcheck probe --help`.")
case("base-url-port-99999", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:99999/v1", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:99999/v1' has no port from 1 to 65535. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-port-0", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:0/v1", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:0/v1' has no port from 1 to 65535. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-port-not-a-number", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:abc/v1", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:abc/v1' has no port from 1 to 65535. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-port-empty", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:/v1", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:/v1' has no port from 1 to 65535. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-ipv6-bracket-unclosed", ("probe", "vllm:m", "--base-url", "http://[::1/v1", "--out", "{out}"), "conchcheck: The base URL 'http://[::1/v1' is not a URL: Invalid IPv6 URL. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-ipv6-without-brackets", ("probe", "vllm:m", "--base-url", "http://::1/v1", "--out", "{out}"), "conchcheck: The base URL 'http://::1/v1' is not an http(s) URL. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-space-in-host", ("probe", "vllm:m", "--base-url", "http://local host/v1", "--out", "{out}"), "conchcheck: The base URL 'http://local host/v1' holds a space or a control character. Encode a space in a path as %20.")
case("base-url-space-in-path", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:8000/my models/v1", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:8000/my models/v1' holds a space or a control character. Encode a space in a path as %20.")
case("base-url-newline-at-end", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:8000/v1\n", "--out", "{out}"), "conchcheck: The base URL 'http://127.0.0.1:8000/v1\\n' holds a space or a control character. Encode a space in a path as %20.")
case("base-url-scheme-ftp", ("probe", "vllm:m", "--base-url", "ftp://127.0.0.1/v1", "--out", "{out}"), "conchcheck: The base URL 'ftp://127.0.0.1/v1' is not an http(s) URL. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-no-scheme", ("probe", "vllm:m", "--base-url", "127.0.0.1:8000/v1", "--out", "{out}"), "conchcheck: The base URL '127.0.0.1:8000/v1' is not an http(s) URL. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-no-host", ("probe", "vllm:m", "--base-url", "http:///v1", "--out", "{out}"), "conchcheck: The base URL 'http:///v1' is not an http(s) URL. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-host-label-dash", ("probe", "vllm:m", "--base-url", "http://-bad-.example/v1", "--out", "{out}"), "conchcheck: The base URL 'http://-bad-.example/v1' has no valid host name. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-host-empty-label", ("probe", "vllm:m", "--base-url", "http://a..b/v1", "--out", "{out}"), "conchcheck: The base URL 'http://a..b/v1' has no valid host name. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-ip-with-five-parts", ("probe", "vllm:m", "--base-url", "http://1.2.3.4.5/v1", "--out", "{out}"), "conchcheck: The base URL 'http://1.2.3.4.5/v1' has no valid host name. Write it like http://127.0.0.1:8080/v1 or http://[::1]:8080/v1.")
case("base-url-credentials", ("probe", "vllm:m", "--base-url", "http://user:sk-secret@127.0.0.1:8000/v1", "--out", "{out}"), "conchcheck: The base URL must not carry credentials, a query or a fragment. Put the key in the provider's variable, or name one with --api-key-env.")
case("base-url-query", ("probe", "vllm:m", "--base-url", "http://127.0.0.1:8000/v1?key=sk-secret", "--out", "{out}"), "conchcheck: The base URL must not carry credentials, a query or a fragment. Put the key in the provider's variable, or name one with --api-key-env.")
case("target-no-colon", ("probe", "vllm", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The target 'vllm' is not written provider:model. For example openrouter:qwen/qwen3-8b, ollama:qwen3:4b or llamacpp:local.")
case("target-no-model", ("probe", "vllm:", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The target 'vllm:' is not written provider:model. For example openrouter:qwen/qwen3-8b, ollama:qwen3:4b or llamacpp:local.")
case("target-no-provider", ("probe", ":m", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The target ':m' is not written provider:model. For example openrouter:qwen/qwen3-8b, ollama:qwen3:4b or llamacpp:local.")
case("target-terminal-escape", ("probe", "vllm:m\x1b[31m", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The target 'vllm:m\\x1b[31m' holds a control character. Write it provider:model, in printable characters.")
case("target-newline", ("probe", "vllm:m\nx", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The target 'vllm:m\\nx' holds a control character. Write it provider:model, in printable characters.")
case("target-trailing-space", ("probe", "vllm:m ", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The model 'm ' starts or ends with a space. Remove the spaces.")
case("target-unknown-provider", ("probe", "nowhere:m", "--out", "{out}"), "conchcheck: Unknown provider 'nowhere' in 'nowhere:m'. Known providers: openai, openai-responses, anthropic, gemini, gemini-openai, openrouter, ollama, ollama-openai, llamacpp, vllm, sglang, lmstudio, groq, together, mistral, deepseek, xai. For any other OpenAI-compatible server, add --base-url.")
case("target-provider-name-a-path", ("probe", "my/server:m", "--base-url", "{url}", "--out", "{out}"), "conchcheck: The provider name 'my/server' may hold only letters, digits, '.', '_' and '-'. It names the server in reports and the capability file.")
case("out-a-file", ("probe", "vllm:m", "--base-url", "{url}", "--out", "{gen}/a-file"), "conchcheck: --out: {gen}/a-file: is a file, not a folder. Choose another folder.")
case("out-under-a-file", ("probe", "vllm:m", "--base-url", "{url}", "--out", "{gen}/a-file/reports"), "conchcheck: --out: {gen}/a-file/reports: cannot be made: {gen}/a-file is a file, not a folder. Choose another folder.")
case("out-report-is-a-folder", ("probe", "vllm:m", "--base-url", "{url}", "--out", "{gen}/report-is-a-folder"), "conchcheck: --out: {gen}/report-is-a-folder/report.md: is a folder, so the report can't be written. Move it aside, or choose another folder.")
case("out-read-only", ("probe", "vllm:m", "--base-url", "{url}", "--out", "{gen}/read-only/reports"), "conchcheck: --out: {gen}/read-only/reports: cannot be made: {gen}/read-only is not writable. Choose another folder.", not_as_root=True)
# fmt: on


# -- the runs ---------------------------------------------------------------------------------


class Counter:
    """A loopback server that answers anything and counts it: no case may reach it."""

    def __init__(self) -> None:
        self.server = EmulatorServer(lambda received: Response.json({"error": "no"}, 500))
        self.url = self.server.url + "/v1"


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, Run], Path, Path, Counter]]:
    gen, base = tmp_path_factory.mktemp("generated"), tmp_path_factory.mktemp("cases")
    make_generated(gen)
    corpus_before = snapshot(CORPUS)
    counter = Counter()
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = {
                name: pool.submit(run_case, name, case, base, gen, counter.url)
                for name, case in CASES.items()
                if not (case.not_as_root and ROOT_USER)
            }
            results = {name: future.result() for name, future in futures.items()}
        assert snapshot(CORPUS) == corpus_before, "a case changed the corpus"
        yield results, gen, base, counter
    finally:
        counter.server.close()
        (gen / "read-only").chmod(0o755)


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in CASES])
def test_bad_input(runs: tuple[dict[str, Run], Path, Path, Counter], name: str) -> None:
    if CASES[name].not_as_root and ROOT_USER:
        pytest.skip("root writes through permission bits; out-under-a-file stands in for it")
    results, gen, base, _ = runs
    run, case = results[name], CASES[name]
    assert "Traceback" not in run.stderr, run.stderr
    assert (run.code, run.stdout, run.stderr) == (2, "", expected(case, gen, base, name) + "\n")
    assert run.after == run.before, "files on disk changed"


def test_nothing_was_sent(runs: tuple[dict[str, Run], Path, Path, Counter]) -> None:
    assert runs[3].server.received == []


def test_every_corpus_file_is_a_case() -> None:
    used = {arg for case in CASES.values() for arg in case.args} | {
        case.cache_file for case in CASES.values()
    }
    files = {path.name for path in CORPUS.iterdir()} - REFERENCES - {"README.md"}
    assert files - used == set()
    assert len(files) >= 60


def test_the_harness_sees_a_write_and_a_request(tmp_path: Path) -> None:
    # The checks above can fail: a good input run the same way probes and writes its reports.
    counter = Counter()
    try:
        good = Case(probe("--max-requests", "2"), "")
        run = run_case("good", good, tmp_path, tmp_path, counter.url)
    finally:
        counter.server.close()
    assert run.code == 4 and len(counter.server.received) == 2
    assert run.after != run.before
    assert run.after["out/report.md"] != run.before["out/report.md"]
