"""Classify a provider's refusal: status, body and headers become a kind, the provider's words,
and the wait, schema place and tool it names. Pure: no I/O, no clock, no environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from conchcheck.core.credentials import redact_keys
from conchcheck.core.envelopes import Envelope, read_envelope
from conchcheck.core.names import Name
from conchcheck.core.places import Violation, schema_place, violations
from conchcheck.core.places import tool_index as place_index

__all__ = ["Refusal", "RefusalKind", "Violation", "classify"]

_MAX_SCAN = 1 << 16  # the regexes never see more than this much text
_MAX_MESSAGE = 1000


class RefusalKind(Name):
    """What a refusal means for the next request."""

    SCHEMA = "schema"
    TOOLS = "tools"
    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    QUOTA = "quota"
    CONTEXT_LENGTH = "context_length"
    NOT_FOUND = "not_found"
    OTHER = "other"


NOT_EVIDENCE = frozenset({RefusalKind.RATE_LIMIT, RefusalKind.QUOTA, RefusalKind.AUTH})
"""Refusals that say nothing of what was asked: "later", "pay", "who are you". A cell refused
so is a failed request, never evidence (issue 26: an endpoint answering every request with
429 got a verdict, "dialect none, mode none", and a capability entry)."""


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
    r"|grammar is not valid"
    # llama.cpp's Responses endpoint takes function tools only: the tool entry is refused
    # (vector llamacpp-responses-type-of-tool-must-be-function-is-schema).
    r"|'type' of tool must be"
    # A request-validation error (FastAPI's, pydantic's) whose location is a tool's field, as a
    # Python repr or as JSON: llama-cpp-python sends it as a 500, LiteLLM wraps it in words of
    # its own (vectors llamacpp-python-500-validation-error-names-the-tool-field, ...).
    r"""|['"]loc['"]: ?[\[(]['"]body['"], ?['"]tools['"], ?\d""",
)
# Groq's tool_use_failed is a model that wrote its call in words: the words mode is the cure
# (vector groq-tool-use-failed-carries-failed-generation). The kind says what the refusal means
# for the next request (tools: never retried, since at temperature 0 the same request writes the
# same output); the failed generation it carries is the model's answer to this one, which the
# probe reads as words (core.unparsed.read_failed_generation), so a prompt's cell is
# unparsed_by_server, never refused. OpenRouter's 404 "No endpoints found that support tool use"
# is tools, not not_found (vector openrouter-404-no-endpoints-...).
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
    r"|'tools': expected an unsupported value"
    # vLLM's Responses API with Harmony cannot force a call, and says so with a 501 that no retry
    # cures (vector vllm-responses-harmony-501-only-auto-or-none-tool-choice-is-tools).
    r"|only [^.]{0,60}tool_choice (?:is|are) supported"
    # OpenAI's newer models take no function tools on Chat Completions with an option set, and
    # name the option (vectors openai-400-function-tools-with-reasoning-effort-is-tools, ...-set-
    # it-to-none-is-tools): tools, not a bad parameter.
    r"|function tools with \w{1,40} are not supported",
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
    r"|exceeds? (?:the )?(?:maximum )?context length"
    # TGI's validation errors, a 422 (router/src/validation.rs MaxTotalTokens, InputLength;
    # vectors tgi-422-inputs-tokens-plus-max-new-tokens-is-context-length, tgi-422-inputs-must-
    # have-less-than-tokens-is-context-length).
    r"|`inputs` tokens \+ `max_new_tokens` must be <=|`inputs` must have less than \d{1,12} tokens",
)
# Gemini answers a bad key with 400 INVALID_ARGUMENT, not 401; its reason API_KEY_INVALID
# says auth (vector gemini-api-key-invalid-400-is-auth; continuedev/continue#10290).
_AUTH = re.compile(
    r"invalid_api_key|authentication_error|permission_error|api_key_invalid|permission_denied"
    r"|unauthenticated|\bforbidden\b|api key not valid|api key expired|no auth credentials"
    r"|(?:invalid|incorrect|missing) (?:x-)?api[ -]key|authentication fails?|\bunauthorized\b"
    r"|unregistered callers|does not have permission|permission denied|user not found"
    # FastAPI's security classes say only this, in "detail", as a 403 or (since fastapi#13786) a
    # 401 (vectors fastapi-403-detail-not-authenticated-is-auth, fastapi-401-...): the words
    # decide, whatever status a gateway re-wraps them in.
    r"|\bnot authenticated\b",
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
    r"|\bdaily rate limit"
    # Money spent, whatever status carries it: Anthropic sends a prepaid balance run dry as a 400
    # invalid_request_error (vector anthropic-400-credit-balance-too-low-is-quota); LiteLLM's
    # proxy checks budgets in its auth step, so they come as a 400 or a 401 typed auth_error, or
    # typed budget_exceeded (vectors litellm-400-budget-has-been-exceeded-type-auth-error-is-
    # quota, litellm-401-exceeded-budget-end-user-is-quota-not-auth, litellm-401-budget-has-
    # been-exceeded-user-older-wording-is-quota, litellm-400-type-budget-exceeded-for-one-model-
    # is-quota).
    r"|credit balance is too low|budget has been exceeded|\bexceededbudget\b|\bbudget_exceeded\b",
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

_PARAM = re.compile(r"(?:Missing required|Unknown|Unsupported) parameter: '([^'\s]{1,200})'")
_NUMBER = re.compile(r"\d{1,12}(?:\.\d{1,12})?")
_WAIT = re.compile(r"(?:try again|retry) in ((?:\d{1,9}(?:\.\d{1,12})?(?:ms|h|m|s)){1,4})\b", re.I)
_WAIT_WORDS = re.compile(r"(?:try again|retry) in (\d{1,9}(?:\.\d{1,12})?) ?sec(?:ond)?s?\b", re.I)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)", re.I)
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(?:\d{1,9}(?:\.\d{1,12})?(?:ms|h|m|s)){1,4}", re.I)

_HTML_HINT = re.compile(r"<(?:!doctype|html|head|body|title|h1|center|div|p)\b", re.I)
_HTML_BLOCK = re.compile(r"<(script|style)\b", re.I)
_HTML_TAG = re.compile(r"<[^<>]*>")
_ENTITIES = (("&nbsp;", " "), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"))


def classify(status: int, body: str, headers: Mapping[str, str] | None = None) -> Refusal:
    """Classify one refusal: an HTTP status, its body text, and its headers (any case)."""
    head = {str(k).lower(): str(v).strip() for k, v in (headers or {}).items()}
    envelope = read_envelope(body, _MAX_SCAN)
    if envelope is not None and envelope.message:
        text = envelope.message[:_MAX_SCAN]
    else:
        text = _plain_text(body[:_MAX_SCAN])
    env = envelope or Envelope(message="")
    kind = _kind(status, text, env)
    path = tool_index = keyword = None
    named: tuple[Violation, ...] = ()
    if kind is RefusalKind.SCHEMA:
        path, keyword = schema_place(text, env.field, env.param or _named_param(text))
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


def _kind(status: int, text: str, env: Envelope) -> RefusalKind:
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


def _named_param(text: str) -> str | None:
    # OpenAI names the parameter in its words too; a gateway that keeps only the message
    # drops param (vector omniroute-responses-status-prefixed-message-still-names-the-tool).
    found = _PARAM.search(text)
    return found.group(1) if found else None


def _retry_after(head: Mapping[str, str], env: Envelope, text: str) -> float | None:
    millis = head.get("retry-after-ms", "")
    if _NUMBER.fullmatch(millis):
        return float(millis) / 1000
    seconds = head.get("retry-after", "")
    if _NUMBER.fullmatch(seconds):
        return float(seconds)
    # OpenAI's and Groq's reset headers are durations ("1s", "6m0s", "20ms", "2m59.56s"): the
    # sooner of the two, since a 429 names neither limit (a longer one is met again, and the
    # streak of 429s it brings ends the probe).
    resets = [
        _duration(head.get(name, ""))
        for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")
    ]
    known = [wait for wait in resets if wait is not None]
    if known:
        return min(known)
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


def _duration(text: str) -> float | None:
    if not _DURATION.fullmatch(text.strip()):
        return None
    parts = _DURATION_PART.findall(text)
    return round(sum(float(n) * _UNIT[unit.lower()] for n, unit in parts), 9)


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


def _trim(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"
