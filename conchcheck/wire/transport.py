"""HTTP for the wire layer: send one chat request, bounded, retried, and recorded as a value.

Every outcome is an ``Exchange``: a reply, a classified refusal, or a wire error. Nothing a
provider does raises out of ``Wire.send``, and nothing it does holds one longer than its
deadline or makes it hold more than the body cap. Keys go only to their provider's base URL,
never over plain http to another host unless allowed, never after a redirect, and never into
the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import random
import ssl
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import anyio
import httpx

from conchcheck.core.nesting import text_too_deep
from conchcheck.core.refusals import Refusal, RefusalKind, classify
from conchcheck.core.unparsed import read_parse_failure
from conchcheck.wire.adapter import ChatAdapter, Framing, WireRequest, WireShapeError, trim
from conchcheck.wire.chat import ChatRequest
from conchcheck.wire.exchange import (
    Exchange,
    Failed,
    Refused,
    Replied,
    RequestOutcome,
    Unparsed,
    WireError,
    WireErrorKind,
    carried,
    refused,
)
from conchcheck.wire.framing import (
    Body,
    NDJSONDecoder,
    SSEDecoder,
    drain,
    encoding_of,
    too_deep,
)
from conchcheck.wire.keys import Secret, scrub, scrub_reply, scrub_value
from conchcheck.wire.policy import Gate, Policy, Sleep
from conchcheck.wire.providers import Target, is_insecure
from conchcheck.wire.recording import ReplayTransport
from conchcheck.wire.waits import wait_until

__all__ = [
    "Exchange",
    "Gate",
    "Policy",
    "Transport",
    "Wire",
    "WireError",
    "WireErrorKind",
]

ACCEPT_ENCODING = "gzip, deflate"
"""The encodings asked for: the ones ``framing.Inflater`` decodes within the body cap."""


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
        gate: Gate | None = None,
    ) -> None:
        self.policy = policy or Policy()
        self.gate = gate
        """Admits and holds every request this wire sends, chat and catalogue alike."""
        timeout = httpx.Timeout(self.policy.read_timeout, connect=self.policy.connect_timeout)
        # Redirects are never followed: a key must not travel to wherever a 3xx points.
        # Only the encodings ``Body`` reads are asked for (httpx would add br and zstd
        # when their packages are installed, and decode them unbounded).
        self.client = httpx.AsyncClient(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            trust_env=False,
            verify=_tls(),
            headers={"accept-encoding": ACCEPT_ENCODING},
        )
        if isinstance(transport, ReplayTransport):  # no waiting, the same waits every replay
            sleep, jitter = transport.sleep, transport.jitter
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
        self,
        target: Target,
        adapter: ChatAdapter,
        request: ChatRequest,
        key: Secret | None,
        gate: Gate | None = None,
    ) -> Exchange:
        """Send ``request`` to ``target``, retrying what may succeed later; never raises.

        ``gate`` admits every attempt, the first and each retry, and holds its slot while the
        attempt is in flight; a retry it does not admit is not made.
        """
        gate = gate or self.gate
        if target.route is not None:
            request = replace(request, route=target.route)
        wire = adapter.build(target.base_url, request, key.reveal() if key else None)
        secrets = (key,)
        method, url = wire.method, scrub(wire.url, secrets)
        headers, body = wire.redacted_headers(), json.loads(scrub(json.dumps(wire.body), secrets))

        def exchange(attempt: _Attempt, attempts: int, latency: float = 0.0) -> Exchange:
            return Exchange(
                method,
                url,
                headers,
                body,
                attempt.outcome,
                attempt.status,
                attempts,
                latency,
                attempt.body,
                tuple(waits),
            )

        waits: list[float] = []
        if key is not None and not self.policy.allow_insecure and is_insecure(wire.url):
            detail = (
                f"Refused to send the key over plain http to {url}: "
                "use https, or --allow-insecure for a trusted network."
            )
            return exchange(_failed(WireErrorKind.INSECURE, detail), 0)
        spent = 0.0
        attempt = 0
        previous: _Attempt | None = None
        while True:
            async with self._slot(target, gate):
                # Admitted once its slot is held, as it goes: a request that waited for a slot
                # while the probe stopped (a budget spent, an endpoint gone silent) stays unsent.
                if gate is not None and not gate.admit():
                    detail = "The probe's request budget is spent; the request was not sent."
                    return exchange(_failed(WireErrorKind.BUDGET, detail), attempt)
                attempt += 1
                started = time.perf_counter()
                result = await self._attempt(adapter, wire, key)
                latency = (time.perf_counter() - started) * 1000
                if gate is not None:
                    gate.note(result.outcome, attempt)
            wait = self._retry_wait(result.outcome, attempt)
            if wait is None or spent + wait > self.policy.retry_budget:
                return exchange(result, attempt, latency)
            if previous is not None and _same_error(previous, result, request):
                return exchange(result, attempt, latency)
            previous = result
            if gate is not None and not gate.admit(peek=True):
                # The budget would refuse the retry: keep what came, don't wait for nothing.
                return exchange(result, attempt, latency)
            waits.append(wait)
            spent += wait
            await self.sleep(wait)

    def _slot(self, target: Target, gate: Gate | None) -> AbstractAsyncContextManager[object]:
        if gate is not None:
            return gate.slot()
        if self.policy.concurrency is None:
            return contextlib.nullcontext()
        return self._limits.setdefault(
            target.provider.name, asyncio.Semaphore(self.policy.concurrency)
        )

    def _retry_wait(self, outcome: RequestOutcome, attempt: int) -> float | None:
        if attempt > self.policy.retries:
            return None
        match outcome:
            case Refused(refusal):
                # A quota, a schema or any other 4xx refusal is final; only a rate limit and
                # a failing server (5xx, Anthropic's 529) may succeed later.
                if not refusal.retryable or refusal.kind is RefusalKind.QUOTA:
                    return None
                if refusal.retry_after is not None:
                    after = refusal.retry_after
                    return after if after <= self.policy.max_wait else None
            case Failed(error):
                if error.kind not in (WireErrorKind.CONNECT, WireErrorKind.TIMEOUT):
                    return None
            case Replied() | Unparsed():
                # An answer, even one the server couldn't parse: asking again asks the model
                # again, and at temperature 0 it writes the same output.
                return None
        base = min(self.policy.max_wait, self.policy.backoff * 2 ** (attempt - 1))
        wait: float = round(base * (0.5 + self.jitter() / 2), 3)
        return wait

    async def _attempt(
        self, adapter: ChatAdapter, wire: WireRequest, key: Secret | None
    ) -> _Attempt:
        progress = _Progress((key,))
        deadline = self.policy.read_timeout
        try:
            # One deadline over the whole attempt: httpx's timeouts bound each socket
            # operation, so a byte every half second would hold it forever.
            with anyio.fail_after(deadline):
                attempt = await self._exchange(adapter, wire, progress)
        except TimeoutError:
            where = (
                "(connect, send, status and headers)"
                if progress.status is None
                else f"after {progress.body.size if progress.body else 0} bytes of the reply"
            )
            detail = f"No complete reply within the {deadline:g} s deadline {where}."
            attempt = progress.cut(WireError(WireErrorKind.TIMEOUT, detail))
        finally:
            if progress.response is not None:
                await progress.response.aclose()
        return self._bounded(attempt)

    async def _exchange(
        self, adapter: ChatAdapter, wire: WireRequest, progress: _Progress
    ) -> _Attempt:
        secrets = progress.secrets
        try:
            request = self.client.build_request(
                wire.method, wire.url, headers=dict(wire.headers), json=wire.body
            )
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            return _failed(WireErrorKind.TIMEOUT, f"No answer in time ({type(exc).__name__}).")
        except httpx.HTTPError as exc:
            text = scrub(str(exc) or type(exc).__name__, secrets).rstrip(".")
            return _failed(WireErrorKind.CONNECT, f"The request failed: {text}.")
        progress.response, progress.status = response, response.status_code
        try:
            return await self._read(adapter, wire, response, secrets, progress)
        except httpx.TimeoutException as exc:
            detail = f"The reply stalled ({type(exc).__name__})."
            return progress.cut(WireError(WireErrorKind.TIMEOUT, detail))
        except httpx.HTTPError as exc:
            text = (str(exc) or type(exc).__name__).rstrip(".")
            return progress.cut(WireError(WireErrorKind.CONNECT, f"The reply broke off: {text}."))

    def _bounded(self, attempt: _Attempt) -> _Attempt:
        """``attempt``, or a failure when one of its tool calls' arguments is too large."""
        reply = carried(attempt.outcome)
        detail = self.policy.oversized(reply.tool_calls if reply is not None else ())
        if detail is None:
            return attempt
        error = WireError(WireErrorKind.TOO_LARGE, detail)
        return _Attempt(Failed(error), attempt.status, attempt.body)

    async def _read(
        self,
        adapter: ChatAdapter,
        wire: WireRequest,
        response: httpx.Response,
        secrets: tuple[Secret | None, ...],
        progress: _Progress,
    ) -> _Attempt:
        status = response.status_code
        if 300 <= status < 400:
            where = scrub(response.headers.get("location", "?"), secrets)
            detail = f"The provider answered {status}, a redirect to {where}; not followed."
            return _failed(WireErrorKind.REDIRECT, detail, status)
        streaming = wire.stream and 200 <= status < 300
        decoder: SSEDecoder | NDJSONDecoder | None = None
        if streaming:
            decoder = (
                SSEDecoder(done_marker=getattr(adapter, "done_marker", "[DONE]"))
                if adapter.framing is Framing.SSE
                else NDJSONDecoder()
            )
        reducer = adapter.reducer() if streaming else None
        progress.body = Body(encoding_of(response), self.policy.max_body, decoder, reducer)
        error = await drain(response, progress.body)
        if error is not None and error.kind is WireErrorKind.TOO_LARGE:
            return _Attempt(Failed(error), status)
        if error is not None:
            return progress.cut(error)
        # One copy of the body at a time: a reply may be as large as the cap, and a probe
        # holds several in flight (bench/hostile.py measures the peak).
        raw = b"".join(progress.body.chunks)
        progress.body.chunks = [raw]
        decoded = raw.decode("utf-8", errors="replace")
        text = scrub(trim(decoded), secrets)
        if not 200 <= status < 300:
            whole = scrub(decoded, secrets)
            failure = read_parse_failure(status, whole)
            if failure is not None:
                return _Attempt(Unparsed(failure), status, text)
            # The refusal's fields are read out of JSON, so a key escaped there (\u0073k-…)
            # comes back whole: scrubbed again as read.
            refusal = scrub_value(classify(status, whole, dict(response.headers)), secrets)
            if refusal.retryable and refusal.retry_after is None:
                # A wait named as a moment (an HTTP-date, a reset time) needs the clock.
                named = {k.lower(): v for k, v in response.headers.items()}
                wait = wait_until(named, datetime.now(timezone.utc))
                if wait is not None:
                    refusal = dataclasses.replace(refusal, retry_after=wait)
            return _Attempt(refused(refusal), status, text)
        if reducer is None and (deep := text_too_deep(decoded)) is not None:
            return progress.cut(too_deep(deep))
        del decoded
        try:
            if decoder is not None and reducer is not None:
                for event, data in decoder.close():
                    reducer.feed(data, event)
                terminated = isinstance(decoder, SSEDecoder) and decoder.done
                reply = reducer.finish(terminated=terminated)
            else:
                reply = adapter.parse(raw)
        except WireShapeError as exc:
            partial = exc.partial
            if partial is not None:
                partial = scrub_reply(partial, "", secrets)[0]
            error = WireError(
                WireErrorKind.BAD_SHAPE, scrub(str(exc), secrets), exc.kind.value, partial
            )
            return _Attempt(Failed(error), status, text)
        # A provider may echo a key in what it sends back; the record never keeps it.
        reply, text = scrub_reply(reply, text, secrets)
        inner = reply.refusal
        if inner is not None:
            # llama-server throws its parse failure after a stream's headers: an error event.
            failure = read_parse_failure(status, inner.message, in_stream=True)
            if failure is not None:
                return _Attempt(Unparsed(failure, reply), status, text)
            return _Attempt(refused(inner, reply), status, text)
        return _Attempt(Replied(reply), status, text)


