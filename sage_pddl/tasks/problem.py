"""From a household task to a PDDL problem of the ithor/procthor domain: objects, init, goal.

`task_scene(task, domain)` works out the scene and records where every fact came from;
`task_problem(task, domain)` renders it as a `Problem`, and `problem_text(scene, domain)` as a
file whose header lists the goal's source and every fact not read off the observation or the
catalogue.

Objects: the world model follows the scene
    The scene's object types are what it shows (visible_objects, the observation text), the
    fixed parts that every room of the task's room type has in iTHOR
    (`catalogue.ROOM_FIXTURES`, from AI2-THOR's object-type documentation) and, for an iTHOR
    floor plan, every type it has (`catalogue.scene_types`: data/ai2thor/scenes.toml, from
    ALFRED's scene layouts). A type the task only names (expected_objects, the reference
    plan, the goal) is declared when the scene has it and is otherwise left out
    (`TaskScene.absent_types`): no object is invented, so a plan naming it is refused for an
    unknown object, and a goal naming it makes the task infeasible (`TaskScene.infeasible`,
    the goals file's reason). Only a scene nothing is known of (no floor-plan data, nothing
    observed or visible) takes its types from what the task names.
    Every name is normalised to its AI2-THOR type (`dining_table` -> DiningTable). Names the
    catalogue does not know stay objects with no affordance (`TaskScene.unknown_types`).

    A type may have several instances. iTHOR: as many as the observation lists (its nearby
    objects, nearest first) or the scene is known to have (`catalogue.scene_instances`), at
    least one. ProcTHOR: one per room that lists the type, and one in the current room for a
    visible object that no room lists. One instance is named by its
    type (`Fridge`); several are `Cabinet_1`, `Cabinet_2`, ... A plan step that names the type
    (`Open Cabinet`) acts on the first instance for which the step is applicable (the gate's
    `Choice`, which the symbolic world executes and the AI2-THOR backend follows), so opening
    "Cabinet" twice opens two cabinets where the scene has two closed ones.

Initial state, by source (`SceneFact.source`)
    catalogue    static affordances of each instance; fixtures that stand together (`near`);
                 the knob that controls each burner (`controls`) only where the floor plan's
                 data names it (`catalogue.scene_controls`; otherwise no pairing, and the
                 header's note says so); the
                 receptacles that take only some object types (`selective`) and the
                 pickupable objects of the scene each takes (`fits`,
                 data/ai2thor/receptacles.toml); the
                 instances of one type (in one room) are `same-kind`: locating one locates
                 the others, as the action server keeps the type it reached.
    observation  held object (else `hand-empty`); open/closed and on/off as observed (an
                 openable object not observed open is closed; a toggleable one not observed on
                 is off, except types that start on: lights and lamps, `catalogue`'s
                 `starts_on`); objects within AI2-THOR's interaction distance (1.5 m) and
                 the server's Found/Arrived objects are `reachable`; ProcTHOR's rooms, the
                 current room, which instance is in which room, and `here` for what is in
                 the current room, visible objects included.
    reference    facts the task's simulator-verified reference plan proves (REFERENCE §6.5):
                 when a reference step uses an object the other sources leave out of reach,
                 the weakest fact explaining its success is added: the object stood within
                 reach of what the robot went to last (`beside`: reaching that reaches it, and
                 nothing else, such as the water of a Faucet `near` it, until either is picked
                 up), or was within reach from the start; a state the observation does not
                 show is set by what the reference proves (TurnOff of an unobserved lamp
                 succeeded: it was on). Affordances are never changed,
                 observed states never overridden, and each added fact names its step.
    Nothing is inferred from the wording of the instruction: an object whose place is unknown
    lies in no container, so once located it can be picked up.

Goal (`TaskScene.goal_source`)
    goals        the reviewed goal written for the task (`goals.py`): the bundled sets'
                 `data/sage/goals/*.toml`, a task record's own `goal`, or a goals file given
                 with the task set (`NAME.goals.toml` beside `NAME.json`). A compound task's
                 goal is its members' goals together (`compound_goal`).
    instruction  no written goal: what `instruction.read_instruction` reads, when it reads
                 every clause of the instruction.
    reference    only when asked (`goal_from_reference=True`): what the reference plan
                 changes. It is reached by its own reference by construction; the problem's
                 header says so.
    none         otherwise: the goal is empty, with a warning (logged and in the header).
"""
from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..domains import load_domain
from ..pddl.errors import SageError
from ..pddl.model import And, Atom, Constant, Domain, Formula, Not, Problem, Typed, key, walk
from ..pddl.validate import check_problem, raise_first_error
from ..pddl.vocabulary import loose_step_words, name_key, vocabulary
from ..pddl.writer import write_formula, write_problem
from . import catalogue
from .catalogue import affordances, canonical_type
from .goals import (
    GoalSpec,
    bundled_goals,
    bundled_task_goals,
    compile_goal,
    goal_names,
    load_goals,
    parse_goal,
)
from .instruction import read_instruction
from .observation import NearbyObject, ObservedState, read_observation
from .taskset import Task, TaskSetError, normalize_steps

