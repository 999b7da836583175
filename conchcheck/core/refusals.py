"""Classify a provider's refusal: status, body and headers become a kind, the provider's words,
and the wait, schema place and tool it names. Pure: no I/O, no clock, no environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from conchcheck.core.places import Violation, schema_place, violations
from conchcheck.core.places import tool_index as place_index

__all__ = ["Refusal", "RefusalKind", "Violation", "classify", "redact_keys"]

_MAX_JSON = 1 << 20  # a larger body is read as text only; no error envelope is that big
_MAX_SCAN = 1 << 16  # the regexes never see more than this much text
_MAX_MESSAGE = 1000
_MAX_DEPTH = 4  # envelopes inside envelopes (OpenRouter metadata.raw, a message that is JSON)


class RefusalKind(str, Enum):
    """What a refusal means for the next request."""

    SCHEMA = "schema"
    TOOLS = "tools"
    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    QUOTA = "quota"
    CONTEXT_LENGTH = "context_length"
    NOT_FOUND = "not_found"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A classified refusal; ``message`` is the provider's own words with any key redacted."""

    kind: RefusalKind
    status: int
    message: str
    code: str | None = None
    retry_after: float | None = None
    path: str | None = None
    tool_index: int | None = None
    keyword: str | None = None
    failed_generation: str | None = None
    should_retry: bool | None = None
    """The provider's explicit ``x-should-retry`` header, when it sent one."""
    violations: tuple[Violation, ...] = ()
    """When a schema refusal names several tools (Gemini lists every violation, a line each):
    each tool named, first line first; empty when it names one or none."""

    @property
    def retryable(self) -> bool:
        """Whether the same request can succeed later (after ``retry_after``, when set)."""
        if self.should_retry is False:
            return False
        if self.kind is RefusalKind.RATE_LIMIT:
            return True
        if self.kind is RefusalKind.OTHER:
            # 5xx covers Anthropic's 529 (vector anthropic-529-overloaded-is-other-and-retryable).
            # Anthropic reports overload inside a 200 stream too (event `error`,
            # overloaded_error): as retryable there as its 529 is.
            return self.status >= 500 or self.status == 408 or self.code == "overloaded_error"
        return False


@dataclass(frozen=True, slots=True)
class _Envelope:
    message: str
    words: str = ""  # the machine words (type, code, status, reason), matched with the text
    code: str | None = None
    param: str | None = None
    field: str | None = None
    failed_generation: str | None = None
    retry_delay: float | None = None
    quota_ids: tuple[str, ...] = ()


_NOT_JSON = object()

