"""Which goal a household task has, and where it comes from (`WrittenGoal.source`).

goals        the reviewed goal written for the task (`goals.py`): the bundled sets'
             `data/sage/goals/*.toml`, a task record's own `goal`, or a goals file given with
             the task set (`NAME.goals.toml` beside `NAME.json`; a copy of a bundled task file
             keeps its reviewed goals). A compound task's goal is its members' goals together
             (`compound_goal`).
instruction  no written goal: what `instruction.read_instruction` reads, when it reads every
             clause of the instruction.
reference    only when asked (`goal_from_reference=True`): what the reference plan changes
             (`evidence.reference_goal`, computed once the scene is known).
none         otherwise: no goal, with a warning.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..pddl.model import And, Atom, Domain, Formula, walk
from ..pddl.writer import write_formula
from .goals import GoalSpec, bundled_goals, bundled_task_goals, load_goals, parse_goal
from .instruction import read_instruction
from .taskset import Task


@dataclass(frozen=True)
class WrittenGoal:
    goal: Formula | None
    source: str
    text: str = ""
    note: str = ""
    spec: GoalSpec | None = None
    warning: str = ""
    infeasible: str = ""


def _goals_for(task: Task) -> Mapping[str, GoalSpec]:
    """The goals file that comes with the task's set: bundled, or NAME.goals.toml beside a
    task file NAME.json, else the goals of a bundled set that has the same task (a copy of a
    bundled task file keeps its reviewed goals: `bundled_task_goals`)."""
    bundled = bundled_goals(task.source) if task.source else {}
    if bundled or not task.source:
        return bundled
    sibling = Path(task.source).with_suffix(".goals.toml")
    return load_goals(sibling) if sibling.is_file() else bundled_task_goals(task)


def compound_goal(task: Task, goals: Mapping[str, GoalSpec]) -> tuple[Formula, str, str] | None:
    """A compound task's goal: its members' goals together, in member order, or None when a
    member has no written goal. A member's `(holding X)` is left out when a later member's goal
    holds or places another object (the hand must let go of X on the way); the note says so."""
    specs = [goals.get(member.lower()) for member in task.members]
    if not task.members or any(spec is None for spec in specs):
        return None
    member_parts = [spec.goal.parts if isinstance(spec.goal, And) else (spec.goal,)
                    for spec in specs if spec is not None]
    parts: list[Formula] = []
    dropped: list[str] = []
    for index, own in enumerate(member_parts):
        later = [p for rest in member_parts[index + 1:] for p in rest]
        for part in own:
            if isinstance(part, Atom) and part.predicate.lower() == "holding" and any(
                    _moves_an_object(p) for p in later):
                dropped.append(f"{task.members[index]}: {write_formula(part)}")
                continue
            parts.append(part)
    note = ("left out, as a later member needs the hand: " + "; ".join(dropped)) if dropped else ""
    text = "\n".join(f"; {m}\n{spec.text}" for m, spec in zip(task.members, specs) if spec)
    return And(tuple(parts)), text, note


def _moves_an_object(part: Formula) -> bool:
    return any(isinstance(node, Atom) and node.predicate.lower() in ("holding", "on", "inside")
               for node in walk(part))


def written_goal(task: Task, domain: Domain, goals: Mapping[str, GoalSpec] | None,
                  goal_from_reference: bool) -> WrittenGoal:
    goals = _goals_for(task) if goals is None else goals
    if task.goal:
        return WrittenGoal(parse_goal(task.goal), "goals", task.goal, "the task's own goal")
    spec = goals.get(task.task_id.lower())
    if spec is not None:
        return WrittenGoal(spec.goal, "goals", spec.text, spec.note, spec,
                            infeasible=spec.infeasible)
    if task.members:
        combined = compound_goal(task, goals)
        if combined is not None:
            infeasible = "; ".join(f"{member}: {goals[member.lower()].infeasible}"
                                   for member in task.members
                                   if goals[member.lower()].infeasible)
            return WrittenGoal(combined[0], "goals", combined[1], combined[2],
                                infeasible=infeasible)
    if goal_from_reference:
        return WrittenGoal(None, "reference", note="the reference plan's effects (asked for)")
    # the task's own objects settle a word with several types ("lamp": DeskLamp, FloorLamp)
    reading = read_instruction(task.instruction, (*task.visible_objects, *task.expected_objects),
                               domain)
    if reading.goal is not None:
        return WrittenGoal(reading.goal, "instruction", write_formula(reading.goal))
    unread = "; ".join(repr(c) for c in reading.unread) or repr(task.instruction)
    return WrittenGoal(None, "none", warning=(
        f"task {task.task_id}: no goal: no goal is written for it and the instruction reader "
        f"cannot read {unread}; success cannot be checked (write a goal: docs/goals.md)"))
