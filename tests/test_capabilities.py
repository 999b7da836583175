"""The capability file: round trips, exact text, where it lives, corruption, locking."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from conchcheck.capabilities import (
    CORRUPT_HINT,
    CacheError,
    CapabilityFile,
    Entry,
    default_path,
    entry_from_data,
    entry_to_data,
    expires,
    parse_timestamp,
    render,
    timestamp,
)
from conchcheck.capabilities.entry import SECTION
from conchcheck.core.fidelity import FidelityChange
from conchcheck.core.knobs import (
    Agreement,
    Fidelity,
    Ids,
    Knobs,
    KnobsAndLosses,
    KnobState,
    Reasoning,
    Streaming,
)
from conchcheck.wire.providers import ApiFamily

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "conchcheck/jsonschemas/capabilities.schema.json").read_text())

ENTRY = Entry(
    provider="openrouter",
    model="qwen/qwen3-8b",
    endpoint="https://openrouter.ai/api/v1",
    api=ApiFamily.OPENAI,
    dialect="permissive",
    mode="native",
    rates={"words_clean": 0.4, "words": 0.4, "native_clean": 0.6, "native": 0.8},
    repairs_seen=("trailing-comma", "code-fence"),
    refused_keywords=(),
    context_window=40960,
    tools_declared=True,
    tools_observed=None,
    conchcheck_version="0.1.0",
    matrix="default",
    matrix_digest="0123456789abcdef" * 4,
    probed_at="2026-11-25T10:00:00Z",
    expires_at="2026-12-02T10:00:00Z",
)

GOLDEN = """\
# conchcheck capability file: written by `conchcheck probe`, read by apps and CI.
schema_version: 4
entries:
  - provider: openrouter
    model: qwen/qwen3-8b
    endpoint: https://openrouter.ai/api/v1
    api: openai
    dialect: permissive
    mode: native
    rates:
      native: 0.8
      native_clean: 0.6
      words: 0.4
      words_clean: 0.4
    repairs_seen:
      - trailing-comma
      - code-fence
    refused_keywords: []
    context_window: 40960
    tools_declared: true
    tools_observed: null
    conchcheck_version: 0.1.0
    matrix: default
    matrix_digest: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    probed_at: '2026-11-25T10:00:00Z'
    expires_at: '2026-12-02T10:00:00Z'
    leaked_as_text: []
    strict_mode: null
