"""Tests for conchcheck.core.refusals: real provider refusals (tests/data/refusals.yaml) and edge cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

from conchcheck.core.refusals import Refusal, RefusalKind, classify

VECTORS: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "refusals.yaml").read_text(encoding="utf-8")
)
ENTRY_KEYS = {"id", "provider", "endpoint", "status", "headers", "body", "source", "want"}
WANT_FIELDS = (
    "kind",
    "message",
    "code",
    "retry_after",
    "path",
    "tool_index",
    "keyword",
    "failed_generation",
)


def test_vectors_are_well_formed() -> None:
    ids = [entry["id"] for entry in VECTORS]
    assert len(ids) == len(set(ids))
    assert {entry["want"]["kind"] for entry in VECTORS} == {kind.value for kind in RefusalKind}
    for entry in VECTORS:
        assert set(entry) <= ENTRY_KEYS, entry["id"]
        assert set(entry["want"]) <= {*WANT_FIELDS, "retryable"}, entry["id"]
        assert isinstance(entry["want"]["retryable"], bool), entry["id"]
        assert entry["source"], entry["id"]
        if entry["body"].lstrip().startswith(("{", "[")):
            json.loads(entry["body"])  # every JSON body is real wire JSON


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["id"]) for e in VECTORS])
def test_vector(entry: dict[str, Any]) -> None:
    refusal = classify(entry["status"], entry["body"], entry.get("headers"))
    want = entry["want"]
    got = {name: getattr(refusal, name) for name in WANT_FIELDS}
    got["kind"] = refusal.kind.value
    assert got == {name: want.get(name) for name in WANT_FIELDS}
    assert refusal.retryable is want["retryable"]
    assert refusal.status == entry["status"]


# Every keyword the 2020-12 meta-schemas define, and OpenAPI's nullable: a list of the test's own.
JSON_SCHEMA_KEYWORDS: frozenset[str] = frozenset(
    {"nullable"}.union(
        *(
            REGISTRY.contents(uri).get("properties", {})
            for uri in REGISTRY
            if uri.startswith("https://json-schema.org/draft/2020-12/")
        )
    )
)


def named_keywords(message: str) -> list[str]:
    """The JSON Schema keywords a refusal's words name unmistakably.

    A keyword is named when it appears as a token no prose has (``$ref``, camelCase such as
    ``minItems``) or, any keyword, between quotes (``'default'``, ``"not"``, `` `type` ``).
    Not counted: a schema the text quotes whole (``{...}``: it names every keyword in it, so
    none) and OpenAI's ``In context=(...)`` (a place: ``('properties', 'value')``).
    """
    text = re.sub(r"In context=\([^)]*\)", "", message)
    while (stripped := re.sub(r"\{[^{}]*\}", " ", text)) != text:
        text = stripped
    tokens = re.findall(r"(?<![\w$])(\$?[A-Za-z]\w*)(?!\w)", text)
    quoted = re.findall(r"['\"`](\$?[A-Za-z]\w*)['\"`]", text)
    return [
        word
        for word in tokens
        if word in JSON_SCHEMA_KEYWORDS and (word.startswith("$") or not word.islower())
    ] + [word for word in quoted if word in JSON_SCHEMA_KEYWORDS]


def test_every_schema_refusal_that_names_a_keyword_yields_one() -> None:
    naming = []
    for entry in VECTORS:
        refusal = classify(entry["status"], entry["body"], entry.get("headers"))
        if refusal.kind is RefusalKind.SCHEMA and named_keywords(refusal.message):
            naming.append(entry["id"])
            assert refusal.keyword is not None, (entry["id"], named_keywords(refusal.message))
    assert len(naming) >= 30  # the property is about many phrasings, not a handful


@pytest.mark.parametrize(
    ("message", "path", "keyword"),
    [
        # The segment after "properties" is a property's name, even when it is "type".
        pytest.param(
            "JSON schema error at #/properties/type: minItems must be a non-negative integer",
            "#/properties/type",
            "minItems",
            id="property-named-type-is-not-the-keyword",
        ),
        pytest.param(
            "JSON schema error at #/properties/format: schema must be an object",
            "#/properties/format",
            None,
            id="property-named-format-names-nothing",
        ),
        pytest.param(
            "JSON schema error at #/properties/a/not: must not be empty",
            "#/properties/a/not",
            "not",
            id="keyword-ending-a-pointer-is-the-keyword",
        ),
    ],
)
def test_a_path_names_a_keyword_only_outside_properties(
    message: str, path: str, keyword: str | None
) -> None:
    body = {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
    refusal = classify(400, json.dumps(body))
    assert (refusal.kind, refusal.path, refusal.keyword) == (RefusalKind.SCHEMA, path, keyword)


GROQ_429 = '{"error":{"message":"Rate limit reached. Please try again in 7.5s.","code":"rate_limit_exceeded"}}'


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [
        pytest.param({"retry-after": "12"}, 12.0, id="retry-after-seconds"),
        pytest.param({"Retry-After": "12"}, 12.0, id="retry-after-title-case"),
        pytest.param({"RETRY-AFTER": "1.5"}, 1.5, id="retry-after-upper-case-decimal"),
        pytest.param({"retry-after-ms": "250"}, 0.25, id="retry-after-ms"),
        pytest.param({"Retry-After-Ms": "250", "retry-after": "3"}, 0.25, id="ms-beats-seconds"),
        # An HTTP-date needs a clock to become a wait; the module reads none, so the text decides.
        pytest.param(
            {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 7.5, id="http-date-is-ignored"
        ),
        pytest.param({"retry-after": "-3"}, 7.5, id="negative-header-is-ignored"),
        pytest.param({"retry-after": "inf"}, 7.5, id="inf-header-is-ignored"),
        pytest.param(None, 7.5, id="no-header-message-wait"),
    ],
)
def test_retry_after_headers(headers: dict[str, str] | None, retry_after: float) -> None:
    refusal = classify(429, GROQ_429, headers)
    assert refusal.kind is RefusalKind.RATE_LIMIT
    assert refusal.retry_after == retry_after


def _gemini_retry(delay: object) -> str:
    info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
    error = {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}
    return json.dumps({"error": {**error, "details": [info]}})


@pytest.mark.parametrize(
    ("body", "retry_after"),
    [
        pytest.param(_gemini_retry("37s"), 37.0, id="gemini-retryinfo-whole-seconds"),
        pytest.param(_gemini_retry("1.5s"), 1.5, id="gemini-retryinfo-fraction"),
        pytest.param(_gemini_retry(37), None, id="gemini-retryinfo-not-a-string"),
        pytest.param(_gemini_retry("soon"), None, id="gemini-retryinfo-unreadable"),
        pytest.param("Please try again in 50.597142857s.", 50.597142857, id="text-seconds"),
        pytest.param("Please try again in 644ms.", 0.644, id="text-milliseconds"),
        pytest.param("Please try again in 1m30s.", 90.0, id="text-minutes-and-seconds"),
        pytest.param("Please try again in 2h0m0s.", 7200.0, id="text-hours"),
        pytest.param("Please retry in 38.922534355s.", 38.922534355, id="text-retry-in"),
        pytest.param("Rate limited, try again in 20 seconds", 20.0, id="text-seconds-word"),
        pytest.param("Rate limit reached. Please try again later.", None, id="text-no-number"),
    ],
)
def test_retry_after_from_body(body: str, retry_after: float | None) -> None:
    refusal = classify(429, body)
    assert refusal.kind is RefusalKind.RATE_LIMIT
    assert refusal.retry_after == retry_after


@pytest.mark.parametrize(
    ("headers", "retryable"),
    [
        pytest.param({"x-should-retry": "false"}, False, id="lower-case-false"),
        pytest.param({"X-Should-Retry": "FALSE"}, False, id="any-case-false"),
        pytest.param({"x-should-retry": "true"}, True, id="true-keeps-kind-rule"),
        pytest.param({}, True, id="absent"),
    ],
)
def test_x_should_retry_header(headers: dict[str, str], retryable: bool) -> None:
    body = '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}'
    refusal = classify(500, body, headers)
    assert refusal.kind is RefusalKind.OTHER
    assert refusal.retryable is retryable


def test_x_should_retry_true_does_not_make_a_quota_retryable() -> None:
    body = '{"error":{"message":"x","type":"insufficient_quota","code":"insufficient_quota"}}'
    refusal = classify(429, body, {"x-should-retry": "true"})
    assert (refusal.kind, refusal.should_retry, refusal.retryable) == (
        RefusalKind.QUOTA,
        True,
        False,
    )


@pytest.mark.parametrize(
    ("kind", "status", "retryable"),
    [
        pytest.param(RefusalKind.RATE_LIMIT, 429, True, id="rate-limit"),
        pytest.param(RefusalKind.QUOTA, 429, False, id="quota"),
        pytest.param(RefusalKind.SCHEMA, 400, False, id="schema"),
        pytest.param(RefusalKind.TOOLS, 500, False, id="tools-even-on-500"),
        pytest.param(RefusalKind.AUTH, 401, False, id="auth"),
        pytest.param(RefusalKind.CONTEXT_LENGTH, 400, False, id="context"),
        pytest.param(RefusalKind.NOT_FOUND, 404, False, id="not-found"),
        pytest.param(RefusalKind.OTHER, 500, True, id="other-500"),
        pytest.param(RefusalKind.OTHER, 503, True, id="other-503"),
        pytest.param(RefusalKind.OTHER, 529, True, id="other-529-anthropic-overloaded"),
        pytest.param(RefusalKind.OTHER, 408, True, id="other-408"),
        pytest.param(RefusalKind.OTHER, 400, False, id="other-400"),
        pytest.param(RefusalKind.OTHER, 413, False, id="other-413"),
    ],
)
def test_retryable_by_kind(kind: RefusalKind, status: int, retryable: bool) -> None:
    assert Refusal(kind=kind, status=status, message="").retryable is retryable


def test_openrouter_raw_that_is_an_object() -> None:
    upstream = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = {
        "error": {"message": "Provider returned error", "code": 502, "metadata": {"raw": upstream}}
    }
    refusal = classify(502, json.dumps(body))
    assert (refusal.kind, refusal.message, refusal.code) == (
        RefusalKind.OTHER,
        "Overloaded",
        "overloaded_error",
    )


def test_openrouter_raw_json_text_classified_on_upstream_words() -> None:
    raw = json.dumps({"error": {"message": "model does not support tools", "code": 400}})
    body = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {"raw": raw, "provider_name": "Chutes"},
        }
    }
    refusal = classify(400, json.dumps(body))
    assert (refusal.kind, refusal.message) == (RefusalKind.TOOLS, "model does not support tools")


def test_openrouter_without_raw_keeps_its_own_message() -> None:
    body = {"error": {"message": "Provider returned error", "code": 502, "metadata": {"raw": ""}}}
    refusal = classify(502, json.dumps(body))
    assert (refusal.kind, refusal.message) == (RefusalKind.OTHER, "Provider returned error")


def test_message_that_is_itself_a_json_body_is_unwrapped() -> None:
    # gemini-cli wraps Google's body as a string in its own {"error": {"message": ...}}.
    inner = {"error": {"code": 400, "message": "API key expired.", "status": "INVALID_ARGUMENT"}}
    wrapper = {
        "error": {"message": json.dumps(inner, indent=2), "code": 400, "status": "Bad Request"}
    }
    refusal = classify(400, json.dumps(wrapper))
    assert (refusal.kind, refusal.message, refusal.code) == (
        RefusalKind.AUTH,
        "API key expired.",
        "INVALID_ARGUMENT",
    )


def test_gemini_field_violation_beats_the_message_path() -> None:
    violation = {"field": "tools[0].function_declarations[3].parameters", "description": "x"}
    body = {
        "error": {
            "code": 400,
            "message": "Unknown name \"$id\" at 'tools[0].function_declarations[7]': Cannot find field.",
            "status": "INVALID_ARGUMENT",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [violation],
                }
            ],
        }
    }
    refusal = classify(400, json.dumps(body))
    assert (refusal.kind, refusal.path, refusal.tool_index, refusal.keyword) == (
        RefusalKind.SCHEMA,
        "tools[0].function_declarations[3].parameters",
        3,
        "$id",
    )


def test_groq_error_event_in_sse_framing() -> None:
    event = {
        "error": {
            "message": "Failed to call a function.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": "<tool-use>{}</tool-use>",
        }
    }
    chunk = {"choices": [{"delta": {"content": "Hi"}}]}
    body = f": ping\n\ndata: {json.dumps(chunk)}\n\nevent: error\ndata: {json.dumps(event)}\n\n"
    refusal = classify(200, body)
    assert (refusal.kind, refusal.code, refusal.failed_generation) == (
        RefusalKind.TOOLS,
        "tool_use_failed",
        "<tool-use>{}</tool-use>",
    )


@pytest.mark.parametrize(
    ("status", "body", "kind", "message"),
    [
        pytest.param(401, "Unauthorized", RefusalKind.AUTH, "Unauthorized", id="plain-401"),
        pytest.param(403, "", RefusalKind.AUTH, "", id="empty-403"),
        pytest.param(
            404, "404 page not found\n", RefusalKind.NOT_FOUND, "404 page not found", id="plain-404"
        ),
        pytest.param(
            429,
            "too   many\n\nrequests",
            RefusalKind.RATE_LIMIT,
            "too many requests",
            id="collapsed",
        ),
        pytest.param(
            402, "Payment Required", RefusalKind.QUOTA, "Payment Required", id="plain-402"
        ),
        pytest.param(
            413, "Payload Too Large", RefusalKind.OTHER, "Payload Too Large", id="413-no-words"
        ),
        pytest.param(400, "Bad Request", RefusalKind.OTHER, "Bad Request", id="bare-400-not-tools"),
        pytest.param(500, "", RefusalKind.OTHER, "", id="empty-500"),
        pytest.param(
            400, "value < 3 and > 1", RefusalKind.OTHER, "value < 3 and > 1", id="angles-not-html"
        ),
        pytest.param(
            502,
            "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
            "</h1></center><hr><center>nginx</center></body></html>",
            RefusalKind.OTHER,
            "502 Bad Gateway 502 Bad Gateway nginx",
            id="nginx-html",
        ),
        pytest.param(
            403,
            "<!DOCTYPE html><html><head><style>body{color:red}</style><script>var k='<b>';"
            "</script></head><body><h1>Access denied</h1><p>Tom &amp; Jerry &lt;3</p></body></html>",
            RefusalKind.AUTH,
            "Access denied Tom & Jerry <3",
            id="html-with-script-style-entities",
        ),
        pytest.param(
            400,
            "<html><body><p>model does not support tools</p></body></html>",
            RefusalKind.TOOLS,
            "model does not support tools",
            id="html-words-still-classify",
        ),
    ],
)
def test_non_json_bodies(status: int, body: str, kind: RefusalKind, message: str) -> None:
    refusal = classify(status, body)
    assert (refusal.kind, refusal.message, refusal.code) == (kind, message, None)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param('"oops"', id="json-string"),
        pytest.param("[]", id="empty-array"),
        pytest.param("null", id="null"),
        pytest.param("42", id="number"),
        pytest.param("[1, 2]", id="array-of-numbers"),
        pytest.param("[[[[]]]]", id="nested-arrays"),
        pytest.param('{"error": null}', id="error-null"),
        pytest.param('{"error": 7}', id="error-number"),
        pytest.param('{"error": {"message": 7}}', id="message-number"),
        pytest.param('{"error": {"message": ["a", {"b": 1}]}}', id="message-odd-list"),
        pytest.param('{"error": ""}', id="error-empty-string"),
        pytest.param('{"choices": []}', id="not-an-error-object"),
        pytest.param("{" * 100_000, id="deep-open-braces"),
        pytest.param("[" * 100_000 + "]" * 100_000, id="deep-arrays"),
    ],
)
def test_json_that_is_not_an_error_object(body: str) -> None:
    refusal = classify(400, body)
    assert refusal.kind is RefusalKind.OTHER
    assert refusal.code is None
    assert len(refusal.message) <= 1000


def test_json_array_envelope_takes_the_first_object() -> None:
    body = '[7, {"error": {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}}]'
    refusal = classify(400, body)
    assert (refusal.kind, refusal.message, refusal.code) == (
        RefusalKind.AUTH,
        "API key not valid.",
        "UNAUTHENTICATED",
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(
            "Incorrect API key provided: sk-proj-abcdefghijklmnop1234. See docs.",
            "Incorrect API key provided: [redacted]. See docs.",
            id="openai-project-key",
        ),
        pytest.param(
            "invalid x-api-key sk-ant-api03-AbC_dEf-1234567890",
            "invalid x-api-key [redacted]",
            id="anthropic-key",
        ),
        pytest.param(
            "API key AIzaSyD-abcdefghijklmnopqrstuvwxyz01234 not valid",
            "API key [redacted] not valid",
            id="gemini-key",
        ),
        pytest.param(
            "key gsk_ABCDEFGHIJKLMNOP is invalid", "key [redacted] is invalid", id="groq-key"
        ),
        pytest.param(
            "key 'sk-or-v1-0123456789abcdef0123' invalid",
            "key '[redacted]' invalid",
            id="openrouter",
        ),
        pytest.param("bad key or-0123456789abcdef", "bad key [redacted]", id="or-prefix"),
        pytest.param(
            "Incorrect API key provided: sk-zhj0s*********************CMuq.",
            "Incorrect API key provided: [redacted].",
            id="openai-masked-echo",
        ),
        pytest.param(
            "Invalid API key sk-short", "Invalid API key sk-short", id="too-short-to-be-a-key"
        ),
        pytest.param(
            "risk-assessment-procedure failed", "risk-assessment-procedure failed", id="word"
        ),
        pytest.param(
            "Incorrect API key provided: undefined.",
            "Incorrect API key provided: undefined.",
            id="none",
        ),
    ],
)
def test_keys_are_redacted(text: str, want: str) -> None:
    enveloped = classify(401, json.dumps({"error": {"message": text}}))
    plain = classify(401, text)
    assert (enveloped.message, plain.message) == (want, want)


def test_key_is_redacted_before_trimming() -> None:
    key = "sk-" + "A" * 40
    refusal = classify(401, "x" * 980 + " " + key)
    assert "sk-" not in refusal.message
    assert refusal.message == "x" * 980 + " [redacted]"


def test_long_envelope_message_is_trimmed() -> None:
    refusal = classify(400, json.dumps({"error": {"message": "word " * 1000}}))
    assert len(refusal.message) == 1000
    assert refusal.message.endswith("word…")


HOSTILE = [
    pytest.param("x" * (2 << 20), id="2-mib-text"),
    pytest.param(json.dumps({"error": {"message": "a " * (600 << 10)}}), id="over-1-mib-json"),
    pytest.param(json.dumps({"error": {"message": "b" * (900 << 10)}}), id="under-1-mib-json"),
    pytest.param('Unknown name "' + "a" * 150 + "\" at '" * 20_000, id="unknown-name-storm"),
    pytest.param("<" * (1 << 20), id="open-angles"),
    pytest.param("<html>" + "<script>" * 200_000, id="unclosed-scripts"),
    pytest.param("model `" + "m" * (1 << 20), id="model-backtick-run"),
    pytest.param("try again in " + "1" * (1 << 20), id="digit-run"),
    pytest.param("JSON schema error at " + "#" * (1 << 20), id="schema-at-run"),
    pytest.param("data: " * 300_000, id="sse-data-storm"),
    pytest.param('data: {"a":1}\n\n' * 100_000, id="sse-many-events"),
    pytest.param("sk-" + "a" * (1 << 20), id="endless-key"),
    pytest.param("tools." * 300_000, id="tools-dot-storm"),
    pytest.param("invalid tool schema: " + "{a" * 500_000, id="unclosed-braces-storm"),
    pytest.param("invalid tool schema: " + "{" * 300_000 + "}" * 300_000, id="nested-braces"),
    pytest.param(
        "JSON schema conversion failed: Unrecognized schema: " + "{" * (1 << 20), id="dump-run"
    ),
    pytest.param(
        "unable to generate parser for this template. While executing " + "a.b" * 400_000,
        id="jinja-member-storm",
    ),
    pytest.param("json schema: " + "type must be " * 100_000, id="must-be-storm"),
    pytest.param(
        "invalid schema: Go struct field " + "a." * 500_000 + " of type", id="go-field-run"
    ),
    pytest.param("invalid schema: " + "aBcDeFgH" * 200_000, id="camel-case-run"),
    pytest.param("invalid schema: " + "'a" * 500_000, id="quote-storm"),
]


@pytest.mark.parametrize("body", HOSTILE)
def test_hostile_bodies_are_classified(body: str) -> None:
    # How fast is measured in bench/refusals.py, not here.
    refusal = classify(400, body)
    assert isinstance(refusal.kind, RefusalKind)
    assert len(refusal.message) <= 1000


def test_large_body_message_is_trimmed_with_ellipsis() -> None:
    refusal = classify(500, "x" * (2 << 20))
    assert (refusal.kind, len(refusal.message), refusal.message[-1]) == (
        RefusalKind.OTHER,
        1000,
        "…",
    )


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=100, max_value=599), st.text())
def test_any_text_is_classified(status: int, body: str) -> None:
    refusal = classify(status, body)
    assert isinstance(refusal.kind, RefusalKind)
    assert refusal.status == status
    assert len(refusal.message) <= 1000
    assert isinstance(refusal.retryable, bool)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "error",
                    "message",
                    "code",
                    "type",
                    "status",
                    "details",
                    "metadata",
                    "raw",
                    "detail",
                    "@type",
                    "retryDelay",
                    "violations",
                    "quotaId",
                    "fieldViolations",
                    "field",
                    "param",
                    "failed_generation",
                    "loc",
                    "msg",
                    "reason",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=100, max_value=599),
    JSON_VALUES,
    st.dictionaries(st.text(max_size=20), st.text(max_size=20), max_size=3),
)
def test_any_json_is_classified(status: int, value: object, headers: dict[str, str]) -> None:
    refusal = classify(status, json.dumps(value), headers)
    assert isinstance(refusal.kind, RefusalKind)
    assert refusal.retry_after is None or refusal.retry_after >= 0
    assert len(refusal.message) <= 1000


def test_overload_inside_a_200_stream_is_retryable() -> None:
    # Anthropic's mid-stream error event (tests/wire/anthropic/overloaded_error_mid_stream.sse).
    body = (
        '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}'
    )
    refusal = classify(200, body)
    assert (refusal.kind, refusal.code, refusal.retryable) == (
        RefusalKind.OTHER,
        "overloaded_error",
        True,
    )


@pytest.mark.parametrize(
    ("vector_id", "violations"),
    [
        pytest.param(
            "gemini-unknown-name-snake-case-additional-properties",
            [(0, "additionalProperties"), (1, "additionalProperties")],
            id="gemini-unknown-names-one-a-line",
        ),
        pytest.param(
            "gemini-400-format-only-enum-and-date-time",
            [(93, "format"), (94, "format")],
            id="gemini-bulleted-violations",
        ),
        pytest.param("gemini-unknown-name-ref-means-dollar-ref", [], id="one-tool-named-no-list"),
    ],
)
def test_every_tool_a_refusal_names_is_kept(vector_id: str, violations: list[Any]) -> None:
    found = next(v for v in VECTORS if v["id"] == vector_id)
    refusal = classify(found["status"], found["body"], found.get("headers"))
    assert [(v.tool_index, v.keyword) for v in refusal.violations] == violations
    assert all(v.message and str(v.tool_index) in v.message for v in refusal.violations)


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        # Outlines' NotImplementedError, as sglang PR #1776 quotes it: a schema its compiler
        # cannot take (not a wire vector: sglang logs it and skips the schema).
        (400, "Format email is not supported by Outlines", RefusalKind.SCHEMA),
        # A day's limit named only by its short name (cc-switch#240 wording, TPD; RPD alike).
        (
            429,
            "request reached organization RPD rate limit, current: 1001, limit: 1000",
            RefusalKind.QUOTA,
        ),
        # A minute's limit stays a rate limit (R01, R03): only per-day words make it quota.
        (429, "Rate limit reached on requests per minute (RPM): Limit 30", RefusalKind.RATE_LIMIT),
        # Words that merely contain the short names are not per-day limits.
        (429, "Rate limit reached: tpdx rpdy", RefusalKind.RATE_LIMIT),
        # Ollama's /api/embed with truncate off (server/routes.go; not a chat reply, so no vector).
        (400, "the input length exceeds the context length", RefusalKind.CONTEXT_LENGTH),
        # SGLang's request validator, as openclaw/openclaw PR #129536 quotes it.
        (
            400,
            "The input (263000 tokens) is longer than the model's context length (262144 tokens).",
            RefusalKind.CONTEXT_LENGTH,
        ),
        # A reasoning model refusing a parameter that is not tools names no tool refusal
        # (langchain-ai/langsmith-sdk#1003; vector openai-unsupported-parameter-parallel-...).
        (
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            RefusalKind.OTHER,
        ),
    ],
)
def test_sharper_kinds_on_bare_messages(status: int, message: str, kind: RefusalKind) -> None:
    assert classify(status, message).kind is kind


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        # FastAPI's body (vectors fastapi-403-..., fastapi-401-detail-not-authenticated-is-auth)
        # under statuses that say nothing of auth: the words decide.
        pytest.param(400, '{"detail":"Not authenticated"}', RefusalKind.AUTH,
                     id="fastapi-detail-under-a-400-is-auth"),
        pytest.param(500, '{"detail":"Not authenticated"}', RefusalKind.AUTH,
                     id="fastapi-detail-under-a-500-is-auth"),
        # Money spent outranks the status that carries it, a 429 included (LiteLLM lets
        # budget_exceeded_status_code pick any status; vector litellm-400-budget-has-been-...).
        pytest.param(429, '{"error":{"message":"Budget has been exceeded! Current cost: 0.0010747, '
                     'Max budget: 0.0","type":"auth_error","param":null,"code":429}}',
                     RefusalKind.QUOTA, id="litellm-budget-under-a-429-is-quota-not-rate-limit"),
        # TGI's cap on new tokens alone is not the window (huggingface/transformers#28523 quotes
        # it; router/src/validation.rs MaxNewTokens): only its sum with the input is.
        pytest.param(422, '{"error":"Input validation error: `max_new_tokens` must be <= 192. '
                     'Given: 1024","error_type":"validation"}', RefusalKind.OTHER,
                     id="tgi-max-new-tokens-alone-is-not-the-context"),
        # A function tool refused for another reason names no option the model can't take.
        pytest.param(400, "Function tools are required for this request", RefusalKind.OTHER,
                     id="function-tools-without-an-option-is-not-tools"),
        # "authenticated" alone is not the failure.
        pytest.param(400, "Request authenticated, but the model is unknown", RefusalKind.OTHER,
                     id="authenticated-is-not-not-authenticated"),
    ],
)  # fmt: skip
def test_the_words_outrank_the_status(status: int, body: str, kind: RefusalKind) -> None:
    assert classify(status, body).kind is kind


def test_responses_failed_event_in_sse_framing() -> None:
    # A Responses stream as sent: events before the failure carry a response whose error is null;
    # response.failed carries it in response.error
    # (vector openai-responses-failed-event-tpm-rate-limit-with-wait).
    created = {"type": "response.created", "response": {"status": "in_progress", "error": None}}
    failed = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {"code": "rate_limit_exceeded", "message": "Please try again in 2s."},
        },
    }
    body = (
        f"event: response.created\ndata: {json.dumps(created)}\n\n"
        f"event: response.failed\ndata: {json.dumps(failed)}\n\n"
    )
    refusal = classify(200, body)
    assert (refusal.kind, refusal.code, refusal.retry_after) == (
        RefusalKind.RATE_LIMIT,
        "rate_limit_exceeded",
        2.0,
    )


def test_a_param_named_only_in_the_words_places_a_schema_refusal() -> None:
    # A gateway that keeps only OpenAI's message drops param; the words still name it
    # (vector omniroute-responses-status-prefixed-message-still-names-the-tool).
    body = json.dumps({"error": {"message": "Missing required parameter: 'tools[2].name'."}})
    refusal = classify(400, body)
    assert (refusal.kind, refusal.path, refusal.tool_index) == (
        RefusalKind.SCHEMA,
        "tools[2].name",
        2,
    )


def test_python_none_written_as_text_is_no_code() -> None:
    # LiteLLM's str(None) (vector litellm-responses-500-writes-python-none-as-type-and-param).
    body = json.dumps({"error": {"message": "boom", "type": "None", "code": "None"}})
    assert classify(400, body).code is None
