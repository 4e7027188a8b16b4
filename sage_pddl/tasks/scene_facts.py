"""The initial facts of a household scene, each with its source, and the problem they make.

`SceneFact.source` says where a fact comes from:

catalogue    static affordances of each instance; fixtures that stand together (`near`); the
             knob that controls each burner (`controls`) only where the floor plan's data
             names it (`catalogue.scene_controls`: `control_facts`; otherwise no pairing, and
             a note says so, docs/goals.md "Knobs and burners"); the receptacles that take only
             some object types (`selective`) and the pickupable objects of the scene each takes
             (`fits`; once sliced, `fits-sliced`) under the task's placement setting
             (tasks/placement.py: data/ai2thor/receptacles.toml, placement.toml); the
             instances of one type (in one room) are `same-kind`: locating one locates the
             others, as the action server keeps the type it reached.
observation  held object (else `hand-empty`); open/closed and on/off as observed (an openable
             object not observed open is closed; a toggleable one not observed on is off,
             except types that start on: lights and lamps, `catalogue`'s `starts_on`); objects
             within AI2-THOR's interaction distance (1.5 m) and the server's Found/Arrived
             objects are `reachable`; ProcTHOR's rooms, the current room, which instance is in
             which room, and `here` for what is in the current room, visible objects included.
reference    facts a simulator-verified reference plan proves (`tasks/evidence.py`).

Nothing is inferred from the wording of the instruction: an object whose place is unknown lies
in no container, so once located it can be picked up. `render_problem` writes objects, facts
and a goal as a `Problem` (init sorted, so the file is stable).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..pddl.model import Atom, Constant, Domain, Formula, Problem, Typed
from . import catalogue
from .catalogue import affordances
from .inventory import Instance, Inventory, nearby_instances, pddl_name, room_name
from .observation import ObservedState
from .taskset import Task, TaskSetError


@dataclass(frozen=True)
class SceneFact:
    """One initial fact with its provenance: `atom` is (predicate, *objects)."""

    atom: tuple[str, ...]
    source: str  # "catalogue" | "observation" | "reference"
    note: str = ""


def catalogue_facts(inventory: Inventory, placement: str = "typed") -> list[SceneFact]:
    facts = []
    for instances in inventory.types.values():
        for instance in instances:
            for predicate in affordances(instance.type).predicates():
                facts.append(SceneFact((predicate, instance.name), "catalogue"))
    types = {t: [i.name for i in instances] for t, instances in inventory.types.items()}
    for predicate, a, b in catalogue.instance_relations(types):
        facts.append(SceneFact((predicate, a, b), "catalogue", "fixtures that stand together"))
    facts += _fit_facts([i for group in inventory.types.values() for i in group], placement)
    for group in inventory.types.values():
        for one in group:
            facts += [SceneFact(("same-kind", one.name, other.name), "catalogue",
                                f"two {one.type}s") for other in group
                      if other is not one and other.room == one.room]
    return facts


def _fit_facts(instances: Sequence[Instance], placement: str) -> list[SceneFact]:
    """What AI2-THOR places where under `placement` (tasks/placement.py): `(forced-placement)`
    when it places with forceAction on; `(selective R)` for each receptacle that takes only
    some objects under it, `(fits O R)` for each pickupable object O it takes, and
    `(fits-sliced O R)` for each it takes once sliced, as the sliced type AI2-THOR then gives
    O (catalogue.SLICED_TYPES: a sliced Bread is BreadSliced, which the Toaster takes);
    nothing for the receptacles that take anything."""
    facts = ([SceneFact(("forced-placement",), "catalogue",
                        "AI2-THOR places with forceAction on")] if placement == "forced" else [])
    receptacles = [r for r in instances
                   if affordances(r.type).receptacle and catalogue.selective(r.type, placement)]
    movable = [o for o in instances if affordances(o.type).pickupable]
    facts += [SceneFact(("selective", r.name), "catalogue",
                        f"a {r.type} takes only some objects ({placement} placement)")
              for r in receptacles]
    for r in receptacles:
        for o in movable:
            if o is r:
                continue
            if catalogue.fits(o.type, r.type, placement):
                facts.append(SceneFact(("fits", o.name, r.name), "catalogue",
                                       f"a {r.type} takes a {o.type}"))
            sliced = catalogue.sliced_type(o.type)
            if sliced and catalogue.fits(sliced, r.type, placement):
                facts.append(SceneFact(("fits-sliced", o.name, r.name), "catalogue",
                                       f"a {r.type} takes a {sliced}"))
    return facts


def control_facts(scene: str, inventory: Inventory) -> tuple[list[SceneFact], list[str]]:
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


def observation_facts(task: Task, observed: ObservedState,
                       inventory: Inventory) -> list[SceneFact]:
    facts: list[SceneFact] = []
    current = room_name(observed.current_room) if observed.current_room else None

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
    for near, name in nearby_instances(observed, inventory):
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


def render_problem(task: Task, domain: Domain, things: Sequence[str], rooms: Sequence[str],
                   facts: Iterable[SceneFact], goal: Formula) -> Problem:
    """The problem of a scene: its rooms and things, the facts as its init, and `goal`."""
    objects = tuple(Typed(r, ("room",)) for r in sorted(rooms, key=str.lower))
    objects += tuple(Typed(t, ("thing",)) for t in sorted(things, key=str.lower))
    atoms = sorted({f.atom for f in facts}, key=lambda a: (a[0], tuple(x.lower() for x in a[1:])))
    init = tuple(Atom(a[0], tuple(Constant(x) for x in a[1:])) for a in atoms)
    name = pddl_name(f"{task.domain}-{task.task_id}".replace("+", "_"))
    return Problem(name=name.lower(), domain_name=domain.name, objects=objects, init=init,
                   goal=goal)
