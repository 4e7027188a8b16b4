"""The order cells of a grid start in (`bench/schedule.py`): grid order, or longest expected
first, learned from the cells that finish."""
from __future__ import annotations

import heapq

from sage_pddl.bench.executors import Cell
from sage_pddl.bench.schedule import CellQueue

SECONDS = {"Direct": 1.0, "CoT": 1.0, "SAGE": 5.0}
TASKS = {"Direct": 8, "CoT": 8, "SAGE": 5}
"""A grid whose last planner is the slow one, as SAGE's sub-goal calls make it."""


def grid() -> list[Cell]:
    return [Cell("m", planner, f"T{t}", 0) for planner in SECONDS for t in range(TASKS[planner])]


def drain(queue: CellQueue) -> list[Cell]:
    return [queue.pop() for _ in range(len(queue))]


def makespan(queue: CellQueue, workers: int) -> float:
    """When the last cell ends, `workers` cells running at once, each taking its planner's
    seconds, and the queue told of each cell as it finishes (as the runner does)."""
    running: list[tuple[float, int, Cell]] = []
    now, started = 0.0, 0
    while len(queue) or running:
        while len(queue) and len(running) < workers:
            cell = queue.pop()
            heapq.heappush(running, (now + SECONDS[cell.planner], started, cell))
            started += 1
        now, _, cell = heapq.heappop(running)
        queue.finished(cell, SECONDS[cell.planner])
    return now


def test_grid_order_is_kept_when_asked():
    assert drain(CellQueue(grid(), longest_first=False)) == grid()


def test_every_cell_starts_once_and_each_planner_keeps_its_task_order():
    order = drain(CellQueue(grid(), longest_first=True))
    assert sorted(order) == sorted(grid())
    for planner in SECONDS:
        assert [c.task for c in order if c.planner == planner] == [
            f"T{t}" for t in range(TASKS[planner])]


def test_each_group_is_probed_first_then_the_slowest_group_goes_first():
    queue = CellQueue(grid(), longest_first=True)
    probes = [queue.pop() for _ in range(3)]
    assert [c.planner for c in probes] == ["Direct", "CoT", "SAGE"]
    for cell in probes:
        queue.finished(cell, SECONDS[cell.planner])
    assert [queue.pop().planner for _ in range(4)] == ["SAGE"] * 4
    assert {queue.pop().planner for _ in range(14)} == {"Direct", "CoT"}


def test_a_group_still_running_its_first_cell_counts_as_the_longest():
    queue = CellQueue(grid(), longest_first=True)
    direct, cot, sage = (queue.pop() for _ in range(3))
    queue.finished(direct, 1.0)
    queue.finished(cot, 1.0)
    assert queue.pop().planner == "SAGE"


def test_times_of_an_earlier_invocation_order_a_resumed_run_from_its_first_cell():
    queue = CellQueue(grid(), longest_first=True,
                      timed=[("m", p, s) for p, s in SECONDS.items()])
    assert [queue.pop().planner for _ in range(5)] == ["SAGE"] * 5


def test_cells_that_would_wait_for_what_the_run_builds_start_after_the_others():
    memory_built = False

    def ready(cell: Cell) -> bool:  # SAGE's cells wait for the memory being built
        return memory_built or cell.planner != "SAGE"

    queue = CellQueue(grid(), longest_first=True)
    assert {queue.pop(ready).planner for _ in range(6)} == {"Direct", "CoT"}
    memory_built = True
    assert queue.pop(ready).planner == "SAGE"  # the group not yet started goes first
    order = CellQueue(grid(), longest_first=False)
    assert order.pop(lambda cell: False) == grid()[0]  # grid order is kept when asked
    only_sage = CellQueue([c for c in grid() if c.planner == "SAGE"], longest_first=True)
    assert only_sage.pop(lambda cell: False).planner == "SAGE"  # nothing else: it waits


def test_longest_first_ends_the_grid_sooner_than_grid_order():
    # 4 workers. Grid order: 16 short cells take 4 s, then 4 SAGE cells 5 s and the fifth
    # 5 s more, alone: 14 s. Longest first overlaps the short cells with the SAGE cells: 11 s
    # (the work is 41 s, so no order ends before 10.25 s)
    assert makespan(CellQueue(grid(), longest_first=False), workers=4) == 14.0
    assert makespan(CellQueue(grid(), longest_first=True), workers=4) == 11.0


def test_an_empty_queue_says_so():
    queue = CellQueue([], longest_first=True)
    assert len(queue) == 0
    try:
        queue.pop()
    except IndexError:
        pass
    else:
        raise AssertionError("pop from an empty queue must raise")


def test_a_cell_that_is_not_ready_waits_for_the_groups_next_one():
    """A cell that would only wait for something the run still builds (`ready` False: a
    memory) is passed over for the next cell of its group, which keeps grid order."""
    held = {"T0", "T1"}

    def ready(cell: Cell) -> bool:
        return cell.task not in held

    queue = CellQueue([c for c in grid() if c.planner == "Direct"], longest_first=True)
    assert [queue.pop(ready).task for _ in range(2)] == ["T2", "T3"]
    held.clear()
    assert [queue.pop(ready).task for _ in range(3)] == ["T0", "T1", "T4"]
    stuck = CellQueue([c for c in grid() if c.planner == "Direct"][:2], longest_first=True)
    held.update({"T0", "T1"})
    assert stuck.pop(ready).task == "T0"  # every cell would wait: the first goes anyway
