"""The targets file of ``conchcheck probe --targets``, and the shard each target falls in.

A targets file lists targets (``provider:model`` with an optional base URL, API family, key
variable, matrix and repeat) and the limits each provider shares across its targets. It is
checked by ``jsonschemas/targets.schema.json`` and then for what a schema can't say (targets
that parse, no target twice in one API, limits only for providers a target uses); each
problem is ``file:line: $.path: message``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from conchcheck.errors import InputError
from conchcheck.files import read_text
from conchcheck.matrix import builtin_matrices
from conchcheck.matrix.document import DocumentChecker
from conchcheck.wire.providers import ApiFamily, Target, default_api, parse_target

_APIS = frozenset(api.value for api in ApiFamily)
SHOWN_PROBLEMS = 5
"""Problems named in the one line of a ``TargetsError``; the rest are counted."""
ENTRY_HINT = (
    "Each entry is {target: provider:model}, optionally with base_url, api, api_key_env,"
    " matrix and repeat."
)

MAX_LABEL = 100
"""The characters of a label a target's folder keeps (a 400-character model was 'File name
too long' after every request was spent)."""


class TargetsError(InputError):
    """A targets file with problems, each ``file:line: $.path: message``."""

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        rest = f"; and {more} more problem{'' if more == 1 else 's'}" if more > 0 else ""
        super().__init__(f"{shown}{rest}.", hint=ENTRY_HINT)
        self.problems = tuple(problems)


@dataclass(frozen=True, slots=True)
class TargetEntry:
    """One target of a targets file, as it will be probed."""

    target: Target
    matrix: str | None = None
    """A built-in matrix name or the path of a matrix file; None keeps the run's ``--matrix``."""
    api_key_env: str | None = None
    repeat: int | None = None
    """Runs of each prompt; None keeps the run's ``--repeat``."""

    @property
    def identity(self) -> str:
        """``provider:model@base_url``, and `` (api)`` when it speaks an API other than its
        provider's own: what the target is, wherever it sits in the file.

        A target in its provider's own API reads as it did before targets named one, so it
        keeps its shard and its folder.
        """
        plain = f"{self.target.label}@{self.target.base_url}"
        return plain if self._own_api else f"{plain} ({self.target.provider.api})"

    @property
    def folder(self) -> str:
        """The name of its results folder: the label made a file name (its first
        ``MAX_LABEL`` characters, with the API when it isn't the provider's own), and a short
        hash of the identity, so two endpoints of one model don't share a folder."""
        # Cut: a file name takes 255 bytes, and the hash keeps two long labels apart.
        label = re.sub(r"[^A-Za-z0-9._-]+", "_", self.target.label)[:MAX_LABEL]
        api = "" if self._own_api else f"-{self.target.provider.api}"
        return f"{label}{api}-{_digest(self.identity)[:8]}"

    @property
    def _own_api(self) -> bool:
        return self.target.provider.api is default_api(self.target.provider.name)


@dataclass(frozen=True, slots=True)
class ProviderLimits:
    """What one provider's targets share: requests at once, and requests a minute."""

    concurrency: int | None = None
    requests_per_minute: int | None = None


@dataclass(frozen=True, slots=True)
class TargetsFile:
    """A checked targets file."""

    source: str
    entries: tuple[TargetEntry, ...]
    providers: MappingProxyType[str, ProviderLimits]


def load_targets(path: Path | str) -> TargetsFile:
    """A targets file, checked; ``TargetsError`` names every problem with its line."""
    text, source = read_text(path)
    checker = _TargetsChecker(text, source)
    if checker.problems:
        raise TargetsError(checker.problems)
    data: dict[str, Any] = checker.data
    folder = Path(source).parent
    entries = tuple(
        TargetEntry(
            target,
            matrix=_matrix(item.get("matrix"), folder),
            api_key_env=item.get("api_key_env"),
            repeat=item.get("repeat"),
        )
        for item, target in zip(data["targets"], checker.targets, strict=True)
    )
    providers = {
        name: ProviderLimits(limits.get("concurrency"), limits.get("requests_per_minute"))
        for name, limits in data.get("providers", {}).items()
    }
    return TargetsFile(source, entries, MappingProxyType(providers))


def _matrix(name: str | None, folder: Path) -> str | None:
    # A matrix file is found beside the targets file, wherever the run starts from.
    if name is None or name in builtin_matrices() or Path(name).is_absolute():
        return name
    return str(folder / name)


class _TargetsChecker(DocumentChecker):
    schema = "targets"

    def semantics(self, data: dict[str, Any]) -> None:
        self.targets: list[Target] = []
        items = data.get("targets")
        seen: dict[str, int] = {}
        used: set[str] = set()
        parsed = True
        for index, item in enumerate(items if isinstance(items, list) else []):
            where: list[str | int] = ["targets", index, "target"]
            if not isinstance(item, dict) or not isinstance(item.get("target"), str):
                parsed = False
                continue
            base_url, api = item.get("base_url"), item.get("api")
            try:
                target = parse_target(
                    item["target"],
                    base_url=base_url if isinstance(base_url, str) else None,
                    # An unknown API is the schema's problem, named once.
                    api=api if isinstance(api, str) and api in _APIS else None,
                )
            except InputError as exc:
                self.add(where, str(exc).rstrip("."))
                parsed = False
                continue
            self.targets.append(target)
            used.add(target.provider.name)
            identity = TargetEntry(target).identity
            if identity in seen:
                self.add(where, f"{identity} is listed twice; also at line {seen[identity]}")
            seen.setdefault(identity, self.line(where))
        providers = data.get("providers")
        for name in providers if isinstance(providers, dict) else {}:
            # Only when every target was read: an unreadable one may be the provider's.
            if name not in used and parsed and self.targets:
                known = ", ".join(sorted(used))
                self.add(["providers", name], f"no target uses provider '{name}'; they use {known}")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based): the targets one machine of N probes.

    A target's shard is sha256 of its identity, mod ``count``: a function of the target
    alone, so reordering the file or adding a target never moves another one to a different
    machine. Hashing balances only on average (a few targets may land unevenly); a balanced
    assignment would have to look at every target, and then one added target could move
    all the others, which defeats a CI matrix whose shards are compared night after night.
    """

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N`` with 1 ≤ I ≤ N, or ``InputError`` naming ``--shard``."""
        wanted = "Write I/N with 1 <= I <= N, for example --shard 1/4."
        found = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
        if found is None:
            raise InputError(f"--shard: {text!r} is not written I/N.", hint=wanted)
        index, count = int(found.group(1)), int(found.group(2))
        if count < 1 or not 1 <= index <= count:
            raise InputError(f"--shard: {index}/{count} is out of range.", hint=wanted)
        return cls(index, count)

    def holds(self, entry: TargetEntry) -> bool:
        """Whether ``entry`` is probed in this shard."""
        return shard_of(entry.identity, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(identity: str, count: int) -> int:
    """The shard (1 to ``count``) of the target whose identity is ``identity``."""
    return int(_digest(identity), 16) % count + 1


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
