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
* `behavior_tasks()`: the `behavior` task set, EAI's 100 BEHAVIOR problems (domain `behavior`,
  EAI's `behavior.pddl`, resolved by `domains.INSTALLED`), each with its gold PDDL plan as the
  reference steps, read from the installed eai-eval: the task id is EAI's demo name
  (`bottling_fruit_0_Wainscott_0_int_0_2021-05-24_19-46-46`), the instruction the activity,
  EAI's description of it (`behavior_eval`'s `instructions_by_activity_name.json`) and the
  problem file's goal in words. The goal is the problem file's: EAI grounded BEHAVIOR's
  quantified BDDL goal for the objects of the demo, and its description may ask for more
  (docs/behavior.md).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..domains import load_domain
from ..pddl.errors import PlanSyntaxError, SageError
from ..pddl.limits import load_json, read_text
from ..pddl.model import Plan, PlanStep
from ..pddl.parser import parse_problem
from ..pddl.plain import goal_instruction
from ..pddl.validate import check_problem, errors_of
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


def _package_dir(module: str, task_set: str) -> Path:
    """An installed package's folder, found without importing it (importing EAI's packages
    pulls in simulators)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise TaskSetError(f"task set {task_set!r} needs the Embodied Agent Interface's "
                           f"evaluator: {EAI_EXTRA}")
    return Path(next(iter(spec.submodule_search_locations)))


def eai_virtualhome_dir() -> Path:
    """The installed eai-eval's `resources/virtualhome` folder (found without importing it)."""
    return _package_dir("virtualhome_eval", "virtualhome") / "resources" / "virtualhome"


def eai_behavior_dir() -> Path:
    """The installed eai-eval's `resources/behavior` folder: `behavior.pddl`, `problem_pddl/`,
    `gold_pddl_plan.json`."""
    return _package_dir("virtualhome_eval", "behavior") / "resources" / "behavior"


def _eai_task(task_id: str, path: Path, plan: Plan, label: str, domain: str) -> Task:
    problem = parse_problem(read_text(path, "the problem file"), file=str(path))
    # named after its EAI id too, so that any executor finds the task from the problem
    problem = dataclasses.replace(problem, name=f"{problem.name}-{task_id}")
    steps = tuple({"action": step.action, "args": list(step.args)} for step in plan.steps)
    return Task(task_id=task_id, instruction=goal_instruction(problem, label), scene="",
                room="", obs="", reference_steps=steps, domain=domain, source=domain,
                problem=problem)


@lru_cache(maxsize=1)
def virtualhome_tasks() -> tuple[Task, ...]:
    """The `virtualhome` task set (see the module docstring), sorted by EAI id."""
    root = eai_virtualhome_dir()
    gold = gold_plans(root / "gold_pddl_plan.json")
    tasks = [_eai_task(task_id, path, gold[task_id],
                       f"EAI {task_id}, {path.parent.name.replace('_', ' ')}", "virtualhome")
             for task_id, path in problem_files(root / "problem_pddl").items()
             if task_id in gold]
    return tuple(sorted(tasks, key=lambda t: tuple(int(p) for p in t.task_id.split("_")
                                                   if p.isdigit())))


def _json_object(path: Path) -> dict[str, Any]:
    data = load_json(read_text(path, "an EAI data file"), str(path), "EAI data file")
    if not isinstance(data, dict):
        raise TaskSetError(f"{path}: expected a JSON object")
    return data


def behavior_activities() -> dict[str, tuple[str, str]]:
    """{EAI BEHAVIOR demo name: (activity, EAI's description of it)}, from `behavior_eval`'s
    `data/demo_stats.json` and `instructions_by_activity_name.json`."""
    root = _package_dir("behavior_eval", "behavior")
    demos = _json_object(root / "data" / "demo_stats.json")
    described = _json_object(root / "evaluation" / "goal_interpretation" / "resources" / "data"
                             / "instructions_by_activity_name.json")
    activities = {}
    for demo, stats in demos.items():
        activity = str(stats.get("task", "")) if isinstance(stats, dict) else ""
        activities[demo] = (activity, str(described.get(activity, "")))
    return activities


@lru_cache(maxsize=1)
def _behavior_read() -> tuple[tuple[Task, ...], dict[str, str]]:
    root = eai_behavior_dir()
    gold = gold_plans(root / "gold_pddl_plan.json")
    activities = behavior_activities()
    domain = load_domain("behavior")
    tasks, refused = [], {}
    for task_id, path in problem_files(root / "problem_pddl").items():
        if task_id not in gold:
            continue
        activity, description = activities.get(task_id, ("", ""))
        name = (activity or task_id).replace("_", " ")
        label = f"BEHAVIOR {name}" + (f" ({description.rstrip('.')})" if description else "")
        task = _eai_task(task_id, path, gold[task_id], label, "behavior")
        errors = errors_of(check_problem(task.problem, domain)) if task.problem else []
        if errors:
            refused[task_id] = str(errors[0])
        else:
            tasks.append(task)
    return tuple(sorted(tasks, key=lambda t: t.task_id)), refused


def behavior_tasks() -> tuple[Task, ...]:
    """The `behavior` task set (see the module docstring), sorted by EAI demo name: every EAI
    BEHAVIOR problem with a gold plan that our checks accept (`behavior_refused`)."""
    return _behavior_read()[0]


def behavior_refused() -> dict[str, str]:
    """{EAI demo name: the first error our checks find in its problem file} for the problems
    left out of the `behavior` task set (one: `cleaning_floors_0_Merom_0_int_1_...` states a
    fact about an object it does not declare)."""
    return dict(_behavior_read()[1])