log = logging.getLogger(__name__)

REFERENCE_GOAL_PREDICATES = ("holding", "turned-on", "opened", "closed", "on", "inside", "sat-on",
                             "lying-on", "heated", "cooled", "cleaned", "sliced", "cooked",
                             "filled")
"""What a goal taken from a reference plan's effects may say (`goal_from_reference`)."""

# Canonical actions whose execution locates their target (the domain's effects say so).
_LOCATING = {"moveto", "find", "place", "putin", "serve", "sit", "lieon"}


@dataclass(frozen=True)
class SceneFact:
    """One initial fact with its provenance: `atom` is (predicate, *objects)."""

    atom: tuple[str, ...]
    source: str  # "catalogue" | "observation" | "reference"
    note: str = ""


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
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def facts_from(self, source: str) -> tuple[SceneFact, ...]:
        return tuple(f for f in self.facts if f.source == source)

    def objects_of(self, type_name: str) -> tuple[str, ...]:
        wanted = type_name.lower()
        return next((names for t, names in self.instances if t.lower() == wanted), ())


# --- names -----------------------------------------------------------------------------------

def _pddl_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_\-]", "", name)
    return cleaned if cleaned[:1].isalpha() else f"obj{cleaned}"


def _room_name(name: str) -> str:
    return _pddl_name(catalogue.camel_case(name))


# --- the inventory: types and their instances ------------------------------------------------

@dataclass
class _Instance:
    type: str
    room: str | None = None
    name: str = ""


class _Inventory:
    """The scene's object types, each with its instances (in order), and its rooms."""

    def __init__(self, synonyms: Mapping[str, tuple[str, ...]]) -> None:
        self.types: dict[str, list[_Instance]] = {}
        self.spelling: dict[str, str] = {}
        self.rooms: dict[str, str] = {}
        self.synonyms = synonyms
        """The domain's `synonym` annotations (`Vocabulary.synonyms`)."""
        self.prefer: list[str] = []
        """The scene's own object words, which choose among a synonym's types
        (`canonical_type`): every later reading of a name uses the same list, so a word names
        the type its instances were made under."""

    def type_of(self, name: str) -> str:
        """The PDDL name of the AI2-THOR type a word names in this scene."""
        return _pddl_name(canonical_type(name, tuple(self.prefer), self.synonyms))

    def add_type(self, type_name: str) -> None:
        self.spelling.setdefault(type_name.lower(), type_name)
        self.types.setdefault(type_name.lower(), [])

    def ensure(self, type_name: str, count: int, room: str | None = None) -> None:
        """At least `count` instances of the type (in `room`, when given)."""
        self.add_type(type_name)
        have = [i for i in self.types[type_name.lower()] if room is None or i.room == room]
        for _ in range(count - len(have)):
            self.types[type_name.lower()].append(_Instance(self.spelling[type_name.lower()], room))

    def name_instances(self) -> None:
        for instances in self.types.values():
            for number, instance in enumerate(instances, 1):
                base = _pddl_name(instance.type)
                instance.name = base if len(instances) == 1 else f"{base}_{number}"

    def of(self, type_name: str | None) -> list[_Instance]:
        return self.types.get(type_name.lower(), []) if type_name else []

    def first(self, type_name: str | None, room: str | None = None) -> str | None:
        instances = self.of(type_name)
        preferred = [i for i in instances if room is not None and i.room == room]
        chosen = preferred or instances
        return chosen[0].name if chosen else None

    def names(self) -> list[str]:
        return [i.name for instances in self.types.values() for i in instances]

    def instance_map(self) -> dict[str, tuple[str, ...]]:
        return {self.spelling[t]: tuple(i.name for i in instances)
                for t, instances in self.types.items()}


