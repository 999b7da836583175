"""The targets file of ``probe --targets`` (valid, and each way one is wrong, with its exact
line) and the shard of each target (every target in one shard, stable under reordering and
under adding a target)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.errors import InputError
from conchcheck.run.targets import (
    ProviderLimits,
    Shard,
    TargetEntry,
    TargetsError,
    load_targets,
    shard_of,
)
from conchcheck.wire.providers import parse_target


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    return path


def test_a_valid_file_reads_every_field(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("")
    path = write(
        tmp_path,
        """\
providers:
  openrouter: {concurrency: 2, requests_per_minute: 30}
targets:
  - target: openrouter:qwen/qwen3-8b
    api_key_env: MY_KEY
    repeat: 3
  - target: vllm:m
    base_url: http://127.0.0.1:8000/v1/
    matrix: mine.yaml
  - target: ollama:qwen3:4b
    matrix: default
""",
    )
    loaded = load_targets(path)
    assert [(e.identity, e.matrix, e.api_key_env, e.repeat) for e in loaded.entries] == [
        ("openrouter:qwen/qwen3-8b@https://openrouter.ai/api/v1", None, "MY_KEY", 3),
        ("vllm:m@http://127.0.0.1:8000/v1", str(tmp_path / "mine.yaml"), None, None),
        ("ollama:qwen3:4b@http://127.0.0.1:11434", "default", None, None),
    ]
    assert dict(loaded.providers) == {"openrouter": ProviderLimits(2, 30)}
    assert [e.folder for e in loaded.entries][1] == "vllm_m-" + shard_hex(loaded.entries[1])


def test_one_servers_apis_are_three_targets(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
targets:
  - {target: llamacpp:local}
  - {target: llamacpp:local, api: responses}
  - {target: llamacpp:local, api: anthropic}
""",
    )
    loaded = load_targets(path).entries
    url = "http://127.0.0.1:8080/v1"
    # The provider's own API reads as before targets named one: same shard, same folder.
    assert [(e.identity, e.target.provider.api.value) for e in loaded] == [
        (f"llamacpp:local@{url}", "openai"),
        (f"llamacpp:local@{url} (responses)", "responses"),
        (f"llamacpp:local@{url} (anthropic)", "anthropic"),
    ]
    assert [e.folder for e in loaded] == [
        "llamacpp_local-" + shard_hex(loaded[0]),
        "llamacpp_local-responses-" + shard_hex(loaded[1]),
        "llamacpp_local-anthropic-" + shard_hex(loaded[2]),
    ]


def shard_hex(entry: TargetEntry) -> str:
    import hashlib

    return hashlib.sha256(entry.identity.encode()).hexdigest()[:8]


BAD = [
    pytest.param("targets: []\n", ["1: $.targets: expected at least 1 item, got []"],
                 id="no-targets"),
    pytest.param("providers: {}\n", ["1: $: missing 'targets'"], id="targets-missing"),
    pytest.param(
        "targets:\n  - target: vllm:m\n    base_url: http://127.0.0.1:1/v1\n    repeat: 0\n",
        ["4: $.targets[0].repeat: expected at least 1, got 0"],
        id="repeat-below-one",
    ),
    pytest.param(
        "targets:\n  - model: x\n",
        ["2: $.targets[0]: missing 'target'",
         "2: $.targets[0].model: unknown key; expected one of target, base_url, api, "
         "api_key_env, matrix, repeat"],
        id="unknown-key-and-missing-target",
    ),
    pytest.param(
        "targets:\n  - target: nope:x\n",
        ["2: $.targets[0].target: Unknown provider 'nope' in 'nope:x'. Known providers: "
         "openai, openai-responses, anthropic, gemini, gemini-openai, openrouter, ollama, ollama-openai, "
         "llamacpp, vllm, sglang, lmstudio, groq, together, mistral, deepseek, xai"],
        id="unknown-provider",
    ),
    pytest.param(
        "targets:\n  - target: vllm:m\n  - target: vllm:m\n    base_url: http://127.0.0.1:8000/v1/\n",
        ["3: $.targets[1].target: vllm:m@http://127.0.0.1:8000/v1 is listed twice; also at "
         "line 2"],
        id="same-target-twice-trailing-slash-alike",
    ),
    pytest.param(
        "targets:\n  - target: llamacpp:m\n  - {target: llamacpp:m, api: openai}\n",
        ["3: $.targets[1].target: llamacpp:m@http://127.0.0.1:8080/v1 is listed twice; also at "
         "line 2"],
        id="the-providers-own-api-named-is-the-same-target",
    ),
    pytest.param(
        "targets:\n  - {target: llamacpp:m, api: chat}\n",
        ['2: $.targets[0].api: expected one of "openai", "responses", "anthropic", "ollama", '
         '"gemini", got "chat"'],
        id="unknown-api",
    ),
    pytest.param(
        "providers:\n  openruoter: {concurrency: 2}\ntargets:\n  - target: openrouter:m\n",
        ["2: $.providers.openruoter: no target uses provider 'openruoter'; they use openrouter"],
        id="limits-for-a-provider-no-target-uses",
    ),
    pytest.param(
        "providers:\n  vllm: {concurrency: 0, per_minute: 5}\ntargets:\n  - target: vllm:m\n",
        ["2: $.providers.vllm.concurrency: expected at least 1, got 0",
         "2: $.providers.vllm.per_minute: unknown key; expected one of concurrency, "
         "requests_per_minute"],
        id="bad-provider-limits",
    ),
    pytest.param(
        "targets:\n  - &t {target: vllm:m}\n",
        ["2: $.targets[0]: YAML anchors and aliases (&name, *name) are not allowed; write the "
         "value out"],
        id="no-aliases",
    ),
    pytest.param(
        "targets:\n  - target: vllm:m\ntargets: []\n",
        # The last of equal keys is the one read, and the line is its line.
        ["3: $.targets: duplicate key; also at line 1",
         "3: $.targets: expected at least 1 item, got []"],
        id="duplicate-key",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "problems"), BAD)
