"""Reports of a probe: pick a format, render it to a string, write the files last and atomically.

Renderers are pure; only ``write_reports`` touches the disk, after every format has rendered.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from conchcheck.errors import InputError

if TYPE_CHECKING:
    from conchcheck.redaction import Redactor
    from conchcheck.results import ProbeResult, RunInfo


class ReportFormat(str, Enum):
    """The report formats, each written to its own file in the output folder."""

    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"
    JUNIT = "junit"

    @property
    def filename(self) -> str:
        """``results.json``, ``report.md``, ``report.html`` or ``junit.xml``."""
        return _FILENAMES[self]


_FILENAMES = {
    ReportFormat.JSON: "results.json",
    ReportFormat.MARKDOWN: "report.md",
    ReportFormat.HTML: "report.html",
    ReportFormat.JUNIT: "junit.xml",
}


def render(result: ProbeResult, fmt: ReportFormat, info: RunInfo) -> str:
    """One report of ``result`` as text."""
    # The renderers load here, not at import: the CLI names the formats before any render.
    from conchcheck.report import html, junit, markdown
    from conchcheck.results import writer

    match fmt:
        case ReportFormat.JSON:
            return writer.render(result, info)
        case ReportFormat.MARKDOWN:
            return markdown.render(result, info)
        case ReportFormat.HTML:
            return html.render(result, info)
        case ReportFormat.JUNIT:
            return junit.render(result, info)
        case _:
            _never(fmt)


def write_reports(
    result: ProbeResult,
    out_dir: Path,
    formats: Iterable[ReportFormat],
    info: RunInfo,
    *,
    secrets: Redactor | None = None,
) -> list[Path]:
    """Render every format, then write each file atomically; the paths written, in order.

    A renderer that fails writes nothing at all: rendering finishes before the first write.
    ``secrets`` (and every key this process holds) are masked in every string of ``result``
    before rendering, and in every form in each text after.
    """
    # Off the CLI's start-up path, like the renderers.
    from conchcheck.core.escaping import encodable
    from conchcheck.redaction import held

    mask = held() if secrets is None else secrets | held()
    result, info = mask.value(result), mask.value(info)
    texts = {fmt: encodable(mask.text(render(result, fmt, info))) for fmt in dict.fromkeys(formats)}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(out_dir, exc) from None
    written = []
    for fmt, text in texts.items():
        path = out_dir / fmt.filename
        _write_atomic(path, text)
        written.append(path)
    return written


def _write_atomic(path: Path, text: str) -> None:
    from conchcheck.replacement import replace_file  # tempfile: off the CLI's start-up path

    try:
        # A report is no secret and is meant to be shared: 0644, whatever was there.
        replace_file(path, text, mode=0o644)
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> InputError:
    return InputError(
        f"{path}: cannot be written ({exc.strerror}).",
        hint="Check the permissions and free space, or choose another folder with --out.",
    )


def _never(value: NoReturn) -> NoReturn:
    # typing.assert_never is 3.11+; conchcheck supports 3.10.
    raise AssertionError(f"unhandled value: {value!r}")
