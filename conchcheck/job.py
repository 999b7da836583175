"""One probe job as the CLI runs it: resolve the target, key and matrix; probe; write the
reports and the capability entry; decide the exit code. Callable from Python as it is.

Every input is checked before the first request, so a Python caller gets the CLI's errors:
the values when a ``JobSpec`` is made, the files and folders when a ``Job`` is.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from conchcheck.capabilities import CapabilityFile, Entry, default_path, expires, timestamp
from conchcheck.core.dialects import Dialect
from conchcheck.errors import InputError
from conchcheck.files import folder_problem, load_json, problem
from conchcheck.jsonschemas import problems
from conchcheck.matrix import Matrix, load_matrix
from conchcheck.matrix.own import own_matrix
from conchcheck.probe import Probe, ProbeObserver, ProbeOptions
from conchcheck.probe.pacing import ProviderLimit
from conchcheck.redaction import held
from conchcheck.report import ReportFormat, write_reports
from conchcheck.results import Mode, ProbeResult, RunInfo
from conchcheck.results.reader import read_results
from conchcheck.sources import read_tools
from conchcheck.version import __version__
from conchcheck.wire.keys import CredentialsError, Secret, resolve_key
from conchcheck.wire.providers import Target, parse_target
from conchcheck.wire.recording import Recording, RecordingTransport, ReplayTransport
from conchcheck.wire.transport import Transport

EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_UNUSABLE, EXIT_STOPPED = 0, 1, 2, 3, 4


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Everything a probe job is asked to do."""

    target: str
    base_url: str | None = None
    matrix: str = "default"
    out: Path | None = None
    formats: tuple[ReportFormat, ...] = tuple(ReportFormat)
    cache: Path | None = None
    use_cache: bool = False
    write_cache: bool = True
    api_key_env: str | None = None
    api: str | None = None
    """Another API family for the target (``--api responses``)."""
    options: ProbeOptions = field(default_factory=ProbeOptions)
    resume: Path | None = None
    expect_mode: str | None = None
    expect_dialect: str | None = None
    command: str = "conchcheck probe"
    record: Path | None = None
    """Write every exchange here (``recording.schema.json``)."""
    replay: Path | None = None
    """Answer every request from this recording: no network."""
    tools: tuple[str, ...] = ()
    """Probe with the user's own tools from these sources (``--tools``), not a matrix."""
    prompts: Path | None = None
    """Prompts written for ``tools`` (``--prompts``); without it, one smoke prompt a tool."""

    def __post_init__(self) -> None:
        if self.prompts is not None and not self.tools:
            raise InputError(
                "--prompts: prompts files are for your own tools, and no --tools was given.",
                hint="Add --tools SOURCE, or put the prompts in a matrix (--matrix).",
            )
        if self.tools and self.use_cache:
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
        # Options are named as the CLI spells them: each field is one of its options.
        options, policy = self.options, self.options.policy
        _number("--timeout", policy.read_timeout, *TIMEOUT_RANGE)
        if options.deadline is not None:
            _number("--deadline", options.deadline, 1.0, 7 * 86_400.0)
        _number("--threshold", options.threshold, 0.0, 1.0)
        _whole("--concurrency", policy.concurrency, 1, 64)
        _whole("--repeat", options.repeat, 1, 100)
        _whole("--max-requests", options.max_requests, 1)
        _whole("--max-tokens", options.max_tokens, 1)
        _known("--expect-mode", "mode", self.expect_mode, [mode.value for mode in Mode])
        _known("--expect-dialect", "dialect", self.expect_dialect, [d.value for d in Dialect])


TIMEOUT_RANGE = (0.1, 86_400.0)
"""Seconds a reply may take: a tenth of a second up to a day (a slow CPU model)."""


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


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """What a job produced, and the exit code it maps to."""

    result: ProbeResult | None
    cached: Entry | None
    entry: Entry | None
    written: tuple[Path, ...]
    exit_code: int
    message: str


