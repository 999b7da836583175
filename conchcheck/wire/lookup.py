"""A plain JSON request, as a catalogue look-up makes it, under the rules chat requests keep:
no redirects, a key only where it may go, the body cap, the gate and one deadline.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

import anyio
import httpx

from conchcheck.core.jsontypes import JsonObject, JsonValue
from conchcheck.core.nesting import text_too_deep
from conchcheck.core.refusals import classify
from conchcheck.wire.framing import Body, drain, encoding_of, too_deep
from conchcheck.wire.keys import Secret, scrub, scrub_value
from conchcheck.wire.providers import is_insecure
from conchcheck.wire.transport import Wire


@dataclass(frozen=True, slots=True)
class Fetched:
    """A plain JSON request's outcome (catalogues): the status and data, or why not."""

    url: str
    status: int | None = None
    data: JsonValue = None
    error: str | None = None
    """A sentence, keys scrubbed, when no JSON came back."""


def bearer(key: Secret | None) -> dict[str, str]:
    """The ``authorization`` header of an OpenAI-style API, when there is a key."""
    return {"authorization": f"Bearer {key.reveal()}"} if key else {}


def google_headers(key: Secret | None) -> dict[str, str]:
    """Gemini's ``x-goog-api-key`` header, when there is a key."""
    return {"x-goog-api-key": key.reveal()} if key else {}


def objects_in(data: JsonValue, field: str) -> list[JsonObject]:
    """The objects of the list ``data[field]`` (a listing's ``data`` or ``models``); none
    when it isn't one."""
    items = data.get(field) if isinstance(data, dict) else None
    return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []


def anthropic_headers(key: Secret | None) -> dict[str, str]:
    """Anthropic's version header, and its ``x-api-key`` when there is a key."""
    headers = {"anthropic-version": "2023-06-01"}
    if key:
        headers["x-api-key"] = key.reveal()
    return headers


async def fetch_json(
    wire: Wire,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: JsonObject | None = None,
    key: Secret | None = None,
) -> Fetched:
    """One JSON request with the same rules as chat: no redirects, key safety, size cap."""
    secrets = (key,)
    shown = scrub(url, secrets)
    if key is not None and not wire.policy.allow_insecure and is_insecure(url):
        return Fetched(shown, error="Refused to send the key over plain http to another host.")
    if wire.gate is not None and not wire.gate.admit():
        return Fetched(shown, error="The probe's request budget is spent; it was not sent.")
    slot = wire.gate.slot() if wire.gate is not None else contextlib.nullcontext()
    deadline = wire.policy.read_timeout
    async with slot:
        try:
            with anyio.fail_after(deadline):
                return await _fetch(wire, method, url, shown, headers, body, secrets)
        except TimeoutError:
            return Fetched(shown, error=f"No complete reply within the {deadline:g} s deadline.")


async def _fetch(
    wire: Wire,
    method: str,
    url: str,
    shown: str,
    headers: dict[str, str] | None,
    body: JsonObject | None,
    secrets: tuple[Secret | None, ...],
) -> Fetched:
    try:
        request = wire.client.build_request(method, url, headers=headers, json=body)
        response = await wire.client.send(request, stream=True)
    except httpx.HTTPError as exc:
        return Fetched(shown, error=scrub(f"{type(exc).__name__}: {exc}", secrets))
    try:
        received = Body(encoding_of(response), wire.policy.max_body)
        error = await drain(response, received)
        if error is not None:
            return Fetched(shown, response.status_code, error=error.detail)
    except httpx.HTTPError as exc:
        return Fetched(shown, response.status_code, error=scrub(str(exc), secrets))
    finally:
        await response.aclose()
    text = received.text()
    if not 200 <= response.status_code < 300:
        message = classify(response.status_code, scrub(text, secrets)).message
        return Fetched(shown, response.status_code, error=f"{response.status_code}: {message}")
    deep = text_too_deep(text)
    if deep is not None:
        return Fetched(shown, response.status_code, error=too_deep(deep).detail)
    try:
        return Fetched(shown, response.status_code, scrub_value(json.loads(text), secrets))
    except ValueError:
        return Fetched(shown, response.status_code, error="The reply is not JSON.")
