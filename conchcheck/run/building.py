"""``build``: a ``ProbeSpec`` resolved into a ``Plan``, with every input read and checked.

The target, the recording, the matrix (or the user's tools), the results to resume, the
report folder, the recording's file, the capability file and the key are all read here
(and the credentials written in the tool sources held first),
before the first request, so a probe never spends requests to fail at the end. Each
problem is one ``InputError`` line (or a ``CacheError``), worded as the CLI's option.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from conchcheck.capabilities import CapabilityFile, Entry, default_path
from conchcheck.core.credentials import credentials_in
from conchcheck.errors import ConchcheckError, InputError
from conchcheck.files import folder_problem
from conchcheck.matrix import Matrix, load_matrix
from conchcheck.matrix.own import own_matrix
from conchcheck.redaction import hold
from conchcheck.results import Cell
from conchcheck.results.reader import read_results
from conchcheck.run.execution import now
from conchcheck.run.plan import Plan
from conchcheck.run.recording import REPLAY_KEY, load_recording
from conchcheck.run.spec import ProbeSpec
from conchcheck.sources import read_source
from conchcheck.sources.environment import passed_environment
from conchcheck.sources.headers import header_values
from conchcheck.wire.keys import CredentialsError, Secret, resolve_key
from conchcheck.wire.providers import Target, parse_target
from conchcheck.wire.recording import Recording, RecordingTransport, ReplayTransport
from conchcheck.wire.transport import Transport


def build(spec: ProbeSpec, transport: Transport | None = None) -> Plan:
    """Resolve ``spec``: every input read and checked, nothing sent to the target.

    ``transport`` carries every request instead of the network (tests, a proxy); a replay
    answers from its recording instead, and a recording wraps it.
    """
    # A credential written in a source (a URL's token, a server's --token) or given in a
    # header is held before anything is read or said: every writer then masks it, as it
    # masks the target's key.
    for source in spec.tools:
        for credential in credentials_in(source):
            hold(credential)
    headers = header_values(spec.tools_headers)
    replayed = (
        load_recording(spec.replay, spec.options.policy.max_body)
        if spec.replay is not None
        else None
    )
    # A replay goes to the URLs it recorded, unless told otherwise.
    base_url = spec.base_url or (replayed.base_url if replayed else None)
    target = parse_target(spec.target, base_url=base_url, api=spec.api_family)
    if spec.route is not None:
        target = replace(target, route=spec.route)
    # The key is read (and held) before any MCP server is: whatever a server says is masked
    # with every key held, and the target's is the one most at hand to echo.
    key, key_problem = _key(spec, target, replaying=replayed is not None)
    matrix = _matrix(spec, headers)
    capabilities = CapabilityFile(spec.capability_file or default_path())
    recorder = None
    if replayed is not None:
        transport = _replaying(target, replayed, str(spec.replay))
    elif spec.record is not None:
        recorder = RecordingTransport(transport, spec.options.policy.max_body)
        transport = recorder
    prior = prior_cells(spec.resume_from, target) if spec.resume_from is not None else ()
    out_dir = spec.out_dir if spec.out_dir is not None else default_out_dir(target)
    _check_places(spec, out_dir)
    if spec.writes_entry:
        capabilities.check()
    elif spec.reuse_cached:
        capabilities.entries()
    return Plan(
        spec=spec,
        target=target,
        matrix=matrix,
        capabilities=capabilities,
        out_dir=out_dir,
        transport=transport,
        recorder=recorder,
        prior=prior,
        key=key,
        key_problem=key_problem,
        cached=_fresh_entry(capabilities, target) if spec.reuse_cached else None,
    )


def prior_cells(path: Path, target: Target) -> tuple[Cell, ...]:
    """The cells of the ``results.json`` a probe of ``target`` resumes from; ``InputError``
    where it is wrong, or of another target or API (a chat probe's cells say nothing of the
    same server's Messages API). The base URL may differ: a local server's port moves.

    The one place the run reads a results file.
    """
    result = read_results(path)
    if (result.target, result.api) != (target.label, target.provider.api):
        raise InputError(
            f"--resume: {path} holds the results of {result.target} in the {result.api} API, "
            f"not of {target.label} in the {target.provider.api} API.",
            hint="Resume with the target and --api it was probed with, or probe again "
            "without --resume.",
        )
    return result.cells


def default_out_dir(target: Target) -> Path:
    """``./conchcheck-out/<target>``, the target's label made a file name."""
    return Path("conchcheck-out") / re.sub(r"[^A-Za-z0-9._-]+", "_", target.label)


def _matrix(spec: ProbeSpec, headers: Mapping[str, str]) -> Matrix:
    if not spec.tools:
        return load_matrix(spec.matrix)
    # An MCP server's answer is one more request: it gets --timeout, like the others.
    deadline = spec.options.policy.read_timeout
    return read_own_tools(spec.tools, spec.tools_env, headers, deadline, spec.prompts)


def read_own_tools(
    sources: Sequence[str],
    tools_env: Sequence[str],
    headers: Mapping[str, str],
    deadline: float,
    prompts: Path | None = None,
) -> Matrix:
    """The matrix of the tools ``sources`` list (``--tools``), each MCP server given the
    variables ``tools_env`` names, or ``headers`` over HTTP, and ``deadline`` seconds."""
    env = passed_environment(tools_env)
    listed = [(s, read_source(s, deadline=deadline, env=env, headers=headers)) for s in sources]
    return own_matrix(
        [(s, listing.tools) for s, listing in listed],
        prompts,
        protocols={s: listing.revision for s, listing in listed if listing.revision},
    )


def _replaying(target: Target, recording: Recording, name: str) -> ReplayTransport:
    label = f"{target.provider.name}:{target.model}"
    if recording.target != label:
        raise InputError(
            f"--replay: {name} was recorded against {recording.target}, not {label}.",
            hint=f"Replay it as `conchcheck probe {recording.target} --replay {name}`.",
        )
    return ReplayTransport(recording, name)


def _check_places(spec: ProbeSpec, out: Path) -> None:
    """Refuse a report folder or recording file that the end of the probe couldn't write:
    the requests would be spent for nothing."""
    problem = folder_problem(out)
    if problem is not None:
        raise InputError(f"--out: {out}: {problem}.", hint="Choose another folder.")
    for fmt in spec.formats:
        if (out / fmt.filename).is_dir():
            raise InputError(
                f"--out: {out / fmt.filename}: is a folder, so the report can't be written.",
                hint="Move it aside, or choose another folder.",
            )
    record = spec.record
    if record is not None:
        problem = folder_problem(record.parent) or ("is a folder" if record.is_dir() else None)
        if problem is not None:
            raise InputError(f"--record: {record}: {problem}.", hint="Choose another file.")


def _key(
    spec: ProbeSpec, target: Target, *, replaying: bool
) -> tuple[Secret | None, ConchcheckError | None]:
    """The target's key, or why it can't be read (kept, not raised: see ``Plan.key_problem``)."""
    try:
        return resolve_key(target.provider, api_key_env=spec.key_variable), None
    except CredentialsError as exc:
        if not replaying:
            return None, exc
        # Recorded keys are masked; a stand-in is masked the same way wherever it goes.
        return Secret(REPLAY_KEY), None
    except ConchcheckError as exc:
        return None, exc


def _fresh_entry(capabilities: CapabilityFile, target: Target) -> Entry | None:
    # The API family is part of the key: one server's chat entry never answers for its
    # Messages or Responses API, whose tools and dialect are measured apart.
    entry = capabilities.get(
        target.provider.name, target.model, target.base_url, target.provider.api
    )
    return entry if entry is not None and entry.fresh(now()) else None
