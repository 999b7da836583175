"""The MCP protocol as conchcheck speaks it: which revision, then ``tools/list``, over a channel.

A channel moves JSON-RPC messages (stdio or streamable HTTP); this module owns what is said
on it. Two revisions, picked by what the server answers (the specification's
docs/specification/2026-07-28/basic/versioning.mdx, "Backward Compatibility with
Initialization-Based Versions"):

- **2026-07-28** (stateless): no handshake; every request carries the version, the client's
  capabilities and its name in ``_meta``. conchcheck asks ``server/discover`` first
  (server/discover.mdx), and a ``DiscoverResult`` naming 2026-07-28 settles it.
- **2025-06-18 and before**: the ``initialize`` handshake and ``notifications/initialized``.
  The server is of that era when the probe comes back with an error that is not one of the
  2026-07-28 errors, or (each binding's rule) with silence on stdio or a 4xx without a
  JSON-RPC error on HTTP.

Then ``tools/list`` page by page (``nextCursor``) within one total deadline and a size limit
on the whole list. conchcheck reads the tools and never calls them. Whatever the server says
is masked (``Channel.mask``) before it is kept or shown: its tools here, its words in an
error by ``masked``.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, TypeGuard

from conchcheck.core.tools import Tool
from conchcheck.errors import InputError
from conchcheck.redaction import Redactor
from conchcheck.version import __version__

MODERN = "2026-07-28"
"""The stateless revision, asked for first."""
LEGACY = "2025-06-18"
"""The version ``initialize`` asks for; conchcheck accepts whatever version the server answers."""
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The revisions of the ``initialize`` era (schema/ in the specification's repository)."""
DEADLINE = 30.0
"""Seconds for the whole exchange, from starting the server to the last page."""
DISCOVER_PATIENCE = 10.0
"""Seconds a stdio server gets to answer ``server/discover`` before it is taken for one of the
``initialize`` era (stdio.mdx: "does not respond within a reasonable timeout"); the MCP Python
SDK's client waits as long (``DISCOVER_TIMEOUT_SECONDS`` in mcp/client/session.py, 2.3.0)."""
MAX_MESSAGE_BYTES = 4 << 20
"""The largest single JSON-RPC message read from a server."""
MAX_LIST_BYTES = 8 << 20
"""The largest tool list, all pages together, as JSON."""
MAX_PAGES = 100
"""Pages of ``tools/list`` read before a server that keeps sending cursors is given up on."""
HINT = "Check that the command or URL starts an MCP server that answers tools/list."
_REVISION = re.compile(r"[0-9A-Za-z._-]{1,32}")
"""A revision's name as a server may answer it (``2025-06-18``), bounded for the report."""

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key of a 2026-07-28 request's version (basic/index.mdx, "_meta")."""
UNSUPPORTED_VERSION = -32022
"""``UnsupportedProtocolVersionError``: its ``data.supported`` names the server's versions."""
MODERN_ERRORS = {-32020: "HeaderMismatch", -32021: "MissingRequiredClientCapability"}
"""The other errors only a 2026-07-28 server sends (basic/index.mdx, "Error Codes")."""


class Channel(Protocol):
    """A JSON-RPC connection to one MCP server; every error is an ``InputError`` line."""

    name: str
    """How messages name the server: its command line or URL."""
    mask: Redactor
    """Masks the keys in what the server says (``environment.speech_mask``)."""

    def send(self, message: Mapping[str, Any], deadline: float) -> None:
        """Send one message; ``deadline`` is a ``time.monotonic`` value."""

    def receive(self, waiting_for: str, deadline: float) -> Any:
        """The next message from the server, parsed; ``waiting_for`` names it in errors."""

    def probe(self, request: Mapping[str, Any], deadline: float) -> Mapping[str, Any] | None:
        """Send ``server/discover``: its response (a result or an error), or None when the
        transport's own rule says the server is of the ``initialize`` era."""


class CacheScope(str, Enum):
    """Who may keep a cached list (server/utilities/caching.mdx, "Cache Scope Field")."""

    PUBLIC = "public"
    PRIVATE = "private"


