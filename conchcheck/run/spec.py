"""What a probe is asked to do, in the library's words: ``ProbeSpec`` for one target,
``FleetSpec`` for a targets file. Values are checked when a spec is made; files, folders and
keys are read by ``build``.

A value's problem is worded as the CLI's option, since that is what a user sees.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from conchcheck.core.confidence import CONFIDENCE_RANGE
from conchcheck.core.credentials import source_url
from conchcheck.core.dialects import Dialect
from conchcheck.errors import InputError
from conchcheck.probe import AUTO, Check, ProbeOptions
from conchcheck.report import ReportFormat
from conchcheck.results import Mode
from conchcheck.run.targets import Shard, TargetsFile
from conchcheck.sources.headers import check_headers

REPEATS = "Give a whole number from 1 to 100, or auto."
TIMEOUT_RANGE = (0.1, 86_400.0)
"""Seconds a reply may take: a tenth of a second up to a day (a slow CPU model)."""


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """Everything one probe is asked to do."""

    target: str
    """``provider:model``."""
    base_url: str | None = None
    """Another URL for the provider, or any OpenAI-compatible server."""
    api_family: str | None = None
    """Another API family the server speaks (``responses``); None keeps the provider's."""
    matrix: str = "default"
    """A built-in matrix name or the path of a matrix file."""
    tools: tuple[str, ...] = ()
    """Probe with the user's own tools from these sources, not a matrix."""
    tools_env: tuple[str, ...] = ()
    """Variables (names) given to each MCP server started for ``tools``, beyond the small
    default environment (``conchcheck.sources.environment``)."""
    tools_headers: tuple[str, ...] = ()
    """``Name: value`` headers sent with every request to the MCP servers of ``tools`` that
    are spoken to over HTTP; ``${VAR}`` in a value is read from the environment by ``build``
    (``conchcheck.sources.headers``)."""
    prompts: Path | None = None
    """Prompts written for ``tools``; without it, one smoke prompt a tool."""
    out_dir: Path | None = None
    """The report folder; None is ``./conchcheck-out/<target>``."""
    formats: tuple[ReportFormat, ...] = tuple(ReportFormat)
    capability_file: Path | None = None
    """None is ``$CONCHCHECK_CACHE`` or the user cache."""
    reuse_cached: bool = False
    """Answer from a fresh capability entry for the target, when there is one, unprobed."""
    write_entry: bool = True
    """Write the verdict of a finished probe to the capability file."""
    key_variable: str | None = None
    """The variable holding the key, instead of the provider's."""
    options: ProbeOptions = field(default_factory=ProbeOptions)
    resume_from: Path | None = None
    """A ``results.json`` whose finished cells are kept, not asked again."""
    expected_mode: str | None = None
    """A verdict of another mode is a failed expectation (exit 1)."""
    expected_dialect: str | None = None
    """A verdict of another dialect is a failed expectation (exit 1)."""
    command: str = "conchcheck probe"
    """The command line the reports name."""
    record: Path | None = None
    """Write every exchange here (``recording.schema.json``)."""
    replay: Path | None = None
    """Answer every request from this recording: no network."""
    route: str | None = None
    """OpenRouter only: the one upstream provider allowed to serve the model (``Target.route``)."""

    def __post_init__(self) -> None:
        if self.prompts is not None and not self.tools:
            raise InputError(
                "--prompts: prompts files are for your own tools, and no --tools was given.",
                hint="Add --tools SOURCE, or put the prompts in a matrix (--matrix).",
            )
        check_source_options(self.tools, self.tools_env, self.tools_headers)
        if self.tools and self.reuse_cached:
            raise InputError(
                "--tools and --use-cache: the capability file holds matrix verdicts, not"
                " verdicts on your tools, so there is nothing to reuse.",
                hint="Drop --use-cache.",
            )
        if self.tools and self.matrix != "default":
            raise InputError(
                "--tools and --matrix: give one; --tools makes the matrix from your tools.",
                hint="Use --prompts FILE for prompts written for your tools.",
            )
        if self.record is not None and self.replay is not None:
            raise InputError(
                "--record and --replay: give one, not both.",
                hint="A replay sends nothing, so there is nothing new to record.",
            )
        _check_options(self.options)
        _check_expectations(self.expected_mode, self.expected_dialect)

    @property
    def writes_entry(self) -> bool:
        """Whether a finished probe writes its capability entry: a probe of your own tools
        doesn't, so it never replaces the matrix verdict apps read for the endpoint."""
        return self.write_entry and not self.tools


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """Everything a many-target run is asked to do; per-target values come from the file.

    Its values are checked as each target's ``ProbeSpec`` is made, by ``build_fleet``.
    """

    targets_file: Path | TargetsFile
    """The targets file, or targets already read (a provider's catalogue: ``PROVIDER:*``)."""
    out_dir: Path | None = None
    """The folder of the targets' folders and the index; None is ``./conchcheck-out``."""
    shard: Shard | None = None
    """Only the targets of this shard."""
    matrix: str = "default"
    """The matrix of a target that names none."""
    formats: tuple[ReportFormat, ...] = tuple(ReportFormat)
    capability_file: Path | None = None
    write_entry: bool = True
    options: ProbeOptions = field(default_factory=ProbeOptions)
    """How each target is probed; ``policy.concurrency`` is also each provider's shared
    limit unless the file's ``providers`` section names one."""
    expected_mode: str | None = None
    expected_dialect: str | None = None
    command: str = "conchcheck probe"


