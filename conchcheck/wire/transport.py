"""HTTP for the wire layer: send one chat request, bounded, retried, and recorded as a value.

Every outcome is an ``Exchange``: a reply, a classified refusal, or a wire error. Nothing a
provider does raises out of ``Wire.send``. Keys go only to their provider's base URL, never
over plain http to another host unless allowed, never after a redirect, and never into the
record.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import httpx

from conchcheck.core.refusals import Refusal, RefusalKind, classify
from conchcheck.wire.adapter import ChatAdapter, Framing, WireRequest, WireShapeError, trim
from conchcheck.wire.chat import ChatRequest, Reply
from conchcheck.wire.framing import NDJSONDecoder, SSEDecoder
from conchcheck.wire.keys import Secret, scrub
from conchcheck.wire.providers import Target, is_loopback


class WireErrorKind(str, Enum):
    """Why a request got no usable answer."""

    TIMEOUT = "timeout"
    CONNECT = "connect"
    TOO_LARGE = "too_large"
    BAD_SHAPE = "bad_shape"
    REDIRECT = "redirect"
    INSECURE = "insecure"


@dataclass(frozen=True, slots=True)
class WireError:
    """A request that got no usable answer; ``detail`` is a sentence, keys scrubbed."""

    kind: WireErrorKind
    detail: str
    shape: str | None = None
    """For ``bad_shape``: the ``ShapeKind`` value (html_page, stream_unterminated, …)."""
    partial: Reply | None = None
    """What could be read before the shape went wrong (a stream cut before its end)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """Limits on one request: timeouts, retries, body size."""

    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    retries: int = 3
    """Retries after the first attempt, for rate limits, 5xx and connection failures."""
    backoff: float = 0.5
    """The first wait; each retry doubles it, with jitter, up to ``max_wait``."""
    max_wait: float = 30.0
    """The longest single wait; a provider asking for longer is not retried."""
    retry_budget: float = 90.0
    """Total seconds of waiting allowed across one request's retries."""
    max_body: int = 8 << 20
    """Bytes read of a reply before it is abandoned as too large."""
    allow_insecure: bool = False
    """Send keys over plain http to a host that is not this machine."""
    concurrency: int = 4
    """Requests in flight at once to one provider."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and what came of it, keys redacted.

    ``reply`` is set when a 2xx was read, ``refusal`` when the provider refused (a non-2xx,
    or an error event inside a 2xx stream, which sets both), ``error`` when no usable
    answer came (timeout, connection, a 2xx of the wrong shape, too large, a redirect).
    """

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: Any
    status: int | None = None
    reply: Reply | None = None
    refusal: Refusal | None = None
    error: WireError | None = None
    attempts: int = 1
    latency_ms: float = 0.0
    body: str = ""
    """The reply body (or stream) as received, trimmed, keys scrubbed."""
    waits: tuple[float, ...] = field(default=())
    """Seconds waited before each retry."""


Sleep = Callable[[float], Awaitable[None]]
Transport = httpx.AsyncBaseTransport
"""What tests pass as ``transport=`` (``httpx.MockTransport``); named so callers need no httpx."""


