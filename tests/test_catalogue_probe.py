"""`conchcheck probe PROVIDER:*`: every model a provider's catalogue lists, filtered and
capped, probed as one fleet on loopback emulators; each API family's list read page by page,
bounded; a catalogue that can't be read is exit 3, bad options exit 2, before any probe."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.matrix import load_matrix
from conchcheck.wire.listing import MAX_PAGES, Listing, list_models
from conchcheck.wire.providers import parse_target
from conchcheck.wire.transport import Wire
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler, Received, Response
from tests.emulators.vectors import refusal

Serve = Callable[[Handler], EmulatorServer]
TINY = Path(__file__).parent / "data" / "targets" / "tiny.yaml"
runner = CliRunner()
LISTED = ["qwen3-8b", "llama-3.1-8b", "Qwen2.5-coder", "qwen3-32b", "mistral-small"]


def listing(target: str, server: EmulatorServer, path: str = "") -> Listing:
    async def go() -> Listing:
        async with Wire() as wire:
            found = parse_target(target, base_url=server.url + path)
            return await list_models(wire, found, None)

    return asyncio.run(go())


def sent(received: Received) -> str:
    query = "&".join(f"{k}={v}" for k, values in received.query.items() for v in values)
    return received.path + (f"?{query}" if query else "")


def anthropic_pages(received: Received) -> Response:
    after = received.query.get("after_id", [None])[0]
    pages = {None: (["claude-a", "claude-b"], True), "claude-b": (["claude-c"], False)}
    ids, more = pages[after]
    data = [{"id": i, "type": "model"} for i in ids]
    return Response.json({"data": data, "has_more": more, "last_id": ids[-1]})


def gemini_pages(received: Received) -> Response:
    token = received.query.get("pageToken", [None])[0]
    chat = ["generateContent", "countTokens"]
    if token is None:
        models = [
            {"name": "models/gemini-2.5-flash", "supportedGenerationMethods": chat},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]},
        ]
        return Response.json({"models": models, "nextPageToken": "p2"})
    return Response.json(
        {"models": [{"name": "models/gemma-3", "supportedGenerationMethods": chat}]}
    )


def ollama_tags(received: Received) -> Response:
    return Response.json({"models": [{"name": "qwen3:4b"}, {"name": "llama3.2:3b"}]})


def openai_models(received: Received) -> Response:
    return Response.json({"object": "list", "data": [{"id": "models/gemini-2.5-pro"}, {"id": "x"}]})


def endless(received: Received) -> Response:
    # A cursor that never ends, and a new id every page.
    n = int(received.query.get("after_id", ["0"])[0])
    return Response.json({"data": [{"id": str(n + 1)}], "has_more": True, "last_id": str(n + 1)})


def looping(received: Received) -> Response:
    # Hands back its own cursor: the same page for ever.
    return Response.json({"data": [{"id": "only"}], "has_more": True, "last_id": "only"})


@pytest.mark.parametrize(
    ("target", "handler", "path", "models", "requests"),
    [
        pytest.param(
            "anthropic:*", anthropic_pages, "/v1", ("claude-a", "claude-b", "claude-c"),
            ["/v1/models?limit=1000", "/v1/models?limit=1000&after_id=claude-b"],
            id="anthropic-pages-by-after-id",
        ),
        pytest.param(
            "gemini:*", gemini_pages, "/v1beta", ("gemini-2.5-flash", "gemma-3"),
            ["/v1beta/models?pageSize=1000", "/v1beta/models?pageSize=1000&pageToken=p2"],
            id="gemini-pages-by-token-and-only-generate-content",
        ),
        pytest.param(
            "ollama:*", ollama_tags, "", ("qwen3:4b", "llama3.2:3b"), ["/api/tags"],
            id="ollama-native-api-tags",
        ),
        pytest.param(
            "gemini-openai:*", openai_models, "/v1beta/openai", ("gemini-2.5-pro", "x"),
            ["/v1beta/openai/models"],
            id="openai-shape-with-gemini-models-prefix",
        ),
        pytest.param(
            "anthropic:*", looping, "/v1", ("only",),
            ["/v1/models?limit=1000", "/v1/models?limit=1000&after_id=only"],
            id="a-cursor-that-loops-ends-when-nothing-is-new",
        ),
    ],
)  # fmt: skip
def test_each_family_lists_its_models(
    serve: Serve,
    target: str,
    handler: Handler,
    path: str,
    models: tuple[str, ...],
    requests: list[str],
) -> None:
    server = serve(handler)
    found = listing(target, server, path)
    assert (found.models, found.error, found.cut) == (models, None, False)
    assert [sent(r) for r in server.received] == requests


def test_a_list_that_never_ends_is_cut_at_its_page_limit(serve: Serve) -> None:
    server = serve(endless)
    found = listing("anthropic:*", server, "/v1")
    assert found.cut and len(found.models) == MAX_PAGES
    assert len(server.received) == MAX_PAGES


def test_probe_a_catalogue_filtered_and_capped(serve: Serve, tmp_path: Path) -> None:
    emulator = OpenAIEmulator(oracle(load_matrix(str(TINY))))
    emulator.catalogue = [{"id": m} for m in LISTED]
    server = serve(emulator)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["probe", "vllm:*", "--base-url", f"{server.url}/v1", "--matrix", str(TINY),
         "--filter", "QWEN", "--max-models", "2", "--out", str(out), "--quiet",
         "--cache", str(tmp_path / "cache.yaml")],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"vllm:*: GET {server.url}/v1/models listed 5 models, 3 matching 'QWEN'; probing 2,"
        " 1 left out by --max-models 2.\n"
    )
    index = json.loads((out / "index.json").read_text())
    assert [t["target"] for t in index["targets"]] == ["vllm:qwen3-8b", "vllm:Qwen2.5-coder"]
    assert [t["exit_code"] for t in index["targets"]] == [0, 0]
    assert index["targets_file"] == f"vllm:* (GET {server.url}/v1/models)"
    probed = {r.json()["model"] for r in server.received if r.method == "POST"}
    assert probed == {"qwen3-8b", "Qwen2.5-coder"}


def test_a_catalogue_that_cant_be_read_is_exit_3(serve: Serve, tmp_path: Path) -> None:
    server = serve(lambda received: Response.json({"error": {"message": "Unauthorized"}}, 401))
    result = runner.invoke(
        app, ["probe", "vllm:*", "--base-url", f"{server.url}/v1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 3
    assert result.stderr.startswith(
        f"conchcheck: vllm:*: the catalogue can't be read (GET {server.url}/v1/models):"
    )
    assert [r.method for r in server.received] == ["GET"]
    assert not (tmp_path / "index.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["vllm:m", "--filter", "q"],
            "--filter: only with a whole catalogue, PROVIDER:*.",
            id="filter-without-a-catalogue",
        ),
        pytest.param(
            ["vllm:m", "--max-models", "3"],
            "--max-models: only with a whole catalogue, PROVIDER:*.",
            id="max-models-without-a-catalogue",
        ),
        pytest.param(
            ["vllm:*", "--resume", "r.json"],
            "--resume: not with PROVIDER:*; it is an option of one model's probe.",
            id="resume-a-catalogue",
        ),
        pytest.param(
            ["vllm:*", "--tools", "t.json"],
            "--tools: not with PROVIDER:*; it is an option of one model's probe.",
            id="own-tools-across-a-catalogue",
        ),
        pytest.param(
            ["vllm:*", "--max-models", "0"],
            "--max-models: 0 is not within 1-1000.",
            id="max-models-zero",
        ),
        pytest.param(
            ["vllm:m", "--upstreams"],
            "--upstreams: vllm:m is not an OpenRouter model; only OpenRouter routes one model"
            " to many providers.",
            id="upstreams-not-openrouter",
        ),
        pytest.param(
            ["openrouter:m", "--upstreams", "--resume", "r.json"],
            "--resume: not with --upstreams.",
            id="resume-upstreams",
        ),
        pytest.param(
            ["openrouter:*", "--upstreams"],
            "--upstreams: not with PROVIDER:*; it is an option of one model's probe.",
            id="upstreams-of-a-catalogue",
        ),
    ],
)
def test_bad_options_are_exit_2_before_any_request(
    serve: Serve, tmp_path: Path, args: list[str], message: str
) -> None:
    server = serve(Upstreams())
    result = CliRunner(env={"OPENROUTER_API_KEY": "sk-or-v1-test"}).invoke(
        app, ["probe", *args, "--base-url", f"{server.url}/v1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"conchcheck: {message}"), result.stderr
    assert server.received == []


def test_nothing_matching_is_exit_2(serve: Serve, tmp_path: Path) -> None:
    emulator = OpenAIEmulator(oracle(load_matrix(str(TINY))))
    emulator.catalogue = [{"id": m} for m in LISTED]
    server = serve(emulator)
    result = runner.invoke(
        app,
        ["probe", "vllm:*", "--base-url", f"{server.url}/v1", "--filter", "gpt",
         "--out", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"conchcheck: vllm:*: GET {server.url}/v1/models listed 5 models, 0 matching 'gpt';"
        " probing 0: nothing to probe."
    )


# --- one OpenRouter model, once per upstream provider ---------------------------------------


ENDPOINTS = {
    "data": {
        "id": "qwen/qwen3-8b",
        "endpoints": [
            # The shape of GET /api/v1/models/{author}/{slug}/endpoints (openrouter.ai/docs,
            # "List all endpoints for a model"): a tag when the provider has variants.
            {"provider_name": "NoTools", "tag": "notools", "supported_parameters": []},
            {"provider_name": "DeepInfra", "tag": "deepinfra/fp8",
             "supported_parameters": ["tools", "tool_choice"]},
            {"provider_name": "Prose", "supported_parameters": ["tools"]},
        ],
    }
}  # fmt: skip


class Upstreams:
    """OpenRouter in front of three upstreams of one model, told apart by provider.only:
    one calls natively, one refuses tools as OpenRouter does, one answers in prose."""

    def __init__(self) -> None:
        matrix = load_matrix(str(TINY))
        self.native = OpenAIEmulator(oracle(matrix))
        self.prose = OpenAIEmulator(oracle(matrix), flavour="llamacpp", template_tools=False)
        self.pinned: list[Any] = []

    def __call__(self, received: Received) -> Response:
        if received.method == "GET":
            if received.path == "/api/v1/models/qwen/qwen3-8b/endpoints":
                return Response.json(ENDPOINTS)
            return Response.json({"error": {"message": "Not Found", "code": 404}}, 404)
        routed = received.json().get("provider")
        self.pinned.append(routed)
        only = (routed or {}).get("only", [None])[0]
        if only == "notools":
            return refusal("openrouter-404-no-endpoints-for-tool-use-is-tools-not-not-found")
        return (self.native if only == "deepinfra/fp8" else self.prose)(received)


def test_each_upstream_pinned_and_the_one_to_pin(serve: Serve, tmp_path: Path) -> None:
    upstreams = Upstreams()
    server = serve(upstreams)
    out, cache = tmp_path / "out", tmp_path / "cache.yaml"
    result = CliRunner(env={"OPENROUTER_API_KEY": "sk-or-v1-test"}).invoke(
        app,
        ["probe", "openrouter:qwen/qwen3-8b", "--upstreams", "--base-url",
         f"{server.url}/api/v1", "--matrix", str(TINY), "--out", str(out),
         "--cache", str(cache), "--checks", "dialect,mode"],
    )  # fmt: skip
    assert result.stderr.startswith(
        f"openrouter:qwen/qwen3-8b: GET {server.url}/api/v1/models/qwen/qwen3-8b/endpoints"
        " lists 3 upstream providers (notools, deepinfra/fp8, Prose); probing each, pinned.\n"
    )
    # Every request to the model named one upstream, and no fallback.
    assert {json.dumps(p, sort_keys=True) for p in upstreams.pinned} == {
        json.dumps({"allow_fallbacks": False, "only": [only]}, sort_keys=True)
        for only in ("notools", "deepinfra/fp8", "Prose")
    }
    index = json.loads((out / "index.json").read_text())
    rows = [(t["upstream"], t["verdict"] and t["verdict"]["mode"]) for t in index["targets"]]
    assert rows == [("notools", "none"), ("deepinfra/fp8", "native"), ("Prose", "words")]
    assert index["pin"] == "deepinfra/fp8"
    assert "Pin deepinfra/fp8: provider: {only: [deepinfra/fp8], allow_fallbacks: false}." in (
        result.stdout.replace("\n", " ")
    )
    assert [t["target"] for t in index["targets"]][1] == "openrouter:qwen/qwen3-8b@deepinfra/fp8"
    assert not cache.exists()  # a pinned upstream never stands for the model
