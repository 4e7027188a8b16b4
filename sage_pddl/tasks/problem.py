"""From a household task to a PDDL problem of the ithor/procthor domain: objects, init, goal.

`task_scene(task, domain)` works out the scene and records where every fact came from;
`task_problem(task, domain)` renders it as a `Problem`, and `problem_text(scene, domain)` as a
file whose header lists the goal's source and every fact not read off the observation or the
catalogue. The parts, each a module with its semantics:

* objects (`inventory.py`): the scene's AI2-THOR types and their instances; a type the task
  names but the scene lacks gets no object (`TaskScene.absent_types`), so a plan naming it is
  refused for an unknown object and a goal naming it makes the task infeasible;
* initial facts by source (`scene_facts.py`): the catalogue's affordances and relations (a
  knob's burner only where the scene's data names it), the observation's states;
* the reference plan as evidence (`evidence.py`): the weakest facts that explain its success,
  each naming its step;
* the goal (`task_goal.py`): written and reviewed, read from the instruction, taken from the
  reference when asked, or none; compiled here onto the scene's instances (`goals.py`), and
  marked infeasible when it names a type the scene lacks (`TaskScene.infeasible`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..domains import load_domain
from ..pddl.errors import SageError
from ..pddl.model import And, Domain, Formula, Problem, key
from ..pddl.validate import check_problem, raise_first_error
from ..pddl.writer import write_formula, write_problem
from .catalogue import affordances
from .evidence import explain_reference, reference_goal
from .goals import GoalSpec, compile_goal, flat_goal, goal_names, warn_once, whole_types
from .inventory import build_inventory, nearby_instances
from .observation import read_observation
from .placement import ACCEPTS, task_placement
from .scene_facts import (
    SceneFact,
    catalogue_facts,
    control_facts,
    observation_facts,
    render_problem,
)
from .task_goal import written_goal
from .taskset import Task, TaskSetError


@dataclass(frozen=True)
class TaskScene:
    """Everything the problem is made of, with where it came from."""

    task: Task
    domain: str
    things: tuple[str, ...]
    rooms: tuple[str, ...]
    facts: tuple[SceneFact, ...]
    goal: Formula
    goal_source: str  # "goals" | "instruction" | "reference" | "none"
    goal_text: str = ""
    """The goal as written (type names, before instances are substituted)."""
    goal_note: str = ""
    instances: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(AI2-THOR type, its objects) for every type of the scene."""
    infeasible: str = ""
    """Why the scene cannot reach the goal (the goals file's `infeasible`, else the types the
    goal names that the scene lacks); "" for a feasible task."""
    absent_types: tuple[str, ...] = ()
    """Types the task names (goal, expected objects, reference plan) that the scene lacks: no
    object is declared for them, so a plan step naming one is an unknown object."""
    unknown_types: tuple[str, ...] = ()
    placement: str = "forced"
    """The placement setting the problem's facts state (tasks/placement.py)."""
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def facts_from(self, source: str) -> tuple[SceneFact, ...]:
        return tuple(f for f in self.facts if f.source == source)

    def objects_of(self, type_name: str) -> tuple[str, ...]:
        wanted = type_name.lower()
        return next((names for t, names in self.instances if t.lower() == wanted), ())


