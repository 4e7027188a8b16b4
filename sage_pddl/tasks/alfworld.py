"""The `alfworld` task set: ALFWorld's household tasks from what is in reach here.

ALFWorld (Shridhar et al., 2021) turns ALFRED's expert trajectories into TextWorld games of
six task types. Its game files come from a download this project cannot make, so the bundled
set (`data/alfworld/`, see its PROVENANCE.md) holds what is:

* one ALFRED trajectory (`traj_data.json`, ALFRED's `valid_seen` split) of each of ALFWorld's
  six task types, read through the ALFRED translator (`alfred.translate_trajectory`): the
  problem in our `alfworld` domain, the expert plan as the reference steps. The goal is the
  reviewed goal of the task type (`data/sage/goals/alfworld.toml`, filled with the
  trajectory's `pddl_params`), not the translator's; the instruction is ALFWorld's template
  for the type ("put a hot apple in diningtable."), and the task's `difficulty` field holds
  the task type, so reports can group by it.
* TextWorld's ALFWorld test game (`textworld-test/`: ALFWorld's own `alfred` domain and a
  problem in it), whose goal is the problem file's, and whose reference steps are written
  below (`TEXTWORLD_TEST_PLAN`): go to the desk, switch the lamp on, take the CD.

A folder of ALFWorld's downloaded game data is a task set too (`load_taskset(FOLDER)`): every
`traj_data.json` below it becomes a task as above, and every `game.tw-pddl` a task of its
`pddl_problem`, whose domain is the problem's `(:domain alfred)`: ALFWorld's own domain, which
the user adds as a drop-in (`--domains-dir` or `SAGE_PDDL_DOMAINS` with its `alfred.pddl`).
Game tasks carry no reference steps; their `scene` is the game file, which the `alfworld`
environment plays as it is (its own domain, grammar and problem). Task ids are the trajectory's task folder
(`pick_heat_then_place_in_recep-Apple-None-DiningTable-26`), the trial folder appended when one
task folder has several trials; a game's id is its folder's name the same way.
"""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..pddl.errors import PDDLError, SageError
from ..pddl.limits import load_json, read_text
from ..pddl.model import Formula, Problem
from ..pddl.parser import parse_problem
from ..pddl.plain import goal_instruction
from .alfred import find_trajectories, load_trajectory, translate_trajectory
from .goals import goals_dir, parse_goal
from .taskset import Task, TaskSetError, data_dir

GOALS_FILE = "alfworld.toml"
TRAJECTORY_FILE = "traj_data.json"
GAME_FILE = "game.tw-pddl"
TEXTWORLD_TEST_PLAN: tuple[dict[str, Any], ...] = (
    {"action": "GotoLocation", "args": ["agent1", "locCenter", "locDesk", "Desk"]},
    {"action": "ToggleObject", "args": ["agent1", "locDesk", "DeskLamp"]},
    {"action": "PickupObject", "args": ["agent1", "locDesk", "CD", "Desk"]},
)
"""The TextWorld test game's plan, written from its problem: go to the desk, switch the desk
lamp on, take the CD (`tests/env/test_alfworld.py` plays the same three in TextWorld)."""


@dataclass(frozen=True)
class TypeGoal:
    """The reviewed goal of one ALFWorld task type, with placeholders (`{object}`, ...)."""

    task_type: str
    instruction: str
    goal: str
    note: str = ""

    def filled(self, params: dict[str, Any]) -> tuple[str, Formula]:
        """ALFWorld's instruction and the goal for one trajectory's `pddl_params`."""
        values = {"object": str(params.get("object_target", "")),
                  "parent": str(params.get("parent_target", "")),
                  "lamp": str(params.get("toggle_target", "")),
                  "sliced": "(isSliced ?o)" if params.get("object_sliced") else ""}
        missing = [name for name in ("object", "parent", "lamp")
                   if f"{{{name}}}" in self.goal and not values[name]]
        if missing:
            raise TaskSetError(f"ALFWorld task type {self.task_type}: the trajectory's "
                               f"pddl_params give no {', '.join(missing)}")
        words = {name: value.lower() for name, value in values.items()}
        if params.get("object_sliced"):
            words["object"] = f"sliced {words['object']}"
        instruction = self.instruction.format(**words)
        return instruction, parse_goal(self.goal.format(**values))


def alfworld_data_dir() -> Path:
    """The bundled ALFWorld data (`data/alfworld`)."""
    return data_dir().parent / "alfworld"


