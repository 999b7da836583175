"""docs/compatibility/ is what conchcheck says today about the recorded real servers.

``scripts/compatibility.py`` replays each live probe's recording and renders the report; this
replays them again and compares byte for byte, so a change in how conchcheck reads or judges
shows here until the published page is regenerated (``python -m scripts.compatibility``).
"""

from __future__ import annotations

from pathlib import Path

from scripts import compatibility


def test_the_published_report_is_what_conchcheck_says_now(tmp_path: Path) -> None:
    texts = compatibility.render(tmp_path)
    on_disk = {
        str(p.relative_to(compatibility.OUT)): p.read_text(encoding="utf-8")
        for p in compatibility.OUT.rglob("*")
        if p.is_file() and p.name != "README.md"
    }
    assert sorted(on_disk) == sorted(texts), "run python -m scripts.compatibility"
    for name, text in texts.items():
        assert on_disk[name] == text, f"{name}: run python -m scripts.compatibility"


def test_every_published_recording_names_its_day() -> None:
    for item in compatibility.PUBLISHED:
        assert (compatibility.RECORDINGS / f"{item.recording}.json").is_file(), item.recording
        assert len(item.recorded) == 20 and item.recorded.endswith("Z"), item.recorded
