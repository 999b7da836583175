"""The capability file apps and CI read: ``entry`` (what one probe found about one endpoint)
and ``file`` (the YAML file: versioned, checked on every read and write, atomic, locked)."""

from __future__ import annotations

from conchcheck.capabilities.entry import Entry, entry_to_data, expires, parse_timestamp, timestamp
from conchcheck.capabilities.file import (
    CORRUPT_HINT,
    LOCK_TIMEOUT,
    READS,
    SCHEMA_VERSION,
    CacheError,
    CapabilityFile,
    default_path,
    entry_from_data,
    render,
)

__all__ = [
    "CORRUPT_HINT",
    "LOCK_TIMEOUT",
    "READS",
    "SCHEMA_VERSION",
    "CacheError",
    "CapabilityFile",
    "Entry",
    "default_path",
    "entry_from_data",
    "entry_to_data",
    "expires",
    "parse_timestamp",
    "render",
    "timestamp",
]