@lru_cache(maxsize=4)
def type_goals(path: Path | None = None) -> dict[str, TypeGoal]:
    """The reviewed goals of ALFWorld's task types (`data/sage/goals/alfworld.toml`)."""
    path = path or goals_dir() / GOALS_FILE
    try:
        data = tomllib.loads(read_text(path, "the goals file"))
    except tomllib.TOMLDecodeError as error:
        raise TaskSetError(f"{path}: not TOML: {error}") from error
    goals = {}
    for task_type, table in data.items():
        if not isinstance(table, dict) or not isinstance(table.get("goal"), str):
            raise TaskSetError(f"{path}: [{task_type}] needs a goal")
        goals[task_type] = TypeGoal(task_type, str(table.get("instruction", "")),
                                    table["goal"], str(table.get("note", "")))
    return goals


def _task_id(path: Path, taken: set[str]) -> str:
    task_id = path.parent.parent.name
    if task_id in taken or not task_id:
        task_id = f"{task_id}-{path.parent.name}"
    taken.add(task_id)
    return task_id


def trajectory_task(path: Path, task_id: str, source: str = "alfworld") -> Task:
    """One ALFRED trajectory as an ALFWorld task (see the module docstring)."""
    traj = load_trajectory(path)
    if not isinstance(traj, dict):
        raise TaskSetError(f"{path}: an ALFRED trajectory is a JSON object")
    task_type = str(traj.get("task_type", ""))
    goal = type_goals().get(task_type)
    if goal is None:
        raise TaskSetError(f"{path}: task type {task_type!r} is not one of ALFWorld's "
                           f"({', '.join(type_goals())})")
    episode = translate_trajectory(traj)
    params = traj.get("pddl_params")
    instruction, formula = goal.filled(params if isinstance(params, dict) else {})
    problem = dataclasses.replace(episode.problem, goal=formula)
    steps = tuple({"action": step.action, "args": list(step.args)} for step in episode.plan)
    return Task(task_id=task_id, instruction=instruction, scene=episode.scene, room="", obs="",
                reference_steps=steps, difficulty=task_type, domain="alfworld",
                source=source, problem=problem)


def game_task(path: Path, task_id: str, source: str) -> Task:
    """One ALFWorld game file (`game.tw-pddl`, JSON with the game's `pddl_problem`)."""
    data = load_json(read_text(path, "the game file"), str(path), "ALFWorld game")
    text = data.get("pddl_problem") if isinstance(data, dict) else None
    if not isinstance(text, str):
        raise TaskSetError(f"{path}: an ALFWorld game file holds its problem as 'pddl_problem'")
    problem = parse_problem(text, file=f"{path}#pddl_problem")
    task = _problem_task(problem, task_id, problem.domain_name, (), source)
    # the game file is the task's world: `--env alfworld` plays it with its own domain and grammar
    return dataclasses.replace(task, scene=str(path))


def _problem_task(problem: Problem, task_id: str, domain: str,
                  steps: tuple[dict[str, Any], ...], source: str) -> Task:
    return Task(task_id=task_id, instruction=goal_instruction(problem, task_id), scene="",
                room="", obs="", reference_steps=steps, domain=domain, source=source,
                problem=problem)


def textworld_test_task() -> Task:
    """TextWorld's ALFWorld test game, in ALFWorld's own domain (bundled beside it)."""
    folder = alfworld_data_dir() / "textworld-test"
    path = folder / "problem.pddl"
    problem = parse_problem(read_text(path, "the problem file"), file=str(path))
    return _problem_task(problem, "textworld-test", str(folder / "domain.pddl"),
                         TEXTWORLD_TEST_PLAN, "alfworld")


def is_alfworld_folder(spec: str | Path) -> bool:
    """A folder with ALFWorld game data below it (`traj_data.json` or `game.tw-pddl`)."""
    folder = Path(str(spec))
    return folder.is_dir() and any(
        next(folder.rglob(name), None) is not None for name in (TRAJECTORY_FILE, GAME_FILE))


def folder_tasks(folder: str | Path, source: str | None = None) -> list[Task]:
    """Every trajectory and game file below `folder` as a task, in path order."""
    root = Path(folder)
    source = source or str(root)
    taken: set[str] = set()
    tasks = []
    try:
        for path in find_trajectories(root):
            tasks.append(trajectory_task(path, _task_id(path, taken), source))
        for path in sorted(root.rglob(GAME_FILE)):
            tasks.append(game_task(path, _task_id(path, taken), source))
    except PDDLError:
        raise
    except SageError as error:
        raise TaskSetError(f"ALFWorld task set {root}: {error}") from error
    if not tasks:
        raise TaskSetError(f"{root}: no {TRAJECTORY_FILE} or {GAME_FILE} below it")
    return tasks


@lru_cache(maxsize=1)
def alfworld_tasks() -> tuple[Task, ...]:
    """The bundled `alfworld` task set: six ALFRED trajectories and TextWorld's test game."""
    return (*folder_tasks(alfworld_data_dir() / "alfred-traj", "alfworld"),
            textworld_test_task())