def _inventory(task: Task, observed: ObservedState, domain: Domain,
               goal_types: Iterable[str]) -> tuple[_Inventory, tuple[str, ...]]:
    """The scene's objects, and the types the task names that the scene does not have.

    The scene's types are what it shows (visible objects, the observation's objects) and, in
    iTHOR, its room type's fixtures and the floor plan's known types (`catalogue.scene_types`).
    A type the task only names (expected objects, reference plan, goal) is declared when the
    scene has it, and is otherwise left out (the second value): no object is invented for it.
    Only a scene nothing is known of (no floor-plan data, no object observed or visible) takes
    its types from what the task names."""
    inventory = _Inventory(vocabulary(domain).synonyms)
    step_words = [w for step in normalize_steps(task.reference_steps, domain)
                  if step["action"].lower() != "wait" for w in loose_step_words(step) if w]
    room_keys: dict[str, str] = {}
    if task.domain == "procthor":
        for room, _ in observed.rooms:
            room_keys[name_key(room)] = _room_name(room)
        if observed.current_room:
            room_keys.setdefault(name_key(observed.current_room), _room_name(observed.current_room))
    inventory.rooms = {r.lower(): r for r in room_keys.values()}
    shown = [*task.visible_objects, *observed.objects()]
    known_scene = bool(shown) or catalogue.scene_inventory(task.scene) is not None
    parts: tuple[str, ...] = ()  # the floor plan's walls and windows: declared when named
    if task.domain != "procthor":
        shown += catalogue.room_fixtures(task.room or _room_of_scene(task.scene))
        plan_types = catalogue.scene_types(task.scene)
        shown += [t for t in plan_types if t not in catalogue.STRUCTURAL]
        parts = tuple(t for t in plan_types if t in catalogue.STRUCTURAL)
    named = [*task.expected_objects, *step_words, *goal_types]
    prefer = inventory.prefer = [r for r in [*shown, *named] if name_key(r) not in room_keys]
    has = {inventory.type_of(r).lower() for r in [*shown, *parts] if name_key(r) not in room_keys}
    absent: dict[str, None] = {}
    wanted: list[str] = []
    for word in prefer:
        type_name = inventory.type_of(word)
        if not known_scene or type_name.lower() in has:
            wanted.append(type_name)
        else:
            absent.setdefault(type_name, None)
    if task.domain == "procthor":
        current = _room_name(observed.current_room) if observed.current_room else None
        for room, names in observed.rooms:
            for name in names:
                inventory.ensure(inventory.type_of(name), 1, _room_name(room))
        for name in task.visible_objects:
            if name_key(name) not in room_keys:
                inventory.ensure(inventory.type_of(name), 1, current)
        for type_name in wanted:
            if not inventory.of(type_name):
                inventory.ensure(type_name, 1, current)
    else:
        listed: dict[str, int] = {}
        for near in observed.nearby:
            type_name = inventory.type_of(near.name)
            listed[type_name.lower()] = listed.get(type_name.lower(), 0) + 1
        known = catalogue.scene_instances(task.scene)
        for type_name in wanted:
            count = max(1, listed.get(type_name.lower(), 0), known.get(type_name, 0))
            inventory.ensure(type_name, count)
    inventory.name_instances()
    return inventory, tuple(absent)


