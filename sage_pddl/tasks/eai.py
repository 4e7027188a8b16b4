"""The Embodied Agent Interface's (EAI) household problems and gold plans.

EAI (embodied-agent-interface/embodied-agent-interface, MIT) ships, for VirtualHome and for
BEHAVIOR (iGibson), one PDDL problem per task and a `gold_pddl_plan.json` mapping a problem id
to its gold plan as bare strings, one action per string: `walk_towards character laptop`,
`navigate_to cracker_n_01_4 agent_n_01_1`. Our VirtualHome domain (`domains/virtualhome.pddl`)
keeps EAI's action names and parameter lists (its `open` action is `open_object` with alias
`open`), so the plans and problems need no rewriting: this module only reads them.

* `gold_plans(path)` -> {problem id: Plan}; `eai_plan(lines)` -> Plan for one list.
* `problem_files(folder)` -> {problem id: path}: VirtualHome problems lie in one sub-folder per
  task (`problems/Drink/528_1.pddl`), BEHAVIOR problems directly in `problems/`; the id is the
  file stem either way.
* `virtualhome_tasks()`: the `virtualhome` task set, one task per EAI VirtualHome problem that
  has a gold plan, read from the installed eai-eval (extra `virtualhome`): the problem is EAI's,
  the reference steps its gold PDDL plan as `{"action", "args"}` steps, the instruction the task
  name and the goal in words ("EAI 298_2, Put groceries in Fridge: make these true: open
  freezer; ...").
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
from functools import lru_cache
from pathlib import Path

from ..pddl.errors import PlanSyntaxError, SageError
from ..pddl.limits import read_text
from ..pddl.model import Plan, PlanStep
from ..pddl.parser import parse_problem
from ..pddl.plain import goal_instruction
from .taskset import Task, TaskSetError

EAI_EXTRA = "pip install 'sage-pddl[virtualhome]'"


def eai_plan(lines: list[str] | tuple[str, ...], source: str | None = None) -> Plan:
    """An EAI plan (a list of `action arg ...` strings) as a `Plan`."""
    steps = []
    for index, line in enumerate(lines):
        if not isinstance(line, str) or not line.split():
            raise PlanSyntaxError(f"step {index + 1} of {source or 'EAI plan'}: expected "
                                  f"'action arg ...', got {line!r}")
        words = line.split()
        steps.append(PlanStep(action=words[0], args=tuple(words[1:]), index=index,
                              text=line.strip()))
    return Plan(tuple(steps), source=source)


def gold_plans(path: str | Path) -> dict[str, Plan]:
    """Read an EAI `gold_pddl_plan.json`: {problem id: [step, ...]} -> {problem id: Plan}."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SageError(f"{path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise SageError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}") from error
    if not isinstance(data, dict):
        raise SageError(f"{path}: expected an object mapping problem ids to step lists")
    return {problem_id: eai_plan(lines, source=f"{path}#{problem_id}")
            for problem_id, lines in data.items()}


def problem_files(folder: str | Path) -> dict[str, Path]:
    """Every EAI problem file below `folder`, keyed by problem id (the file stem)."""
    found: dict[str, Path] = {}
    for path in sorted(Path(folder).rglob("*.pddl")):
        if path.stem in found:
            raise SageError(f"two EAI problems share the id {path.stem!r}: "
                            f"{found[path.stem]} and {path}")
        found[path.stem] = path
    return found


def eai_virtualhome_dir() -> Path:
    """The installed eai-eval's `resources/virtualhome` folder (found without importing it)."""
    spec = importlib.util.find_spec("virtualhome_eval")
    if spec is None or not spec.submodule_search_locations:
        raise TaskSetError("task set 'virtualhome' needs the Embodied Agent Interface's "
                           f"evaluator: {EAI_EXTRA}")
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "virtualhome"


@lru_cache(maxsize=1)
def virtualhome_tasks() -> tuple[Task, ...]:
    """The `virtualhome` task set (see the module docstring), sorted by EAI id."""
    root = eai_virtualhome_dir()
    gold = gold_plans(root / "gold_pddl_plan.json")
    tasks = []
    for task_id, path in problem_files(root / "problem_pddl").items():
        if task_id not in gold:
            continue
        problem = parse_problem(read_text(path, "the problem file"), file=str(path))
        # named after its EAI id too, so that any executor finds the task from the problem
        problem = dataclasses.replace(problem, name=f"{problem.name}-{task_id}")
        label = f"EAI {task_id}, {path.parent.name.replace('_', ' ')}"
        steps = tuple({"action": step.action, "args": list(step.args)}
                      for step in gold[task_id].steps)
        tasks.append(Task(task_id=task_id, instruction=goal_instruction(problem, label),
                          scene="", room="", obs="", reference_steps=steps,
                          domain="virtualhome", source="virtualhome", problem=problem))
    return tuple(sorted(tasks, key=lambda t: tuple(int(p) for p in t.task_id.split("_")
                                                   if p.isdigit())))
