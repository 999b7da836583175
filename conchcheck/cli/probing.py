"""``conchcheck probe``: one target or many, and how a probe is stopped."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from conchcheck.cli.app import app
from conchcheck.errors import InputError, StoppedError
from conchcheck.report import ReportFormat
from conchcheck.wire.providers import ApiFamily


@app.command()
def probe(
    target: Annotated[
        str | None, typer.Argument(help="provider:model, e.g. openrouter:qwen/qwen3-8b")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="Any OpenAI-compatible server, or another URL for the provider."),
    ] = None,
    api: Annotated[
        str | None,
        typer.Option(help=f"The API the server speaks: {', '.join(a.value for a in ApiFamily)}."),
    ] = None,
    matrix: Annotated[str, typer.Option(help="A built-in matrix name or a YAML file.")] = "default",
    tools: Annotated[
        list[str] | None,
        typer.Option(
            "--tools",
            metavar="SOURCE",
            help="Probe with your own tools (repeat): mcp:stdio:<command>, an MCP URL, an"
            " OpenAPI document or a tools file.",
        ),
    ] = None,
    tools_env: Annotated[
        list[str] | None,
        typer.Option(
            "--tools-env",
            metavar="NAME",
            help="With --tools: give the MCP servers started this variable of yours (repeat);"
            " they get only HOME, LOGNAME, PATH, SHELL, TERM and USER otherwise.",
        ),
    ] = None,
    tools_header: Annotated[
        list[str] | None,
        typer.Option(
            "--tools-header",
            metavar="'NAME: VALUE'",
            help="With an MCP URL in --tools: send this header with every request to it"
            " (repeat); ${VAR} in the value is read from your environment, e.g."
            " 'Authorization: Bearer ${MCP_TOKEN}'.",
        ),
    ] = None,
    prompts: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="With --tools: prompts written for them (YAML)."),
    ] = None,
    targets: Annotated[Path | None, typer.Option(help="Many targets at once: a YAML file.")] = None,
    shard: Annotated[str | None, typer.Option(help="With --targets: only shard I/N.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Report folder [default: ./conchcheck-out/<target>].")
    ] = None,
    report_format: Annotated[
        list[ReportFormat] | None,
        typer.Option("--format", help="Reports to write (repeat); all by default."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(help="Capability file [default: $CONCHCHECK_CACHE or the user cache]."),
    ] = None,
    use_cache: Annotated[
        bool,
        typer.Option(
            "--use-cache", help="Skip the probe when the capability file has a fresh entry."
        ),
    ] = False,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Read the key from this variable instead of the provider's."),
    ] = None,
    allow_insecure: Annotated[
        bool, typer.Option("--allow-insecure", help="Allow a key over plain http to another host.")
    ] = False,
    # Ranges are checked by ProbeSpec, so a Python caller meets the same limits and words.
    concurrency: Annotated[int, typer.Option(help="Requests at once (1-64).")] = 4,
    repeat: Annotated[
        str,
        typer.Option(
            metavar="N|auto",
            help="Run each prompt N times (1-100), or auto: until its label (pass,"
            " intermittent, fail) can't change.",
        ),
    ] = "1",
    confidence: Annotated[
        float, typer.Option(help="Confidence of each prompt's interval and label (0.5-0.999).")
    ] = 0.95,
    max_repeat: Annotated[
        int | None,
        typer.Option(
            help="With --repeat auto: attempts of a prompt at most (2-100) [default: 10]."
        ),
    ] = None,
    checks: Annotated[
        str | None,
        typer.Option(
            help="Groups of checks, comma-separated: dialect, mode, knobs, streaming (these"
            " four by default; dialect,mode is the probe before knobs were measured), cost"
            " (what each tool costs in tokens, and the capacity point)."
        ),
    ] = None,
    threshold: Annotated[float, typer.Option(help="Pass rate a mode needs (0-1).")] = 0.5,
    max_requests: Annotated[
        int | None, typer.Option(help="Stop after N requests (exit 4).")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Stop after N tokens (exit 4).")] = None,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait for a reply (0.1-86400).")
    ] = 120.0,
    deadline: Annotated[
        float | None,
        typer.Option(help="Seconds the whole probe may take; then it stops (exit 4)."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(help="A results.json to continue without repeating finished cells."),
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Write every exchange to this file (keys masked).")
    ] = None,
    replay: Annotated[
        Path | None, typer.Option(help="Answer every request from this recording; no network.")
    ] = None,
    expect_mode: Annotated[
        str | None, typer.Option(help="Exit 1 unless the mode is this (native, words, none).")
    ] = None,
    expect_dialect: Annotated[
        str | None, typer.Option(help="Exit 1 unless the dialect is this.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the verdict as JSON on stdout.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress, only the summary.")
    ] = False,
    filter_: Annotated[
        str | None,
        typer.Option("--filter", help="With PROVIDER:*: only the models whose id holds this text."),
    ] = None,
    max_models: Annotated[
        int | None,
        typer.Option(help="With PROVIDER:*: probe at most N of the models listed (20)."),
    ] = None,
    upstreams: Annotated[
        bool,
        typer.Option(
            "--upstreams",
            help="OpenRouter: probe the model once per upstream provider that serves it,"
            " each pinned, and say which to pin.",
        ),
    ] = False,
) -> None:
    """Probe TARGET or the --targets with a matrix (or your own --tools); write reports.

    Exit codes: 0 done · 1 an expectation failed · 2 bad usage or input · 3 target unusable
    (unreachable, auth, unknown model) · 4 stopped early (budget, deadline, Ctrl-C, SIGTERM,
    SIGHUP; the partial results are written). With --targets, the worst of 3, 4, 1, 0.
    """
    from conchcheck import console
    from conchcheck.errors import ExitCode
    from conchcheck.probe import DEFAULT_CHECKS, ProbeOptions
    from conchcheck.run import (
        FleetSpec,
        ProbeSpec,
        Shard,
        build,
        build_fleet,
        execute,
        execute_fleet,
        index_data,
        parse_checks,
        parse_repeat,
    )
    from conchcheck.run.catalogue import (
        DEFAULT_MAX_MODELS,
        CatalogueSpec,
        catalogue_targets,
        is_catalogue,
        upstream_targets,
    )
    from conchcheck.run.targets import TargetsFile
    from conchcheck.wire.transport import Policy

    catalogue = target is not None and is_catalogue(target)
    # What only one model's own probe can take: not a catalogue, nor a run of its upstreams.
    one_model = {
        "--resume": resume,
        "--use-cache": use_cache,
        "--tools": tools or None,
        "--prompts": prompts,
        "--record": record,
        "--replay": replay,
    }
    _catalogue_options(catalogue, filter_, max_models, {"--upstreams": upstreams, **one_model})
    if upstreams:
        _not_beside(
            "--upstreams",
            {"--targets": targets, **one_model, "--api": api},
            "--upstreams probes one OpenRouter model: conchcheck probe openrouter:MODEL"
            " --upstreams.",
        )
    _one_or_many(
        target,
        targets,
        shard,
        {
            "--base-url": base_url,
            "--api": api,
            "--api-key-env": api_key_env,
            "--resume": resume,
            "--use-cache": use_cache,
            "--tools": tools or None,
            "--tools-env": tools_env or None,
            "--tools-header": tools_header or None,
            "--prompts": prompts,
        },
    )
    policy = Policy(read_timeout=timeout, allow_insecure=allow_insecure, concurrency=concurrency)
    options = ProbeOptions(
        checks=DEFAULT_CHECKS if checks is None else parse_checks(checks),
        repeat=parse_repeat(repeat),
        threshold=threshold,
        confidence=confidence,
        max_repeat=max_repeat,
        max_requests=max_requests,
        deadline=deadline,
        max_tokens=max_tokens,
        policy=policy,
    )
    formats = tuple(report_format or ReportFormat)
    command = " ".join(["conchcheck", *sys.argv[1:]])
    if targets is not None or catalogue or upstreams:
        # As for one target: one stretch of signal handling from the targets read (a file,
        # or a catalogue listed) to the index written: a SIGTERM then is a message, not -15.
        with _stop_signals() as caught:
            try:
                source: Path | TargetsFile
                if targets is not None:
                    source = targets
                elif upstreams:
                    assert target is not None
                    source, found = upstream_targets(
                        target, policy, base_url=base_url, key_variable=api_key_env
                    )
                    console.complain(
                        f"{target}: {found.source} lists {len(found.models)} upstream"
                        f" providers ({', '.join(found.models)}); probing each, pinned."
                    )
                else:
                    assert target is not None
                    listed = CatalogueSpec(
                        target,
                        base_url=base_url,
                        api_family=api,
                        key_variable=api_key_env,
                        filter=filter_,
                        max_models=DEFAULT_MAX_MODELS if max_models is None else max_models,
                    )
                    source, choice = catalogue_targets(listed, policy)
                    console.complain(choice.said(listed))
                fleet = build_fleet(
                    FleetSpec(
                        source,
                        out_dir=out,
                        shard=None if shard is None else Shard.parse(shard),
                        matrix=matrix,
                        formats=formats,
                        capability_file=cache,
                        options=options,
                        expected_mode=expect_mode,
                        expected_dialect=expect_dialect,
                        command=command,
                        # A pinned upstream never stands for the model in the capability
                        # file, whose entry has no place for the pin.
                        write_entry=not upstreams,
                    )
                )
            except KeyboardInterrupt:
                raise StoppedError.before_probe(_came(caught)(), reading_tools=False) from None
            done = execute_fleet(fleet, interrupted_by=_came(caught))
        console.emit_json(index_data(done)) if as_json else console.show_fleet(done)
        raise typer.Exit(done.exit_code)
    assert target is not None
    spec = ProbeSpec(
        target,
        base_url=base_url,
        api_family=api,
        matrix=matrix,
        tools=tuple(tools or ()),
        tools_env=tuple(tools_env or ()),
        tools_headers=tuple(tools_header or ()),
        prompts=prompts,
        out_dir=out,
        formats=formats,
        capability_file=cache,
        reuse_cached=use_cache,
        key_variable=api_key_env,
        options=options,
        resume_from=resume,
        expected_mode=expect_mode,
        expected_dialect=expect_dialect,
        command=command,
        record=record,
        replay=replay,
    )
    # One stretch of signal handling from the first input read to the last report written.
    with _stop_signals() as caught:
        try:
            plan = build(spec)
        except KeyboardInterrupt:
            # Reading the inputs takes long only when an MCP server is slow to list its
            # tools; the server is stopped by then (its channel's close).
            raise StoppedError.before_probe(_came(caught)(), reading_tools=bool(tools)) from None
        if plan.cached is not None:
            console.emit_json(plan.cached) if as_json else console.show_cached(plan.cached)
            raise typer.Exit(ExitCode.DONE)
        with console.progress(quiet=quiet or as_json) as observer:
            try:
                outcome = execute(plan, observer, interrupted_by=_came(caught))
            except KeyboardInterrupt:
                raise typer.Exit(ExitCode.STOPPED) from None
    shown = outcome
    if outcome.exit_code == ExitCode.UNUSABLE:
        # Why the target can't be probed is commentary, not the product: stderr (G13).
        console.complain(outcome.message)
        shown = replace(outcome, message="Reports of what was tried are written.")
    console.emit_json(outcome) if as_json else console.show_outcome(shown)
    raise typer.Exit(outcome.exit_code)


def _one_or_many(
    target: str | None, targets: Path | None, shard: str | None, per_target: dict[str, object]
) -> None:
    """Refuse a TARGET with --targets, neither, --shard without --targets, and any option
    of ``per_target`` (by name, with its value) given with --targets: a targets file sets
    those for each of its targets."""
    help_ = "See `conchcheck probe --help`."
    if (target is None) == (targets is None):
        raise InputError("Give a TARGET or --targets, one of the two.", hint=help_)
    if targets is None:
        if shard is not None:
            raise InputError("--shard: only with --targets.", hint=help_)
        return
    _not_beside(
        "--targets; it is an option of a single target's probe",
        per_target,
        "Probe that target on its own, or write base_url, api or api_key_env in its entry of"
        " the targets file.",
    )


def _catalogue_options(
    catalogue: bool,
    filter_: str | None,
    max_models: int | None,
    not_with: dict[str, object],
) -> None:
    """Refuse --filter and --max-models without ``PROVIDER:*``, and with it the options of
    one target's probe that a whole catalogue can't take."""
    if not catalogue:
        given = "--filter" if filter_ is not None else "--max-models"
        if filter_ is not None or max_models is not None:
            raise InputError(
                f"{given}: only with a whole catalogue, PROVIDER:*.",
                hint="For example: conchcheck probe openrouter:* --filter qwen --max-models 5.",
            )
        return
    _not_beside(
        "PROVIDER:*; it is an option of one model's probe",
        not_with,
        "Probe that model on its own.",
    )


def _not_beside(beside: str, options: dict[str, object], hint: str) -> None:
    """Refuse the first of ``options`` given (by name, with its value) beside ``beside``."""
    named = next((name for name, value in options.items() if value), None)
    if named is not None:
        raise InputError(f"{named}: not with {beside}.", hint=hint)


def _came(caught: list[str]) -> Callable[[], str]:
    """What stopped the probe, for its reason: the last signal caught, else Ctrl-C."""
    return lambda: caught[-1] if caught else "Ctrl-C"


@contextmanager
def _stop_signals() -> Iterator[list[str]]:
    """SIGTERM and SIGHUP stop a probe as Ctrl-C does: partial results written, exit 4.

    Each is turned into a SIGINT, so it takes the one path Ctrl-C takes (asyncio cancels
    the probe, ``KeyboardInterrupt`` reaches ``probe``); the list names what came.
    """
    caught: list[str] = []

    def stop(number: int, frame: object) -> None:
        caught.append(signal.Signals(number).name)
        signal.raise_signal(signal.SIGINT)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]  # no SIGHUP on Windows
    before = {n: signal.signal(getattr(signal, n), stop) for n in names}
    try:
        yield caught
    finally:
        for name, handler in before.items():
            signal.signal(getattr(signal, name), handler)
