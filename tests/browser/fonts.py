"""The fonts Debian's Chromium brings, and which characters a font has (its character map,
read with fontTools): for "no empty boxes", which a screenshot can't tell from a glyph.

chromium recommends fonts-liberation; its libfontconfig1 needs fontconfig-config, which needs
fonts-dejavu-core (the first of its alternatives). ``apt-get install chromium`` brings both.
Without them a test skips, unless $CONCHCHECK_REQUIRE_BROWSER is set (CI), when it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont, TTLibError

DEBIAN = {
    "fonts-dejavu-core": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    "fonts-liberation": ("LiberationSans-Regular.ttf", "LiberationSans-Bold.ttf"),
}
"""Each package and its sans faces, regular and bold: the faces the reports' CSS names."""
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts")


def debian_sans() -> list[Path]:
    """The sans faces of Debian's two packages, found where dpkg put them (or in the usual
    folders, on a system without dpkg); skips (or fails when required) if one is missing."""
    found, missing = [], []
    for package, names in DEBIAN.items():
        listed = _dpkg_files(package)
        for name in names:
            path = next((p for p in listed if p.name == name), None) or _search(name)
            if path is None:
                missing.append(f"{package}: {name}")
            else:
                found.append(path)
    if missing:
        why = f"fonts not installed ({', '.join(missing)}): apt-get install chromium brings them"
        if os.environ.get("CONCHCHECK_REQUIRE_BROWSER"):
            pytest.fail(f"CONCHCHECK_REQUIRE_BROWSER is set but {why}", pytrace=False)
        pytest.skip(why)
    return found


def missing(chars: Iterable[str], font: Path) -> list[str]:
    """The characters of ``chars`` that ``font`` has no glyph for, each once, in order."""
    covered = _cmap(font)
    return [c for c in dict.fromkeys(chars) if ord(c) not in covered]


@cache
def by_postscript_name() -> dict[str, Path]:
    """Every installed font file by its PostScript name (what Chromium reports it used)."""
    found: dict[str, Path] = {}
    for folder in FONT_DIRS:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.suffix.lower() not in (".ttf", ".otf"):
                continue
            try:
                with TTFont(path, lazy=True) as font:
                    name = font["name"].getDebugName(6)
            except (TTLibError, KeyError, OSError):
                continue
            if name:
                found.setdefault(name, path)
    return found


@cache
def _cmap(font: Path) -> frozenset[int]:
    with TTFont(font, lazy=True) as opened:
        return frozenset(opened.getBestCmap())


def _dpkg_files(package: str) -> list[Path]:
    dpkg = shutil.which("dpkg")
    if dpkg is None:
        return []
    listed = subprocess.run(
        [dpkg, "-L", package], capture_output=True, text=True, check=False
    ).stdout
    return [Path(line) for line in listed.splitlines() if line.endswith((".ttf", ".otf"))]


def _search(name: str) -> Path | None:
    for folder in FONT_DIRS:
        if folder.is_dir():
            found = next(folder.rglob(name), None)
            if found is not None:
                return found
    return None
