"""ALFRED expert trajectories as problems and plans of the ALFWorld domain (`domains/alfworld.pddl`).

An ALFRED `traj_data.json` records a task (`task_type`, `pddl_params`), the scene's movable
objects (`scene.object_poses`), the expert's high-level plan (`plan.high_pddl`: GotoLocation,
PickupObject, PutObject, OpenObject/CloseObject folded into the low-level actions, HeatObject,
CoolObject, CleanObject, ToggleObject, SliceObject) and the low-level API actions.
`translate_trajectory` turns one into:

* a PDDL problem in the ALFWorld vocabulary: items and receptacles named as ALFWorld prints them
  (`apple_1` for "apple 1", numbered per type in order of appearance), their types
  (`objectType`, `receptacleType`), affordances and receptacle compatibility (`canContain`) from
  ALFRED's own catalogue (`gen/constants.py`), where each item initially lies, and a goal
  written from `task_type`/`pddl_params` the way ALFWorld writes its goals;
* the expert plan as ALFWorld commands, one `PlanStep` per command (`go to countertop 1` is
  `PlanStep("GoTo", ("countertop_1",))`). The open/close actions ALFRED performs around a
  pick-up or put (recorded only in `low_actions`) become `open`/`close` commands; the
  open-put-close-toggle sequences inside heat/cool/clean collapse into one `heat`/`cool`/`clean`
  command, as ALFWorld's engine does.

Where an item initially lies: the receptacle named by the pick-up that first takes it
(`coordinateReceptacleObjectId`); else the receptacle of another GotoLocation to the same
navigation point; else the nearest receptacle seen in the trajectory that can hold it (within
`VISIBILITY_DISTANCE`); else a receptacle of the type such items usually stand on
(`USUAL_PLACE`), added to the problem. Every guess of the last two kinds is listed in
`AlfredEpisode.notes`. ALFWorld's own problem files (`initial_state.pddl`) are produced by its
download step and are not available here, so this reconstruction is what we can check.

ALFRED's object catalogue is `alfred_catalogue.py`; ALFWorld's text commands are
`alfworld_commands.py`.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..pddl.errors import SageError
from ..pddl.model import (
    And,
    Atom,
    Constant,
    Equals,
    Exists,
    Not,
    Plan,
    PlanStep,
    Problem,
    Typed,
    Variable,
)
from .alfred_catalogue import (
    CLEANABLE,
    COOLABLE,
    DOMAIN_TYPE_CONSTANTS,
    FIXED_RECEPTACLES,
    HEATABLE,
    MOVABLE_RECEPTACLES,
    OPENABLE,
    PICKUPABLE,
    RECEPTACLE_OBJECTS,
    SAME_RECEPTACLE_DISTANCE,
    SLICEABLE,
    TOGGLEABLE,
    USUAL_PLACE,
    VISIBILITY_DISTANCE,
)
from .alfworld_commands import alfworld_command

# --- results ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class AlfredEpisode:
    """One trajectory translated: the problem, the expert plan and what had to be guessed."""

    task_id: str
    task_type: str
    scene: str
    problem: Problem
    plan: Plan
    notes: tuple[str, ...] = ()

    @property
    def commands(self) -> tuple[str, ...]:
        """The plan as ALFWorld text commands."""
        return tuple(alfworld_command(step) for step in self.plan)


# --- trajectory reading ----------------------------------------------------------------------

@dataclass
class _Instance:
    name: str
    kind: str  # "item" | "receptacle"
    type: str
    position: tuple[float, float, float] | None  # (x, y, z) in metres


def _parse_object_id(object_id: str) -> tuple[str, tuple[float, float, float] | None, str]:
    """`Apple|+01.74|+01.07|-00.68[|AppleSliced_1]` -> (type, (x, y, z), suffix).

    The sink basin's id is `Sink|x|y|z|SinkBasin`: the suffix names the receptacle type then.
    """
    parts = object_id.split("|")
    try:
        position = (float(parts[1]), float(parts[2]), float(parts[3]))
    except (IndexError, ValueError):
        position = None
    suffix = parts[4] if len(parts) > 4 else ""
    return parts[0], position, suffix


def _from_coordinates(entry) -> tuple[str, tuple[float, float, float]] | None:
    """`["Dresser", [x4, x4, z4, z4, y4, y4]]` (quarter-metre units) -> (type, (x, y, z))."""
    if not entry or len(entry) != 2 or len(entry[1]) != 6:
        return None
    kind, c = entry
    return kind, (c[0] / 4, c[4] / 4, c[2] / 4)


def _distance(a, b, *, horizontal: bool = False) -> float:
    if horizontal:
        return math.hypot(a[0] - b[0], a[2] - b[2])
    return math.dist(a, b)


class _Scene:
    """The instances met in one trajectory, named ALFWorld-style per type."""

    def __init__(self) -> None:
        self.instances: list[_Instance] = []
        self._counts: dict[str, int] = {}

    def _new(self, kind: str, type_: str, position) -> _Instance:
        count = self._counts.get(type_.lower(), 0) + 1
        self._counts[type_.lower()] = count
        instance = _Instance(f"{type_.lower()}_{count}", kind, type_, position)
        self.instances.append(instance)
        return instance

    def find(self, kind: str, type_: str, position, tolerance: float) -> _Instance | None:
        for instance in self.instances:
            if instance.kind != kind or instance.type != type_:
                continue
            if position is None or instance.position is None:
                if position is None and instance.position is None:
                    return instance
                continue
            if _distance(instance.position, position) <= tolerance:
                return instance
        return None

    def receptacle(self, type_: str, position=None) -> _Instance:
        found = self.find("receptacle", type_, position, SAME_RECEPTACLE_DISTANCE)
        if found is None and position is None:
            found = next((i for i in self.instances
                          if i.kind == "receptacle" and i.type == type_), None)
        return found or self._new("receptacle", type_, position)

    def item(self, type_: str, position) -> _Instance:
        # ALFRED ids round to centimetres; poses are exact.
        return self.find("item", type_, position, 0.02) or self._new("item", type_, position)

    def of_kind(self, kind: str) -> list[_Instance]:
        return [i for i in self.instances if i.kind == kind]


def load_trajectory(path: str | Path) -> dict:
    """Read a `traj_data.json` (or the folder holding it)."""
    path = Path(path)
    if path.is_dir():
        path = path / "traj_data.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SageError(f"{path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise SageError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}") from error


class _Translator:
    def __init__(self, traj: dict, distractors: bool = True) -> None:
        self.traj = traj
        self.distractors = distractors
        self.scene = _Scene()
        self.notes: list[str] = []
        self.initial_place: dict[str, _Instance] = {}  # item name -> receptacle
        self.high = traj["plan"]["high_pddl"]
        self.low_by_high: dict[int, list[dict]] = {}
        for low in traj["plan"].get("low_actions", []):
            self.low_by_high.setdefault(low["high_idx"], []).append(low["api_action"])

    # -- instances ----------------------------------------------------------------------------
    def item_for_id(self, object_id: str) -> _Instance:
        type_, position, _ = _parse_object_id(object_id)
        return self.scene.item(type_, position)

    def receptacle_for_id(self, object_id: str) -> _Instance:
        type_, position, suffix = _parse_object_id(object_id)
        if suffix and suffix[0].isupper() and "_" not in suffix:  # Sink|...|SinkBasin
            type_ = suffix
        if type_ in MOVABLE_RECEPTACLES and type_ not in FIXED_RECEPTACLES:
            return self.scene.item(type_, position)
        return self.scene.receptacle(type_, position)

    def collect(self) -> None:
        """Create every instance the plan names, and the scene's movable objects."""
        for step in self.high:
            action = step["planner_action"]
            for field_name in ("objectId", "receptacleObjectId", "cleanObjectId"):
                object_id = action.get(field_name)
                if not object_id:
                    continue
                if step["discrete_action"]["action"] in ("HeatObject", "CoolObject", "CleanObject") \
                        and field_name == "objectId":
                    self.receptacle_for_id(object_id)
                elif field_name == "receptacleObjectId":
                    self.receptacle_for_id(object_id)
                else:
                    self.item_for_id(object_id)
            coords = _from_coordinates(action.get("coordinateReceptacleObjectId"))
            if coords and coords[0] in FIXED_RECEPTACLES | {"SinkBasin"}:
                self.scene.receptacle(*coords)
        for pose in self.traj["scene"].get("object_poses", []) if self.distractors else ():
            type_ = pose["objectName"].split("_")[0]
            p = pose["position"]
            self.scene.item(type_, (p["x"], p["y"], p["z"]))

    # -- where items start --------------------------------------------------------------------
    def place_items(self) -> None:
        goto_target: dict[str, _Instance] = {}  # navigation point -> receptacle visited there
        for i, step in enumerate(self.high):
            action = step["planner_action"]
            kind = step["discrete_action"]["action"]
            if kind == "PickupObject":
                item = self.item_for_id(action["objectId"])
                coords = _from_coordinates(action.get("coordinateReceptacleObjectId"))
                if coords and item.name not in self.initial_place and not self._moved_before(item, i):
                    holder = (self.scene.item(*coords) if coords[0] in MOVABLE_RECEPTACLES
                              and coords[0] not in FIXED_RECEPTACLES
                              else self.scene.receptacle(*coords))
                    if holder.kind == "receptacle":
                        self.initial_place[item.name] = holder
                        loc = self._goto_before(i)
                        if loc:
                            goto_target.setdefault(loc, holder)
            elif kind == "PutObject":
                loc = self._goto_before(i)
                target = self.receptacle_for_id(action["receptacleObjectId"])
                if loc and target.kind == "receptacle":
                    goto_target.setdefault(loc, target)
        for item in self._items_needing_place():
            loc = self._goto_for_item(item)
            if loc in goto_target:
                self.initial_place[item.name] = goto_target[loc]
                self.notes.append(f"{item.name}: placed in {goto_target[loc].name} (same "
                                  f"navigation point {loc})")
                continue
            near = self._nearest_compatible(item)
            if near is not None:
                self.initial_place[item.name] = near
                self.notes.append(f"{item.name}: placed in {near.name} (nearest receptacle "
                                  f"that can hold a {item.type})")
                continue
            usual = USUAL_PLACE.get(item.type, "CounterTop")
            holder = self.scene._new("receptacle", usual, None)
            self.initial_place[item.name] = holder
            self.notes.append(f"{item.name}: placed in {holder.name}, added (the trajectory "
                              f"never says where a {item.type} stands)")

    def _moved_before(self, item: _Instance, index: int) -> bool:
        for step in self.high[:index]:
            action = step["planner_action"]
            if step["discrete_action"]["action"] == "PickupObject" and \
                    self.item_for_id(action["objectId"]) is item:
                return True
        return False

    def _goto_before(self, index: int) -> str | None:
        for step in reversed(self.high[:index]):
            if step["discrete_action"]["action"] == "GotoLocation":
                return step["planner_action"].get("location")
        return None

    def _interacted_items(self, index: int) -> list[_Instance]:
        """Items a plan step needs to be in reach without being held (picked up, toggled,
        sliced)."""
        step = self.high[index]
        kind = step["discrete_action"]["action"]
        if kind in ("PickupObject", "ToggleObject", "SliceObject"):
            return [self.item_for_id(step["planner_action"]["objectId"])]
        return []

    def _items_needing_place(self) -> list[_Instance]:
        needed: list[_Instance] = []
        for i in range(len(self.high)):
            for item in self._interacted_items(i):
                if item.name not in self.initial_place and item not in needed \
                        and not self._moved_before(item, i):
                    needed.append(item)
        return needed

    def _goto_for_item(self, item: _Instance) -> str | None:
        for i in range(len(self.high)):
            if item in self._interacted_items(i) and not self._moved_before(item, i):
                return self._goto_before(i)
        return None

    def _nearest_compatible(self, item: _Instance) -> _Instance | None:
        if item.position is None:
            return None
        best: tuple[float, _Instance] | None = None
        for recep in self.scene.of_kind("receptacle"):
            if recep.position is None or item.type not in RECEPTACLE_OBJECTS.get(recep.type, ()):
                continue
            d = _distance(item.position, recep.position, horizontal=True)
            if d <= VISIBILITY_DISTANCE and (best is None or d < best[0]):
                best = (d, recep)
        return best[1] if best else None

    # -- the plan -----------------------------------------------------------------------------
    def plan(self) -> list[tuple[str, tuple[str, ...]]]:
        """Replay the expert plan on a small model of the scene and emit ALFWorld commands."""
        where = dict(self.initial_place)  # item name -> receptacle instance (or item holder)
        opened: set[str] = set()
        held: _Instance | None = None
        out: list[tuple[str, tuple[str, ...]]] = []

        def emit(action: str, *args: _Instance) -> None:
            out.append((action, tuple(a.name for a in args)))

        for i, step in enumerate(self.high):
            kind = step["discrete_action"]["action"]
            action = step["planner_action"]
            if kind == "GotoLocation":
                target = self._goto_target(i, where, held)
                if target is not None:
                    emit("GoTo", target)
            elif kind in ("PickupObject", "PutObject"):
                for low in self.low_by_high.get(i, []):
                    api = low["action"]
                    if api in ("OpenObject", "CloseObject"):
                        recep = self.receptacle_for_id(low["objectId"])
                        emit("Open" if api == "OpenObject" else "Close", recep)
                        (opened.add if api == "OpenObject" else opened.discard)(recep.name)
                    elif api == "PickupObject":
                        item = self.item_for_id(low["objectId"])
                        source = where.pop(item.name, None)
                        if source is None:
                            raise SageError(f"high_pddl[{i}]: {item.name} is in no known place")
                        emit("Take", item, source)
                        held = item
                    elif api == "PutObject":
                        item = self.item_for_id(low["objectId"])
                        target = self.receptacle_for_id(low["receptacleObjectId"])
                        emit("Put", item, target)
                        where[item.name] = target
                        held = None
            elif kind in ("HeatObject", "CoolObject", "CleanObject"):
                appliance = self.receptacle_for_id(action["objectId"])
                if held is None:
                    raise SageError(f"high_pddl[{i}]: {kind} while holding nothing")
                emit({"HeatObject": "Heat", "CoolObject": "Cool", "CleanObject": "Clean"}[kind],
                     held, appliance)
            elif kind == "ToggleObject":
                emit("Toggle", self.item_for_id(action["objectId"]))
            elif kind == "SliceObject":
                if held is None:
                    raise SageError(f"high_pddl[{i}]: SliceObject while holding nothing")
                emit("Slice", self.item_for_id(action["objectId"]), held)
            elif kind == "NoOp":
                continue
            else:
                raise SageError(f"high_pddl[{i}]: unknown ALFRED action {kind!r}")
        return out

    def _goto_target(self, index: int, where: dict, held) -> _Instance | None:
        """The receptacle a GotoLocation walks to: the one the next interaction uses."""
        for step in self.high[index + 1:]:
            kind = step["discrete_action"]["action"]
            action = step["planner_action"]
            if kind == "GotoLocation" or kind == "NoOp":
                break
            if kind in ("HeatObject", "CoolObject", "CleanObject"):
                return self.receptacle_for_id(action["objectId"])
            if kind == "PutObject":
                return self.receptacle_for_id(action["receptacleObjectId"])
            if kind in ("PickupObject", "ToggleObject", "SliceObject"):
                holder = where.get(self.item_for_id(action["objectId"]).name)
                # An item inside a carried receptacle (apple in a pan): walk to where that is.
                while holder is not None and holder.kind == "item":
                    holder = where.get(holder.name)
                if holder is not None:
                    return holder
        # Nothing to do there: walk to a receptacle of the named type.
        words = self.high[index]["discrete_action"].get("args") or []
        for recep in self.scene.of_kind("receptacle"):
            if words and recep.type.lower() == words[0].lower():
                return recep
        return None

    # -- the problem --------------------------------------------------------------------------
    def problem(self, name: str) -> Problem:
        items = self.scene.of_kind("item")
        receptacles = self.scene.of_kind("receptacle")
        otypes = sorted({f"{i.type}Type" for i in items})
        rtypes = sorted({f"{r.type}Type" for r in receptacles})
        objects = [Typed(i.name, ("item",)) for i in items]
        objects += [Typed(r.name, ("receptacle",)) for r in receptacles]
        objects += [Typed(t, ("otype",)) for t in otypes if t.lower() not in DOMAIN_TYPE_CONSTANTS]
        objects += [Typed(t, ("rtype",)) for t in rtypes if t.lower() not in DOMAIN_TYPE_CONSTANTS]

        def fact(predicate: str, *args: str) -> Atom:
            return Atom(predicate, tuple(Constant(a) for a in args))

        init: list[Atom] = []
        for r in receptacles:
            init.append(fact("receptacleType", r.name, f"{r.type}Type"))
            if r.type in OPENABLE:
                init.append(fact("openable", r.name))
        for i in items:
            init.append(fact("objectType", i.name, f"{i.type}Type"))
            for flag, members in (("pickupable", PICKUPABLE), ("isReceptacleObject",
                                  MOVABLE_RECEPTACLES), ("heatable", HEATABLE),
                                  ("coolable", COOLABLE), ("cleanable", CLEANABLE),
                                  ("toggleable", TOGGLEABLE), ("sliceable", SLICEABLE)):
                if i.type in members:
                    init.append(fact(flag, i.name))
        for item_name, holder in sorted(self.initial_place.items()):
            init.append(fact("inReceptacle", item_name, holder.name))
        for toggle in self.traj["scene"].get("object_toggles", []):
            if toggle.get("isOn"):
                for i in items:
                    if i.type == toggle.get("objectType"):
                        init.append(fact("isOn", i.name))
        item_types = {i.type for i in items}
        for r_type in sorted({r.type for r in receptacles}):
            for o_type in sorted(item_types & RECEPTACLE_OBJECTS.get(r_type, frozenset())):
                init.append(fact("canContain", f"{r_type}Type", f"{o_type}Type"))
        return Problem(name=name, domain_name="alfworld", objects=tuple(objects),
                       init=tuple(init), goal=self.goal())

    def goal(self):
        params = self.traj.get("pddl_params", {})
        task = self.traj.get("task_type", "")
        target = params.get("object_target", "")
        parent = params.get("parent_target", "")
        o, o2, r, r2, t = (Variable(v) for v in ("o", "o2", "r", "r2", "t"))

        def atom(predicate, *args):
            return Atom(predicate, tuple(a if isinstance(a, Variable) else Constant(a)
                                         for a in args))

        state: list = []
        if params.get("object_sliced"):
            state.append(atom("isSliced", o))
        for kind, predicate in (("heat", "isHot"), ("cool", "isCool"), ("clean", "isClean")):
            if f"_{kind}_" in task:
                state.append(atom(predicate, o))
        if task == "look_at_obj_in_light":
            lamp = params.get("toggle_target", "")
            return And((
                Exists((Typed("o", ("item",)),),
                       And((atom("objectType", o, f"{target}Type"), atom("holds", o)))),
                Exists((Typed("t", ("item",)), Typed("r", ("receptacle",))),
                       And((atom("objectType", t, f"{lamp}Type"), atom("isOn", t),
                            atom("inReceptacle", t, r), atom("atReceptacle", r)))),
            ))
        if task == "pick_two_obj_and_place":
            return Exists(
                (Typed("o", ("item",)), Typed("o2", ("item",)), Typed("r", ("receptacle",)),
                 Typed("r2", ("receptacle",))),
                And((Not(Equals(o, o2)),
                     atom("objectType", o, f"{target}Type"), atom("objectType", o2, f"{target}Type"),
                     atom("receptacleType", r, f"{parent}Type"),
                     atom("receptacleType", r2, f"{parent}Type"),
                     atom("inReceptacle", o, r), atom("inReceptacle", o2, r2))))
        if task == "pick_and_place_with_movable_recep":
            # "<object> in <movable receptacle> on <parent>": ALFWorld's domain has no way to put
            # an item into a carried receptacle (its PutObjectInReceptacleObject is commented
            # out, and ALFWorld leaves this task type out), so only the movable receptacle's
            # placement and the object's state are goals here.
            mrecep = params.get("mrecep_target", "")
            self.notes.append("goal: 'object inside movable receptacle' is not expressible in "
                              "ALFWorld's vocabulary; only the receptacle placement is checked")
            return Exists(
                (Typed("o", ("item",)), Typed("o2", ("item",)), Typed("r", ("receptacle",))),
                And((atom("objectType", o, f"{target}Type"),
                     atom("objectType", o2, f"{mrecep}Type"),
                     atom("receptacleType", r, f"{parent}Type"),
                     atom("inReceptacle", o2, r), *state)))
        return Exists(
            (Typed("o", ("item",)), Typed("r", ("receptacle",))),
            And((atom("objectType", o, f"{target}Type"), atom("receptacleType", r, f"{parent}Type"),
                 atom("inReceptacle", o, r), *state)))