def _check_options(options: ProbeOptions) -> None:
    """``InputError`` for the first value of ``options`` out of its range."""
    policy = options.policy
    _number("--timeout", policy.read_timeout, *TIMEOUT_RANGE)
    if options.deadline is not None:
        _number("--deadline", options.deadline, 1.0, 7 * 86_400.0)
    _number("--threshold", options.threshold, 0.0, 1.0)
    _whole("--concurrency", policy.concurrency, 1, 64)
    _repeat(options.repeat)
    _number("--confidence", options.confidence, *CONFIDENCE_RANGE)
    if options.max_repeat is not None:
        if options.repeat != AUTO:
            raise InputError(
                "--max-repeat: only with --repeat auto.",
                hint="A fixed --repeat N sends each prompt N times.",
            )
        _whole("--max-repeat", options.max_repeat, 2, 100)
    _whole("--max-requests", options.max_requests, 1)
    _whole("--max-tokens", options.max_tokens, 1)


def check_source_options(
    tools: Sequence[str], tools_env: Sequence[str], tools_headers: Sequence[str]
) -> None:
    """``InputError`` for ``--tools-env`` without ``--tools``, ``--tools-header`` without an
    MCP URL among them, or a header not written ``Name: value``."""
    if tools_env and not tools:
        raise InputError(
            "--tools-env: it passes variables to the MCP servers of --tools, and no --tools"
            " was given.",
            hint="Add --tools mcp:stdio:<command line>, or leave --tools-env out.",
        )
    if tools_headers and not any(source_url(s) for s in tools):
        raise InputError(
            "--tools-header: it is sent to MCP servers over HTTP, and no --tools source is one.",
            hint="Add --tools mcp:https://<server>/mcp, or leave --tools-header out.",
        )
    check_headers(tools_headers)


def parse_repeat(text: str) -> int | Literal["auto"]:
    """``--repeat``'s text as a number of attempts or ``auto``; ``InputError`` for other text."""
    word = text.strip()
    if word == AUTO:
        return AUTO
    try:
        number = int(word)
    except ValueError:
        raise InputError(
            f"--repeat: `{text}` is not a whole number or auto.", hint=REPEATS
        ) from None
    _repeat(number)
    return number


def _repeat(value: object) -> None:
    if value == AUTO:
        return
    if type(value) is not int:
        raise InputError(f"--repeat: {value!r} is not a whole number.", hint=REPEATS)
    if not 1 <= value <= 100:
        raise InputError(f"--repeat: {value} is out of range.", hint=REPEATS)


def parse_checks(text: str) -> frozenset[Check]:
    """``dialect,mode`` as checks; ``InputError`` for a word that isn't one, with a guess."""
    words = [word.strip() for word in text.split(",") if word.strip()]
    if not words:
        raise InputError(
            "--checks: no check named.", hint=f"Name some of {', '.join(c.value for c in Check)}."
        )
    for word in words:
        _known("--checks", "check", word, [c.value for c in Check])
    return frozenset(Check(word) for word in words)


def _check_expectations(mode: str | None, dialect: str | None) -> None:
    """``InputError`` for an expected mode or dialect that isn't one, with a guess."""
    _known("--expect-mode", "mode", mode, [m.value for m in Mode])
    _known("--expect-dialect", "dialect", dialect, [d.value for d in Dialect])


def _number(option: str, value: float, low: float, high: float) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        shown = value if isinstance(value, float) else repr(value)
        raise InputError(
            f"{option}: {shown} is not a finite number.", hint=f"Give {low:g} to {high:g}."
        )
    if not low <= value <= high:
        raise InputError(f"{option}: {value:g} is out of range.", hint=f"Give {low:g} to {high:g}.")


def _whole(option: str, value: int | None, low: int, high: int | None = None) -> None:
    if value is None:
        return
    wanted = f"Give a whole number from {low}" + (f" to {high}." if high else " up.")
    if type(value) is not int:
        raise InputError(f"{option}: {value!r} is not a whole number.", hint=wanted)
    if value < low or (high is not None and value > high):
        raise InputError(f"{option}: {value} is out of range.", hint=wanted)


def _known(option: str, what: str, value: str | None, choices: Sequence[str]) -> None:
    if value is None or value in choices:
        return
    close = difflib.get_close_matches(str(value).lower(), choices, n=1)
    guess = f"; did you mean `{close[0]}`?" if close else "."
    raise InputError(
        f"{option}: `{value}` is not a {what}{guess}",
        hint=f"The {what}s are {', '.join(choices)}.",
    )
