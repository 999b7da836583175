"""The capability file apps and CI read: ``entry`` (what one probe found about one endpoint)
and ``file`` (the YAML file: versioned, checked on every read and write, atomic, locked);
``exports`` writes entries where other stacks read capability, in the ``formats``.

Each name loads on first use, so the CLI can name the export formats (``formats``) without
paying for YAML and JSON Schema at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conchcheck.capabilities.entry import (
        Entry,
        entry_to_data,
        expires,
        parse_timestamp,
        timestamp,
    )
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

_HOME = {
    **dict.fromkeys(
        ("Entry", "entry_to_data", "expires", "parse_timestamp", "timestamp"),
        "conchcheck.capabilities.entry",
    ),
    **dict.fromkeys(
        (
            "CORRUPT_HINT",
            "LOCK_TIMEOUT",
            "READS",
            "SCHEMA_VERSION",
            "CacheError",
            "CapabilityFile",
            "default_path",
            "entry_from_data",
            "render",
        ),
        "conchcheck.capabilities.file",
    ),
}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'conchcheck.capabilities' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