"""


def entry(**changes: Any) -> Entry:
    return dataclasses.replace(ENTRY, **changes)


@pytest.fixture
def cache(tmp_path: Path) -> CapabilityFile:
    return CapabilityFile(tmp_path / "sub" / "capabilities.yaml")


# --- round trips and the exact text ---------------------------------------------------------


def test_exact_text_for_one_entry(cache: CapabilityFile) -> None:
    cache.put(ENTRY)
    assert cache.path.read_text(encoding="utf-8") == GOLDEN
    assert render([ENTRY]) == GOLDEN


def test_round_trip(cache: CapabilityFile) -> None:
    others = [entry(model="a/b"), entry(provider="ollama", endpoint="http://localhost:11434")]
    for e in [ENTRY, *others]:
        cache.put(e)
    assert cache.get(*ENTRY.key) == ENTRY
    assert cache.get("openrouter", "a/b", ENTRY.endpoint, ApiFamily.OPENAI) == others[0]
    assert cache.get("openrouter", "a/b", "https://elsewhere/v1", ApiFamily.OPENAI) is None
    assert cache.get("openrouter", "a/b", ENTRY.endpoint, ApiFamily.RESPONSES) is None
    assert sorted(cache.entries(), key=lambda e: e.key) == sorted(
        [ENTRY, *others], key=lambda e: e.key
    )
    assert entry_from_data(entry_to_data(ENTRY)) == ENTRY


def test_replace_by_key(cache: CapabilityFile) -> None:
    cache.put(ENTRY)
    newer = entry(mode="words", rates={"native": 0.0, "words": 1.0}, dialect=None)
    cache.put(newer)
    assert cache.entries() == [newer]


def test_sorted_by_provider_model_endpoint_api(cache: CapabilityFile) -> None:
    keys = [
        ("openrouter", "z/z", "https://b/v1", ApiFamily.OPENAI),
        ("ollama", "qwen3", "http://localhost:11434", ApiFamily.OLLAMA),
        ("openrouter", "a/a", "https://b/v1", ApiFamily.RESPONSES),
        ("openrouter", "a/a", "https://b/v1", ApiFamily.OPENAI),
        ("openrouter", "a/a", "https://a/v1", ApiFamily.OPENAI),
    ]
    for provider, model, endpoint, api in keys:
        cache.put(entry(provider=provider, model=model, endpoint=endpoint, api=api))
    assert [e.key for e in cache.entries()] == sorted(keys)
    written = yaml.safe_load(cache.path.read_text())["entries"]
    assert [(e["provider"], e["model"], e["endpoint"], e["api"]) for e in written] == [
        (p, m, e, a.value) for p, m, e, a in sorted(keys)
    ]


def test_values_that_look_like_other_types_stay_text(cache: CapabilityFile) -> None:
    odd = entry(model="yes", conchcheck_version="1.0", matrix="null", repairs_seen=("on",))
    cache.put(odd)
    assert cache.entries() == [odd]


@pytest.mark.parametrize(
    ("provider", "model", "removed", "left"),
    [
        pytest.param(None, None, 3, [], id="all"),
        pytest.param("openrouter", None, 2, ["ollama"], id="provider"),
        pytest.param("openrouter", "a/a", 1, ["ollama", "openrouter"], id="provider-and-model"),
        pytest.param(None, "a/a", 2, ["openrouter"], id="model"),
        pytest.param("groq", None, 0, ["ollama", "openrouter", "openrouter"], id="none-match"),
    ],
)
def test_remove(
    cache: CapabilityFile, provider: str | None, model: str | None, removed: int, left: list[str]
) -> None:
    cache.put(entry(model="a/a"))
    cache.put(entry(model="b/b"))
    cache.put(entry(provider="ollama", model="a/a"))
    assert cache.remove(provider, model) == removed
    assert [e.provider for e in cache.entries()] == left


def test_remove_and_clear_without_a_file_create_nothing(cache: CapabilityFile) -> None:
    assert cache.remove() == 0
    cache.clear()
    assert not cache.path.parent.exists()
    assert cache.entries() == []
    assert cache.get(*ENTRY.key) is None


def test_clear(cache: CapabilityFile) -> None:
    cache.put(ENTRY)
    cache.clear()
    assert not cache.path.exists()
    assert cache.entries() == []


def test_empty_file_holds_nothing(cache: CapabilityFile) -> None:
    cache.path.parent.mkdir()
    cache.path.write_text("")
    assert cache.entries() == []
    cache.put(ENTRY)
    assert cache.entries() == [ENTRY]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks and modes")
def test_symlink_and_mode_are_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(render([]))
    real.chmod(0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    CapabilityFile(link).put(ENTRY)
    assert link.is_symlink()
    assert real.read_text() == GOLDEN
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "link.yaml",
        "real.yaml",
        "real.yaml.lock",
    ]


# --- where it lives -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        pytest.param(
            {"CONCHCHECK_CACHE": "/srv/caps.yaml", "XDG_CACHE_HOME": "/x", "HOME": "/home/u"},
            "linux",
            "/srv/caps.yaml",
            id="conchcheck-cache-wins",
        ),
        pytest.param(
            {"CONCHCHECK_CACHE": "/srv/caps.yaml", "LOCALAPPDATA": "/l"},
            "win32",
            "/srv/caps.yaml",
            id="conchcheck-cache-wins-on-windows",
        ),
        pytest.param(
            {"CONCHCHECK_CACHE": "", "XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"},
            "linux",
            "/xdg/conchcheck/capabilities.yaml",
            id="empty-conchcheck-cache-is-unset",
        ),
        pytest.param(
            {"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"},
            "linux",
            "/xdg/conchcheck/capabilities.yaml",
            id="xdg-cache-home",
        ),
        pytest.param(
            {"XDG_CACHE_HOME": "relative/cache", "HOME": "/home/u"},
            "linux",
            "/home/u/.cache/conchcheck/capabilities.yaml",
            id="relative-xdg-is-ignored",
        ),
        pytest.param(
            {"HOME": "/home/u"},
            "linux",
            "/home/u/.cache/conchcheck/capabilities.yaml",
            id="home",
        ),
        pytest.param(
            {"HOME": "/Users/u", "XDG_CACHE_HOME": "/xdg"},
            "darwin",
            "/Users/u/Library/Caches/conchcheck/capabilities.yaml",
            id="macos",
        ),
        pytest.param(
            {"LOCALAPPDATA": "/Users/u/AppData/Local", "HOME": "/h"},
            "win32",
            "/Users/u/AppData/Local/conchcheck/capabilities.yaml",
            id="windows-localappdata",
        ),
        pytest.param(
            {"USERPROFILE": "/Users/u", "HOME": "/h"},
            "win32",
            "/Users/u/AppData/Local/conchcheck/capabilities.yaml",
            id="windows-userprofile",
        ),
    ],
)
def test_default_path(environ: dict[str, str], platform: str, expected: str) -> None:
    assert default_path(environ, platform=platform) == Path(expected)


def test_default_path_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONCHCHECK_CACHE", "/from/env.yaml")
    assert default_path() == Path("/from/env.yaml")


# --- time -----------------------------------------------------------------------------------

UTC = timezone.utc


@pytest.mark.parametrize(
    ("now", "fresh"),
    [
        pytest.param(datetime(2026, 11, 25, 10, 0, tzinfo=UTC), True, id="just-probed"),
        pytest.param(datetime(2026, 12, 2, 9, 59, 59, tzinfo=UTC), True, id="last-second"),
        pytest.param(datetime(2026, 12, 2, 10, 0, tzinfo=UTC), False, id="at-expiry"),
        pytest.param(datetime(2027, 1, 1, tzinfo=UTC), False, id="long-after"),
        pytest.param(
            datetime(2026, 12, 2, 11, 30, tzinfo=timezone(timedelta(hours=2))),
            True,
            id="other-zone-before",
        ),
    ],
)
def test_fresh(now: datetime, fresh: bool) -> None:
    assert ENTRY.fresh(now) is fresh


@pytest.mark.parametrize(
    ("days", "expected"),
    [
        pytest.param(7, "2026-12-02T10:00:00Z", id="default-week"),
        pytest.param(1, "2026-11-26T10:00:00Z", id="one-day"),
        pytest.param(0.5, "2026-11-25T22:00:00Z", id="half-day"),
    ],
)
def test_expires(days: float, expected: str) -> None:
    probed = parse_timestamp("2026-11-25T10:00:00Z")
    assert timestamp(expires(probed, days)) == expected


def test_expires_defaults_to_a_week() -> None:
    probed = datetime(2026, 11, 25, 10, tzinfo=UTC)
    assert expires(probed) == probed + timedelta(days=7)


def test_timestamp_is_utc_to_the_second() -> None:
    moment = datetime(2026, 11, 25, 12, 0, 0, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert timestamp(moment) == "2026-11-25T10:00:00Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        timestamp(datetime(2026, 11, 25))


# --- corrupt files --------------------------------------------------------------------------

BAD_DATE_TYPE = (
    "datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.timezone.utc) is not of type 'string'"
)
CORRUPT = [
    pytest.param(
        b"schema_version: 1\nentries: [\n  {provider: x\n",
        "{p}:4: $: not YAML: expected ',' or '}', but got '<stream end>' (column 1).",
        CORRUPT_HINT,
        id="invalid-yaml",
    ),
    pytest.param(
        b"schema_version: 1\nentries: a: b\n",
        "{p}:2: $: not YAML: mapping values are not allowed here (column 11).",
        CORRUPT_HINT,
        id="invalid-yaml-mapping",
    ),
    pytest.param(
        b"\xff\xfeschema_version: 1\n",
        "{p}: not UTF-8 text (byte 0).",
        CORRUPT_HINT,
        id="not-utf8",
    ),
    pytest.param(
        b"- a\n- b\n",
        "{p}:1: $: ['a', 'b'] is not of type 'object'.",
        CORRUPT_HINT,
        id="not-a-mapping",
    ),
    pytest.param(
        GOLDEN.replace("mode: native", "mode: sometimes").encode(),
        "{p}:9: $.entries[0].mode: 'sometimes' is not one of ['native', 'words', 'none'].",
        CORRUPT_HINT,
        id="bad-mode",
    ),
    pytest.param(
        GOLDEN.replace("    mode: native\n", "    mode: native\n    api_key: sk-1\n").encode(),
        "{p}:4: $.entries[0]: Additional properties are not allowed ('api_key' was unexpected).",
        CORRUPT_HINT,
        id="extra-field",
    ),
    pytest.param(
        GOLDEN.replace("    matrix: default\n", "").encode(),
        "{p}:4: $.entries[0]: 'matrix' is a required property.",
        CORRUPT_HINT,
        id="missing-field",
    ),
    pytest.param(
        GOLDEN.replace("    api: openai\n", "").encode(),
        "{p}:4: $.entries[0]: 'api' is a required property.",
        CORRUPT_HINT,
        id="version-2-entry-without-its-api",
    ),
    pytest.param(
        GOLDEN.replace("api: openai", "api: chat").encode(),
        "{p}:7: $.entries[0].api: 'chat' is not one of ['openai', 'responses', 'anthropic', "
        "'ollama', 'gemini'].",
        CORRUPT_HINT,
        id="unknown-api",
    ),
    pytest.param(
        GOLDEN.replace("native: 0.8", "native: 1.5").encode(),
        "{p}:11: $.entries[0].rates.native: 1.5 is greater than the maximum of 1.",
        CORRUPT_HINT,
        id="rate-above-one",
    ),
    pytest.param(
        GOLDEN.replace("'2026-11-25T10:00:00Z'", "2026-11-25T10:00:00Z").encode(),
        f"{{p}}:25: $.entries[0].probed_at: {BAD_DATE_TYPE}.",
        CORRUPT_HINT,
        id="unquoted-date",
    ),
    pytest.param(
        GOLDEN.replace("2026-12-02T", "2026-13-02T").encode(),
        "{p}:26: $.entries[0].expires_at: '2026-13-02T10:00:00Z' is not a real date.",
        CORRUPT_HINT,
        id="impossible-date",
    ),
    pytest.param(
        GOLDEN.replace("schema_version: 4", "schema_version: one").encode(),
        "{p}:2: $.schema_version: 'one' is not one of [1, 2, 3, 4].",
        CORRUPT_HINT,
        id="version-not-a-number",
    ),
    pytest.param(
        GOLDEN.replace("schema_version: 4", "schema_version: 5").encode(),
        "{p}:2: $.schema_version: version 5 is not one this conchcheck reads (it reads 1, 2, 3"
        " and 4).",
        f"A newer conchcheck may have written it: upgrade. Or: {CORRUPT_HINT}",
        id="unknown-version",
    ),
]


@pytest.mark.parametrize(("content", "message", "hint"), CORRUPT)
def test_corrupt_file(cache: CapabilityFile, content: bytes, message: str, hint: str) -> None:
    cache.path.parent.mkdir()
    cache.path.write_bytes(content)
    expected = message.replace("{p}", str(cache.path))
    for action in (cache.entries, lambda: cache.get(*ENTRY.key)):
        with pytest.raises(CacheError) as caught:
            action()
        assert (str(caught.value), caught.value.hint) == (expected, hint)


@pytest.mark.parametrize(("content", "message", "hint"), CORRUPT)
def test_corrupt_file_is_never_written_over(
    cache: CapabilityFile, content: bytes, message: str, hint: str
) -> None:
    cache.path.parent.mkdir()
    cache.path.write_bytes(content)
    expected = message.replace("{p}", str(cache.path))
    for action in (lambda: cache.put(ENTRY), cache.remove, cache.clear):
        with pytest.raises(CacheError) as caught:
            action()
        assert str(caught.value) == expected
        assert cache.path.read_bytes() == content
    assert sorted(p.name for p in cache.path.parent.iterdir()) == [
        "capabilities.yaml",
        "capabilities.yaml.lock",
    ]
    cache.clear(force=True)
    assert not cache.path.exists()


def test_unreadable_file(cache: CapabilityFile) -> None:
    cache.path.mkdir(parents=True)
    with pytest.raises(CacheError) as caught:
        cache.entries()
    assert str(caught.value) == f"{cache.path}: is a folder."


# --- entries the schema refuses are never written -------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        pytest.param(
            {"mode": "sometimes"},
            '$.mode: does not fit the schema\'s `enum` rule ["native", "words", "none"]',
            id="mode",
        ),
        pytest.param(
            {"endpoint": "https://generativelanguage.googleapis.com/v1beta?key=SECRET"},
            "$.endpoint: does not fit the schema's `pattern` rule "
            + json.dumps(SCHEMA["$defs"]["entry"]["properties"]["endpoint"]["pattern"]),
            id="endpoint-with-a-key-in-the-query",
        ),
        pytest.param(
            {"endpoint": "https://user:SECRET@example.com/v1"},
            "$.endpoint: does not fit the schema's `pattern` rule "
            + json.dumps(SCHEMA["$defs"]["entry"]["properties"]["endpoint"]["pattern"]),
            id="endpoint-with-a-key-in-the-user-part",
        ),
        pytest.param(
            {"rates": {"native": 0.5, "api_key": 0.1}},
            "$.rates: Additional properties are not allowed ('api_key' was unexpected)",
            id="unknown-rate",
        ),
        pytest.param(
            {"matrix_digest": "sha256:abc"},
            '$.matrix_digest: does not fit the schema\'s `pattern` rule "^[0-9a-f]{64}$"',
            id="digest",
        ),
        pytest.param(
            {"repairs_seen": ("a", "a")},
            "$.repairs_seen: does not fit the schema's `uniqueItems` rule true",
            id="repeated-repair",
        ),
    ],
)
def test_put_refuses_an_entry_the_schema_refuses(
    cache: CapabilityFile, changes: dict[str, Any], message: str
) -> None:
    cache.put(ENTRY)
    with pytest.raises(CacheError) as caught:
        cache.put(entry(**changes))
    assert str(caught.value) == (
        f"The capability entry for openrouter qwen/qwen3-8b was not written: {message}."
    )
    assert "SECRET" not in str(caught.value)
    assert cache.path.read_text() == GOLDEN


def test_entry_from_data_names_the_field() -> None:
    data = entry_to_data(ENTRY)
    del data["mode"]
    with pytest.raises(CacheError) as caught:
        entry_from_data(data)
    assert str(caught.value) == "Not a capability entry: $: 'mode' is a required property."


# --- the schema -----------------------------------------------------------------------------


def objects(node: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            found.append((path, node))
        for key, value in node.items():
            found += objects(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += objects(value, f"{path}[{index}]")
    return found


def test_schema_is_valid_and_closed_everywhere() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    # if/then adds a rule to objects defined elsewhere (version 2 requires api); it is no
    # object of its own.
    found = objects({k: v for k, v in SCHEMA.items() if k not in ("if", "then")})
    assert [path for path, _ in found] == [
        "$",
        "$.$defs.entry",
        "$.$defs.entry.properties.rates",
        "$.$defs.entry.properties.strict_mode",
        "$.$defs.entry.properties.knobs",
        "$.$defs.entry.properties.ids",
        "$.$defs.entry.properties.reasoning",
        "$.$defs.entry.properties.streaming",
        "$.$defs.entry.properties.tokens_per_tool",
    ]
    # tokens_per_tool is a map of the tools' names, each a whole number of tokens.
    assert {path: node.get("additionalProperties") for path, node in found} == {
        **{path: False for path, _ in found},
        "$.$defs.entry.properties.tokens_per_tool": {"type": "integer"},
    }


def test_schema_matches_the_entry_fields() -> None:
    names = [field.name for field in dataclasses.fields(Entry)]
    # The knobs-and-losses section is written flat, under the names apps and CI read.
    at = names.index("knobs_and_losses")
    names[at : at + 1] = list(SECTION)
    assert list(SCHEMA["$defs"]["entry"]["properties"]) == names
    # leaked_as_text, strict_mode, the section and the tools' cost came later: files written
    # before them still read. api came with version 2, which requires it of every entry.
    later = {"leaked_as_text", "strict_mode", "api", *SECTION, "tokens_per_tool", "capacity"}
    assert SCHEMA["$defs"]["entry"]["required"] == [n for n in names if n not in later]
    assert SCHEMA["then"] == {"properties": {"entries": {"items": {"required": ["api"]}}}}
    assert SCHEMA["$defs"]["entry"]["properties"]["api"]["enum"] == [a.value for a in ApiFamily]


def test_an_entry_written_before_leaks_were_recorded_reads_as_none_leaked() -> None:
    data = entry_to_data(entry(leaked_as_text=("hermes",)))
    assert entry_from_data(data).leaked_as_text == ("hermes",)
    del data["leaked_as_text"]
    assert entry_from_data(data).leaked_as_text == ()


def test_strict_mode_round_trips_and_reads_as_not_tried_when_absent() -> None:
    trial = {"accepted": ("array-root",), "refused": ("open-object", "ref-defs")}
    data = entry_to_data(entry(strict_mode=trial))
    assert data["strict_mode"] == {
        "accepted": ["array-root"],
        "refused": ["open-object", "ref-defs"],
    }
    assert entry_from_data(data).strict_mode == trial
    del data["strict_mode"]
    assert entry_from_data(data).strict_mode is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param({"accepted": []}, "'refused' is a required property", id="a-list-missing"),
        pytest.param(
            {"accepted": [], "refused": [], "maybe": []},
            "Additional properties are not allowed ('maybe' was unexpected)",
            id="an-unknown-list",
        ),
        pytest.param(
            {"accepted": "x", "refused": []}, "'x' is not of type 'array'", id="not-a-list"
        ),
    ],
)
def test_a_broken_strict_mode_names_its_field(value: Any, message: str) -> None:
    data = entry_to_data(ENTRY)
    data["strict_mode"] = value
    with pytest.raises(CacheError) as caught:
        entry_from_data(data)
    assert message in str(caught.value) and "strict_mode" in str(caught.value)


def _version_1(entries: list[Entry]) -> str:
    """The file as conchcheck wrote it before entries named their API."""
    lines = render(entries).replace("schema_version: 4", "schema_version: 1").splitlines(True)
    return "".join(line for line in lines if not line.startswith("    api: "))


LLAMA = "http://127.0.0.1:8080/v1"
OLD = [
    ENTRY,
    entry(provider="anthropic", model="claude-x", endpoint="https://api.anthropic.com/v1",
          api=ApiFamily.ANTHROPIC),
    entry(provider="llamacpp", model="local", endpoint=LLAMA, api=ApiFamily.RESPONSES,
          strict_mode={"accepted": ("baseline",), "refused": ()}),
    entry(provider="my-server", model="m", endpoint="http://127.0.0.1:9000/v1"),
]  # fmt: skip


def test_a_version_1_file_reads_each_entry_in_its_api(cache: CapabilityFile) -> None:
    cache.path.parent.mkdir()
    text = _version_1(OLD)
    assert "api:" not in text and "\nschema_version: 1\nentries:\n" in text
    cache.path.write_text(text)
    # The provider's own API, and the Responses API where strict mode was tried (only its
    # probe tries it); a server the registry doesn't know speaks the chat API.
    assert [(e.provider, e.api) for e in cache.entries()] == [
        ("anthropic", ApiFamily.ANTHROPIC),
        ("llamacpp", ApiFamily.RESPONSES),
        ("my-server", ApiFamily.OPENAI),
        ("openrouter", ApiFamily.OPENAI),
    ]
    assert cache.entries() == sorted(OLD, key=lambda e: e.key)
    # The chat API of the same server is another entry; the file is written as version 3.
    chat = entry(provider="llamacpp", model="local", endpoint=LLAMA)
    cache.put(chat)
    assert cache.entries() == sorted([*OLD, chat], key=lambda e: e.key)
    assert cache.path.read_text() == render([*OLD, chat])
    assert cache.path.read_text().count("    api: ") == 5


def test_a_second_api_of_one_server_is_put_beside_the_first(cache: CapabilityFile) -> None:
    chat = entry(provider="llamacpp", model="local", endpoint=LLAMA)
    messages = entry(provider="llamacpp", model="local", endpoint=LLAMA, api=ApiFamily.ANTHROPIC,
                     mode="words")  # fmt: skip
    cache.put(chat)
    cache.put(messages)
    assert cache.entries() == [messages, chat]
    assert cache.get("llamacpp", "local", LLAMA, ApiFamily.OPENAI) == chat
    assert cache.get("llamacpp", "local", LLAMA, ApiFamily.RESPONSES) is None
    assert cache.remove("llamacpp", "local", api=ApiFamily.ANTHROPIC) == 1
    assert cache.entries() == [chat]


def test_what_is_written_validates(cache: CapabilityFile) -> None:
    cache.put(ENTRY)
    cache.put(entry(provider="ollama", dialect=None, context_window=None, tools_declared=None))
    Draft202012Validator(SCHEMA).validate(yaml.safe_load(cache.path.read_text()))


# --- locking and concurrency ----------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl")
def test_a_held_lock_times_out(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "capabilities.yaml"
    fd = os.open(tmp_path / "capabilities.yaml.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(CacheError) as caught:
            CapabilityFile(path, lock_timeout=0.2).put(ENTRY)
        assert 0.2 <= time.monotonic() - started < 5
        assert (
            str(caught.value)
            == f"Another conchcheck holds the lock on {path}; gave up after 0.2 s."
        )
        assert not path.exists()
    finally:
        os.close(fd)
    CapabilityFile(path, lock_timeout=0.2).put(ENTRY)
    assert path.read_text() == GOLDEN


WRITER = """
import dataclasses, json, sys, time
from pathlib import Path
from conchcheck.capabilities import CapabilityFile, entry_from_data

