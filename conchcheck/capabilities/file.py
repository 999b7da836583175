"""The capability file: one YAML entry per endpoint (provider + model + base URL + API
family), for apps and CI. Versioned and checked by ``jsonschemas/capabilities.schema.json``
on every read and write; written atomically under a lock, never over a corrupt file.

Version 1 entries don't name their API. One with ``strict_mode`` is the Responses API's
(only its probe tries strict mode); any other is its provider's own (``default_api``), which
``--api`` without strict mode left no trace of. The next change writes them as version 3,
which adds the knobs-and-losses fields (absent in older entries: not measured).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from conchcheck.capabilities.entry import Entry, entry_of, entry_to_data, parse_timestamp
from conchcheck.errors import ConchcheckError, InputError
from conchcheck.files import folder_problem, read_bytes
from conchcheck.redaction import held
from conchcheck.replacement import replace_file
from conchcheck.wire.providers import ApiFamily
from conchcheck.yamlevents import FAST_LOADER, json_path, locate, yaml_hazard

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

SCHEMA_VERSION = 4
"""Written; versions 1 (before entries named their API family), 2 (before the knobs and
losses) and 3 (before the tools' cost) are still read."""
READS = (1, 2, 3, 4)
LOCK_TIMEOUT = 30.0
"""Seconds a write waits for another conchcheck's lock before giving up."""
CORRUPT_HINT = "Move it aside or run `conchcheck cache clear --force`."
_HEADER = "# conchcheck capability file: written by `conchcheck probe`, read by apps and CI.\n"


class CacheError(ConchcheckError):
    """The capability file is corrupt, of an unknown version, unreadable or locked."""


def default_path(environ: Mapping[str, str] | None = None, *, platform: str | None = None) -> Path:
    """``$CONCHCHECK_CACHE``, else ``<user cache dir>/conchcheck/capabilities.yaml``.

    The only place this module reads the environment; ``platform`` defaults to sys.platform.
    """
    env = os.environ if environ is None else environ
    if env.get("CONCHCHECK_CACHE"):
        return Path(env["CONCHCHECK_CACHE"])
    return _user_cache_dir(env, platform or sys.platform) / "conchcheck" / "capabilities.yaml"


def _user_cache_dir(env: Mapping[str, str], platform: str) -> Path:
    windows = platform == "win32"
    home = Path((env.get("USERPROFILE") if windows else None) or env.get("HOME") or Path.home())
    if windows:
        local = env.get("LOCALAPPDATA")
        return Path(local) if local else home / "AppData" / "Local"
    if platform == "darwin":
        return home / "Library" / "Caches"
    # XDG: a relative XDG_CACHE_HOME is invalid and must be ignored.
    xdg = env.get("XDG_CACHE_HOME", "")
    return Path(xdg) if Path(xdg).is_absolute() else home / ".cache"


def entry_from_data(data: Mapping[str, Any]) -> Entry:
    """An entry from plain data; CacheError naming the field when it breaks the schema."""
    error = best_match(_validator().iter_errors(_document([dict(data)])))
    if error is not None:
        raise CacheError(
            f"Not a capability entry: {_relative(error)}: {error.message}.",
            hint="Capability entries follow conchcheck/jsonschemas/capabilities.schema.json.",
        )
    return entry_of(data)


def render(entries: Iterable[Entry]) -> str:
    """The text of a capability file holding ``entries``, sorted by key."""
    data = _document([entry_to_data(e) for e in sorted(entries, key=lambda e: e.key)])
    # A key this process holds is never written, wherever it came in (a model's name).
    data = held().value(data)
    return _HEADER + yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000
    )