# Matched against lower-cased text in this order: schema words first, so "does not support
# oneOf" is schema, not tools (vector anthropic-does-not-support-one-of-is-schema-not-tools).
_SCHEMA = re.compile(
    r"invalid (?:tool )?schema|json schema|input_?schema|function_?declarations?"
    r"|invalid_function_parameters|generatecontentrequest\.tools|\btools(?:\[\d|\.\d)"
    r"|\btools\.function\.parameters|go struct field \w{0,200}\.tools\."
    r"|conflict in schema definitions|for '\w{1,40}' type, propert|`strict` mode on function call"
    r"|grammar error|failed to compile \w{1,40} grammar|unimplemented keys"
    r"|unknown name \"[^\"]{1,200}\" at '[^']{0,2000}(?:tools|function_declarations|parameters)"
    r"|unable to generate parser for this template|schema (?:must|should|specified|didn't)"
    r"|is not supported by (?:outlines|xgrammar|llguidance)"
    # TGI checks a grammar (its tools become one) before outlines-core compiles it
    # (vector tgi-422-grammar-is-not-valid).
    r"|grammar is not valid",
)
# Groq's tool_use_failed is a model that wrote its call in words: the words mode is the cure
# (vector groq-tool-use-failed-carries-failed-generation). OpenRouter's 404 "No endpoints found
# that support tool use" is tools, not not_found (vector openrouter-404-no-endpoints-...).
_TOOLS = re.compile(
    r"does(?: not|n't) support (?:tools?\b|tool (?:use|calling|calls)|function calling"
    r"|the toolconfig\.toolchoice)|tools param requires --jinja|unsupported param: tool"
    r"|no endpoints found that support (?:tool use|the provided 'tool_choice')"
    r"|tool choice requires --enable-auto-tool-choice|cannot use tools with stream"
    r"|error rendering prompt with jinja template|'tools' is not supported with this model"
    r"|(?:function calling|tool use|tool calling|tools)`? (?:is|are) not supported|tool_use_failed"
    # Groq quotes the feature in backticks (vector groq-compound-backticked-tool-calling-is-...);
    # Together, direct or behind OpenRouter, names JSON mode with it (vectors together-400-not-
    # supported-for-json-mode-function-calling, openrouter-together-message-is-the-upstream-...);
    # Novita behind OpenRouter drops the "ed" (vector openrouter-novita-raw-model-features-...);
    # OpenAI's o1 takes no value of tools at all, not even null: that param names no schema
    # (vector openai-o1-tools-expected-an-unsupported-value-is-tools-not-schema).
    r"|not supported for json mode/function calling|function calling not support"
    r"|'tools': expected an unsupported value",
)
_CONTEXT = re.compile(
    r"maximum context length|context_length_exceeded|prompt is too long|exceed_context_size"
    r"|exceeds? the available context size|input token count|exceeds the maximum number of tokens"
    r"|exceeds model context window|request_too_large|request exceeds the maximum size"
    # Anthropic's "input length and `max_tokens` exceed context limit", llama.cpp's "context shift
    # is disabled" (a 500), LM Studio's "Trying to keep the first N tokens when context the
    # overflows" (vectors anthropic-input-and-max-tokens-exceed-context-limit, ...).
    r"|exceeds? (?:the )?context limit|context shift is disabled|when context (?:the )?overflows"
    # Local servers in their own words: llama.cpp's KV cache full (a 500 that must not be
    # retried), LM Studio's n_keep, Ollama since it stopped truncating silently, vLLM behind
    # Xinference (a 500) (vectors llamacpp-500-context-size-has-been-exceeded-is-not-retryable,
    # lmstudio-400-tokens-to-keep-greater-than-context-length, lmstudio-cannot-truncate-prompt-
    # n-keep, ollama-400-prompt-longer-than-context-length, xinference-vllm-500-decoder-...).
    r"|context size has been exceeded|cannot truncate prompt with n_keep"
    r"|(?:longer|greater) than the (?:context length|maximum model length|model's context length)"
    r"|exceeds? (?:the )?(?:maximum )?context length",
)
# Gemini answers a bad key with 400 INVALID_ARGUMENT, not 401; its reason API_KEY_INVALID
# says auth (vector gemini-api-key-invalid-400-is-auth; continuedev/continue#10290).
_AUTH = re.compile(
    r"invalid_api_key|authentication_error|permission_error|api_key_invalid|permission_denied"
    r"|unauthenticated|\bforbidden\b|api key not valid|api key expired|no auth credentials"
    r"|(?:invalid|incorrect|missing) (?:x-)?api[ -]key|authentication fails?|\bunauthorized\b"
    r"|unregistered callers|does not have permission|permission denied|user not found",
)
# Groq's "Request too large ... on tokens per minute" asks more than a minute allows: waiting
# cannot help (vector groq-413-request-too-large-for-tpm-is-quota). A per-day limit (Groq's TPD,
# OpenRouter's free-models-per-day) is spent until tomorrow, not within a probe, whatever wait the
# message names (vectors groq-429-tokens-per-day-is-quota, openrouter-429-free-models-per-day-...).
_QUOTA = re.compile(
    r"insufficient_quota|exceeded your current quota|insufficient (?:credits|balance|funds)"
    r"|requires more credits|can only afford|request too large for model"
    r"|\b(?:tokens|requests) per day\b|\b(?:tpd|rpd)\b|free-models-per-day"
    # Anthropic's per-day token limit (vector anthropic-429-daily-rate-limit-is-quota).
    r"|\bdaily rate limit",
)
_RATE = re.compile(
    r"\brate[ _-]?limit|too many requests|resource (?:has been )?exhausted|resource_exhausted"
)
_NOT_FOUND = re.compile(
    r"not_?found|model_decommissioned|has been decommissioned|is not a valid model id"
    r"|is not found for api version|not found, try pulling it first|\bmodel not found"
    r"|\bmodel [`'\"]?[^\s`'\"]{1,200}[`'\"]? does not exist"
    r"|\bmodel [\"'][^\"']{1,200}[\"'] not found",
)
_STATUS_KIND = {
    401: RefusalKind.AUTH,
    403: RefusalKind.AUTH,
    402: RefusalKind.QUOTA,
    404: RefusalKind.NOT_FOUND,
    429: RefusalKind.RATE_LIMIT,
}