class _Progress:
    """What one attempt has received so far: the response and its body.

    A deadline or a broken connection cuts the attempt short; ``cut`` keeps what came.
    """

    def __init__(self, secrets: tuple[Secret | None, ...]) -> None:
        self.secrets = secrets
        self.response: httpx.Response | None = None
        self.status: int | None = None
        self.body: Body | None = None

    def cut(self, error: WireError) -> _Attempt:
        """The attempt failed with ``error``: keep the body and the reply read so far."""
        body = self.body
        partial = body.partial() if body is not None else None
        if partial is not None:
            partial = scrub_reply(partial, "", self.secrets)[0]
        text = scrub(trim(body.text()), self.secrets) if body is not None else ""
        failed = dataclasses.replace(
            error, detail=scrub(error.detail, self.secrets), partial=partial
        )
        return _Attempt(Failed(failed), self.status, text)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """What one attempt came to, before the exchange around it is known."""

    outcome: RequestOutcome
    status: int | None = None
    body: str = ""


_TRANSIENT_STATUS = frozenset({429, 502, 503, 504, 529})
"""Statuses that speak of the server's load or a hop on the way, not of the request: the same
body twice (Anthropic's 529 "Overloaded" always reads alike) still says "later"."""


def _same_error(before: _Attempt, now: _Attempt, request: ChatRequest) -> bool:
    """Whether ``now`` repeats ``before``'s error word for word for a request at temperature 0:
    the same request would get it again (llama-cpp-python's 500 for a request its validation
    refuses, vector llamacpp-python-500-validation-error-names-the-tool-field)."""
    if request.temperature != 0 or now.status != before.status or now.body != before.body:
        return False
    match now.outcome, before.outcome:
        case Refused(refusal), Refused(earlier):
            return refusal == earlier and not _transient(refusal)
        case _:
            return False


def _transient(refusal: Refusal) -> bool:
    return (
        refusal.kind is RefusalKind.RATE_LIMIT
        or refusal.status in _TRANSIENT_STATUS
        or refusal.code == "overloaded_error"
        or refusal.retry_after is not None
    )


def _failed(kind: WireErrorKind, detail: str, status: int | None = None) -> _Attempt:
    return _Attempt(Failed(WireError(kind, detail)), status)


@functools.cache
def _tls() -> ssl.SSLContext:
    # Building the certificate store takes tens of milliseconds; one per process is enough.
    return httpx.create_ssl_context()
