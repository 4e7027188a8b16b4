"""Task sets and their PDDL problems: the paper's task sets, compound tasks, other benchmarks.

* `taskset`: `Task`, the JSON task files, `normalize_steps` (aliases -> canonical),
  `reference_plan` (a task's reference steps read into `PlanStep`s).
* `sets`: `load_taskset`, `load_task`: every task set by name or path, each read by its reader.
* `catalogue`: AI2-THOR object types and their affordances.
* `observation`: the observation text read into facts.
* `problem`: `task_scene` (objects, initial facts with provenance, goal), `task_problem` and
  `problem_text` (the problem file with its provenance header).
* `goals`: the reviewed goals written for a task set (`data/sage/goals/*.toml`).
* `instruction`: the instruction reader, for tasks without a written goal.
* `compound`: compound tasks made of several tasks of one scene (REFERENCE §6.6).
* `alfred`: ALFRED expert trajectories as problems and plans of the ALFWorld domain, and
  ALFWorld's text commands as plan steps.
* `eai`: the Embodied Agent Interface's VirtualHome and BEHAVIOR problems and gold plans.
* `alfworld`: the `alfworld` task set (ALFRED trajectories of ALFWorld's six task types with
  their reviewed goals, TextWorld's ALFWorld test game) and folders of ALFWorld game data.
"""
from __future__ import annotations

from .compound import compound_tasks
from .goals import GoalSpec, bundled_goals, load_goals
from .instruction import read_instruction
from .problem import (
    SceneFact,
    TaskScene,
    problem_header,
    problem_text,
    scene_problem,
    task_infeasible,
    task_problem,
    task_scene,
)
from .sets import load_task, load_taskset
from .taskset import (
    BUNDLED,
    Task,
    TaskSetError,
    normalize_steps,
    reference_plan,
    task_from_record,
)

__all__ = ["BUNDLED", "GoalSpec", "SceneFact", "Task", "TaskScene", "TaskSetError",
           "bundled_goals", "compound_tasks", "load_goals", "load_task", "load_taskset",
           "normalize_steps", "problem_header", "problem_text", "read_instruction",
           "reference_plan", "scene_problem",
           "task_from_record", "task_infeasible", "task_problem", "task_scene"]
