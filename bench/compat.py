"""Size and load time of a compatibility report of 200 targets, against issue 11's bounds:
under 5 MB, and open in under 2 s in Debian's headless Chromium.

The 200 results are the four real llama.cpp probes of tests/data/live, each copied 50 times
with its target and model renamed everywhere in the file (requests included), so no two
targets share a request body. Load time is the DevTools Page.loadEventFired wait and the
page's own performance.timing (navigation start to load event end), best of three.

Run: .venv/bin/python bench/compat.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from conchcheck.report.compatibility import write_compatibility
from tests.browser.chromium import browser

TARGETS = 200
SIZE_BOUND_MB = 5.0
LOAD_BOUND_S = 2.0
LIVE = Path(__file__).parent.parent / "tests" / "data" / "live"


def synthesise(folder: Path) -> list[Path]:
    sources = sorted(LIVE.glob("*.results.json"))
    paths = []
    for i in range(TARGETS):
        source = sources[i % len(sources)]
        data = json.loads(source.read_text())
        text = source.read_text().replace(data["model"], f"{data['model']}-copy{i:03d}")
        path = folder / f"t{i:03d}" / "results.json"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        paths.append(path)
    return paths


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = synthesise(root / "results")
        started = time.monotonic()
        write_compatibility(paths, root / "out", generated="2026-12-03T10:00:00Z", version="bench")
        render_s = time.monotonic() - started
        page_path = root / "out" / "compatibility.html"
        size_mb = page_path.stat().st_size / 1e6
        cdp, timing = [], []
        with browser() as page:
            for _ in range(3):
                cdp.append(page.open(page_path.as_uri()))
                timing.append(
                    page.evaluate(
                        "(performance.timing.loadEventEnd - performance.timing.navigationStart) / 1000"
                    )
                )
                rows = page.evaluate("document.querySelectorAll('tbody tr').length")
            errors = page.errors()
    print(f"{TARGETS} targets ({rows} rows), rendered and written in {render_s:.2f} s")
    print(f"{'measure':<34}{'value':>10}{'bound':>10}  ok")
    for name, value, bound in (
        ("compatibility.html size (MB)", size_mb, SIZE_BOUND_MB),
        ("load, Page.loadEventFired (s)", min(cdp), LOAD_BOUND_S),
        ("load, performance.timing (s)", min(timing), LOAD_BOUND_S),
    ):
        print(f"{name:<34}{value:>10.3f}{bound:>10.1f}  {'yes' if value < bound else 'NO'}")
    print(f"console errors: {len(errors)}")
    if size_mb >= SIZE_BOUND_MB or min(cdp) >= LOAD_BOUND_S or errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
