"""What the cells of a run share within one process: `RunContext`.

One `RunContext` is made per process that runs cells (the bench process, or each Ray worker) and
is shared by all its threads. Each thing it holds is built once, by the first thread that asks,
under a lock of its own key (`sage_pddl.pddl.built_once.BuiltOnce`):

* the task sets, by name (`TaskSets`: the run's tasks are selected from them, and a memory is
  built from its task's whole set);
* the domains, by name (`load_domain` keeps each file's domain for the process);
* the planning tasks (immutable; a task's problem is built once per process), and one compiled
  gate per task (`gate(task)`: a gate is a value threads share, `sage_pddl.gate.gate`), which
  every cell of the task hands to its planner, runtime and world, so none compiles its own and
  each finds what the task's earlier cells ground;
* why a task's scene cannot reach its goal (`task_infeasible`, "" when it can), kept for the
  process as the task's problem is, so a second run in the process does not work it out again;
* the memories of the task sets (only read while cells run, except with `memory="live"`, which
  runs one cell at a time), built on a thread of their own while the first cells run
  (`build_memories_meanwhile`).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from sage_pddl.domains import load_domain
from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.pddl.built_once import BuiltOnce
from sage_pddl.pddl.model import Domain
from sage_pddl.planners import uses_memory
from sage_pddl.planners.base import PlanningTask, kept_per_task
from sage_pddl.planners.memory import HybridMemory
from sage_pddl.tasks import Task, load_taskset, task_infeasible

from .config import BenchConfig
from .executors import Cell

_INFEASIBLE: BuiltOnce[tuple[int, str], str] = BuiltOnce(kept=512)
"""Why each task cannot reach its goal, kept for the process by domain object and task content,
as its problem is (`task_problem_of`): every run in the process asks again; a lock per task."""


class TaskSets:
    """The task sets of a run by name, each read once: the run's tasks are selected from them
    (`select_tasks(specs, load=TaskSets().get)`) and a memory is built from its task's set."""

    def __init__(self) -> None:
        self._sets: BuiltOnce[str, list[Task]] = BuiltOnce(kept=None)

    def get(self, name: str) -> list[Task]:
        return self._sets.get(name, lambda: load_taskset(name))


class RunContext:
    """What the cells of a run share in this process (see the module docstring)."""

    def __init__(self, config: BenchConfig, tasks: Sequence[Task], live_path: Path | None = None,
                 task_sets: TaskSets | None = None):
        """`task_sets`: those the run's `tasks` were selected from (`select_tasks`)."""
        self.config = config
        self.tasks = tasks
        self.live_path = live_path
        """The live memory's file (`memory="live"`), else None."""
        self.task_sets = task_sets or TaskSets()
        # the run's own domains, tasks, gates and memories: every value kept, a lock per key (a
        # domain by name: `load_domain` finds its file again each time it is asked)
        self._domains: BuiltOnce[str, Domain] = BuiltOnce(kept=None)
        self._planning: BuiltOnce[str, PlanningTask] = BuiltOnce(kept=None)
        self._gates: BuiltOnce[str, PlanChecker] = BuiltOnce(kept=None)
        self._memories: BuiltOnce[str, HybridMemory] = BuiltOnce(kept=None)
        self._memories_built = threading.Event()
        self._memories_built.set()  # until `build_memories_meanwhile` starts building them

    def domain_for(self, task: Task) -> Domain:
        name = self.config.domain or task.domain or "ithor"
        return self._domains.get(name, lambda: load_domain(
            name, domains_dirs=list(self.config.domains_dirs) or None))

    def planning_task(self, task: Task) -> PlanningTask:
        return self._planning.get(task.task_id,
                                  lambda: PlanningTask.from_task(task, self.domain_for(task)))

    def infeasible(self, task: Task) -> str:
        """Why the task's scene cannot reach its goal ("" when it can)."""
        domain = self.domain_for(task)
        return kept_per_task(_INFEASIBLE, task, domain, lambda: task_infeasible(task, domain))

    def memory(self, task: Task) -> HybridMemory:
        """The memory of the task's own task set (retrieval leaves the task out)."""
        source = task.source or ""

        def build() -> HybridMemory:
            pool = self.task_sets.get(source) if source else self.tasks
            return HybridMemory.from_tasks(pool, self.domain_for(task), live_path=self.live_path)

        return self._memories.get(self._memory_key(task), build)

    def gate(self, task: Task) -> PlanChecker:
        """The compiled gate of the task's problem, one for the process, shared by the task's
        cells."""
        def build() -> PlanChecker:
            planning = self.planning_task(task)
            return compile_gate(planning.domain, planning.problem)

        return self._gates.get(task.task_id, build)

    def _memory_key(self, task: Task) -> str:
        return f"{task.source or ''}|{self.config.domain or task.domain}"

    def build_memories_meanwhile(self) -> None:
        """Start building, on a thread of its own, the memories the grid's planners will read,
        so that the first cells that need one find it built or being built, while cells that
        need none wait on their LLM server. With `memory="live"` they are built here, before
        the first cell. A build that fails is left to the cells, which build it again and
        record the error in their rows."""
        if self.config.memory == "none" or not any(map(uses_memory, self.config.planners)):
            return
        one_task_each: dict[str, Task] = {}
        for task in self.tasks:
            one_task_each.setdefault(self._memory_key(task), task)

        def build_all() -> None:
            try:
                for task in one_task_each.values():
                    try:
                        self.memory(task)
                    except Exception:  # the cells meet the error again (see the docstring)
                        pass
            finally:
                self._memories_built.set()

        self._memories_built.clear()
        if self.config.memory == "live":
            # a memory reads the live file when it is built: built before the first cell, every
            # set's memory starts from the same episodes whatever the cells' timing
            build_all()
            return
        threading.Thread(target=build_all, daemon=True, name="bench-memories").start()

    def ready(self, cell: Cell) -> bool:
        """False while the cell would only wait for a memory still being built."""
        return (self._memories_built.is_set() or self.config.memory == "none"
                or not uses_memory(cell.planner))