@dataclass(frozen=True, slots=True)
class CacheHint:
    """How long a 2026-07-28 list may be taken as fresh, and by whom.

    conchcheck reads each list once a probe and keeps none across probes (a probe is of the
    tools as they are now), so the hint governs nothing here; it is read as the spec says
    (absent or negative is 0) and kept for library callers that hold lists longer.
    """

    ttl_ms: int
    """The shortest ``ttlMs`` of the pages: each page is fresh on its own clock."""
    scope: CacheScope
    """``private`` when any page said so (a server must send one scope for every page)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """The tools a source lists; from an MCP server, the revision they were read in and
    (2026-07-28) the cache hint too."""

    tools: tuple[Tool, ...]
    revision: str | None = None
    """The MCP protocol revision spoken: 2026-07-28, or the version ``initialize`` answered."""
    cache: CacheHint | None = None


def list_tools(channel: Channel, deadline: float, *, patience: float | None = None) -> Listing:
    """The server's tools, in the revision its answer to ``server/discover`` picks.

    ``patience`` is how long a stdio server may keep quiet about ``server/discover`` (None on
    HTTP, whose rule is a status, not a wait).
    """
    ids = itertools.count(1)
    found, silent = _discover(channel, ids, deadline, patience)
    if found is None:
        return _legacy(channel, ids, deadline, silent=silent)
    _offers_tools(channel, found)
    return _pages(channel, ids, deadline, _meta())


def _discover(
    channel: Channel, ids: Iterator[int], deadline: float, patience: float | None
) -> tuple[Mapping[str, Any] | None, bool]:
    """The ``DiscoverResult`` of a 2026-07-28 server, or None for one of the handshake era;
    and whether the server kept quiet (stdio)."""
    wait = deadline if patience is None else min(deadline, time.monotonic() + patience)
    request = _request(next(ids), "server/discover", {"_meta": _meta()})
    answer = channel.probe(request, wait)
    if answer is None:
        return None, patience is not None
    error = answer.get("error")
    if isinstance(error, Mapping):
        # A 2026-07-28 error means a server of that era: never fall back from it (stdio.mdx,
        # "Backward Compatibility"). Any other error is a server of the handshake era; the
        # fallback is keyed to no one code, as the spec demands.
        code = error.get("code")
        if code in MODERN_ERRORS:
            raise _refused(channel, "server/discover", error)
        if code == UNSUPPORTED_VERSION:
            supported = _supported(error)
            if supported is not None and not _speaks_legacy(supported):
                raise _incompatible(channel, supported)
        return None, False
    result = answer.get("result")
    versions = result.get("supportedVersions") if isinstance(result, Mapping) else None
    if not isinstance(versions, list) or MODERN not in versions:
        # Not a DiscoverResult naming our revision: no evidence of 2026-07-28, so the
        # handshake is tried (the SDK does the same, and Go's stateful server lists only
        # handshake versions here: mcp/client/_probe.py, 2.3.0).
        return None, False
    assert isinstance(result, Mapping)
    return result, False


def _legacy(channel: Channel, ids: Iterator[int], deadline: float, *, silent: bool) -> Listing:
    """The ``initialize`` handshake, then the pages, as 2025-06-18 says."""
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "conchcheck", "version": __version__},
    }
    # A server that kept quiet about the probe and then about this is named for both.
    waiting_for = "server/discover or initialize" if silent else "initialize"
    answer = exchange(channel, next(ids), "initialize", params, deadline, waiting_for)
    error = answer.get("error")
    if isinstance(error, Mapping) and error.get("code") == UNSUPPORTED_VERSION:
        supported = _supported(error) or []
        if MODERN in supported:
            # A 2026-07-28 server that was slow to answer the probe and has since refused
            # the handshake: ask it again, now that it is up (mcp/client/_probe.py does).
            found, _ = _discover(channel, ids, deadline, None)
            if found is not None:
                _offers_tools(channel, found)
                return _pages(channel, ids, deadline, _meta())
        elif supported and not _speaks_legacy(supported):
            raise _incompatible(channel, supported)
    init = _result(channel, "initialize", answer)
    version = init.get("protocolVersion")
    if not isinstance(version, str):
        raise _bad(channel, "initialize", "its result has no 'protocolVersion' text")
    # The version goes into results.json and the report: a name, not whatever the server
    # sent (a key it was given, a megabyte of text).
    if not _REVISION.fullmatch(channel.mask.text(version)):
        what = "its 'protocolVersion' is not the name of a revision (such as 2025-06-18)"
        raise _bad(channel, "initialize", what)
    _offers_tools(channel, init)
    channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, deadline)
    return _pages(channel, ids, deadline, None, version)


def _pages(
    channel: Channel,
    ids: Iterator[int],
    deadline: float,
    meta: Mapping[str, Any] | None,
    revision: str = MODERN,
) -> Listing:
    """Every page of ``tools/list``; ``meta`` goes on each request of a 2026-07-28 server."""
    tools: list[Tool] = []
    hints: list[CacheHint] = []
    size, cursor = 0, None
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"cursor": cursor} if cursor else {}
        if meta is not None:
            params["_meta"] = meta
        result = call(channel, next(ids), "tools/list", params, deadline)
        items = result.get("tools")
        if not isinstance(items, list):
            raise _bad(channel, "tools/list", "its result has no 'tools' list")
        size += len(json.dumps(items))
        if size > MAX_LIST_BYTES:
            raise InputError(
                f"MCP server {channel.name} lists more than {MAX_LIST_BYTES >> 20} MB of tools,"
                " the most conchcheck reads.",
                hint="Point conchcheck at a server with fewer tools.",
            )
        tools.extend(as_mcp_tool(channel, item) for item in items)
        if meta is not None:
            hints.append(_hint(result))
        cursor = result.get("nextCursor")
        if not cursor:
            cache = None
            if hints:
                private = any(h.scope is CacheScope.PRIVATE for h in hints)
                scope = CacheScope.PRIVATE if private else CacheScope.PUBLIC
                cache = CacheHint(min(h.ttl_ms for h in hints), scope)
            return Listing(tuple(tools), revision, cache)
        if not isinstance(cursor, str):
            raise _bad(channel, "tools/list", "its 'nextCursor' is not text")
    raise InputError(
        f"MCP server {channel.name} sent more than {MAX_PAGES} pages of tools/list.",
        hint="The server may be repeating its cursor; check it.",
    )


def _hint(result: Mapping[str, Any]) -> CacheHint:
    """A page's ``ttlMs`` and ``cacheScope`` as caching.mdx reads them: an absent or negative
    TTL is 0 (immediately stale), and a scope that is not ``public`` is kept ``private``."""
    ttl = result.get("ttlMs")
    fresh = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else 0
    public = result.get("cacheScope") == CacheScope.PUBLIC.value
    return CacheHint(fresh, CacheScope.PUBLIC if public else CacheScope.PRIVATE)


def exchange(
    channel: Channel,
    ident: int,
    method: str,
    params: Mapping[str, Any],
    deadline: float,
    waiting_for: str | None = None,
) -> Mapping[str, Any]:
    """Send one request and return its response (a result or an error), passing over the
    messages that are not it.

    Servers may send notifications (logging, progress) or requests of their own before the
    response; conchcheck answers none of them, and a server waiting on an answer meets the
    deadline.
    """
    channel.send(_request(ident, method, params), deadline)
    while True:
        message = channel.receive(waiting_for or method, deadline)
        if answers(message, ident):
            return message


def answers(message: Any, ident: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``message`` is the response to request ``ident`` (a request from the server
    that reuses the id is not)."""
    return isinstance(message, Mapping) and message.get("id") == ident and "method" not in message


