"""One server's three APIs at one base URL (llama-server's chat, Responses and Messages): an
endpoint is provider + model + base URL + API family in results, the capability file,
``--use-cache``, ``conchcheck report``, ``report merge`` and ``conchcheck check``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conchcheck.capabilities import CapabilityFile
from conchcheck.cli import app
from conchcheck.gate.gatekeeper import check
from conchcheck.results.reader import read_results
from conchcheck.results.versions import api_of
from conchcheck.wire import adapters
from conchcheck.wire.chat import ChatRequest, Message, Role
from conchcheck.wire.providers import ApiFamily
from tests.emulators.one_server import APIS, TARGET, ThreeApis

runner = CliRunner()
FEATURES = """\
| target | api | dialect | mode | native | native clean | words | words clean | leaked calls | streaming | parallel | forced choice | round trip | refusals | schema cases |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| llamacpp:local | anthropic | ■ permissive | ■ native | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 0 | ■ 1/1 agree | ○ — | ○ — | ○ — | ■ none | ■ 1/1 in permissive |
| llamacpp:local | openai | ■ permissive | ■ native | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 0 | ■ 1/1 agree | ○ — | ○ — | ○ — | ■ none | ■ 1/1 in permissive |
| llamacpp:local | responses | ■ permissive | ■ native | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 1/1 100% | ■ 0 | ■ 1/1 agree | ○ — | ○ — | ○ — | ■ none | ■ 1/1 in permissive |
"""


def folders(three_apis: ThreeApis) -> list[str]:
    return [str(three_apis.results[api].parent) for api in APIS]


# --- results and the capability file --------------------------------------------------------


def test_each_result_names_its_api(three_apis: ThreeApis) -> None:
    for api in APIS:
        result = read_results(three_apis.results[api])
        assert (result.target, result.endpoint, result.api) == (
            TARGET,
            three_apis.url,
            ApiFamily(api),
        )


def test_probing_a_second_api_adds_an_entry_beside_the_first(three_apis: ThreeApis) -> None:
    assert three_apis.held == [
        ["openai"],
        ["openai", "responses"],
        ["anthropic", "openai", "responses"],
    ]
    entries = CapabilityFile(three_apis.cache).entries()
    assert {(e.provider, e.model, e.endpoint) for e in entries} == {
        ("llamacpp", "local", three_apis.url)
    }
    # Only the Responses API has strict mode: each entry is its own API's measurement.
    assert [(e.api.value, e.strict_mode is not None) for e in entries] == [
        ("anthropic", False),
        ("openai", False),
        ("responses", True),
    ]


@pytest.mark.parametrize(
    ("api", "code", "said"),
    [
        pytest.param(None, 0, "Cached: llamacpp:local (openai) — dialect permissive, mode native",
                     id="the-chat-api-answers-from-its-own-entry"),
        pytest.param("anthropic", 3, "The target can't be probed: connect: The request failed",
                     id="the-messages-api-is-probed-not-answered-by-the-chat-entry"),
        pytest.param("responses", 3, "The target can't be probed: connect: The request failed",
                     id="the-responses-api-is-probed-not-answered-by-the-chat-entry"),
    ],
)  # fmt: skip
def test_use_cache_answers_only_from_its_own_apis_entry_while_the_server_is_down(
    three_apis: ThreeApis, tmp_path: Path, api: str | None, code: int, said: str
) -> None:
    cache = tmp_path / "capabilities.yaml"
    shutil.copy(three_apis.cache, cache)
    for other in ("responses", "anthropic"):
        done = runner.invoke(app, ["cache", "clear", TARGET, "--api", other, "--cache", str(cache)])
        assert done.stdout == f"Removed 1 entry for {TARGET} ({other}).\n"
    assert [e.api for e in CapabilityFile(cache).entries()] == [ApiFamily.OPENAI]
    chosen = ["--api", api] if api else []
    done = runner.invoke(
        app,
        ["probe", TARGET, "--base-url", three_apis.url, *chosen, "--use-cache", "--cache",
         str(cache), "--matrix", "default", "--out", str(tmp_path / "out"), "--quiet"],
    )  # fmt: skip
    assert done.exit_code == code, done.output
    assert said in done.output


def test_cache_show_takes_the_api(three_apis: ThreeApis) -> None:
    cache = ["--cache", str(three_apis.cache), "--base-url", three_apis.url]
    shown = runner.invoke(app, ["cache", "show", TARGET, *cache, "--api", "responses"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["api"] == "responses"
    default = runner.invoke(app, ["cache", "show", TARGET, *cache])
    assert json.loads(default.stdout)["api"] == "openai"
    listed = runner.invoke(app, ["cache", "list", "--json", "--cache", str(three_apis.cache)])
    assert [e["api"] for e in json.loads(listed.stdout)] == ["anthropic", "openai", "responses"]


# --- results files written before results named their API ----------------------------------


def test_a_version_2_file_reads_the_api_its_requests_went_to(
    three_apis: ThreeApis, tmp_path: Path
) -> None:
    for api in APIS:
        data = json.loads(three_apis.results[api].read_text())
        del data["api"]
        data["schema_version"] = 2
        path = tmp_path / api / "results.json"
        path.parent.mkdir()
        path.write_text(json.dumps(data))
        assert read_results(path).api == ApiFamily(api)


def _request(api: ApiFamily, stream: bool) -> str:
    ask = ChatRequest("org/model:1", (Message(Role.USER, "hi"),), stream=stream)
    return adapters()[api]().build("http://127.0.0.1:8080/v1", ask, None).url


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("api", list(ApiFamily), ids=[a.value for a in ApiFamily])
def test_each_adapters_request_names_its_api_in_an_old_file(api: ApiFamily, stream: bool) -> None:
    # The paths versions.py knows are the paths the adapters post to.
    cell = {"request": {"method": "POST", "url": _request(api, stream)}}
    data = {"provider": "vllm", "endpoint": "http://127.0.0.1:8080/v1", "cells": [cell]}
    assert api_of(data) is api


@pytest.mark.parametrize(
    ("provider", "cells", "api"),
    [
        pytest.param("anthropic", [], ApiFamily.ANTHROPIC, id="no-request-the-providers-own"),
        pytest.param("my-server", [], ApiFamily.OPENAI, id="no-request-an-unknown-server-openai"),
        pytest.param(
            "llamacpp",
            [{"request": {"method": "GET", "url": "http://127.0.0.1:8080/props"}},
             {"request": {"method": "POST", "url": "http://127.0.0.1:8080/v1/messages"}}],
            ApiFamily.ANTHROPIC,
            id="a-catalogue-look-up-is-no-chat-request",
        ),
        pytest.param(
            "llamacpp",
            [{"request": {"method": "POST", "url": "http://elsewhere:8080/v1/messages"}}],
            ApiFamily.OPENAI,
            id="a-request-to-another-endpoint-says-nothing",
        ),
    ],
)  # fmt: skip
def test_an_old_file_without_a_chat_request(
    provider: str, cells: list[object], api: ApiFamily
) -> None:
    data = {"provider": provider, "endpoint": "http://127.0.0.1:8080/v1", "cells": cells}
    assert api_of(data) is api


# --- conchcheck report, report merge, conchcheck check ---------------------------------------


def test_report_has_a_row_for_each_api(three_apis: ThreeApis, tmp_path: Path) -> None:
    done = runner.invoke(app, ["report", *folders(three_apis), "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "compatibility.md").read_text()
    assert "### Features\n\n" + FEATURES + "\n" in text
    assert (
        "| target | api | baseline |\n|---|---|---|\n"
        "| llamacpp:local | anthropic | ■ permissive |\n"
        "| llamacpp:local | openai | ■ permissive |\n"
        "| llamacpp:local | responses | ■ permissive |\n"
    ) in text
    assert sorted(p.name for p in (tmp_path / "badges").iterdir()) == [
        "llamacpp-local-anthropic.svg", "llamacpp-local-openai.svg", "llamacpp-local-responses.svg",
    ]  # fmt: skip
    page = (tmp_path / "compatibility.html").read_text()
    # One row in the features table, one in the knobs table, one in the schema cases' table.
    assert page.count(f'<td title="{three_apis.url}">responses</td>') == 3


def test_merge_keeps_each_api(three_apis: ThreeApis, tmp_path: Path) -> None:
    done = runner.invoke(app, ["report", "merge", *folders(three_apis), "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    index = json.loads((tmp_path / "index.json").read_text())
    assert [(t["target"], t["api"], t["results"]) for t in index["targets"]] == [
        (TARGET, "anthropic", "llamacpp-local-anthropic/results.json"),
        (TARGET, "openai", "llamacpp-local-openai/results.json"),
        (TARGET, "responses", "llamacpp-local-responses/results.json"),
    ]


def test_the_same_api_twice_is_still_refused(three_apis: ThreeApis, tmp_path: Path) -> None:
    twice = tmp_path / "twice" / "results.json"
    twice.parent.mkdir()
    shutil.copy(three_apis.results["openai"], twice)
    done = runner.invoke(app, ["report", *folders(three_apis), str(twice), "--out",
                               str(tmp_path / "out")])  # fmt: skip
    assert done.exit_code == 2
    assert done.stderr.startswith(
        f"conchcheck: {twice}: target {TARGET} at {three_apis.url} (openai) is also in "
        f"{three_apis.results['openai']}; each target may come once in each API of an endpoint."
    )


def test_check_gates_each_api_on_its_own(three_apis: ThreeApis, tmp_path: Path) -> None:
    expect = tmp_path / "expect.yaml"
    expect.write_text(f'targets:\n  "{TARGET}":\n    mode: native\n')
    runs = folders(three_apis)
    result = check(runs, expect=expect, baseline=runs[:2])
    assert [(c.target, c.name, c.got, c.met) for c in result.checks] == [
        (f"{TARGET} (openai)", "mode", "native", True),
        (f"{TARGET} (responses)", "mode", "native", True),
        (f"{TARGET} (anthropic)", "mode", "native", True),
    ]
    # Each run meets its own API's baseline: only the Messages API is new.
    assert [(c.target, c.what, c.before, c.after) for c in result.changes] == [
        (f"{TARGET} (anthropic)", "target", "absent", "probed")
    ]