path, go, worker, base = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
entry = entry_from_data(json.loads(base))
cache = CapabilityFile(path)
(go.parent / f"ready-{worker}").touch()
while not go.exists():
    time.sleep(0.005)
for n in range(10):
    cache.put(dataclasses.replace(entry, model=f"w{worker}/m{n}"))
"""


def test_eight_processes_lose_nothing(tmp_path: Path) -> None:
    path, go = tmp_path / "capabilities.yaml", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = json.dumps(entry_to_data(ENTRY))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(go), str(worker), base],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(8)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # all eight start writing together
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    models = sorted(e.model for e in CapabilityFile(path).entries())
    assert models == sorted(f"w{w}/m{n}" for w in range(8) for n in range(10))
    Draft202012Validator(SCHEMA).validate(yaml.safe_load(path.read_text()))
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("ready-"))
    assert left == ["capabilities.yaml", "capabilities.yaml.lock", "go"]  # no temp files


# -- check(): what a probe asks before its first request ------------------------------------


@pytest.mark.parametrize(
    ("setup", "given", "message"),
    [
        pytest.param("", "caps.yaml", None, id="missing-is-fine"),
        pytest.param("valid", "caps.yaml", None, id="valid"),
        pytest.param(
            "corrupt",
            "caps.yaml",
            "{tmp}/caps.yaml:3: $: not YAML: expected the node content, but found '<stream end>' (column 1).",
            id="corrupt",
        ),
        pytest.param(
            "aliases",
            "caps.yaml",
            "{tmp}/caps.yaml:1: $.a: YAML anchors and aliases (&name, *name) are not allowed; write the value out.",
            id="alias",
        ),
        pytest.param("folder", "caps.yaml", "{tmp}/caps.yaml: is a folder.", id="a-folder"),
        pytest.param(
            "file",
            "file/caps.yaml",
            "{tmp}/file/caps.yaml: cannot be read (Not a directory).",
            id="under-a-file",
        ),
        pytest.param("", "new/caps.yaml", None, id="its-folder-is-made-later"),
    ],
)
def test_check_before_a_probe(tmp_path: Path, setup: str, given: str, message: str | None) -> None:
    target = tmp_path / "caps.yaml"
    if setup == "valid":
        CapabilityFile(target).put(ENTRY)
    elif setup == "corrupt":
        target.write_text("schema_version: 1\nentries: [\n")
    elif setup == "aliases":
        target.write_text("a: &a [1]\nb: [*a, *a]\n")
    elif setup == "folder":
        target.mkdir()
    elif setup == "file":
        (tmp_path / "file").write_text("x")
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    if message is None:
        CapabilityFile(tmp_path / given).check()
    else:
        with pytest.raises(CacheError) as caught:
            CapabilityFile(tmp_path / given).check()
        assert str(caught.value) == message.replace("{tmp}", str(tmp_path))
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before  # no lock file


def test_check_refuses_a_folder_it_could_not_write(tmp_path: Path, monkeypatch) -> None:
    import conchcheck.files as files

    # Root writes through permission bits: the kernel's answer is stood in for.
    monkeypatch.setattr(files.os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(CacheError) as caught:
        CapabilityFile(tmp_path / "caps.yaml").check()
    assert str(caught.value) == (
        f"{tmp_path}: is not writable, so the capability file {tmp_path / 'caps.yaml'} can't be written."
    )


def test_a_capability_file_past_the_limit_is_refused(tmp_path: Path) -> None:
    from conchcheck.files import MAX_FILE_BYTES

    target = tmp_path / "caps.yaml"
    target.write_text("#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(CacheError) as caught:
        CapabilityFile(target).entries()
    assert str(caught.value) == f"{target}: larger than 16 MB, the most conchcheck reads."


# --- knobs and losses (version 3) -------------------------------------------------------------

MEASURED = KnobsAndLosses(
    knobs=Knobs(
        tool_choice_none=KnobState.HONOURED,
        tool_choice_required=KnobState.IGNORED,
        tool_choice_named=KnobState.REFUSED,
        parallel_false=KnobState.UNTESTED,
        strict=KnobState.FAILS_OPEN,
    ),
    ids=Ids(True, True, False, None, "call_<24 alphanumerics>"),
    finish_reason=Agreement.WRONG,
    fidelity=Fidelity.ALTERED,
    fidelity_changes=(FidelityChange.NEWLINES_STRIPPED, FidelityChange.NUMBER_ROUNDED),
    reasoning=Reasoning(seen=True, swallowed=2),
    streaming=Streaming(agree=9, disagree=2),
)
SECTION_TEXT = """\
    knobs:
      tool_choice_none: honoured
      tool_choice_required: ignored
      tool_choice_named: refused
      parallel_false: untested
      strict: fails_open
    ids:
      present: true
      unique_in_reply: true
      unique_across_rounds: false
      round_trip: null
      format: call_<24 alphanumerics>
    finish_reason: wrong
    fidelity: altered
    fidelity_changes:
      - newlines_stripped
      - number_rounded
    reasoning:
      seen: true
      swallowed: 2
    streaming:
      agree: 9
      disagree: 2