def call(
    channel: Channel, ident: int, method: str, params: Mapping[str, Any], deadline: float
) -> Mapping[str, Any]:
    """Send one request and return its result; an error answer is an ``InputError``."""
    return _result(channel, method, exchange(channel, ident, method, params, deadline))


def _result(channel: Channel, method: str, answer: Mapping[str, Any]) -> Mapping[str, Any]:
    error = answer.get("error")
    if isinstance(error, Mapping):
        raise _refused(channel, method, error)
    result = answer.get("result")
    if not isinstance(result, Mapping):
        raise _bad(channel, method, "its response has no result object")
    # An absent resultType is "complete" (basic/index.mdx, "ResultType"), as earlier servers
    # send none; "input_required" asks the client for input conchcheck never gives.
    kind = result.get("resultType", "complete")
    if kind == "input_required":
        raise _bad(channel, method, "it asked for input (resultType 'input_required')")
    if kind != "complete":
        raise _bad(channel, method, f"its resultType {str(kind)[:40]!r} is not one MCP defines")
    return result


def as_mcp_tool(channel: Channel, item: Any) -> Tool:
    """One MCP tool (``name``, ``description``, ``inputSchema``) as a ``Tool``, masked."""
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise _bad(channel, "tools/list", "a tool has no 'name'")
    name = channel.mask.text(item["name"])
    if name != item["name"]:
        # A masked name is no name a provider takes, and a prompts file can't offer it.
        raise InputError(
            f"MCP server {channel.name} lists a tool whose name holds a key ('{name}');"
            " conchcheck sends no key to a provider.",
            hint="Check the server and what it is given (--tools-env).",
        )
    schema = item.get("inputSchema")
    if not isinstance(schema, Mapping):
        raise _bad(channel, "tools/list", f"tool '{name}' has no 'inputSchema' object")
    odd = _non_finite(schema)
    if odd is not None:
        # Python reads NaN, Infinity and 1e400; no JSON writer (the request, results.json) can.
        what = f"a non-JSON-compliant number ({odd}) in the schema of tool '{name}'"
        raise _bad(channel, "tools/list", what)
    description = item.get("description")
    said = channel.mask.text(description) if isinstance(description, str) else ""
    return Tool(name, said, channel.mask.value(dict(schema)))


