"""What a stage may use: the target, the matrix, the options, and a way to send and record.

Stages are written against ``StageContext``, never against the engine, so the engine can
import its stages without the stages importing it back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from conchcheck.matrix import Matrix
    from conchcheck.results import Cell, Stage
    from conchcheck.wire.catalogue import ModelInfo
    from conchcheck.wire.chat import ChatRequest
    from conchcheck.wire.providers import Target
    from conchcheck.wire.transport import Exchange


class StageObserver(Protocol):
    """Told of progress; ``conchcheck.console`` renders it, Python callers may pass nothing."""

    def stage(self, stage: Stage, total: int) -> None:
        """A stage starts with ``total`` cells (an estimate for the dialect stage)."""

    def cell(self, cell: Cell) -> None:
        """A cell finished."""


class StageContext(Protocol):
    """The part of a probe a stage sees."""

    target: Target
    matrix: Matrix
    catalogue: ModelInfo | None
    cells: list[Cell]
    observer: StageObserver | None

    @property
    def options(self) -> Any:
        """The probe's options."""

    async def send(self, request: ChatRequest) -> Exchange:
        """Send within the budget."""

    def record(self, cell: Cell) -> Cell:
        """Keep a finished cell."""

    def reuse(self, cell_id: str) -> Cell | None:
        """A finished cell of the probe being resumed."""

    async def gather(self, jobs: Sequence[Callable[[], Awaitable[Any]]]) -> None:
        """Run jobs concurrently."""

    def exchange_cell(
        self, cell_id: str, stage: Stage, case: str, exchange: Exchange, **fields: Any
    ) -> Cell:
        """A cell carrying an exchange's evidence."""
