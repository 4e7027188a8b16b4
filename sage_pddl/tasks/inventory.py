"""The objects of a household scene: its AI2-THOR types and their instances, and its rooms.

`build_inventory(task, observed, domain, goal_types)` works out which objects a task's problem
declares; `tasks/problem.py` makes the problem of them.

The world model follows the scene. The scene's object types are what it shows
(visible_objects, the observation text), the fixed parts that every room of the task's room
type has in iTHOR (`catalogue.ROOM_FIXTURES`, from AI2-THOR's object-type documentation) and,
for an iTHOR floor plan, every type it has (`catalogue.scene_types`: data/ai2thor/scenes.toml,
from ALFRED's scene layouts). A type the task only names (expected_objects, the reference plan,
the goal) is declared when the scene has it and is otherwise left out (the absent types): no
object is invented, so a plan naming it is refused for an unknown object, and a goal naming it
makes the task infeasible. Only a scene nothing is known of (no floor-plan data, nothing
observed or visible) takes its types from what the task names. Every word is read as its
AI2-THOR type (`dining_table` -> DiningTable; the domain's `synonym` annotations, then
`catalogue.EVERYDAY_WORDS`, with the scene's own words choosing among several types). Names
the catalogue does not know stay objects with no affordance.

A type may have several instances. iTHOR: as many as the observation lists (its nearby objects,
nearest first) or the scene is known to have (`catalogue.scene_instances`), at least one.
ProcTHOR: one per room that lists the type, and one in the current room for a visible object
that no room lists. One instance is named by its type (`Fridge`); several are `Cabinet_1`,
`Cabinet_2`, ... in that order (the k-th nearby object of a type is its k-th instance,
`nearby_instances`). A plan step that names the type (`Open Cabinet`) acts on the first
instance for which the step is applicable (the gate's `Choice`, which the symbolic world
executes and the AI2-THOR backend follows), so opening "Cabinet" twice opens two cabinets where
the scene has two closed ones.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..pddl.errors import PlanSyntaxError
from ..pddl.model import Domain, PlanStep
from ..pddl.plans import step_from_json
from ..pddl.vocabulary import loose_step_words, name_key, vocabulary
from . import catalogue
from .catalogue import canonical_type
from .observation import NearbyObject, ObservedState
from .taskset import Task, normalize_steps


def pddl_name(name: str) -> str:
    """A word as a PDDL object name: letters, digits, `_` and `-`, starting with a letter."""
    cleaned = re.sub(r"[^A-Za-z0-9_\-]", "", name)
    return cleaned if cleaned[:1].isalpha() else f"obj{cleaned}"


def room_name(name: str) -> str:
    """A ProcTHOR room's object name (`living room` -> LivingRoom)."""
    return pddl_name(catalogue.camel_case(name))


# --- the inventory: types and their instances ------------------------------------------------

@dataclass
class Instance:
    """One object of the scene: its AI2-THOR type, its room (ProcTHOR) and its PDDL name."""

    type: str
    room: str | None = None
    name: str = ""


class Inventory:
    """The scene's object types, each with its instances (in order), and its rooms."""

    def __init__(self, synonyms: Mapping[str, tuple[str, ...]]) -> None:
        self.types: dict[str, list[Instance]] = {}
        self.spelling: dict[str, str] = {}
        self.rooms: dict[str, str] = {}
        self.synonyms = synonyms
        """The domain's `synonym` annotations (`Vocabulary.synonyms`)."""
        self.unlisted: tuple[str, ...] = ()
        """Types the task's observation shows that its floor plan's data does not list
        (`build_inventory`): the two sources disagree, which the problem says."""
        self.prefer: list[str] = []
        """The scene's own object words, which choose among a synonym's types
        (`canonical_type`): every later reading of a name uses the same list, so a word names
        the type its instances were made under."""

    def type_of(self, name: str) -> str:
        """The PDDL name of the AI2-THOR type a word names in this scene."""
        return pddl_name(canonical_type(name, tuple(self.prefer), self.synonyms))

    def add_type(self, type_name: str) -> None:
        self.spelling.setdefault(type_name.lower(), type_name)
        self.types.setdefault(type_name.lower(), [])

    def ensure(self, type_name: str, count: int, room: str | None = None) -> None:
        """At least `count` instances of the type (in `room`, when given)."""
        self.add_type(type_name)
        have = [i for i in self.types[type_name.lower()] if room is None or i.room == room]
        for _ in range(count - len(have)):
            self.types[type_name.lower()].append(Instance(self.spelling[type_name.lower()], room))

    def name_instances(self) -> None:
        for instances in self.types.values():
            for number, instance in enumerate(instances, 1):
                base = pddl_name(instance.type)
                instance.name = base if len(instances) == 1 else f"{base}_{number}"

    def of(self, type_name: str | None) -> list[Instance]:
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