def _non_finite(value: Any) -> str | None:
    """``NaN``, ``Infinity`` or ``-Infinity`` when one is in ``value``, walked without
    recursion (the message's depth is bounded, but a walk needn't rely on it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def masked(read: Callable[[], Listing], mask: Redactor) -> Listing:
    """``read()``, with an error's words masked: a server's stderr, its error messages and
    HTTP bodies end up there, and may hold a key it was given or echoes."""
    try:
        return read()
    except InputError as exc:
        raise InputError(mask.text(str(exc)), hint=exc.hint) from None


def remaining(deadline: float) -> float:
    """Seconds left before ``deadline`` (a ``time.monotonic`` value), never negative."""
    return max(0.0, deadline - time.monotonic())


def request_version(message: Mapping[str, Any]) -> str | None:
    """The 2026-07-28 version a request's ``_meta`` carries, or None for a handshake-era one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else None


def _meta() -> dict[str, Any]:
    """What every 2026-07-28 request carries (basic/index.mdx, "Per-request protocol fields")."""
    return {
        VERSION_KEY: MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "conchcheck", "version": __version__},
    }


def _request(ident: int, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def _offers_tools(channel: Channel, result: Mapping[str, Any]) -> None:
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, Mapping) or "tools" not in capabilities:
        raise InputError(
            f"MCP server {channel.name} does not offer tools (no 'tools' capability).",
            hint=HINT,
        )


def _supported(error: Mapping[str, Any]) -> list[str] | None:
    """``data.supported`` of an ``UnsupportedProtocolVersionError``, when it is a list of text."""
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, Mapping) else None
    if isinstance(supported, list) and all(isinstance(v, str) for v in supported):
        return supported
    return None


def _speaks_legacy(supported: list[str]) -> bool:
    """Whether a version the server names is one ``initialize`` reaches (versioning.mdx,
    "Terminology": 2025-11-25 and earlier). Versions are names, not numbers: one this
    list doesn't hold is not taken for older."""
    return any(v in HANDSHAKE_VERSIONS for v in supported)


def _incompatible(channel: Channel, supported: list[str]) -> InputError:
    shown = ", ".join(s[:20] for s in supported[:8]) or "no version"
    return InputError(
        f"MCP server {channel.name} speaks MCP {shown}; conchcheck speaks {MODERN} and, through"
        " initialize, the revisions before it.",
        hint="Use a release of the server that speaks one of these, or a newer conchcheck.",
    )


def _refused(channel: Channel, method: str, error: Mapping[str, Any]) -> InputError:
    text = " ".join(str(error.get("message", "")).split())[:200]
    return _bad(channel, method, f"it answered error {error.get('code')}: {text}")


def _bad(channel: Channel, method: str, what: str) -> InputError:
    return InputError(
        f"MCP server {channel.name} broke the protocol on {method}: {what}.", hint=HINT
    )