_NUMBER = re.compile(r"\d{1,12}(?:\.\d{1,12})?")
_WAIT = re.compile(r"(?:try again|retry) in ((?:\d{1,9}(?:\.\d{1,12})?(?:ms|h|m|s)){1,4})\b", re.I)
_WAIT_WORDS = re.compile(r"(?:try again|retry) in (\d{1,9}(?:\.\d{1,12})?) ?sec(?:ond)?s?\b", re.I)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.I)
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

_KEY = re.compile(r"(?<![A-Za-z0-9_-])(?:sk-|gsk_|xai-|AIza|or-|hf_|r8_|pplx-|nvapi-)[\w*-]+")
_HTML_HINT = re.compile(r"<(?:!doctype|html|head|body|title|h1|center|div|p)\b", re.I)
_HTML_BLOCK = re.compile(r"<(script|style)\b", re.I)
_HTML_TAG = re.compile(r"<[^<>]*>")
_ENTITIES = (("&nbsp;", " "), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"))


def classify(status: int, body: str, headers: Mapping[str, str] | None = None) -> Refusal:
    """Classify one refusal: an HTTP status, its body text, and its headers (any case)."""
    head = {str(k).lower(): str(v).strip() for k, v in (headers or {}).items()}
    envelope = _envelope(_loads(body), 0) if len(body) <= _MAX_JSON else None
    if envelope is None and "data:" in body[:_MAX_SCAN]:
        # A failure inside a 200 stream (Groq, LM Studio) may come still framed as an SSE event
        # (vector groq-stream-error-event-with-status-200, test_groq_error_event_in_sse_framing).
        envelope = _sse_envelope(body[:_MAX_SCAN])
    if envelope is not None and envelope.message:
        text = envelope.message[:_MAX_SCAN]
    else:
        text = _plain_text(body[:_MAX_SCAN])
    env = envelope or _Envelope(message="")
    kind = _kind(status, text, env)
    path = tool_index = keyword = None
    named: tuple[Violation, ...] = ()
    if kind is RefusalKind.SCHEMA:
        path, keyword = schema_place(text, env.field, env.param)
        tool_index = place_index(path if path is not None else text)
        named = tuple(replace(v, message=_trim(redact_keys(v.message))) for v in violations(text))
    should = head.get("x-should-retry", "").lower()
    return Refusal(
        kind=kind,
        status=status,
        message=_trim(redact_keys(text)),
        code=env.code,
        retry_after=_retry_after(head, env, text),
        path=path,
        tool_index=tool_index,
        keyword=keyword,
        failed_generation=env.failed_generation,
        should_retry=True if should == "true" else False if should == "false" else None,
        violations=named,
    )


def _kind(status: int, text: str, env: _Envelope) -> RefusalKind:
    scan = f"{env.words}\n{text}".lower()
    if _SCHEMA.search(scan):
        return RefusalKind.SCHEMA
    # OpenAI's reasoning models refuse the whole parameter with param "tools": that is a model
    # taking no tools, not a bad schema (vector openai-unsupported-parameter-tools-is-tools).
    if _TOOLS.search(scan):
        return RefusalKind.TOOLS
    if (env.param or "").startswith("tools"):
        return RefusalKind.SCHEMA
    if _CONTEXT.search(scan):
        return RefusalKind.CONTEXT_LENGTH
    if _AUTH.search(scan):
        return RefusalKind.AUTH
    # Gemini's 429 says "exceeded your current quota" for per-minute and per-day limits alike;
    # only the quota id tells them apart (vectors gemini-429-per-day-quota-is-quota,
    # gemini-429-per-minute-quota-with-retryinfo-is-rate-limit).
    if any("perday" in quota.lower() for quota in env.quota_ids):
        return RefusalKind.QUOTA
    if (env.quota_ids or env.retry_delay is not None) and "resource_exhausted" in scan:
        return RefusalKind.RATE_LIMIT
    if _QUOTA.search(scan):
        return RefusalKind.QUOTA
    if _RATE.search(scan):
        return RefusalKind.RATE_LIMIT
    if _NOT_FOUND.search(scan):
        return RefusalKind.NOT_FOUND
    # A bare 400 says nothing of tools (vector gemini-bare-invalid-argument-is-other-never-tools).
    return _STATUS_KIND.get(status, RefusalKind.OTHER)


def _loads(text: str) -> object:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _sse_envelope(text: str) -> _Envelope | None:
    data: list[str] = []
    for line in (*text.splitlines(), ""):
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif data and not line.strip():
            envelope = _envelope(_loads("\n".join(data)), 0)
            if envelope is not None:
                return envelope
            data = []
    return None


def _envelope(value: object, depth: int) -> _Envelope | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, list):
        # Gemini's OpenAI-compatible endpoint answers with a JSON array of one error
        # (vector gemini-openai-compat-array-envelope; jackmpcollins/magentic#382).
        value = next(iter(_dicts(value)), None)
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if isinstance(error, str) and error.strip():
        return _nested(error.strip(), depth) or _Envelope(message=error.strip())
    if isinstance(error, dict):
        return _from_error(error, depth)
    if "message" in value or "detail" in value:
        # Mistral and old vLLM put the fields at the top ({"object": "error", ...}); Mistral's
        # gateway sends {"message": "Unauthorized"} or FastAPI's {"detail": ...}.
        return _from_error(value, depth)
    return None