def _room_of_scene(scene: str) -> str:
    """AI2-THOR's iTHOR room type by floor-plan number (REFERENCE §8.4)."""
    match = re.fullmatch(r"FloorPlan(\d+)(?:_physics)?", scene or "", re.IGNORECASE)
    if not match:
        return ""
    number = int(match.group(1))
    return {0: "kitchen", 2: "living_room", 3: "bedroom", 4: "bathroom"}.get(number // 100, "")


# --- initial facts ---------------------------------------------------------------------------

def _catalogue_facts(inventory: _Inventory) -> list[SceneFact]:
    facts = []
    for instances in inventory.types.values():
        for instance in instances:
            for predicate in affordances(instance.type).predicates():
                facts.append(SceneFact((predicate, instance.name), "catalogue"))
    types = {t: [i.name for i in instances] for t, instances in inventory.types.items()}
    for predicate, a, b in catalogue.instance_relations(types):
        facts.append(SceneFact((predicate, a, b), "catalogue", "fixtures that stand together"))
    facts += _fit_facts([i for group in inventory.types.values() for i in group])
    for group in inventory.types.values():
        for one in group:
            facts += [SceneFact(("same-kind", one.name, other.name), "catalogue",
                                f"two {one.type}s") for other in group
                      if other is not one and other.room == one.room]
    return facts


def _fit_facts(instances: Sequence[_Instance]) -> list[SceneFact]:
    """`(selective R)` for each receptacle whose type takes only some types, and `(fits O R)`
    for each pickupable object O it takes (data/ai2thor/receptacles.toml); nothing for the
    receptacles that take anything."""
    receptacles = [r for r in instances
                   if affordances(r.type).receptacle and catalogue.selective(r.type)]
    movable = [o for o in instances if affordances(o.type).pickupable]
    facts = [SceneFact(("selective", r.name), "catalogue",
                       f"a {r.type} takes only some types") for r in receptacles]
    facts += [SceneFact(("fits", o.name, r.name), "catalogue", f"a {r.type} takes a {o.type}")
              for r in receptacles for o in movable
              if o is not r and catalogue.fits(o.type, r.type)]
    return facts


def _control_facts(scene: str, inventory: _Inventory) -> tuple[list[SceneFact], list[str]]:
    """`(controls k b)` for each pair the floor plan's data names (`catalogue.scene_controls`),
    and a note for the controllers it pairs with nothing: which instance such a controller
    switches is unknown, so the problem states none (no index rule, docs/goals.md)."""
    instances = {i.name.lower(): i for group in inventory.types.values() for i in group}
    pairs = {(a.lower(), b.lower()) for a, b in catalogue.CONTROLS}
    facts = []
    for controller, controlled in catalogue.scene_controls(scene):
        where = f"data/ai2thor/scenes.toml [{scene}] controls: {controller} = {controlled!r}"
        unknown = [n for n in (controller, controlled) if n.lower() not in instances]
        if unknown:
            raise TaskSetError(f"{where}: {', '.join(unknown)} is no object of the scene")
        k, b = instances[controller.lower()], instances[controlled.lower()]
        if (k.type.lower(), b.type.lower()) not in pairs:
            raise TaskSetError(f"{where}: a {k.type} does not switch a {b.type} "
                               f"(catalogue.CONTROLS)")
        facts.append(SceneFact(("controls", k.name, b.name), "catalogue",
                               f"{scene}'s data: {k.name} switches {b.name}"))
    paired = {f.atom[1] for f in facts}
    notes = []
    for controller_type, controlled_type in catalogue.CONTROLS:
        unpaired = [i.name for i in inventory.of(controller_type) if i.name not in paired]
        if inventory.of(controlled_type) and unpaired:
            notes.append(
                f"which {controlled_type} each of {', '.join(unpaired)} switches is not known "
                f"for {scene or 'this scene'} (data/ai2thor/scenes.toml names no pairing): "
                f"turning a {controller_type} switches no {controlled_type} in this problem; "
                f"a goal on a particular {controlled_type} is reached by switching that "
                f"{controlled_type} itself, as AI2-THOR does through its own {controller_type}")
    return facts, notes


def _observation_facts(task: Task, observed: ObservedState,
                       inventory: _Inventory) -> list[SceneFact]:
    facts: list[SceneFact] = []
    current = _room_name(observed.current_room) if observed.current_room else None

    def type_of(name: str | None) -> str | None:
        return inventory.type_of(name) if name else None

    held = inventory.first(type_of(observed.holding), current)
    if held:
        facts.append(SceneFact(("holding", held), "observation", "Holding: line"))
        facts.append(SceneFact(("reachable", held), "observation", "held"))
    else:
        facts.append(SceneFact(("hand-empty",), "observation",
                               "Holding: nothing" if observed.format in ("nearby", "server")
                               else "no held object stated"))
    states: dict[str, tuple[bool, bool]] = {}
    for near, name in _nearby_instances(observed, inventory):
        states[name] = (near.is_open, near.is_on)
        if near.within_reach:
            facts.append(SceneFact(("reachable", name), "observation",
                                   f"{near.name} at {near.distance} m (within 1.5 m)"))
    for label, value in (("Found", observed.found), ("Arrived", observed.arrived)):
        located = inventory.first(type_of(value), current)
        if located:
            facts.append(SceneFact(("reachable", located), "observation", f"{label}: {value}"))
    for instances in inventory.types.values():
        for instance in instances:
            info = affordances(instance.type)
            state = states.get(instance.name)
            if info.openable:
                is_open = bool(state and state[0])
                facts.append(SceneFact(("opened" if is_open else "closed", instance.name),
                                       "observation", "observed open" if is_open else
                                       ("observed closed" if state else "not observed open")))
            if info.toggleable and (state[1] if state else info.starts_on):
                facts.append(SceneFact(("turned-on", instance.name), "observation",
                                       "observed on" if state else
                                       f"{instance.type} starts on in AI2-THOR scenes"))
    if task.domain == "procthor":
        for room in inventory.rooms.values():
            facts.append(SceneFact(("is-room", room), "observation", "room of the house"))
            facts.append(SceneFact(("here", room), "observation", "rooms are always reachable"))
        if current:
            facts.append(SceneFact(("robot-in", current), "observation", "Current room"))
        visible = {inventory.type_of(v).lower() for v in task.visible_objects}
        for type_key, instances in inventory.types.items():
            for instance in instances:
                if instance.room is None:
                    continue
                facts.append(SceneFact(("in-room", instance.name, instance.room), "observation",
                                       f"listed under {instance.room}"
                                       if instance.room != current or type_key not in visible
                                       else "visible where the robot stands"))
                if instance.room == current:
                    facts.append(SceneFact(("here", instance.name), "observation",
                                           "in the current room"))
    return facts


# --- the reference plan as evidence ----------------------------------------------------------

_STATE_FIXES = {  # violation code -> (atoms the reference proves, atoms it disproves)
    "already-off": (("turned-on",), ()),
    "already-on": ((), ("turned-on",)),
    "already-closed": (("opened",), ("closed",)),
    "already-open": (("closed",), ("opened",)),
}


def _problem(task: Task, domain: Domain, things: Sequence[str], rooms: Sequence[str],
             facts: Iterable[SceneFact], goal: Formula) -> Problem:
    objects = tuple(Typed(r, ("room",)) for r in sorted(rooms, key=str.lower))
    objects += tuple(Typed(t, ("thing",)) for t in sorted(things, key=str.lower))
    atoms = sorted({f.atom for f in facts}, key=lambda a: (a[0], tuple(x.lower() for x in a[1:])))
    init = tuple(Atom(a[0], tuple(Constant(x) for x in a[1:])) for a in atoms)
    name = _pddl_name(f"{task.domain}-{task.task_id}".replace("+", "_"))
    return Problem(name=name.lower(), domain_name=domain.name, objects=objects, init=init,
                   goal=goal)


def _gate(domain: Domain, problem: Problem):
    from ..gate.gate import compile_gate  # the gate checks the reference against the domain
    return compile_gate(domain, problem)


def _explain_reference(task: Task, domain: Domain, things: list[str], rooms: list[str],
                       facts: list[SceneFact], observed_state: set[str]
                       ) -> tuple[list[SceneFact], list[SceneFact]]:
    """Facts that explain the reference plan's success (see module docstring).

    Returns the facts to keep (defaults the reference disproves removed) and the facts added.
    `observed_state` holds the (lower-case) objects whose open/on state the observation shows.
    """
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return facts, []
    by_lower = {t.lower(): t for t in [*things, *rooms]}
    added: list[SceneFact] = []
    for _ in range(len(steps) + 1):
        problem = _problem(task, domain, things, rooms, facts + added, And(()))
        gate = _gate(domain, problem)
        verdict = gate.check(steps, mode="all")
        explainable = [v for v in verdict.violations if _explainable(v, observed_state)]
        if not explainable:
            break  # what is left (a Pick with the hand full) is the reference's own error
        violation = explainable[0]
        fix = _STATE_FIXES.get(violation.code)
        if fix:
            subject = next(atom[1] for _, atom in violation.atoms if len(atom) > 1)
            target = by_lower.get(subject, subject)
            adds, removes = fix
            note = (f"reference step {violation.step + 1} ({violation.step_text}) succeeded, "
                    f"so the unobserved {target} was {'/'.join(adds)}")
            gone = {(predicate, target) for predicate in removes}
            facts = [f for f in facts if f.atom not in gone]
            added = [f for f in added if f.atom not in gone]
            added += [SceneFact((predicate, target), "reference", note) for predicate in adds]
            continue
        wanted = next(atom for positive, atom in violation.atoms
                      if positive and atom and atom[0] == "reachable")
        target = by_lower.get(wanted[1], wanted[1])
        place = _last_located(gate, steps[:violation.step], by_lower)
        step_text = f"reference step {violation.step + 1} ({violation.step_text})"
        if place:
            added.append(SceneFact(("beside", target, place), "reference",
                                   f"{step_text} uses {target} after reaching {place}"))
        else:
            added.append(SceneFact(("reachable", target), "reference",
                                   f"{step_text} uses {target} before any move"))
    return facts, added


def _explainable(violation, observed_state: set[str]) -> bool:
    """A violation some fact of the scene would explain: an unobserved state (the step's
    success proves it) or an object out of reach (it stood near what the robot reached)."""
    if violation.code in _STATE_FIXES:
        subject = next((atom[1] for _, atom in violation.atoms if len(atom) > 1), None)
        return subject is not None and subject not in observed_state
    return any(positive and atom and atom[0] == "reachable" for positive, atom in violation.atoms)


def _last_located(gate, steps: Sequence[Mapping], by_lower: Mapping[str, str]) -> str | None:
    """What the last locating step of a reference prefix reached: its first argument, the
    instance the gate chose when the step ran (rejected steps change nothing, as in `check`)."""
    state = gate.initial_state
    located = None
    for index, step in enumerate(steps):
        try:
            ground = gate.ground(step, index, state)
        except SageError:
            continue
        if gate.applicable(state, ground, index) is not None:
            continue
        if name_key(step.get("action", "")) in _LOCATING and ground.args:
            located = by_lower.get(ground.args[0], ground.args[0])
        state = gate.apply(state, ground)
    return located


def _reference_goal(task: Task, domain: Domain, problem: Problem) -> Formula:
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return And(())
    gate = _gate(domain, problem)
    verdict = gate.check(steps, mode="all")
    initial = gate.initial_state
    names = {o.name.lower(): o.name for o in problem.objects}

    def atom(fact: tuple) -> Atom:
        return Atom(fact[0], tuple(Constant(names.get(a, a)) for a in fact[1:]))

    parts: list[Formula] = [
        atom(a) for a in sorted(verdict.final_state - initial)
        if a[0] in REFERENCE_GOAL_PREDICATES
        and not (a[0] == "closed" and ("opened", *a[1:]) in initial)]
    parts += [Not(atom(a)) for a in sorted(initial - verdict.final_state) if a[0] == "turned-on"]
    return And(tuple(parts))


# --- the goal --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _WrittenGoal:
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


def _written_goal(task: Task, domain: Domain, goals: Mapping[str, GoalSpec] | None,
                  goal_from_reference: bool) -> _WrittenGoal:
    goals = _goals_for(task) if goals is None else goals
    if task.goal:
        return _WrittenGoal(parse_goal(task.goal), "goals", task.goal, "the task's own goal")
    spec = goals.get(task.task_id.lower())
    if spec is not None:
        return _WrittenGoal(spec.goal, "goals", spec.text, spec.note, spec,
                            infeasible=spec.infeasible)
    if task.members:
        combined = compound_goal(task, goals)
        if combined is not None:
            infeasible = "; ".join(f"{member}: {goals[member.lower()].infeasible}"
                                   for member in task.members
                                   if goals[member.lower()].infeasible)
            return _WrittenGoal(combined[0], "goals", combined[1], combined[2],
                                infeasible=infeasible)
    if goal_from_reference:
        return _WrittenGoal(None, "reference", note="the reference plan's effects (asked for)")
    # the task's own objects settle a word with several types ("lamp": DeskLamp, FloorLamp)
    reading = read_instruction(task.instruction, (*task.visible_objects, *task.expected_objects),
                               domain)
    if reading.goal is not None:
        return _WrittenGoal(reading.goal, "instruction", write_formula(reading.goal))
    unread = "; ".join(repr(c) for c in reading.unread) or repr(task.instruction)
    return _WrittenGoal(None, "none", warning=(
        f"task {task.task_id}: no goal: no goal is written for it and the instruction reader "
        f"cannot read {unread}; success cannot be checked (write a goal: docs/goals.md)"))


_WARNED: set[tuple[str, str]] = set()


def _warn_once(task: Task, message: str) -> None:
    if (task.source, message) not in _WARNED:
        _WARNED.add((task.source, message))
        log.warning(message)


# --- assembling ------------------------------------------------------------------------------

def task_scene(task: Task, domain: Domain, use_reference: bool = True, *,
               goals: Mapping[str, GoalSpec] | None = None,
               goal_from_reference: bool = False) -> TaskScene:
    """The scene of a task: objects, initial facts with provenance, goal (module docstring).

    `goals` overrides the goals file of the task's set; `goal_from_reference` takes the goal
    from the reference plan's effects when no goal is written (never for a bundled set's
    tasks, which all have one)."""
    observed = read_observation(task.obs)
    written = _written_goal(task, domain, goals, goal_from_reference)
    needed = goal_names(written.goal, domain) if written.goal is not None else []
    inventory, absent = _inventory(task, observed, domain, needed)
    things = inventory.names()
    rooms = list(inventory.rooms.values())
    controls, control_notes = _control_facts(task.scene, inventory)
    facts = (_catalogue_facts(inventory) + controls
             + _observation_facts(task, observed, inventory))
    if use_reference:
        observed_state = {name.lower() for _, name in
                          _nearby_instances(observed, inventory)}
        facts, added = _explain_reference(task, domain, things, rooms, facts, observed_state)
        facts += added
    instances = inventory.instance_map()
    warnings: list[str] = []
    infeasible = written.infeasible
    if written.goal is not None:
        lacking = [t for t in absent if key(t) in {key(n) for n in needed}]
        if lacking and not infeasible:
            infeasible = f"the scene {task.scene or '(unnamed)'} has no {', '.join(lacking)}"
            warning = (f"task {task.task_id}: its goal names {', '.join(lacking)}, which its "
                       f"scene lacks: reported infeasible (say why in its goals file: "
                       f"infeasible = \"...\"; docs/goals.md)")
            warnings.append(warning)
            _warn_once(task, warning)
        try:
            goal = compile_goal(written.goal, instances, domain,
                                written.spec.where if written.spec else None,
                                absent=absent if infeasible else ())
        except SageError as error:
            raise TaskSetError(f"task {task.task_id}: {error}") from None
        goal_source, goal_text, goal_note = written.source, written.text, written.note
    elif written.source == "reference":
        goal = _reference_goal(task, domain, _problem(task, domain, things, rooms, facts, And(())))
        goal_source, goal_text = "reference", write_formula(goal)
        goal_note = written.note
    else:
        goal, goal_source, goal_text, goal_note = And(()), "none", "", ""
        warnings.append(written.warning)
        _warn_once(task, written.warning)
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
                     absent_types=absent, unknown_types=unknown, notes=notes,
                     warnings=tuple(warnings))


