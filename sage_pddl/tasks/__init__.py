"""Task sets and their PDDL problems: the paper's task sets, compound tasks, other benchmarks.

* `taskset`: `Task`, `load_taskset`, `load_task`, `normalize_steps` (aliases -> canonical).
* `catalogue`: AI2-THOR object types and their affordances.
* `observation`: the observation text read into facts.
* `problem`: `task_scene` (objects, initial facts with provenance, goal) and `task_problem`.
* `compound`: compound tasks made of several tasks of one scene (REFERENCE §6.6).
* `alfred`: ALFRED expert trajectories as problems and plans of the ALFWorld domain, and
  ALFWorld's text commands as plan steps.
* `eai`: the Embodied Agent Interface's VirtualHome and BEHAVIOR problems and gold plans.
"""
from __future__ import annotations

from .compound import compound_tasks
from .problem import GoalLiteral, SceneFact, TaskScene, scene_problem, task_problem, task_scene
from .taskset import (
                      BUNDLED,
                      Task,
                      TaskSetError,
                      load_task,
                      load_taskset,
                      normalize_steps,
                      task_from_record,
)

__all__ = ["BUNDLED", "GoalLiteral", "SceneFact", "Task", "TaskScene", "TaskSetError",
           "compound_tasks", "load_task", "load_taskset", "normalize_steps", "scene_problem",
           "task_from_record", "task_problem", "task_scene"]