def _from_error(error: dict[str, object], depth: int) -> _Envelope:
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw"):
        # OpenRouter says only "Provider returned error"; the upstream body is in metadata.raw,
        # a string that may itself be JSON (vector openrouter-provider-error-unwraps-raw-json).
        upstream = _upstream(metadata["raw"], depth)
        if upstream is not None:
            return upstream
    message = _render(error["message"] if "message" in error else error.get("detail"), 0).strip()
    nested = _nested(message, depth)
    if nested is not None:
        return nested
    kind, code, status = (_word(error.get(key)) for key in ("type", "code", "status"))
    reason, field, delay, quotas = _google_details(error.get("details"))
    param = error.get("param")
    failed = error.get("failed_generation")
    return _Envelope(
        message=message,
        words=" ".join(word for word in (kind, code, status, reason) if word),
        code=reason or code or status or kind,
        param=param if isinstance(param, str) else None,
        field=field,
        failed_generation=failed if isinstance(failed, str) else None,
        retry_delay=delay,
        quota_ids=quotas,
    )


def _upstream(raw: object, depth: int) -> _Envelope | None:
    if not isinstance(raw, str):
        return _envelope(raw, depth + 1)
    return _nested(raw.strip(), depth) or (_Envelope(message=raw.strip()) if raw.strip() else None)


def _nested(message: str, depth: int) -> _Envelope | None:
    # Proxies and CLIs put the upstream body, as JSON text, in "message" (gemini-cli's ApiError;
    # test_message_that_is_itself_a_json_body_is_unwrapped).
    inner = _envelope(_loads(message), depth + 1) if len(message) <= _MAX_JSON else None
    return inner if inner is not None and inner.message else None


def _word(value: object) -> str | None:
    # An integer code is the HTTP status again (OpenRouter, Google, llama.cpp, vLLM's "400").
    if isinstance(value, str) and value.strip() and not value.strip().isdigit():
        return value.strip()
    return None


