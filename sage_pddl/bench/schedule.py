"""The order in which the cells of a benchmark grid are started: longest expected first.

A grid ends when its last cell does. In grid order (model, planner, task, seed) the cells of one
planner come together, so with several cells in flight a grid whose last planner is slow
(SAGE's sub-goal calls, LLM+P's classical planner) ends on a tail of its long cells while the
other workers idle. `CellQueue` starts the longest expected cells first instead (the LPT rule
for the makespan of independent jobs), learning what to expect as the run goes. Cells are
grouped by (model, planner). A group none of whose cells has started or been timed goes first,
so that every group is timed early; then the group whose finished cells took longest on average
(rows of an earlier invocation of a resumed run count, by their `row_seconds`); a group started
but not yet timed counts as the longest, since its first cell is still running while others
have finished. Within a group cells keep grid order. A cell that would only wait for something
the run is still building (`ready(cell)` is False: a SAGE cell while the task set's memory is
built) starts after the cells that would not (of each group's next `READY_SCAN`), so those
cells wait on their LLM server meanwhile.

The order changes no row: a cell's row depends on the cell alone (with `memory="live"` rows
depend on the order cells finish in anyway). `longest_first=False` keeps grid order, which the
runner uses with one cell at a time (nothing overlaps, and an interrupted run then holds whole
planners) and with `--max-rows N` (the first N cells of the grid).
"""
from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable

from .executors import Cell

Group = tuple[str, str]
"""(model, planner)"""

READY_SCAN = 64
"""How many of a group's next cells `pop` asks `ready` about (more than the cells in flight at
once on threads)."""


class CellQueue:
    """The cells still to start (see the module docstring)."""

    def __init__(self, cells: Iterable[Cell], longest_first: bool,
                 timed: Iterable[tuple[str, str, float]] = ()):
        """`timed`: (model, planner, seconds) of cells that ran before (a resumed run)."""
        self._longest_first = longest_first
        self._groups: dict[Group, deque[Cell]] = {}
        for cell in cells:
            self._groups.setdefault((cell.model, cell.planner), deque()).append(cell)
        self._started: set[Group] = set()
        self._seconds: dict[Group, list[float]] = {}  # group -> [total seconds, cells]
        for model, planner, seconds in timed:
            self._add_time((model, planner), seconds)

    def __len__(self) -> int:
        return sum(len(cells) for cells in self._groups.values())

    def pop(self, ready: Callable[[Cell], bool] | None = None) -> Cell:
        """The next cell to start, of those `ready` accepts if it accepts any (longest first
        only). Raises IndexError when none is left."""
        waiting = [group for group, cells in self._groups.items() if cells]
        if not waiting:
            raise IndexError("no cell left")
        first_ready: dict[Group, int] = {}
        if self._longest_first and ready is not None:
            for group in waiting:
                cells = self._groups[group]
                found = next((n for n in range(min(len(cells), READY_SCAN)) if ready(cells[n])),
                             None)
                if found is not None:
                    first_ready[group] = found
            waiting = [g for g in waiting if g in first_ready] or waiting
        group = waiting[0]
        if self._longest_first:
            group = next((g for g in waiting
                          if g not in self._started and g not in self._seconds), None) \
                or max(waiting, key=self._mean_seconds)  # a tie: the first in grid order
        self._started.add(group)
        cells = self._groups[group]
        found = first_ready.get(group, 0)
        cell = cells[found]
        del cells[found]
        return cell

    def finished(self, cell: Cell, seconds: float | None) -> None:
        """Learn how long `cell` took (None: not timed, learn nothing)."""
        if seconds is not None:
            self._add_time((cell.model, cell.planner), seconds)

    def clear(self) -> None:
        self._groups.clear()

    def _add_time(self, group: Group, seconds: float) -> None:
        total = self._seconds.setdefault(group, [0.0, 0])
        total[0] += seconds
        total[1] += 1

    def _mean_seconds(self, group: Group) -> float:
        total, cells = self._seconds.get(group, (0.0, 0))
        return total / cells if cells else math.inf