class Job:
    """Resolves a ``JobSpec``; ``run`` probes, ``finish`` writes; ``partial`` after a Ctrl-C."""

    def __init__(self, spec: JobSpec, *, transport: Transport | None = None) -> None:
        self.spec = spec
        replayed = load_recording(spec.replay) if spec.replay is not None else None
        # A replay goes to the URLs it recorded, unless told otherwise.
        base_url = spec.base_url or (replayed.base_url if replayed else None)
        self.target: Target = parse_target(spec.target, base_url=base_url, api=spec.api)
        self.matrix: Matrix = (
            # An MCP server's answer is one more request: it gets --timeout, like the others.
            own_matrix(
                [(s, read_tools(s, deadline=spec.options.policy.read_timeout)) for s in spec.tools],
                spec.prompts,
            )
            if spec.tools
            else load_matrix(spec.matrix)
        )
        self.cache = CapabilityFile(spec.cache or default_path())
        self.key: Secret | None = None
        self.transport = transport
        self.recorder: RecordingTransport | None = None
        if replayed is not None:
            self.transport = self._replaying(replayed, str(spec.replay))
        elif spec.record is not None:
            self.recorder = RecordingTransport(transport, spec.options.policy.max_body)
            self.transport = self.recorder
        self.started = _now()
        prior = read_results(spec.resume).cells if spec.resume else ()
        self.probe: Probe | None = None
        self._prior = prior
        self._check_places()

    def _replaying(self, recording: Recording, name: str) -> ReplayTransport:
        label = f"{self.target.provider.name}:{self.target.model}"
        if recording.target != label:
            raise InputError(
                f"--replay: {name} was recorded against {recording.target}, not {label}.",
                hint=f"Replay it as `conchcheck probe {recording.target} --replay {name}`.",
            )
        return ReplayTransport(recording, name)

    def _check_places(self) -> None:
        """Refuse, before anything is sent, a report folder or capability file that the end
        of the probe couldn't write: the requests would be spent for nothing."""
        out = self.out_dir()
        problem = folder_problem(out)
        if problem is not None:
            raise InputError(f"--out: {out}: {problem}.", hint="Choose another folder.")
        for fmt in self.spec.formats:
            if (out / fmt.filename).is_dir():
                raise InputError(
                    f"--out: {out / fmt.filename}: is a folder, so the report can't be written.",
                    hint="Move it aside, or choose another folder.",
                )
        record = self.spec.record
        if record is not None:
            problem = folder_problem(record.parent) or ("is a folder" if record.is_dir() else None)
            if problem is not None:
                raise InputError(f"--record: {record}: {problem}.", hint="Choose another file.")
        if self.writes_cache:
            self.cache.check()
        elif self.spec.use_cache:
            self.cache.entries()

    @property
    def writes_cache(self) -> bool:
        """Whether a finished probe writes its capability entry: a probe of your own tools
        doesn't, so it never replaces the matrix verdict apps read for the endpoint."""
        return self.spec.write_cache and not self.spec.tools

    def cached(self) -> Entry | None:
        """A fresh capability entry for this target, when ``--use-cache`` asked for one."""
        if not self.spec.use_cache:
            return None
        entry = self.cache.get(self.target.provider.name, self.target.model, self.target.base_url)
        return entry if entry is not None and entry.fresh(_now()) else None

    def run(self, observer: ProbeObserver | None = None) -> ProbeResult:
        """Probe the target (the key is read here, so a cached answer needs none)."""
        self.resolve_key()
        try:
            return asyncio.run(self.probing(observer))
        except Exception:
            # The engine may wrap the replay's error in its own; the replay's is the news.
            missing = getattr(self.transport, "missing", None)
            if missing is not None:
                raise missing from None
            raise

    def resolve_key(self) -> Secret | None:
        """Read the target's key; ``CredentialsError`` (exit 3) when its variable is unset."""
        try:
            self.key = resolve_key(self.target.provider, api_key_env=self.spec.api_key_env)
        except CredentialsError:
            if not isinstance(self.transport, ReplayTransport):
                raise
            # Recorded keys are masked; a stand-in is masked the same way wherever it goes.
            self.key = Secret(REPLAY_KEY)
        return self.key

    async def probing(
        self, observer: ProbeObserver | None = None, *, shared: ProviderLimit | None = None
    ) -> ProbeResult:
        """Probe the target in the running loop, with the key ``resolve_key`` read; ``shared``
        holds the provider's limits when other probes of it run at the same time."""
        self.probe = Probe(
            self.target, self.matrix, key=self.key, options=self.spec.options,
            transport=self.transport, observer=observer, resume=self._prior, shared=shared,
        )  # fmt: skip
        return await self.probe.run()

    def partial(self, reason: str) -> ProbeResult | None:
        """The cells so far, after an interrupt."""
        return self.probe.partial(reason) if self.probe is not None else None

    def out_dir(self) -> Path:
        """``--out``, or ``./conchcheck-out/<target>`` with the target made a file name."""
        if self.spec.out is not None:
            return self.spec.out
        return Path("conchcheck-out") / re.sub(r"[^A-Za-z0-9._-]+", "_", self.target.label)

    def finish(self, result: ProbeResult) -> JobOutcome:
        """Write the reports, and the capability entry of a finished probe; pick the exit code."""
        info = RunInfo(__version__, timestamp(self.started), timestamp(_now()), self.spec.command)
        written = tuple(write_reports(result, self.out_dir(), self.spec.formats, info))
        if self.recorder is not None and self.spec.record is not None:
            recording = Recording(
                f"{self.target.provider.name}:{self.target.model}", self.target.base_url,
                result.matrix, result.matrix_digest, self.spec.options.policy.concurrency,
                __version__, self.recorder.exchanges,
            )  # fmt: skip
            written += (write_recording(recording, self.spec.record),)
        entry = None
        if result.unusable is not None:
            message = f"The target can't be probed: {result.unusable}"
            return JobOutcome(result, None, None, written, EXIT_UNUSABLE, message)
        if result.stopped is not None:
            message = (
                f"Stopped early: {result.stopped}. Partial results are written; --resume continues."
            )
            return JobOutcome(result, None, None, written, EXIT_STOPPED, message)
        if result.verdict is not None and self.writes_cache:
            entry = capability_entry(result, self.started)
            self.cache.put(entry)
        code, message = self.expectations(result)
        return JobOutcome(result, None, entry, written, code, message)

    def expectations(self, result: ProbeResult) -> tuple[int, str]:
        """Exit 1 when ``--expect-mode`` or ``--expect-dialect`` isn't met."""
        verdict = result.verdict
        assert verdict is not None
        misses = []
        if self.spec.expect_mode and verdict.mode.value != self.spec.expect_mode:
            misses.append(f"mode {verdict.mode.value}, expected {self.spec.expect_mode}")
        if self.spec.expect_dialect and verdict.dialect.dialect != self.spec.expect_dialect:
            misses.append(f"dialect {verdict.dialect.dialect}, expected {self.spec.expect_dialect}")
        if misses:
            return EXIT_FAILED, "The verdict missed its expectation: " + "; ".join(misses) + "."
        return EXIT_DONE, f"Dialect {verdict.dialect.dialect or 'none'}, mode {verdict.mode.value}."