def _render(value: object, depth: int) -> str:
    if isinstance(value, str):
        return value
    if depth > _MAX_DEPTH:
        return ""
    if isinstance(value, list):
        return "; ".join(part for part in (_render(item, depth + 1) for item in value[:20]) if part)
    if isinstance(value, dict):
        if "detail" in value:
            return _render(value["detail"], depth + 1)
        if "msg" in value:
            # Mistral's 422 is a pydantic error list (vector mistral-422-message-is-an-object).
            loc = value.get("loc")
            where = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
            text = _render(value["msg"], depth + 1)
            return f"{where}: {text}" if where else text
        return _render(value.get("message"), depth + 1)
    return ""


def _google_details(
    details: object,
) -> tuple[str | None, str | None, float | None, tuple[str, ...]]:
    reason = field = delay = None
    quotas: list[str] = []
    for item in _dicts(details):
        kind = str(item.get("@type", ""))
        if kind.endswith("ErrorInfo"):
            reason = reason or _word(item.get("reason"))
        elif kind.endswith("BadRequest"):
            fields = _strings(item.get("fieldViolations"), "field")
            field = field or (fields[0] if fields else None)
        elif kind.endswith("RetryInfo"):
            # A protobuf Duration in JSON: "37s", "1.5s", "45.837906927s".
            wait = str(item.get("retryDelay", ""))
            delay = float(wait[:-1]) if _NUMBER.fullmatch(wait[:-1]) and wait[-1:] == "s" else None
        elif kind.endswith("QuotaFailure"):
            quotas += _strings(item.get("violations"), "quotaId")
    return reason, field, delay, tuple(quotas)


def _dicts(value: object) -> list[dict[str, object]]:
    return (
        [item for item in value[:16] if isinstance(item, dict)] if isinstance(value, list) else []
    )


def _strings(value: object, key: str) -> list[str]:
    return [str(item[key]) for item in _dicts(value) if isinstance(item.get(key), str)]


def _retry_after(head: Mapping[str, str], env: _Envelope, text: str) -> float | None:
    millis = head.get("retry-after-ms", "")
    if _NUMBER.fullmatch(millis):
        return float(millis) / 1000
    seconds = head.get("retry-after", "")
    if _NUMBER.fullmatch(seconds):
        return float(seconds)
    # A Retry-After in HTTP-date form is ignored: turning a date into a wait needs the clock,
    # and this module reads none. The caller that owns a clock may read the header itself.
    if env.retry_delay is not None:
        return env.retry_delay
    found = _WAIT.search(text)
    if found:
        parts = _DURATION_PART.findall(found.group(1))
        return round(sum(float(n) * _UNIT[unit.lower()] for n, unit in parts), 9)
    found = _WAIT_WORDS.search(text)
    return float(found.group(1)) if found else None


def _plain_text(text: str) -> str:
    if _HTML_HINT.search(text[:4096]):
        text = _HTML_TAG.sub(" ", _drop_blocks(text))
        for entity, char in _ENTITIES:
            text = text.replace(entity, char)
        text = text.replace("&amp;", "&")
    return " ".join(text.split())


def _drop_blocks(text: str) -> str:
    lower = text.lower()
    kept: list[str] = []
    start = 0
    while (found := _HTML_BLOCK.search(text, start)) is not None:
        kept.append(text[start : found.start()])
        close = lower.find(f"</{found.group(1).lower()}", found.end())
        end = text.find(">", close) if close >= 0 else -1
        start = len(text) if end < 0 else end + 1
    kept.append(text[start:])
    return "".join(kept)


def redact_keys(text: str) -> str:
    """``text`` with anything shaped like a provider key (16+ characters) masked."""
    # OpenAI echoes the key it refused ("Incorrect API key provided: sk-...");
    # a report must never carry one (vector openai-401-incorrect-api-key-is-redacted).
    return _KEY.sub(lambda m: "[redacted]" if len(m.group(0)) >= 16 else m.group(0), text)


def _trim(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"
