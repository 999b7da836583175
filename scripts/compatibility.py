"""Regenerate docs/compatibility/, the published report of real servers, from the recordings
of the live probes (tests/data/recordings/, made by ``python -m scripts.record_live``).

    python -m scripts.compatibility            # rewrite docs/compatibility/
    python -m scripts.compatibility --check    # exit 1 when a file would change

Each recording is replayed through conchcheck as it is now, so the page says what conchcheck
says today about what those servers answered; tests/test_published_report.py replays them
again and fails when the page has drifted. Times are the day each recording was made, so two
runs write the same bytes.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from conchcheck.report.compatibility import build_table, render_compatibility
from conchcheck.results import ProbeResult
from conchcheck.results.reader import read_results
from conchcheck.run import ProbeSpec, build, execute
from conchcheck.version import __version__

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / "tests" / "data" / "recordings"
OUT = ROOT / "docs" / "compatibility"


@dataclass(frozen=True)
class Published:
    """One recording on the page: its file's stem, how it was probed, what the row is called."""

    recording: str
    label: str
    """The row's name: the target, with the server and template that set it apart."""
    matrix: str = "default"
    api: str | None = None
    recorded: str = "2026-12-04T19:30:00Z"
    """UTC, to the second: the probe's start and end on the page (the recordings' day)."""


FOCUS = str(RECORDINGS / "focus.yaml")
PUBLISHED = (
    # Qwen2.5-Coder-0.5B with its own template: calls leak as bare JSON (provider-facts).
    Published("qwen-coder.default", "llamacpp:qwen2.5-coder-0.5b [own template]"),
    # The same model with the template derived so that its calls are the bare JSON it writes
    # (scripts/native_template.py): the first real model whose calls a real server parses.
    Published("qwen-coder-native.default", "llamacpp:qwen2.5-coder-0.5b [derived template]"),
    Published(
        "qwen-coder-native.responses",
        "llamacpp:qwen2.5-coder-0.5b [derived template]",
        FOCUS,
        "responses",
    ),
    Published(
        "qwen-coder-native.anthropic",
        "llamacpp:qwen2.5-coder-0.5b [derived template]",
        FOCUS,
        "anthropic",
    ),
    # SmolLM2-135M with its own template, which renders no tools.
    Published("smollm2-own.default", "llamacpp:smollm2-135m [own template]"),
    # llama-cpp-python 0.3.36's own server, chatml-function-calling.
    Published("llama-cpp-python.focus", "llama-cpp-python:qwen2.5-coder-0.5b", FOCUS),
    # LiteLLM 1.108.7's proxy in front of the derived-template llama-server.
    Published("litellm.chat", "litellm:qwen2.5-coder-0.5b", FOCUS),
    Published("litellm.anthropic", "litellm:qwen2.5-coder-0.5b", FOCUS, "anthropic"),
)
GENERATED = max(p.recorded for p in PUBLISHED)
"""The report's own date: the newest recording's."""


def replayed(item: Published, work: Path) -> ProbeResult:
    """The recording's probe replayed into ``work``, named by its label, dated when it was
    recorded."""
    recording = RECORDINGS / f"{item.recording}.json"
    spec = ProbeSpec(
        json.loads(recording.read_text(encoding="utf-8"))["target"],
        matrix=item.matrix,
        api_family=item.api,
        out_dir=work / item.recording,
        capability_file=work / "capabilities.yaml",
        replay=recording,
    )
    execute(build(spec))
    result = read_results(work / item.recording / "results.json")
    assert result.run is not None
    run = replace(result.run, started_at=item.recorded, finished_at=item.recorded)
    return replace(result, target=item.label, run=run)


def render(work: Path) -> dict[str, str]:
    """Every file of the published report, by its path under docs/compatibility/."""
    results = [replayed(item, work) for item in PUBLISHED]
    texts = render_compatibility(build_table(results), generated=GENERATED, version=__version__)
    return dict(sorted(texts.items()))


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    with tempfile.TemporaryDirectory() as work:
        texts = render(Path(work))
    stale = [
        name
        for name, text in texts.items()
        if not (OUT / name).is_file() or (OUT / name).read_text(encoding="utf-8") != text
    ]
    extra = sorted(
        str(p.relative_to(OUT)) for p in OUT.rglob("*") if p.is_file() and p.name != "README.md"
    )
    gone = [name for name in extra if name not in texts]
    if check:
        for name in [*stale, *gone]:
            print(f"docs/compatibility/{name} is out of date: run python -m scripts.compatibility")
        return 1 if stale or gone else 0
    for name in gone:
        (OUT / name).unlink()
    for name in stale:
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(texts[name], encoding="utf-8", newline="\n")
    print(f"docs/compatibility: {len(stale)} written, {len(gone)} removed, {len(texts)} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