def _nearby_instances(observed: ObservedState, inventory: _Inventory
                      ) -> list[tuple[NearbyObject, str]]:
    """The observation's nearby objects with the instance each is: they are listed nearest
    first, so the k-th one of a type is the type's k-th instance."""
    counter: dict[str, int] = {}
    out = []
    for near in observed.nearby:
        instances = inventory.of(inventory.type_of(near.name))
        k = counter.get(near.name.lower(), 0)
        counter[near.name.lower()] = k + 1
        if k < len(instances):
            out.append((near, instances[k].name))
    return out


def scene_problem(scene: TaskScene, domain: Domain) -> Problem:
    return _problem(scene.task, domain, scene.things, scene.rooms, scene.facts, scene.goal)


def problem_text(scene: TaskScene, domain: Domain, label: str | None = None) -> str:
    """The problem as a PDDL file whose comment header says where the goal came from and lists
    every fact taken from the reference plan (so a reader can audit what is not read directly
    off the observation or the object catalogue)."""
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
    if scene.infeasible:
        header.append(f"; infeasible: {scene.infeasible}")
    header += [f"; warning: {w}" for w in scene.warnings]
    for fact in scene.facts:
        if fact.source == "reference":
            header.append(f"; {fact.source}: ({' '.join(fact.atom)}) - {fact.note}")
    header += [f"; note: {note}" for note in scene.notes]
    return "\n".join(header) + "\n" + write_problem(scene_problem(scene, domain))


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
