"""Every task set sage-pddl reads, by name or path, and the reader that reads it.

`load_taskset(spec)` reads, in this order:

* a set of `NAMED` that is not a JSON file: `virtualhome` and `behavior` (EAI's problems and
  gold plans, read from the installed eai-eval: `eai.py`) and `alfworld` (bundled ALFRED
  trajectories and TextWorld's test game: `alfworld.py`);
* a folder of ALFWorld game data (`alfworld.folder_tasks`);
* a folder, glob or file of PDDL problems (`problemset.py`);
* a bundled JSON set (`taskset.BUNDLED`) or a task-set JSON file (`taskset.json_tasks`).

`load_task("ithor#K01")`, `load_task("path/to/file.json#K01")` or `load_task("problems/#p03")`
picks one task of a set; `load_task("problems/p03.pddl")` reads one problem file.

This module sits above every reader and dispatches to them; no reader imports it.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .alfworld import alfworld_tasks, folder_tasks, is_alfworld_folder
from .eai import behavior_tasks, virtualhome_tasks
from .problemset import is_problem_spec, problem_tasks
from .taskset import BUNDLED, Task, TaskSetError, json_tasks


@dataclass(frozen=True)
class NamedSet:
    """A task set known by name that is not a task-set JSON file."""

    description: str
    read: Callable[[], Iterable[Task]]


NAMED: dict[str, NamedSet] = {
    "virtualhome": NamedSet("the Embodied Agent Interface's VirtualHome problems and gold "
                            "plans (extra virtualhome)", virtualhome_tasks),
    "behavior": NamedSet("the Embodied Agent Interface's BEHAVIOR problems and gold plans "
                         "(extra virtualhome)", behavior_tasks),
    "alfworld": NamedSet("ALFRED expert trajectories and TextWorld's ALFWorld problem, "
                         "bundled (docs/alfworld.md)", alfworld_tasks),
}
"""Named sets besides `taskset.BUNDLED`'s JSON files, each with its reader (EAI's sets raise a
TaskSetError naming the extra to install when eai-eval is missing)."""


def load_taskset(spec: str | Path) -> list[Task]:
    """All tasks of a task-set spec (see the module docstring for what a spec may be)."""
    name = str(spec).lower()
    if name in NAMED:
        return list(NAMED[name].read())
    if name in BUNDLED:
        return json_tasks(name)
    if is_alfworld_folder(spec):
        return folder_tasks(spec)
    if is_problem_spec(spec):
        return problem_tasks(spec)
    if not Path(str(spec)).is_file():
        raise TaskSetError(f"task set {str(spec)!r}: no such file and not a bundled set "
                           f"(sets: {', '.join([*BUNDLED, *NAMED])}; a folder or glob of "
                           "PDDL problem files is a task set too)")
    return json_tasks(spec)


def load_task(ref: str) -> Task:
    """`SET#TASK_ID` where SET is a task-set spec (`ithor#K01`), or one `.pddl` problem file."""
    if "#" not in ref and ref.lower().endswith(".pddl"):
        return load_taskset(ref)[0]
    if "#" not in ref:
        raise TaskSetError(f"task reference {ref!r}: expected SET#TASK_ID, e.g. ithor#K01")
    where, task_id = ref.rsplit("#", 1)
    tasks = load_taskset(where)
    for task in tasks:
        if task.task_id.lower() == task_id.lower():
            return task
    ids = [task.task_id for task in tasks]
    nearest = difflib.get_close_matches(task_id, ids, n=5, cutoff=0.3) or ids[:5]
    raise TaskSetError(f"task reference {ref!r}: no task {task_id!r} in {where} ({len(ids)} "
                       f"tasks); nearest: {', '.join(nearest)}")