class Wire:
    """Sends chat requests over one httpx client; tests pass ``transport=``."""

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy or Policy()
        timeout = httpx.Timeout(self.policy.read_timeout, connect=self.policy.connect_timeout)
        # Redirects are never followed: a key must not travel to wherever a 3xx points.
        self.client = httpx.AsyncClient(
            transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
        )
        self.sleep = sleep
        self.jitter = jitter
        self._limits: dict[str, asyncio.Semaphore] = {}

    async def aclose(self) -> None:
        """Close the client and its connections."""
        await self.client.aclose()

    async def __aenter__(self) -> Wire:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def send(
        self, target: Target, adapter: ChatAdapter, request: ChatRequest, key: Secret | None
    ) -> Exchange:
        """Send ``request`` to ``target``, retrying what may succeed later; never raises."""
        wire = adapter.build(target.base_url, request, key.reveal() if key else None)
        record = {
            "method": wire.method,
            "url": scrub(wire.url, (key,)),
            "request_headers": wire.redacted_headers(),
            "request_body": json.loads(scrub(json.dumps(wire.body), (key,))),
        }
        if key is not None and not self.policy.allow_insecure and _insecure(wire.url):
            error = WireError(
                WireErrorKind.INSECURE,
                f"Refused to send the key over plain http to {record['url']}: "
                "use https, or --allow-insecure for a trusted network.",
            )
            return Exchange(**record, error=error, attempts=0)
        limit = self._limits.setdefault(
            target.provider.name, asyncio.Semaphore(self.policy.concurrency)
        )
        waits: list[float] = []
        spent = 0.0
        attempt = 0
        while True:
            attempt += 1
            async with limit:
                started = time.perf_counter()
                outcome = await self._attempt(adapter, wire, key)
                latency = (time.perf_counter() - started) * 1000
            wait = self._retry_wait(outcome, attempt)
            if wait is None or spent + wait > self.policy.retry_budget:
                return Exchange(**record, **outcome, attempts=attempt, latency_ms=latency,
                                waits=tuple(waits))  # fmt: skip
            waits.append(wait)
            spent += wait
            await self.sleep(wait)

    def _retry_wait(self, outcome: dict[str, Any], attempt: int) -> float | None:
        if attempt > self.policy.retries:
            return None
        refusal: Refusal | None = outcome.get("refusal")
        error: WireError | None = outcome.get("error")
        if refusal is not None:
            # A quota, a schema or any other 4xx refusal is final; only a rate limit and a
            # failing server (5xx, Anthropic's 529) may succeed later.
            if not refusal.retryable or refusal.kind is RefusalKind.QUOTA:
                return None
            if refusal.retry_after is not None:
                return refusal.retry_after if refusal.retry_after <= self.policy.max_wait else None
        elif error is None or error.kind not in (WireErrorKind.CONNECT, WireErrorKind.TIMEOUT):
            return None
        base = min(self.policy.max_wait, self.policy.backoff * 2 ** (attempt - 1))
        wait: float = round(base * (0.5 + self.jitter() / 2), 3)
        return wait

    async def _attempt(
        self, adapter: ChatAdapter, wire: WireRequest, key: Secret | None
    ) -> dict[str, Any]:
        secrets = (key,)
        try:
            request = self.client.build_request(
                wire.method, wire.url, headers=dict(wire.headers), json=wire.body
            )
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            return _error(WireErrorKind.TIMEOUT, f"No answer in time ({type(exc).__name__}).")
        except httpx.HTTPError as exc:
            text = scrub(str(exc) or type(exc).__name__, secrets)
            return _error(WireErrorKind.CONNECT, f"The request failed: {text}.")
        try:
            return await self._read(adapter, wire, response, secrets)
        except httpx.TimeoutException as exc:
            return _error(WireErrorKind.TIMEOUT, f"The reply stalled ({type(exc).__name__}).")
        except httpx.HTTPError as exc:
            text = scrub(str(exc) or type(exc).__name__, secrets)
            return _error(WireErrorKind.CONNECT, f"The reply broke off: {text}.")
        finally:
            await response.aclose()

    async def _read(
        self,
        adapter: ChatAdapter,
        wire: WireRequest,
        response: httpx.Response,
        secrets: tuple[Secret | None, ...],
    ) -> dict[str, Any]:
        status = response.status_code
        if 300 <= status < 400:
            where = scrub(response.headers.get("location", "?"), secrets)
            detail = f"The provider answered {status}, a redirect to {where}; not followed."
            return {"status": status, **_error(WireErrorKind.REDIRECT, detail)}
        streaming = wire.stream and 200 <= status < 300
        decoder: SSEDecoder | NDJSONDecoder | None = None
        if streaming:
            decoder = (
                SSEDecoder(done_marker=getattr(adapter, "done_marker", "[DONE]"))
                if adapter.framing is Framing.SSE
                else NDJSONDecoder()
            )
        reducer = adapter.reducer() if streaming else None
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.policy.max_body:
                detail = f"The reply passed {self.policy.max_body} bytes and was abandoned."
                return {"status": status, **_error(WireErrorKind.TOO_LARGE, detail)}
            chunks.append(chunk)
            if decoder is not None and reducer is not None:
                for event, data in decoder.feed(chunk):
                    reducer.feed(data, event)
        body = b"".join(chunks)
        text = scrub(trim(body.decode("utf-8", errors="replace")), secrets)
        if not 200 <= status < 300:
            whole = scrub(body.decode("utf-8", errors="replace"), secrets)
            refusal: Refusal | None = classify(status, whole, dict(response.headers))
            return {"status": status, "refusal": refusal, "body": text}
        try:
            if decoder is not None and reducer is not None:
                for event, data in decoder.close():
                    reducer.feed(data, event)
                terminated = isinstance(decoder, SSEDecoder) and decoder.done
                reply = reducer.finish(terminated=terminated)
            else:
                reply = adapter.parse(body)
        except WireShapeError as exc:
            partial = exc.partial
            if partial is not None:
                partial = dataclasses.replace(partial, raw=scrub(partial.raw, secrets))
            error = WireError(
                WireErrorKind.BAD_SHAPE, scrub(str(exc), secrets), exc.kind.value, partial
            )
            return {"status": status, "error": error, "body": text}
        # A provider may echo a key in what it sends back; the record never keeps it.
        refusal = reply.refusal
        if refusal is not None:
            refusal = dataclasses.replace(refusal, message=scrub(refusal.message, secrets))
        reply = dataclasses.replace(reply, raw=scrub(reply.raw, secrets), refusal=refusal)
        if refusal is not None:
            return {"status": status, "refusal": refusal, "reply": reply, "body": text}
        return {"status": status, "reply": reply, "body": text}


