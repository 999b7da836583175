"""The gate as JUnit XML: a test suite per target, a test case per expectation and per cell.

The conventions CI test views read (Jenkins, GitLab, GitHub test reporters): ``testsuites``
with totals, ``classname`` to group, ``failure`` with a one-line ``message`` and the details
as its text, ``skipped`` and ``error`` for cells that prove nothing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conchcheck.core.escaping import visible
from conchcheck.gate.outcome import Check, GateResult
from conchcheck.gate.runs import Run
from conchcheck.results.status import CiStatus, judge

# XML 1.0 has no way to write most control characters; a model's reply can hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render(result: GateResult) -> str:
    """``junit.xml`` of the gate as text."""
    root = ET.Element("testsuites", name="conchcheck check")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for run in result.runs:
        suite = _suite(root, run.name)
        for check in (c for c in result.checks if c.target == run.name):
            _check(suite, check)
        for change in (c for c in result.regressions if c.target == run.name):
            case = _case(suite, f"baseline {change.what}", "baseline")
            _fail(case, f"{change.what}: {change.before} -> {change.after}", run.name)
        _cells(suite, run)
        _count(suite, totals)
    # Targets named by the expectations or the baseline that no results cover.
    known = {run.name for run in result.runs}
    named = [c.target for c in result.unmet] + [c.target for c in result.regressions]
    missing = [target for target in named if target not in known]
    for target in dict.fromkeys(missing):
        suite = _suite(root, target)
        for check in (c for c in result.checks if c.target == target):
            _check(suite, check)
        for change in (c for c in result.regressions if c.target == target):
            case = _case(suite, f"baseline {change.what}", "baseline")
            _fail(case, f"{change.what}: {change.before} -> {change.after}", target)
        _count(suite, totals)
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _suite(root: ET.Element, target: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=_text(target))


def _case(suite: ET.Element, name: str, group: str) -> ET.Element:
    owner = suite.get("name", "")
    return ET.SubElement(suite, "testcase", name=_text(name), classname=f"{owner}.{group}")


def _check(suite: ET.Element, check: Check) -> None:
    case = _case(suite, check.name, "expectations")
    if not check.met:
        message = f"{check.name}: wanted {check.wanted}, got {check.got}"
        _fail(case, message, check.target)


def _fail(case: ET.Element, message: str, target: str) -> None:
    failure = ET.SubElement(case, "failure", message=_text(message), type="unmet")
    failure.text = _text(f"target: {target}\n{message}")


def _cells(suite: ET.Element, run: Run) -> None:
    carried = frozenset(case for case in run.cases() if run.case_status(case) == "accepted")
    for cell in run.cells:
        case = _case(suite, cell.id, f"cells.{cell.stage.value}")
        detail = f"{cell.label}: {cell.detail}" if cell.detail else cell.label
        match judge(cell, carried):
            case CiStatus.PASSED:
                pass
            case CiStatus.FAILED:
                ET.SubElement(case, "failure", message=_text(detail), type=cell.label)
            case CiStatus.ERROR:
                ET.SubElement(case, "error", message=_text(detail), type=cell.label)
            case CiStatus.SKIPPED:
                ET.SubElement(case, "skipped", message=_text(detail))


def _count(suite: ET.Element, totals: dict[str, int]) -> None:
    cases = suite.findall("testcase")
    counts = {
        "tests": len(cases),
        "failures": sum(c.find("failure") is not None for c in cases),
        "errors": sum(c.find("error") is not None for c in cases),
        "skipped": sum(c.find("skipped") is not None for c in cases),
    }
    for key, value in counts.items():
        suite.set(key, str(value))
        totals[key] += value


def _text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", visible(text))
