"""The compatibility report from real probes: the Markdown table, a badge, merge of shards,
the CLI's two forms, and hostile text that must stay text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conchcheck.cli import app
from conchcheck.report.compatibility import load_table, render_compatibility

ROOT = Path(__file__).parents[3]
FEATURES = """\
| target | api | dialect | mode | native | native clean | words | words clean | leaked calls | streaming | parallel | forced choice | round trip | refusals | schema cases |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| gemini-openai:gemini-x | openai | ■ gemini | ■ native | ■ 11/11 100% | ■ 11/11 100% | ■ 11/11 100% | ■ 11/11 100% | ■ 0 | ■ 11/11 agree | ■ 2/2 | ■ 2/2 | ▲ 1/2 | ■ none | ■ 27/29 in gemini; refused: dangling-ref, unknown-type, as expected |
| openrouter:m | openai | × none | ▲ words | × 0/11 0% | × 0/11 0% | ■ 11/11 100% | ■ 11/11 100% | ■ 0 | ■ 11/11 agree | ▲ 1/2 | ▲ 1/2 | × 0/1 | ▲ tools 11 | ○ — |
| vllm:m | openai | ■ permissive | ■ native | ■ 11/11 100% | ■ 11/11 100% | ■ 11/11 100% | ■ 11/11 100% | ■ 0 | ■ 11/11 agree | ■ 2/2 | ■ 2/2 | ▲ 1/2 | ■ none | ▲ 29/29 in permissive; invalid yet taken: dangling-ref, unknown-type |
"""
KNOBS = """\
| target | api | tool_choice none | tool_choice required | tool_choice named | parallel false | strict | call ids | finish reason | fidelity | reasoning |
|---|---|---|---|---|---|---|---|---|---|---|
| gemini-openai:gemini-x | openai | ■ honoured | ■ honoured | ■ honoured | ■ honoured | ▲ refused | ■ ok | ■ agrees | ■ exact | ■ not seen, 0 swallowed |
| openrouter:m | openai | ○ not measured | ○ not measured | ○ not measured | ○ not measured | ○ not measured | ○ not measured | ■ agrees | ■ exact | ■ not seen, 0 swallowed |
| vllm:m | openai | ■ honoured | ■ honoured | ■ honoured | ■ honoured | ■ honoured | ■ ok | ■ agrees | ■ exact | ■ not seen, 0 swallowed |
"""
BADGE = """\
<svg xmlns="http://www.w3.org/2000/svg" width="286" height="20" role="img" aria-label="vllm:m (openai): tool calling permissive · native · 100%">
<title>vllm:m (openai): tool calling permissive · native · 100%</title>
<rect width="94" height="20" fill="#555"/>
<rect x="94" width="192" height="20" fill="#2e7d32"/>
<g fill="#fff" font-family="DejaVu Sans,Verdana,Geneva,sans-serif" font-size="11">
<text x="47" y="14" text-anchor="middle" textLength="84">tool calling</text>
<text x="190" y="14" text-anchor="middle" textLength="182">permissive · native · 100%</text>
</g>
</svg>
"""
HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\">\x1b[31m\u202eevil"


def render(paths: list[Path], baseline: list[Path] | None = None) -> dict[str, str]:
    table = load_table(paths)
    before = load_table(baseline) if baseline else None
    return render_compatibility(table, generated="2026-12-03T10:00:00Z", version="0.1.0",
                                baseline=before)  # fmt: skip


def edited(source: Path, folder: Path, **changes: Any) -> Path:
    data = json.loads(source.read_text())
    for key, value in changes.items():
        if key == "digest":
            data["matrix"]["digest"] = value
        elif key == "reply_text":
            for cell in data["cells"]:
                if cell["reply"] and cell["stage"] == "native":
                    cell["reply"]["text"] = value
        else:
            data[key] = value
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(data))
    return folder / "results.json"


def test_markdown_table_of_three_real_probes(probed: dict[str, Path]) -> None:
    text = render(list(probed.values()))["compatibility.md"]
    first = sorted(json.loads(p.read_text())["run"]["finished_at"] for p in probed.values())
    when = first[0] if first[0] == first[-1] else f"{first[0]} to {first[-1]}"
    assert text.startswith(
        f"## Compatibility\n\n3 targets, probed {when}; matrix `default (sha256:85bebd52eb4b)`."
        " Made 2026-12-03T10:00:00Z by conchcheck 0.1.0. Legend: ■ pass · ▲ partial · × fail"
        " · ○ none.\n\n### Features\n\n"
        + FEATURES
        + "\n### Knobs and losses\n\n"
        + KNOBS
        + "\n### Dialect per schema case\n"
    )
    assert "| openrouter:m | openai | ▲ limit: tools | ▲ limit: tools |" in text
    assert "| vllm:m | openai | ■ permissive | ■ permissive |" in text


def test_badge_is_exact_svg(probed: dict[str, Path]) -> None:
    texts = render(list(probed.values()))
    assert sorted(k for k in texts if k.startswith("badges/")) == [
        "badges/gemini-openai-gemini-x.svg", "badges/openrouter-m.svg", "badges/vllm-m.svg",
    ]  # fmt: skip
    assert texts["badges/vllm-m.svg"] == BADGE


def test_baseline_diff_names_what_got_worse_and_better(
    probed: dict[str, Path], tmp_path: Path
) -> None:
    # vllm:m got openrouter's results; gemini-x got vllm's; openrouter:m is gone, "new:m" came.
    old = [
        edited(probed["vllm:m"], tmp_path / "old" / "a"),
        edited(probed["openrouter:m"], tmp_path / "old" / "b", target="gemini-x"),
        edited(probed["openrouter:m"], tmp_path / "old" / "c"),
    ]
    new = [
        edited(probed["openrouter:m"], tmp_path / "new" / "a", target="vllm:m"),
        edited(probed["vllm:m"], tmp_path / "new" / "b", target="gemini-x"),
        edited(probed["vllm:m"], tmp_path / "new" / "c", target="new:m"),
    ]
    text = render(new, baseline=old)["compatibility.md"]
    changes = text.split("### Changes since the baseline\n\n")[1]
    worse, better = changes.split("Better: ")
    head = "\n\n| target | api | feature | before | after |\n|---|---|---|---|---|\n"
    # The swap is symmetric: what vllm:m lost, gemini-x gained, the invalid case the other way.
    assert worse.startswith(
        "Worse: 44." + head + "| gemini-x | openai | dangling-ref | ■ refused (invalid) "
        "| ▲ accepted (invalid) |\n"
    )
    assert (
        "| vllm:m | openai | dialect | ■ permissive | × none |\n"
        "| vllm:m | openai | mode | ■ native | ▲ words |\n"
        "| vllm:m | openai | native | ■ 11/11 100% | × 0/11 0% |\n" in worse
    )
    # A knob honoured before and not measured now is worse: not measured is never fine.
    assert "| vllm:m | openai | tool_choice none | ■ honoured | ○ not measured |\n" in worse
    assert better.startswith(
        "44." + head + "| gemini-x | openai | dialect | × none | ■ permissive |\n"
        "| gemini-x | openai | mode | ▲ words | ■ native |\n"
    )
    assert (
        "| vllm:m | openai | dangling-ref | ▲ accepted (invalid) | ■ refused (invalid) |" in better
    )
    assert changes.endswith("- New: `new:m (openai)`\n- Gone: `openrouter:m (openai)`\n")


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        pytest.param(["report", "--help"], "merge", id="group-help-lists-merge"),
        pytest.param(["report", "merge", "--help"], "Join the results of CI shards",
                     id="merge-help"),
        pytest.param(["report", "render", "--help"], "badges/<target>.svg", id="render-help"),
    ],
)  # fmt: skip
def test_help(args: list[str], wanted: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and wanted in result.stdout


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "conchcheck", *args], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip


def test_report_default_form_writes_every_file(probed: dict[str, Path], tmp_path: Path) -> None:
    folders = [str(p.parent) for p in probed.values()]
    done = cli("report", *folders, "--out", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    written = [Path(p).relative_to(tmp_path / "out").as_posix() for p in json.loads(done.stdout)]
    assert written == [
        "compatibility.md", "compatibility.html", "badges/gemini-openai-gemini-x.svg",
        "badges/openrouter-m.svg", "badges/vllm-m.svg",
    ]  # fmt: skip


def test_merge_joins_shards(probed: dict[str, Path], tmp_path: Path) -> None:
    a, b = tmp_path / "shard-a", tmp_path / "shard-b"
    edited(probed["vllm:m"], a / "vllm-m")
    edited(probed["openrouter:m"], b / "openrouter-m")
    edited(probed["gemini-openai:gemini-x"], b / "gemini")
    done = cli("report", "merge", str(a), str(b), "--out", str(tmp_path / "all"))
    assert (done.returncode, done.stderr) == (0, "")
    index = json.loads((tmp_path / "all" / "index.json").read_text())
    assert [(t["target"], t["results"]) for t in index["targets"]] == [
        ("gemini-openai:gemini-x", "gemini-openai-gemini-x/results.json"),
        ("openrouter:m", "openrouter-m/results.json"),
        ("vllm:m", "vllm-m/results.json"),
    ]
    assert index["matrix"]["name"] == "default"
    joined = tmp_path / "all" / "vllm-m" / "results.json"
    assert joined.read_text() == (a / "vllm-m" / "results.json").read_text()
    assert cli("report", str(tmp_path / "all"), "--out", str(tmp_path / "r")).returncode == 0


@pytest.mark.parametrize(
    ("second", "wanted"),
    [
        pytest.param({}, "target vllm:m at {url} (openai) is also in {first}; each target may "
                     "come once in each API of an endpoint.", id="the-same-target-in-two-shards"),
        pytest.param({"target": "vllm:other", "digest": "sha256:" + "ab" * 32},
                     "matrix default (sha256:" + "ab" * 32 + ") differs from default "
                     "({digest}) in {first}; shards must be probed with the same matrix.",
                     id="two-matrix-versions"),
    ],
)  # fmt: skip
def test_merge_refuses(
    probed: dict[str, Path], tmp_path: Path, second: dict[str, Any], wanted: str
) -> None:
    first = edited(probed["vllm:m"], tmp_path / "a" / "x")
    other = edited(probed["vllm:m"], tmp_path / "b" / "x", **second)
    data = json.loads(first.read_text())
    done = cli("report", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
               str(tmp_path / "out"))  # fmt: skip
    said = wanted.format(url=data["endpoint"], first=first, digest=data["matrix"]["digest"])
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(f"conchcheck: {other}: {said}")
    assert not (tmp_path / "out").exists()


def test_merge_refuses_a_folder_without_results(tmp_path: Path) -> None:
    done = cli("report", "merge", str(tmp_path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert f"{tmp_path}: holds no results.json" in done.stderr


def test_merge_takes_a_shard_that_probed_no_target(probed: dict[str, Path], tmp_path: Path) -> None:
    # Three targets in four shards leave one empty: its folder holds only index.json.
    edited(probed["vllm:m"], tmp_path / "a" / "x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "index.json").write_text('{"targets": []}')
    done = cli("report", "merge", str(tmp_path / "a"), str(tmp_path / "empty"), "--out",
               str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (tmp_path / "out").glob("*/results.json")] == ["results.json"]


def test_merge_refuses_shards_that_all_probed_nothing(tmp_path: Path) -> None:
    for name in ("s1", "s2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.json").write_text('{"targets": []}')
    done = cli("report", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out",
               str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        f"conchcheck: {tmp_path / 's1'}, {tmp_path / 's2'}: no target was probed in any of"
        " them. Each shard's index.json lists no target: check the targets file.\n"
    )


def test_hostile_text_stays_text(probed: dict[str, Path], tmp_path: Path) -> None:
    path = edited(probed["vllm:m"], tmp_path / "h", target=HOSTILE, model=HOSTILE,
                  reply_text=HOSTILE)  # fmt: skip
    texts = render([path])
    page = texts["compatibility.html"]
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert "<img" not in page and "\x1b" not in page and "\u202e" not in page
    assert (
        "&lt;/script&gt;&lt;img src=x onerror=&quot;document.title=&#x27;pwned&#x27;&quot;&gt;"
        "\\x1b[31m\\u202eevil" in page
    )
    assert "<img" not in texts["compatibility.md"] and "\x1b" not in texts["compatibility.md"]
    [svg_name] = [k for k in texts if k.startswith("badges/")]
    assert svg_name == "badges/script-img-src-x-onerror-document.title-pwned-31m-evil.svg"
    svg = ET.fromstring(texts[svg_name])
    title = svg.find("{http://www.w3.org/2000/svg}title")
    assert title is not None and title.text == (
        "</script><img src=x onerror=\"document.title='pwned'\">\\x1b[31m\\u202eevil (openai): "
        "tool calling permissive · native · 100%"
    )