class CapabilityFile:
    """The capability file at ``path``: read freely, changed under a lock, replaced atomically."""

    def __init__(self, path: Path, *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.path = Path(path)
        self.lock_timeout = lock_timeout

    def entries(self) -> list[Entry]:
        """Every entry; [] when there is no file; CacheError when it is corrupt or unreadable."""
        return self._load(self._target())

    def check(self) -> None:
        """CacheError unless the file reads as valid now and a write can replace it later.

        A probe calls this before its first request, so a corrupt file, a folder or an
        unwritable place is found before anything is spent or written.
        """
        self.entries()
        folder = self._target().parent
        problem = folder_problem(folder)
        if problem is not None:
            raise CacheError(
                f"{folder}: {problem}, so the capability file {self.path} can't be written.",
                hint="Choose another file with --cache.",
            )

    def get(self, provider: str, model: str, endpoint: str, api: ApiFamily) -> Entry | None:
        """The entry for this provider, model, endpoint and API family, or None."""
        key = (provider, model, endpoint, api)
        return next((e for e in self.entries() if e.key == key), None)

    def put(self, entry: Entry) -> None:
        """Insert ``entry``, or replace the one with its key."""
        error = best_match(_validator().iter_errors(_document([entry_to_data(entry)])))
        if error is not None:
            raise CacheError(
                f"The capability entry for {entry.provider} {entry.model} was not written: "
                f"{_relative(error)}: {_safe_message(error)}.",
                hint="An endpoint is a base URL with no credentials, query or fragment; "
                "anything else here is a bug in conchcheck, please report it.",
            )
        self._update(lambda old: [*(e for e in old if e.key != entry.key), entry])

    def remove(
        self,
        provider: str | None = None,
        model: str | None = None,
        endpoint: str | None = None,
        api: ApiFamily | None = None,
    ) -> int:
        """Remove the entries matching every name given (all when none is); how many went."""

        def keep(e: Entry) -> bool:
            wanted = (provider, model, endpoint, api)
            return not all(w is None or w == have for w, have in zip(wanted, e.key, strict=True))

        if not self._target().exists():
            return 0
        old, new = self._update(lambda old: [e for e in old if keep(e)])
        return len(old) - len(new)

    def clear(self, *, force: bool = False) -> None:
        """Delete the file; a corrupt or unreadable one only with ``force``."""
        if not self._target().exists():
            return
        with self._locked() as target:
            if not force:
                self._load(target)
            try:
                target.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._failed("be deleted", exc) from None

    def _target(self) -> Path:
        # Follow a symlink (a dotfiles checkout, say) so the replace keeps the link.
        return self.path.resolve()

    def _update(
        self, change: Callable[[list[Entry]], list[Entry]]
    ) -> tuple[list[Entry], list[Entry]]:
        """Read, change and write back under the lock; a corrupt file raises and stays.

        What is written has passed the schema: old entries on this read, a new one in put().
        """
        with self._locked() as target:
            old = self._load(target)
            new = change(old)
            if new != old:
                self._write(target, render(new))
        return old, new

    @contextmanager
    def _locked(self) -> Iterator[Path]:
        target = self._target()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target.with_name(target.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise self._failed("be locked", exc) from None
        try:
            deadline = time.monotonic() + self.lock_timeout
            while not _try_lock(fd):
                if time.monotonic() >= deadline:
                    raise CacheError(
                        f"Another conchcheck holds the lock on {self.path}; "
                        f"gave up after {self.lock_timeout:g} s.",
                        hint="Wait for the other run to finish, or choose another file "
                        "with --cache.",
                    )
                time.sleep(0.01)
            try:
                yield target
            finally:
                _unlock(fd)
        finally:
            os.close(fd)

    def _write(self, target: Path, text: str) -> None:
        # Under the lock: another writer's file being written is never swept (replacement).
        try:
            replace_file(target, text, durable=True)
        except OSError as exc:
            raise self._failed("be written", exc) from None

    def _load(self, target: Path) -> list[Entry]:
        try:
            raw = read_bytes(target)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._failed("be read", exc) from None
        except InputError as exc:
            raise CacheError(str(exc), hint=CORRUPT_HINT) from None
        return _parse(str(self.path), raw)

    def _failed(self, doing: str, exc: OSError) -> CacheError:
        reason = "is a folder" if self.path.is_dir() else f"cannot {doing} ({exc.strerror})"
        return CacheError(
            f"{self.path}: {reason}.",
            hint="Check the permissions and free space, or choose another file with --cache.",
        )


def _parse(name: str, raw: bytes) -> list[Entry]:
    """The entries in a capability file's bytes; CacheError when it is corrupt."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CacheError(f"{name}: not UTF-8 text (byte {exc.start}).", hint=CORRUPT_HINT) from None
    if not text.strip():
        return []  # an empty file (made by `touch`, say) holds nothing to lose
    data = _yaml(name, text)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if type(version) is int and version not in READS:
        raise CacheError(
            f"{name}:{locate(text, ['schema_version'])}: $.schema_version: "
            f"version {version} is not one this conchcheck reads (it reads "
            f"{', '.join(map(str, READS[:-1]))} and {READS[-1]}).",
            hint=f"A newer conchcheck may have written it: upgrade. Or: {CORRUPT_HINT}",
        )
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        raise _located(name, text, list(error.absolute_path), error.message)
    for index, item in enumerate(data["entries"]):
        for field in ("probed_at", "expires_at"):
            try:
                parse_timestamp(item[field])
            except ValueError:
                path: list[str | int] = ["entries", index, field]
                raise _located(name, text, path, f"{item[field]!r} is not a real date") from None
    return [entry_of(item) for item in data["entries"]]


def _yaml(name: str, text: str) -> Any:
    # Nothing an app reads may hang or crash it: no aliases (a "billion laughs" bomb) and no
    # nesting deeper than any entry has, refused before a node is composed.
    hazard = yaml_hazard(text)
    if hazard is not None:
        raise CacheError(hazard.located(name) + ".", hint=CORRUPT_HINT)
    with suppress(yaml.YAMLError):
        return yaml.load(text, Loader=FAST_LOADER)
    # libyaml words its errors its own way; the pure loader's words are the same everywhere.
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}: $" if mark else name
        column = f" (column {mark.column + 1})" if mark else ""
        raise CacheError(f"{where}: not YAML: {exc.problem}{column}.", hint=CORRUPT_HINT) from None
    except yaml.YAMLError:
        raise CacheError(f"{name}: not YAML.", hint=CORRUPT_HINT) from None
    except RecursionError:  # yaml_hazard stops this; a last resort all the same
        raise CacheError(f"{name}:1: $: nested too deep to read.", hint=CORRUPT_HINT) from None


def _located(name: str, text: str, path: list[str | int], message: str) -> CacheError:
    line = locate(text, path)
    where = f"{name}:{line}" if line else name
    return CacheError(f"{where}: {json_path(path)}: {message}.", hint=CORRUPT_HINT)


def _document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "entries": entries}


def _relative(error: ValidationError) -> str:
    """The path inside the one entry of a ``_document([entry])``."""
    return json_path(list(error.absolute_path)[2:])


def _safe_message(error: ValidationError) -> str:
    # Most jsonschema messages quote the offending value; an endpoint that broke the pattern
    # may carry a key in its query or user part, so name the rule instead of the value.
    if error.validator in ("required", "additionalProperties"):
        return error.message
    return f"does not fit the schema's `{error.validator}` rule {json.dumps(error.validator_value)}"


@cache
def _validator() -> Draft202012Validator:
    text = files("conchcheck.jsonschemas").joinpath("capabilities.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


class _Dumper(yaml.SafeDumper):
    """Indents list items under their key, as people write YAML by hand."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    except OSError as exc:
        # msvcrt reports a held lock as EDEADLOCK (36), not as PermissionError.
        if sys.platform == "win32" and exc.errno == 36:
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
