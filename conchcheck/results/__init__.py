"""The one owner of ``results.json``: the typed result of a probe, its writer and its reader.

    result.py    ProbeResult (cells, catalogue, verdict, budget) and RunInfo
    cells.py     Cell, Stage, Outcome, CellMode
    evidence.py  what a cell sent, got back and read
    facts.py     what a cell of each stage knows beyond its outcome
    verdict.py   the verdict's types (computed by ``conchcheck.verdict``)
    writer.py    ProbeResult -> data -> text
    reader.py    text of any supported version -> ProbeResult (versions.py upgrades old ones)
    plain.py     typed values to plain data and back

Nothing outside this package knows the file's keys.
"""

from conchcheck.results.cells import PASSING, Cell, CellMode, Outcome, Stage
from conchcheck.results.evidence import CallReading, ReadCall, ReplyEvidence, RequestEvidence
from conchcheck.results.facts import (
    CatalogueFacts,
    CellFacts,
    LeakFacts,
    NativeFacts,
    SchemaFacts,
    StreamFacts,
)
from conchcheck.results.knobs import FidelityFacts, IdFacts, KnobFacts
from conchcheck.results.result import ProbeResult, RunInfo
from conchcheck.results.verdict import (
    CaseRefusal,
    DialectVerdict,
    Leak,
    Mode,
    Option,
    Rates,
    Route,
    StrictMode,
    Verdict,
)

__all__ = [
    "PASSING",
    "CallReading",
    "CaseRefusal",
    "CatalogueFacts",
    "Cell",
    "CellFacts",
    "CellMode",
    "DialectVerdict",
    "FidelityFacts",
    "IdFacts",
    "KnobFacts",
    "Leak",
    "LeakFacts",
    "Mode",
    "NativeFacts",
    "Option",
    "Outcome",
    "ProbeResult",
    "Rates",
    "ReadCall",
    "ReplyEvidence",
    "RequestEvidence",
    "Route",
    "RunInfo",
    "SchemaFacts",
    "Stage",
    "StreamFacts",
    "StrictMode",
    "Verdict",
]