def _problem_name(traj: dict) -> str:
    raw = traj.get("task_id") or "alfred"
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)


def translate_trajectory(traj: dict | str | Path, distractors: bool = True) -> AlfredEpisode:
    """Translate an ALFRED trajectory (a loaded `traj_data.json`, the file, or its folder).

    With `distractors=False` the problem holds only the objects the expert plan touches, not
    every movable object of the scene.
    """
    if not isinstance(traj, dict):
        traj = load_trajectory(traj)
    try:
        translator = _Translator(traj, distractors)
        translator.collect()
        translator.place_items()
        commands = translator.plan()
        problem = translator.problem(_problem_name(traj))
    except (KeyError, TypeError, IndexError) as error:
        raise SageError(f"ALFRED trajectory {traj.get('task_id', '?')}: unexpected structure "
                        f"({type(error).__name__}: {error})") from error
    steps = []
    for index, (action, args) in enumerate(commands):
        step = PlanStep(action=action, args=args, index=index)
        steps.append(PlanStep(action=action, args=args, index=index, text=alfworld_command(step)))
    return AlfredEpisode(
        task_id=traj.get("task_id", ""),
        task_type=traj.get("task_type", ""),
        scene=traj.get("scene", {}).get("floor_plan", ""),
        problem=problem,
        plan=Plan(tuple(steps)),
        notes=tuple(translator.notes),
    )


def find_trajectories(root: str | Path) -> list[Path]:
    """Every `traj_data.json` below a folder, sorted."""
    return sorted(Path(root).rglob("traj_data.json"))