def _readable(steps: Iterable[Mapping[str, Any]]) -> list[PlanStep]:
    """The reference steps that read as steps: only their words are wanted here, and a step
    that names no action names no object either."""
    readable = []
    for index, step in enumerate(steps):
        try:
            readable.append(step_from_json(step, index))
        except PlanSyntaxError:
            continue
    return readable


def build_inventory(task: Task, observed: ObservedState, domain: Domain,
               goal_types: Iterable[str]) -> tuple[Inventory, tuple[str, ...]]:
    """The scene's objects, and the types the task names that the scene does not have.

    The scene's types are what it shows (visible objects, the observation's objects) and, in
    iTHOR, its room type's fixtures and the floor plan's known types (`catalogue.scene_types`).
    A type the task only names (expected objects, reference plan, goal) is declared when the
    scene has it, and is otherwise left out (the second value): no object is invented for it.
    Only a scene nothing is known of (no floor-plan data, no object observed or visible) takes
    its types from what the task names."""
    inventory = Inventory(vocabulary(domain).synonyms)
    step_words = [w for step in _readable(normalize_steps(task.reference_steps, domain))
                  if step.action.lower() != "wait" for w in loose_step_words(step) if w]
    room_keys: dict[str, str] = {}
    if task.domain == "procthor":
        for room, _ in observed.rooms:
            room_keys[name_key(room)] = room_name(room)
        if observed.current_room:
            room_keys.setdefault(name_key(observed.current_room), room_name(observed.current_room))
    inventory.rooms = {r.lower(): r for r in room_keys.values()}
    shown = [*task.visible_objects, *observed.objects()]
    known_scene = bool(shown) or catalogue.scene_inventory(task.scene) is not None
    parts: tuple[str, ...] = ()  # the floor plan's walls and windows: declared when named
    plan_types: tuple[str, ...] = ()
    if task.domain != "procthor":
        shown += catalogue.room_fixtures(task.room or room_of_scene(task.scene))
        plan_types = catalogue.scene_types(task.scene)
        shown += [t for t in plan_types if t not in catalogue.STRUCTURAL]
        parts = tuple(t for t in plan_types if t in catalogue.STRUCTURAL)
    named = [*task.expected_objects, *step_words, *goal_types]
    prefer = inventory.prefer = [r for r in [*shown, *named] if name_key(r) not in room_keys]
    has = {inventory.type_of(r).lower() for r in [*shown, *parts] if name_key(r) not in room_keys}
    if task.domain != "procthor" and plan_types:
        listed_types = {t.lower() for t in [*plan_types, *catalogue.room_fixtures(
            task.room or room_of_scene(task.scene))]}
        seen = [inventory.type_of(r) for r in [*task.visible_objects, *observed.objects()]]
        inventory.unlisted = tuple(dict.fromkeys(
            t for t in seen if t.lower() not in listed_types and catalogue.lookup(t)
            and t not in catalogue.STRUCTURAL))
    absent: dict[str, None] = {}
    wanted: list[str] = []
    for word in prefer:
        type_name = inventory.type_of(word)
        if not known_scene or type_name.lower() in has:
            wanted.append(type_name)
        else:
            absent.setdefault(type_name, None)
    if task.domain == "procthor":
        current = room_name(observed.current_room) if observed.current_room else None
        for room, names in observed.rooms:
            for name in names:
                inventory.ensure(inventory.type_of(name), 1, room_name(room))
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


def room_of_scene(scene: str) -> str:
    """AI2-THOR's iTHOR room type by floor-plan number (REFERENCE §8.4)."""
    match = re.fullmatch(r"FloorPlan(\d+)(?:_physics)?", scene or "", re.IGNORECASE)
    if not match:
        return ""
    number = int(match.group(1))
    return {0: "kitchen", 2: "living_room", 3: "bedroom", 4: "bathroom"}.get(number // 100, "")


def nearby_instances(observed: ObservedState, inventory: Inventory
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