"""


def test_the_section_is_written_flat_under_the_names_apps_read(cache: CapabilityFile) -> None:
    cache.put(entry(knobs_and_losses=MEASURED))
    assert cache.path.read_text() == GOLDEN + SECTION_TEXT
    assert cache.entries() == [entry(knobs_and_losses=MEASURED)]


def test_an_exact_fidelity_writes_an_empty_list_of_changes() -> None:
    exact = dataclasses.replace(MEASURED, fidelity=Fidelity.EXACT, fidelity_changes=())
    data = entry_to_data(entry(knobs_and_losses=exact))
    assert (data["fidelity"], data["fidelity_changes"]) == ("exact", [])
    assert entry_from_data(data).knobs_and_losses == exact


def test_a_version_2_entry_reads_as_not_measured(cache: CapabilityFile) -> None:
    cache.path.parent.mkdir()
    cache.path.write_text(GOLDEN.replace("schema_version: 4", "schema_version: 2"))
    assert cache.entries() == [ENTRY] and ENTRY.knobs_and_losses is None


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("knobs", {"tool_choice_none": "fine"}, "knobs"),
        ("fidelity", "perfect", "fidelity"),
        ("reasoning", {"seen": True, "swallowed": -1}, "reasoning.swallowed"),
        ("ids", {"present": "yes"}, "ids"),
    ],
    ids=["unknown-knob-state", "unknown-fidelity", "negative-swallowed", "ids-incomplete"],
)
def test_a_broken_section_field_is_named(field: str, value: Any, message: str) -> None:
    data = entry_to_data(entry(knobs_and_losses=MEASURED))
    data[field] = value
    with pytest.raises(CacheError) as caught:
        entry_from_data(data)
    assert message in str(caught.value)