def test_bad_files_name_each_problem_and_its_line(
    tmp_path: Path, text: str, problems: list[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TargetsError) as caught:
        load_targets(path)
    assert list(caught.value.problems) == [f"{path}:{p}" for p in problems]
    assert str(caught.value) == "; ".join(f"{path}:{p}" for p in problems) + "."


def test_many_problems_are_counted_past_five(tmp_path: Path) -> None:
    path = write(tmp_path, "targets:\n" + "".join("  - repeat: 0\n" for _ in range(3)))
    with pytest.raises(TargetsError) as caught:
        load_targets(path)
    assert len(caught.value.problems) == 6
    assert str(caught.value).endswith("; and 1 more problem.")


SHARDS = [
    pytest.param("1/1", Shard(1, 1), id="one-machine"),
    pytest.param("3/4", Shard(3, 4), id="third-of-four"),
    pytest.param(" 2 / 2 ", Shard(2, 2), id="spaces-around"),
]


@pytest.mark.parametrize(("text", "shard"), SHARDS)
def test_shard_values(text: str, shard: Shard) -> None:
    assert Shard.parse(text) == shard
    assert str(shard) == text.replace(" ", "")


BAD_SHARDS = [
    pytest.param("0/4", "--shard: 0/4 is out of range.", id="index-zero"),
    pytest.param("5/4", "--shard: 5/4 is out of range.", id="index-past-count"),
    pytest.param("1/0", "--shard: 1/0 is out of range.", id="no-shards"),
    pytest.param("1", "--shard: '1' is not written I/N.", id="no-slash"),
    pytest.param("-1/4", "--shard: '-1/4' is not written I/N.", id="negative"),
    pytest.param("a/b", "--shard: 'a/b' is not written I/N.", id="not-numbers"),
    pytest.param("1/2/3", "--shard: '1/2/3' is not written I/N.", id="three-parts"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SHARDS)
def test_bad_shards_are_one_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        Shard.parse(text)
    assert str(caught.value) == message
    assert caught.value.hint == "Write I/N with 1 <= I <= N, for example --shard 1/4."


def entry(model: str) -> TargetEntry:
    return TargetEntry(parse_target(f"vllm:{model}", base_url="http://127.0.0.1:8000/v1"))


MODELS = [f"model-{n}" for n in range(40)]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_every_target_is_in_exactly_one_shard(count: int) -> None:
    entries = [entry(m) for m in MODELS]
    holders = [[i for i in range(1, count + 1) if Shard(i, count).holds(e)] for e in entries]
    assert all(len(h) == 1 for h in holders)
    if count > 1:
        # sha256 spreads 40 targets over every shard (not a promise of balance, a sanity check)
        assert {h[0] for h in holders} == set(range(1, count + 1))


def test_the_assignment_is_pinned() -> None:
    # The assignment is part of the interface: CI shards compared night after night.
    # sha256("vllm:model-0@http://127.0.0.1:8000/v1") mod 3 is 0, so shard 1; and so on.
    assert [shard_of(entry(m).identity, 3) for m in MODELS[:8]] == [1, 3, 1, 3, 3, 3, 3, 1]


def split(entries: list[TargetEntry], count: int) -> dict[str, int]:
    return {
        e.identity: next(i for i in range(1, count + 1) if Shard(i, count).holds(e))
        for e in entries
    }


@settings(max_examples=60, deadline=None)
@given(
    order=st.permutations(MODELS), count=st.integers(1, 8), added=st.text(min_size=1, max_size=20)
)
def test_shards_are_stable_under_reordering_and_adding(
    order: list[str], count: int, added: str
) -> None:
    base = split([entry(m) for m in MODELS], count)
    assert split([entry(m) for m in order], count) == base
    extra = f"added-{added.encode().hex()}"
    grown = split([entry(m) for m in [*order, extra]], count)
    assert {k: v for k, v in grown.items() if k in base} == base