REPLAY_KEY = "rk-9f4e2b7d1a6c3e8f05b2"
"""The key a replay sends when the environment has none: the recording's keys are masked."""


def load_recording(path: Path) -> Recording:
    """A recording file, checked against ``recording.schema.json`` (``file:line: path: …``)."""
    data, text, name = load_json(path)
    found = problems("recording", data)
    if found:
        where, message = found[0]
        raise problem(name, text, where, message)
    return Recording.from_data(data)


def write_recording(recording: Recording, path: Path) -> Path:
    """Write ``recording`` to ``path`` whole (keys masked), one exchange a line."""
    from conchcheck.core.escaping import encodable
    from conchcheck.replacement import replace_file

    data = recording.to_data()
    exchanges = data.pop("exchanges")
    head = json.dumps(data, ensure_ascii=False)[:-1]
    lines = ",\n".join(json.dumps(item, ensure_ascii=False) for item in exchanges)
    text = (
        f'{head}, "exchanges": [\n{lines}\n]}}\n' if exchanges else f'{head}, "exchanges": []}}\n'
    )
    try:
        replace_file(path, held().text(encodable(text)), mode=0o644)
    except OSError as exc:
        raise InputError(
            f"--record: {path}: cannot be written ({exc.strerror}).", hint="Choose another file."
        ) from None
    return path


def capability_entry(result: ProbeResult, probed: datetime) -> Entry:
    """The capability file's entry for a finished probe."""
    verdict = result.verdict
    if verdict is None:
        raise InputError("A probe without a verdict has no capability entry.")
    catalogue = result.catalogue
    return Entry(
        provider=result.provider, model=result.model, endpoint=result.endpoint,
        dialect=_value(verdict.dialect.dialect), mode=verdict.mode.value,
        rates={
            "native": round(verdict.native.rate, 4),
            "native_clean": round(verdict.native.clean_rate, 4),
            "words": round(verdict.words.rate, 4),
            "words_clean": round(verdict.words.clean_rate, 4),
        },
        repairs_seen=verdict.repairs_seen, refused_keywords=verdict.refused_keywords,
        context_window=catalogue.context_window if catalogue else None,
        tools_declared=verdict.tools_declared, tools_observed=verdict.tools_observed,
        conchcheck_version=__version__, matrix=result.matrix,
        matrix_digest=result.matrix_digest.removeprefix("sha256:"),
        probed_at=timestamp(probed), expires_at=timestamp(expires(probed)),
        leaked_as_text=tuple(leak.family for leak in verdict.leaks),
        strict_mode=None if (trial := verdict.strict_mode) is None else {
            "accepted": trial.accepted, "refused": trial.refused,
        },
    )  # fmt: skip


def _value(dialect: Dialect | None) -> str | None:
    # The capability file is YAML written by safe_dump, which takes plain strings only.
    return None if dialect is None else dialect.value


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)
