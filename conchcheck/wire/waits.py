"""Waits a rate limit names as a moment, not a duration: they need the clock, which the pure
core reads none of (``conchcheck.core.refusals`` reads the durations).

- ``Retry-After`` as an HTTP-date (RFC 9110, section 10.2.3: ``Wed, 21 Oct 2015 07:28:00 GMT``);
- Anthropic's ``anthropic-ratelimit-requests-reset``, an RFC 3339 time
  (docs.anthropic.com/en/api/rate-limits, "Response headers");
- ``x-ratelimit-reset``, GitHub's and others' Unix time in seconds (a small number is read as
  seconds from now, as some servers mean it).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

MAX_WAIT = 3600.0
"""A moment further off than this is no wait a probe takes seriously (a clock gone wrong)."""
_EPOCH_FROM = 1_000_000_000
"""A reset at or past this is a Unix time (2001); below it, seconds from now."""


def wait_until(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds from ``now`` to the moment the headers (lower-case names) say to come back;
    None when they name none, or a moment past (a wait of 0 would be no wait at all)."""
    moments = (
        _http_date(headers.get("retry-after", "")),
        _rfc3339(headers.get("anthropic-ratelimit-requests-reset", "")),
        _unix(headers.get("x-ratelimit-reset", ""), now),
    )
    for moment in moments:
        if moment is not None:
            wait = (moment - now).total_seconds()
            return round(wait, 3) if 0 < wait <= MAX_WAIT else None
    return None


def _http_date(text: str) -> datetime | None:
    if not text or text.strip().replace(".", "", 1).isdigit():
        return None  # seconds: the core's to read
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _rfc3339(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _unix(text: str, now: datetime) -> datetime | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    if value >= _EPOCH_FROM:
        return datetime.fromtimestamp(value, timezone.utc)
    return datetime.fromtimestamp(now.timestamp() + value, timezone.utc)
