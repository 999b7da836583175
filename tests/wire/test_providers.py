"""The provider registry, targets, and keys."""

from __future__ import annotations

import pytest

from conchcheck.core.dialects import Dialect
from conchcheck.errors import InputError
from conchcheck.wire import adapters
from conchcheck.wire.keys import CredentialsError, Secret, resolve_key, scrub
from conchcheck.wire.providers import PROVIDERS, ApiFamily, is_loopback, parse_target


@pytest.mark.parametrize(
    ("text", "base_url", "provider", "model", "url", "dialect"),
    [
        pytest.param(
            "openrouter:qwen/qwen3-8b",
            None,
            "openrouter",
            "qwen/qwen3-8b",
            "https://openrouter.ai/api/v1",
            Dialect.PERMISSIVE,
            id="openrouter",
        ),
        pytest.param(
            "openrouter:google/gemini-2.5-flash",
            None,
            "openrouter",
            "google/gemini-2.5-flash",
            "https://openrouter.ai/api/v1",
            Dialect.GEMINI,
            id="openrouter-google-gets-gemini",
        ),
        pytest.param(
            "ollama:qwen3:4b",
            None,
            "ollama",
            "qwen3:4b",
            "http://127.0.0.1:11434",
            Dialect.PERMISSIVE,
            id="model-with-colon",
        ),
        pytest.param(
            "anthropic:claude-x",
            None,
            "anthropic",
            "claude-x",
            "https://api.anthropic.com/v1",
            Dialect.ANTHROPIC,
            id="anthropic",
        ),
        pytest.param(
            "gemini:gemini-2.5-flash",
            None,
            "gemini",
            "gemini-2.5-flash",
            "https://generativelanguage.googleapis.com/v1beta",
            Dialect.GEMINI,
            id="gemini",
        ),
        pytest.param(
            "llamacpp:local",
            "http://127.0.0.1:9999/v1/",
            "llamacpp",
            "local",
            "http://127.0.0.1:9999/v1",
            Dialect.PERMISSIVE,
            id="base-url-override",
        ),
        pytest.param(
            "myserver:m",
            "https://llm.example/v1",
            "myserver",
            "m",
            "https://llm.example/v1",
            Dialect.PERMISSIVE,
            id="any-openai-compatible-server",
        ),
    ],
)
def test_parse_target(
    text: str, base_url: str | None, provider: str, model: str, url: str, dialect: Dialect
) -> None:
    target = parse_target(text, base_url=base_url)
    assert (target.provider.name, target.model, target.base_url, target.dialect, target.label) == (
        provider,
        model,
        url,
        dialect,
        text,
    )


@pytest.mark.parametrize(
    ("text", "base_url", "message"),
    [
        pytest.param(
            "openrouter",
            None,
            "The target 'openrouter' is not written provider:model.",
            id="no-model",
        ),
        pytest.param(
            "nope:m",
            None,
            "Unknown provider 'nope' in 'nope:m'. Known providers: " + ", ".join(PROVIDERS) + ".",
            id="unknown-provider",
        ),
        pytest.param(
            "x:m", "ftp://h", "The base URL 'ftp://h' is not an http(s) URL.", id="bad-base-url"
        ),
    ],
)
def test_bad_targets(text: str, base_url: str | None, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_target(text, base_url=base_url)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost/v1", True),
        ("http://[::1]:1/", True),
        ("http://127.5.0.1/", True),
        ("http://10.0.0.1/", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_is_loopback(url: str, loopback: bool) -> None:
    assert is_loopback(url) == loopback


def test_keys_come_from_the_provider_variable_or_the_named_one() -> None:
    openai = PROVIDERS["openai"]
    assert resolve_key(openai, environ={"OPENAI_API_KEY": "sk-a"}) == Secret("sk-a")
    assert resolve_key(
        openai, api_key_env="MY_KEY", environ={"MY_KEY": "sk-b", "OPENAI_API_KEY": "sk-a"}
    ) == Secret("sk-b")
    assert resolve_key(PROVIDERS["ollama"], environ={}) is None
    with pytest.raises(CredentialsError) as caught:
        resolve_key(openai, environ={"OPENAI_API_KEY": " "})
    assert (str(caught.value), caught.value.exit_code) == (
        "No API key for provider 'openai': $OPENAI_API_KEY is not set.",
        3,
    )


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        pytest.param("key=MYSECRETVALUE123 ok", "key=[redacted] ok", id="our-key-anywhere"),
        pytest.param(
            "Incorrect API key provided: sk-proj-abc***********xyz1.",
            "Incorrect API key provided: [redacted].",
            id="openai-masked-echo",
        ),
        pytest.param(
            "bad key AIzaSyA1234567890abcdefghij", "bad key [redacted]", id="google-key-shape"
        ),
        pytest.param("short sk-1 is fine", "short sk-1 is fine", id="not-a-key"),
    ],
)
def test_scrub(text: str, clean: str) -> None:
    assert scrub(text, (Secret("MYSECRETVALUE123"),)) == clean


def test_every_api_family_has_one_adapter() -> None:
    assert set(adapters()) == set(ApiFamily)
    assert all(adapter.api is api for api, adapter in adapters().items())


def test_api_names_another_family_or_is_refused() -> None:
    target = parse_target("vllm:m", api="responses")
    assert target.provider.api is ApiFamily.RESPONSES
    assert parse_target("vllm:m", api="openai").provider.api is ApiFamily.OPENAI
    with pytest.raises(InputError) as caught:
        parse_target("vllm:m", api="grpc")
    assert str(caught.value) == "Unknown API 'grpc'."
    assert caught.value.hint == "Use one of: openai, responses, anthropic, ollama, gemini."