@dataclass(frozen=True, slots=True)
class Fetched:
    """A plain JSON request's outcome (catalogues): the status and data, or why not."""

    url: str
    status: int | None = None
    data: Any = None
    error: str | None = None
    """A sentence, keys scrubbed, when no JSON came back."""


async def fetch_json(
    wire: Wire,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: Any = None,
    key: Secret | None = None,
) -> Fetched:
    """One JSON request with the same rules as chat: no redirects, key safety, size cap."""
    secrets = (key,)
    shown = scrub(url, secrets)
    if key is not None and not wire.policy.allow_insecure and _insecure(url):
        return Fetched(shown, error="Refused to send the key over plain http to another host.")
    try:
        request = wire.client.build_request(method, url, headers=headers, json=body)
        response = await wire.client.send(request, stream=True)
    except httpx.HTTPError as exc:
        return Fetched(shown, error=scrub(f"{type(exc).__name__}: {exc}", secrets))
    try:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > wire.policy.max_body:
                return Fetched(shown, response.status_code, error="The reply is too large.")
            chunks.append(chunk)
    except httpx.HTTPError as exc:
        return Fetched(shown, response.status_code, error=scrub(str(exc), secrets))
    finally:
        await response.aclose()
    text = b"".join(chunks).decode("utf-8", errors="replace")
    if not 200 <= response.status_code < 300:
        message = classify(response.status_code, scrub(text, secrets)).message
        return Fetched(shown, response.status_code, error=f"{response.status_code}: {message}")
    try:
        return Fetched(shown, response.status_code, json.loads(text))
    except ValueError:
        return Fetched(shown, response.status_code, error="The reply is not JSON.")


def _error(kind: WireErrorKind, detail: str) -> dict[str, Any]:
    return {"error": WireError(kind, detail)}


def _insecure(url: str) -> bool:
    return url.startswith("http://") and not is_loopback(url)
