"""The error envelope a refusal comes in: the provider's words, its machine words, and what it
says beside them (Google's details, OpenRouter's upstream body, a stream's error event). Pure, and
bounded like ``refusals``: at most ``_MAX_JSON`` characters are parsed and envelopes nest at most
``_MAX_DEPTH`` deep.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Envelope", "read_envelope"]

_MAX_JSON = 1 << 20  # a larger body is read as text only; no error envelope is that big
_MAX_DEPTH = 4  # envelopes inside envelopes (OpenRouter metadata.raw, a message that is JSON)
_NO_WORDS = frozenset({"None", "null"})
_NUMBER = re.compile(r"\d{1,12}(?:\.\d{1,12})?")


@dataclass(frozen=True, slots=True)
class Envelope:
    """What an error envelope holds: the provider's words and what it says beside them."""

    message: str
    words: str = ""  # the machine words (type, code, status, reason), matched with the text
    code: str | None = None
    param: str | None = None
    field: str | None = None
    failed_generation: str | None = None
    retry_delay: float | None = None
    quota_ids: tuple[str, ...] = ()


_NOT_JSON = object()


def read_envelope(body: str, scan: int) -> Envelope | None:
    """The envelope ``body`` holds, or None; an SSE stream is read in its first ``scan`` chars."""
    envelope = _envelope(_loads(body), 0) if len(body) <= _MAX_JSON else None
    if envelope is None and "data:" in body[:scan]:
        # A failure inside a 200 stream (Groq, LM Studio) may come still framed as an SSE event
        # (vector groq-stream-error-event-with-status-200, test_groq_error_event_in_sse_framing).
        envelope = _sse_envelope(body[:scan])
    return envelope


def _loads(text: str) -> object:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _sse_envelope(text: str) -> Envelope | None:
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


def _envelope(value: object, depth: int) -> Envelope | None:
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
        return _nested(error.strip(), depth) or Envelope(message=error.strip())
    if isinstance(error, dict):
        return _from_error(error, depth)
    response = value.get("response")
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        # The Responses API's stream ends a failed reply with a `response.failed` event; its
        # error sits in response.error (vectors openai-responses-failed-event-tpm-rate-limit-
        # with-wait, openai-responses-failed-event-insufficient-quota).
        return _from_error(response["error"], depth)
    if "message" in value or "detail" in value:
        # Mistral and old vLLM put the fields at the top ({"object": "error", ...}); Mistral's
        # gateway sends {"message": "Unauthorized"} or FastAPI's {"detail": ...}.
        return _from_error(value, depth)
    return None


def _from_error(error: dict[str, object], depth: int) -> Envelope:
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
    return Envelope(
        message=message,
        words=" ".join(word for word in (kind, code, status, reason) if word),
        code=reason or code or status or kind,
        param=param if isinstance(param, str) else None,
        field=field,
        failed_generation=failed if isinstance(failed, str) else None,
        retry_delay=delay,
        quota_ids=quotas,
    )


def _upstream(raw: object, depth: int) -> Envelope | None:
    if not isinstance(raw, str):
        return _envelope(raw, depth + 1)
    return _nested(raw.strip(), depth) or (Envelope(message=raw.strip()) if raw.strip() else None)


def _nested(message: str, depth: int) -> Envelope | None:
    # Proxies and CLIs put the upstream body, as JSON text, in "message" (gemini-cli's ApiError;
    # test_message_that_is_itself_a_json_body_is_unwrapped).
    inner = _envelope(_loads(message), depth + 1) if len(message) <= _MAX_JSON else None
    return inner if inner is not None and inner.message else None


def _word(value: object) -> str | None:
    # An integer code is the HTTP status again (OpenRouter, Google, llama.cpp, vLLM's "400").
    # LiteLLM writes Python's None as the text "None" (vector litellm-responses-500-writes-
    # python-none-as-type-and-param): no word either.
    if isinstance(value, str) and value.strip() and not value.strip().isdigit():
        return None if value.strip() in _NO_WORDS else value.strip()
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
