"""Each prompt's label in a report: a table cell per prompt and mode (``pass · 4/4 ·
0.51-1.00``) and the sentence that says what the labels mean."""

from __future__ import annotations

from conchcheck.core.confidence import Label, Labels
from conchcheck.report.blocks import Para


def labelled(labels: Labels | None) -> bool:
    """Whether any prompt has a label (two attempts or more): else the columns say nothing."""
    return labels is not None and any(p.label is not None for p in labels.prompts)


def label_cell(labels: Labels, prompt: str, mode: str) -> str:
    """``intermittent · 4/5 · 0.38-0.96``: the label, passes over attempts, the interval."""
    for item in labels.prompts:
        if item.prompt == prompt and item.mode == mode:
            shown = item.label.value if item.label is not None else "no label"
            return f"{shown} · {item.passes}/{item.attempts} · {item.lo:.2f}-{item.hi:.2f}"
    return "—"


def labels_line(labels: Labels) -> str:
    """``labels at 95%, threshold 0.5: native 9 pass · 1 intermittent · 1 fail; words …``."""
    counts = "; ".join(
        f"{mode} {labels.count(mode, Label.PASS)} pass · "
        f"{labels.count(mode, Label.INTERMITTENT)} intermittent · "
        f"{labels.count(mode, Label.FAIL)} fail"
        for mode in ("native", "words")
    )
    return f"labels at {labels.confidence:.0%}, threshold {labels.threshold:g}: {counts}"


def labels_note(labels: Labels) -> Para:
    """What the labels mean, with the confidence and threshold they used, and the counts."""
    return Para(
        (
            "Labels: the Wilson score interval of each prompt's pass rate; pass when its low"
            " end is at least the threshold, fail when its high end is below it, else"
            " intermittent; a prompt needs two attempts for a label. ",
            f"{labels_line(labels).capitalize()}.",
        )
    )