def task_scene(task: Task, domain: Domain, use_reference: bool = True, *,
               goals: Mapping[str, GoalSpec] | None = None,
               goal_from_reference: bool = False) -> TaskScene:
    """The scene of a task: objects, initial facts with provenance, goal (module docstring).

    `goals` overrides the goals file of the task's set; `goal_from_reference` takes the goal
    from the reference plan's effects when no goal is written (never for a bundled set's
    tasks, which all have one)."""
    observed = read_observation(task.obs)
    written = written_goal(task, domain, goals, goal_from_reference)
    needed = whole_types(goal_names(written.goal, domain)) if written.goal is not None else []
    inventory, absent = build_inventory(task, observed, domain, needed)
    things = inventory.names()
    rooms = list(inventory.rooms.values())
    controls, control_notes = control_facts(task.scene, inventory)
    placement = task_placement(task)
    facts = (catalogue_facts(inventory, placement) + controls
             + observation_facts(task, observed, inventory))
    if use_reference:
        observed_state = {name.lower() for _, name in
                          nearby_instances(observed, inventory)}
        facts, added = explain_reference(task, domain, things, rooms, facts, observed_state)
        facts += added
    instances = inventory.instance_map()
    warnings: list[str] = []
    if inventory.unlisted:
        warning = (f"task {task.task_id}: its observation shows {', '.join(inventory.unlisted)}, "
                   f"which data/ai2thor/scenes.toml does not list for {task.scene}: the scene's "
                   f"data and the task disagree (the object is declared; correct the data)")
        warnings.append(warning)
        warn_once(task, warning)
    infeasible = written.infeasible
    if written.goal is not None:
        lacking = [t for t in absent if key(t) in {key(n) for n in needed}]
        if lacking and not infeasible:
            infeasible = f"the scene {task.scene or '(unnamed)'} has no {', '.join(lacking)}"
            warning = (f"task {task.task_id}: its goal names {', '.join(lacking)}, which its "
                       f"scene lacks: reported infeasible (say why in its goals file: "
                       f"infeasible = \"...\"; docs/goals.md)")
            warnings.append(warning)
            warn_once(task, warning)
        try:
            goal = compile_goal(written.goal, instances, domain,
                                written.spec.where if written.spec else None,
                                absent=absent if infeasible else ())
            if written.source == "instruction":
                goal = flat_goal(goal)
        except SageError as error:
            raise TaskSetError(f"task {task.task_id}: {error}") from None
        goal_source, goal_text, goal_note = written.source, written.text, written.note
    elif written.source == "reference":
        blank = render_problem(task, domain, things, rooms, facts, And(()))
        goal = reference_goal(task, domain, blank)
        goal_source, goal_text = "reference", write_formula(goal)
        goal_note = written.note
    else:
        goal, goal_source, goal_text, goal_note = And(()), "none", "", ""
        warnings.append(written.warning)
        warn_once(task, written.warning)
    unknown = tuple(sorted(t for t in instances if not affordances(t).known))
    notes = tuple(f"unknown AI2-THOR type {t}: no affordances" for t in unknown)
    notes += tuple(control_notes)
    if absent:
        notes += (f"named by the task but not in the scene (no object declared): "
                  f"{', '.join(absent)}",)
    unique: dict[tuple, SceneFact] = {}
    for fact in facts:
        unique.setdefault(fact.atom, fact)
    return TaskScene(task=task, domain=task.domain, things=tuple(things), rooms=tuple(rooms),
                     facts=tuple(unique.values()), goal=goal, goal_source=goal_source,
                     goal_text=goal_text, goal_note=goal_note,
                     instances=tuple(instances.items()), infeasible=infeasible,
                     absent_types=absent, unknown_types=unknown, placement=placement,
                     notes=notes,
                     warnings=tuple(warnings))


def scene_problem(scene: TaskScene, domain: Domain) -> Problem:
    return render_problem(scene.task, domain, scene.things, scene.rooms, scene.facts, scene.goal)


def problem_text(scene: TaskScene, domain: Domain, label: str | None = None) -> str:
    """The problem as a PDDL file whose comment header says where the goal came from and lists
    every fact taken from the reference plan (so a reader can audit what is not read directly
    off the observation or the object catalogue)."""
    return problem_header(scene, label) + write_problem(scene_problem(scene, domain))


def problem_header(scene: TaskScene, label: str | None = None) -> str:
    """`problem_text`'s comment header, one `; ` line each, ending in a newline."""
    task = scene.task
    header = [f"; {label or task.source or 'task'}#{task.task_id} ({task.scene}): "
              f"{task.instruction}"]
    header.append(f"; goal from: {scene.goal_source}" + {
        "goals": " (written from the instruction and reviewed)",
        "instruction": " (read from the instruction by sage_pddl/tasks/instruction.py)",
        "reference": " (the reference plan's effects: the reference reaches it by construction)",
        "none": "",
    }.get(scene.goal_source, ""))
    if scene.goal_note:
        header.append(f"; goal note: {scene.goal_note}")
    header.append(f"; placement: {scene.placement} ({ACCEPTS[scene.placement]})")
    if scene.infeasible:
        header.append(f"; infeasible: {scene.infeasible}")
    header += [f"; warning: {w}" for w in scene.warnings]
    for fact in scene.facts:
        if fact.source == "reference":
            header.append(f"; {fact.source}: ({' '.join(fact.atom)}) - {fact.note}")
    header += [f"; note: {note}" for note in scene.notes]
    return "\n".join(header) + "\n"


def task_infeasible(task: Task, domain: Domain | str | None = None) -> str:
    """Why the task's scene cannot reach its goal (`TaskScene.infeasible`); "" when it can or
    when the task is a PDDL problem of its own."""
    if task.problem is not None:
        return ""
    if not isinstance(domain, Domain):
        domain = load_domain(domain or task.domain)
    return task_scene(task, domain, use_reference=False).infeasible


def task_problem(task: Task, domain: Domain | str | None = None, use_reference: bool = True,
                 *, goal_from_reference: bool = False) -> Problem:
    """The PDDL problem of a task in `domain` (a Domain, a registry name, or the task's own):
    the task's own problem, checked against the domain, or the one built from its scene."""
    if not isinstance(domain, Domain):
        domain = load_domain(domain or task.domain)
    if task.problem is not None:
        raise_first_error(check_problem(task.problem, domain))
        return task.problem
    return scene_problem(task_scene(task, domain, use_reference,
                                    goal_from_reference=goal_from_reference), domain)
