"""AI2-THOR execution of the household actions (`ai2thor` environment, `--backend ai2thor`).

The household domains (domains/ithor.pddl, procthor.pddl) name AI2-THOR object *types* (Apple,
Fridge), and several instances of a type as `Cabinet_1`, `Cabinet_2`, ... A problem object
named by its type is the nearest instance of that type in the scene at each step
(`objectType`, case/underscore-insensitive); the instances `Type_k` are bound at reset to the
scene's instances of the type in order of distance (`Type_1` the nearest), which is the order
in which the problem builder gave them the observation's states. When a step names a type with
several instances, the gate chooses the instance the step applies to (its `Choice`) and the
backend acts on the object bound to it, so "Open Cabinet" twice opens two cabinets. Each action
maps to Controller actions with the domain's semantics, and success and the reason are read
from `controller.last_event.metadata` (`lastActionSuccess`, `errorMessage`):

| step            | Controller actions                                                            |
|-----------------|-------------------------------------------------------------------------------|
| MoveTo X        | GetInteractablePoses(X) then TeleportFull to the pose nearest the agent;      |
|                 | no pose: stay (still a success, as the domain's MoveTo has no precondition)   |
| Find X          | fails if X is inside a closed receptacle; else turn towards X (Teleport with  |
|                 | the rotation facing it)                                                       |
| Pick O          | approach O, PickupObject (retried with forceAction=True)                      |
| Place/PutIn/Serve R | approach R, PutObject(R, forceAction, placeStationary), then unforced;    |
|                 | forceAction=False alone when the problem says `typed` placement (no           |
|                 | `(forced-placement)` fact: tasks/placement.py)                                |
| Open/Close X    | approach X, OpenObject / CloseObject                                          |
| TurnOn/TurnOff X| approach X, ToggleObjectOn / ToggleObjectOff; an object another controls     |
|                 | (a StoveBurner, in its knob's `controlledObjects`) is toggled by its knob     |
| Slice O         | approach O, SliceObject (the held knife is the domain's precondition)          |
| Fill O          | held O: approach SinkBasin, PutObject, ToggleObjectOn+Off Faucet,             |
|                 | PickupObject; without sink and faucet: FillObjectWithLiquid(O, water)         |
| Empty O         | EmptyLiquidFromObject(O)                                                      |
| Wash/Clean O    | held O: approach SinkBasin, PutObject, ToggleObjectOn+Off Faucet, PickupObject;|
|                 | without sink and faucet: CleanObject(O)                                       |
| Heat O          | ALFRED: approach Microwave, Open, PutObject, Close, ToggleOn, ToggleOff, Open,|
|                 | PickupObject, Close                                                           |
| Cool O          | ALFRED: approach Fridge, Open, PutObject, Close, Open, PickupObject, Close    |
| Sit/LieOn X     | approach X (AI2-THOR has no sitting; the reference server reports success)    |
| Wait            | Pass                                                                          |

"Approach" = the MoveTo teleport. The simulator decides everything physical (hand full,
closed containers, not pickupable). What AI2-THOR cannot sense is the planner-level memory of
the domain, the `reachable`/`*-reachable` predicates (the reference server's found/arrived):
before executing, a step whose only failed gate literals are those is refused with the gate's
code, as the reference server refuses "Pick" without "Find". A plan step is read by the gate
(aliases, arity, objects), so an unknown action or object fails without touching the simulator.

The environment keeps the domain-level state (`true_state`) by applying the gate's effects of
every step AI2-THOR executed, then overwriting the sensed fluents from metadata (holding /
hand-empty, opened / closed, turned-on, and where the metadata has them sliced, cooked, dirty
and filled with its liquid). Faults work as in the symbolic environment; a vanished
object is removed from the scene with DisableObject.

AI2-THOR is an optional extra (`pip install 'sage-pddl[thor]'`), imported only when a
Controller must be built; it needs a display or a GPU, so it cannot run in CI. The tests drive
this module with a fake Controller that serves scene metadata written by hand in AI2-THOR's format
(tests/env/fake_thor.py, tests/env/data/kitchen_scene.json), not recorded from a simulator.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sage_pddl.gate import GroundAction, PlanChecker, Violation, compile_gate
from sage_pddl.pddl.model import Atom, Domain, PlanStep, Problem, key
from sage_pddl.pddl.vocabulary import instance_stem, name_key

from ..base import EnvError, Fact, Observation, StepResult, parse_facts
from ..episode import GatedEnv
from ..faults import compose

STRUCTURAL_TYPES = frozenset({"wall", "floor", "ceiling", "room", "doorway", "window", "walldecal",
                              "showerdoor", "showercurtain"})
MEMORY_PREDICATES = frozenset({"reachable", "water-reachable", "heater-reachable",
                               "cooler-reachable"})
SENSED_FLAGS = (("sliced", "isSliced"), ("cooked", "isCooked"), ("dirty", "isDirty"))
"""Domain predicates read directly off AI2-THOR's object-state metadata."""
CONTROLLER_DEFAULTS = {"agentMode": "default", "visibilityDistance": 1.5, "gridSize": 0.25,
                       "snapToGrid": True, "width": 640, "height": 480, "fieldOfView": 90}


class ThorMissing(EnvError):
    """AI2-THOR is not installed."""


def require_ai2thor() -> Any:
    """The `ai2thor.controller.Controller` class; ThorMissing naming the extra if absent."""
    try:
        from ai2thor.controller import Controller  # optional extra 'thor'
    except ImportError:
        raise ThorMissing("AI2-THOR is not installed: install the extra with "
                          "`pip install 'sage-pddl[thor]'` (it also needs a display or a GPU), "
                          "or use the symbolic backend") from None
    return Controller


def _make_controller(**options: Any) -> Any:
    return require_ai2thor()(**{**CONTROLLER_DEFAULTS, **options})


class AI2ThorEnv(GatedEnv):
    """See the module docstring; steps are read and grounded as in `GatedEnv`."""

    name = "ai2thor"
    _reset_call = "reset(problem, scene=...)"

    def __init__(self, controller: Any = None, *,
                 controller_factory: Callable[..., Any] | None = None,
                 controller_options: dict[str, Any] | None = None, log: str | Path | None = None,
                 domains_dirs: Iterable[str | Path] | None = None, faults: Any = None):
        super().__init__(log=log, domains_dirs=domains_dirs, faults=faults)
        self.controller = controller
        self._factory = controller_factory or _make_controller
        self._controller_options = dict(controller_options or {})

    # --- episode ---------------------------------------------------------------------------

    def reset(self, problem: Problem, *, domain: Domain | str | None = None,
              scene: str | None = None, task: str | None = None, faults: Any = None,
              hidden: Iterable[Any] | None = None, gate: PlanChecker | None = None) -> Observation:
        if not scene:
            raise EnvError("the ai2thor backend needs a scene (e.g. FloorPlan1): pass scene= "
                           "or reset from a task")
        domain = self._resolve_domain(domain, problem)
        gate = self._given_gate(gate, domain, problem)
        if gate is None:
            gate = compile_gate(domain, problem)
        fault_set = compose(faults if faults is not None else self._default_faults)
        if self.controller is None:
            self.controller = self._factory(scene=scene, **self._controller_options)
        else:
            self.controller.reset(scene=scene)
        self.domain, self.problem, self.gate, self.scene = domain, problem, gate, scene
        self._names = self._build_spelling(domain, problem)
        self._bound = self._bind(problem)
        self._state = frozenset(gate.initial_state) | parse_facts(hidden)
        self._found: str | None = None
        self._last_error = ""
        self._begin_episode(task or problem.name, fault_set)
        self._sense()
        return self.observe()

    def _vanish(self, objects: Iterable[str]) -> None:
        for obj in objects:
            for instance in self._instances(obj):
                self._do("DisableObject", objectId=instance["objectId"])
        self._gone |= {key(obj) for obj in objects}  # facts and step args compare lower-case
        self._state = frozenset(f for f in self._state if not self._gone.intersection(f[1:]))

    def _execute(self, plan_step: PlanStep, pre: frozenset[Fact], ground: GroundAction
                 ) -> StepResult:
        memory = self._memory_violation(pre, ground, plan_step.index, plan_step.text)
        if memory is not None:
            return self._finish(plan_step, pre, False, memory.message, memory.code)
        skill = getattr(self, "_skill_" + key(ground.name), None)
        if skill is None:
            return self._finish(plan_step, pre, False, f"{ground.name} has no AI2-THOR mapping",
                                "unsupported-action")
        success, message = skill(*(self._names.get(a, a) for a in ground.args))
        if success:
            self._state = self.gate.apply(pre, ground)  # domain effects (reachable, on, ...)
            self._succeeded += 1
        self._sense()
        return self._finish(plan_step, pre, success, "ok" if success else message,
                            None if success else "simulator-failure")

    def close(self) -> None:
        if self.controller is not None:
            stop = getattr(self.controller, "stop", None)
            if stop:
                stop()
            self.controller = None
        super().close()

    # --- observation -----------------------------------------------------------------------

    def observe(self) -> Observation:
        self._require_episode()
        metadata = self.controller.last_event.metadata
        visible = sorted({o["objectType"] for o in metadata.get("objects", [])
                          if o.get("visible") and name_key(o["objectType"]) not in STRUCTURAL_TYPES})
        held = [o["objectType"] for o in metadata.get("objects", []) if o.get("isPickedUp")]
        seen = {name_key(v) for v in visible} | {name_key(h) for h in held} \
            | {name_key(c.name) for c in self.domain.constants}
        facts = tuple(sorted(f for f in self._state
                             if all(name_key(instance_stem(a) or a) in seen for a in f[1:])))
        agent = metadata.get("agent", {})
        position, rotation = agent.get("position", {}), agent.get("rotation", {})
        lines = [f"Scene: {self.scene}",
                 f"Location: ({position.get('x', 0):.2f}, {position.get('z', 0):.2f}), "
                 f"facing {rotation.get('y', 0):.0f}°",
                 "Holding: " + (", ".join(held) if held else "nothing"),
                 "Found: " + (self._names.get(self._found, self._found) if self._found else "nothing")]
        if self._last_error:
            lines.append(f"Last action failed: {self._last_error}")
        lines.append("Visible objects: " + (", ".join(visible) if visible else "none"))
        return Observation("\n".join(lines), tuple(visible), facts)

    def describe_objects(self) -> list[dict]:
        """AI2-THOR's objects (the fields the reference server's get_objects returns)."""
        self._require_episode()
        fields = ("objectType", "objectId", "visible", "pickupable", "openable", "toggleable",
                  "receptacle", "isOpen", "isToggled", "isPickedUp", "parentReceptacles",
                  "receptacleObjectIds", "distance", "position")
        return [{f: o.get(f) for f in fields}
                for o in self.controller.last_event.metadata.get("objects", [])]

    # --- skills ----------------------------------------------------------------------------

    def _skill_moveto(self, name: str) -> tuple[bool, str]:
        target = self._target(name)
        if target is None:
            return False, f"no {name} in scene {self.scene}"
        self._approach(target)
        return True, ""

    def _skill_find(self, name: str) -> tuple[bool, str]:
        target = self._target(name)
        if target is None:
            return False, f"no {name} in scene {self.scene}"
        if self._enclosed(target):
            return False, f"{name} is inside a closed container: open the container first"
        agent = self.controller.last_event.metadata["agent"]
        dx = target["position"]["x"] - agent["position"]["x"]
        dz = target["position"]["z"] - agent["position"]["z"]
        yaw = round(math.degrees(math.atan2(dx, dz)) / 90.0) * 90 % 360
        self._do("Teleport", position=agent["position"], rotation={"x": 0, "y": yaw, "z": 0},
                 horizon=agent.get("cameraHorizon", 0))
        self._found = key(name)
        return True, ""

    def _skill_pick(self, name: str) -> tuple[bool, str]:
        target = self._target(name)
        if target is None:
            return False, f"no {name} in scene {self.scene}"
        self._approach(target)
        ok, message = self._do("PickupObject", objectId=target["objectId"])
        if not ok and not self._enclosed(target) and not self._held():
            ok, message = self._do("PickupObject", objectId=target["objectId"], forceAction=True)
        return ok, message

    def _skill_place(self, name: str) -> tuple[bool, str]:
        if not self._held():
            return False, "the hand is empty: nothing to place"
        target = self._target(name)
        if target is None:
            return False, f"no {name} in scene {self.scene}"
        self._approach(target)
        if not self._forced_placement():  # `typed`: AI2-THOR's per-type restrictions hold
            return self._do("PutObject", objectId=target["objectId"], forceAction=False,
                            placeStationary=True)
        ok, message = self._do("PutObject", objectId=target["objectId"], forceAction=True,
                               placeStationary=True)
        if not ok:
            ok, message = self._do("PutObject", objectId=target["objectId"])
        return ok, message

    def _forced_placement(self) -> bool:
        """Whether the problem's placement setting is `forced` (its `(forced-placement)` fact,
        tasks/placement.py): the setting the gate checked the placement under."""
        return any(isinstance(atom, Atom) and key(atom.predicate) == "forced-placement"
                   and not atom.args for atom in self.problem.init)

    _skill_putin = _skill_place
    _skill_serve = _skill_place

    def _interact(self, action: str, name: str) -> tuple[bool, str]:
        target = self._target(name)
        if target is None:
            return False, f"no {name} in scene {self.scene}"
        if action.startswith("ToggleObject"):  # a burner is switched by the knob that controls it
            target = self._controller_of(target) or target
        self._approach(target)
        return self._do(action, objectId=target["objectId"])

    def _skill_open(self, name: str) -> tuple[bool, str]:
        return self._interact("OpenObject", name)

    def _skill_close(self, name: str) -> tuple[bool, str]:
        return self._interact("CloseObject", name)

    def _skill_turnon(self, name: str) -> tuple[bool, str]:
        return self._interact("ToggleObjectOn", name)

    def _skill_turnoff(self, name: str) -> tuple[bool, str]:
        return self._interact("ToggleObjectOff", name)

    def _under_running_water(self, name: str, otherwise: str, **extra: Any) -> tuple[bool, str]:
        """Put the held object in the nearest basin, run the faucet, take it back; without a
        sink and faucet, the Controller action `otherwise` on the held object."""
        held = self._held()
        if held is None or held is not self._held_as(name):
            return False, f"{name} is not in the hand"
        sink, faucet = self._nearest("SinkBasin") or self._nearest("Sink"), self._nearest("Faucet")
        if sink is None or faucet is None:
            return self._do(otherwise, objectId=held["objectId"], **extra)
        self._approach(sink)
        return self._sequence([("PutObject", sink, {"forceAction": True}),
                               ("ToggleObjectOn", faucet, {}), ("ToggleObjectOff", faucet, {}),
                               ("PickupObject", held, {})])

    def _skill_wash(self, name: str) -> tuple[bool, str]:
        return self._under_running_water(name, "CleanObject")

    _skill_clean = _skill_wash

    def _skill_fill(self, name: str) -> tuple[bool, str]:
        return self._under_running_water(name, "FillObjectWithLiquid", fillLiquid="water")

    def _skill_empty(self, name: str) -> tuple[bool, str]:
        held = self._held_as(name)
        if held is None:
            return False, f"{name} is not in the hand"
        return self._do("EmptyLiquidFromObject", objectId=held["objectId"])

    def _skill_slice(self, name: str) -> tuple[bool, str]:
        return self._interact("SliceObject", name)

    def _treat(self, name: str, appliance: str, heat: bool) -> tuple[bool, str]:
        held = self._held_as(name)
        if held is None:
            return False, f"{name} is not in the hand"
        device = self._nearest(appliance)
        if device is None:
            return False, f"no {appliance} in scene {self.scene}"
        self._approach(device)
        toggle: list[tuple[str, Any, dict]] = (
            [("ToggleObjectOn", device, {}), ("ToggleObjectOff", device, {})] if heat else [])
        return self._sequence([("OpenObject", device, {}), ("PutObject", device, {}),
                               ("CloseObject", device, {}), *toggle, ("OpenObject", device, {}),
                               ("PickupObject", held, {}), ("CloseObject", device, {})])

    def _skill_heat(self, name: str) -> tuple[bool, str]:
        return self._treat(name, "Microwave", heat=True)

    def _skill_cool(self, name: str) -> tuple[bool, str]:
        return self._treat(name, "Fridge", heat=False)

    def _skill_sit(self, name: str) -> tuple[bool, str]:
        return self._skill_moveto(name)

    _skill_lieon = _skill_sit

    def _skill_wait(self) -> tuple[bool, str]:
        return self._do("Pass")

    # --- controller helpers ----------------------------------------------------------------

    def _do(self, action: str, **arguments: Any) -> tuple[bool, str]:
        event = self.controller.step(action=action, **arguments)
        metadata = event.metadata
        ok = bool(metadata.get("lastActionSuccess"))
        message = "" if ok else (metadata.get("errorMessage") or f"{action} failed")
        return ok, message

    def _sequence(self, actions: list[tuple[str, dict, dict]]) -> tuple[bool, str]:
        for action, obj, extra in actions:
            ok, message = self._do(action, objectId=obj["objectId"], **extra)
            if not ok:
                return False, f"{action} {obj['objectType']}: {message}"
        return True, ""

    def _objects(self) -> list[dict]:
        return list(self.controller.last_event.metadata.get("objects", []))

    def _instances(self, name: str) -> list[dict]:
        wanted = name_key(name)
        return [o for o in self._objects() if name_key(o["objectType"]) == wanted]

    def _nearest(self, name: str) -> dict | None:
        found = self._instances(name)
        return min(found, key=lambda o: o.get("distance", 0.0)) if found else None

    def _bind(self, problem: Problem) -> dict[str, str]:
        """Problem objects `Type_k` -> the objectId of the k-th nearest instance of Type."""
        by_type: dict[str, list[str]] = {}
        for typed in problem.objects:
            stem = instance_stem(typed.name)
            if stem is not None and self._instances(stem):
                by_type.setdefault(stem, []).append(typed.name)
        bound: dict[str, str] = {}
        for stem, names in by_type.items():
            scene = sorted(self._instances(stem), key=lambda o: o.get("distance", 0.0))
            bound.update({key(n): o["objectId"] for n, o in zip(names, scene)})
        return bound

    def _target(self, name: str) -> dict | None:
        """The scene object a problem object names (see the module docstring)."""
        object_id = self._bound.get(key(name))
        if object_id is not None:
            return next((o for o in self._objects() if o["objectId"] == object_id), None)
        return self._nearest(name)

    def _controller_of(self, target: dict) -> dict | None:
        return next((o for o in self._objects()
                     if target["objectId"] in (o.get("controlledObjects") or ())), None)

    def _held_as(self, name: str) -> dict | None:
        """The held object when it is the one `name` names."""
        held, target = self._held(), self._target(name)
        if held is None:
            return None
        if target is not None:
            return held if target["objectId"] == held["objectId"] else None
        return held if name_key(held["objectType"]) == name_key(instance_stem(name) or name) \
            else None

    def _held(self) -> dict | None:
        return next((o for o in self._objects() if o.get("isPickedUp")), None)

    def _enclosed(self, obj: dict) -> bool:
        by_id = {o["objectId"]: o for o in self._objects()}
        return any(by_id.get(p, {}).get("openable") and not by_id.get(p, {}).get("isOpen")
                   for p in obj.get("parentReceptacles") or ())

    def _approach(self, target: dict) -> None:
        """Teleport to the interactable pose nearest the agent; stay put when there is none."""
        event = self.controller.step(action="GetInteractablePoses", objectId=target["objectId"],
                                     horizons=[-30, 0, 30, 60], standings=[True, False])
        poses = event.metadata.get("actionReturn") or []
        if not poses:
            return
        here = event.metadata["agent"]["position"]
        pose = min(poses, key=lambda p: (p["x"] - here["x"]) ** 2 + (p["z"] - here["z"]) ** 2)
        self._do("TeleportFull", **{k: pose[k] for k in ("x", "y", "z", "rotation", "horizon",
                                                          "standing") if k in pose})

    def _memory_violation(self, state: frozenset, ground: GroundAction, index: int, text: str
                          ) -> Violation | None:
        """The gate's violation if the step fails only on what AI2-THOR cannot sense."""
        violation = self.gate.applicable(state, ground, index, text)
        if violation is None:
            return None
        failed = self.gate.explain(state, ground, index, text)
        if all(a[0] in MEMORY_PREDICATES for v in failed for _, a in v.atoms) and \
                all(v.atoms for v in failed):
            return failed[0]
        return None

    def _sense(self) -> None:
        """Overwrite the fluents AI2-THOR reports from its metadata: the hand, open, toggled,
        and sliced, cooked, dirty and filled where the metadata has them. A problem object
        bound to a scene object reads that object; one named by its type reads the nearest
        instance (the hand: any instance)."""
        objects = self._objects()
        by_id = {o["objectId"]: o for o in objects}
        by_type: dict[str, list[dict]] = {}
        for obj in objects:
            by_type.setdefault(name_key(obj["objectType"]), []).append(obj)
        state = set(self._state)
        declared = {key(p.name) for p in self.domain.predicates}
        for name in self._names:
            object_id = self._bound.get(name)
            found = ([by_id[object_id]] if object_id in by_id else []) if object_id \
                else by_type.get(name_key(name), [])
            if not found:
                continue
            nearest = min(found, key=lambda o: o.get("distance", 0.0))
            if "holding" in declared:
                state.discard(("holding", name))
                if any(o.get("isPickedUp") for o in found):
                    state.add(("holding", name))
            if nearest.get("openable") and {"opened", "closed"} <= declared:
                state -= {("opened", name), ("closed", name)}
                state.add(("opened" if nearest.get("isOpen") else "closed", name))
            if nearest.get("toggleable") and "turned-on" in declared:
                state.discard(("turned-on", name))
                if nearest.get("isToggled"):
                    state.add(("turned-on", name))
            for predicate, flag in SENSED_FLAGS:
                if predicate in declared and flag in nearest:
                    state.discard((predicate, name))
                    if nearest[flag]:
                        state.add((predicate, name))
            if "filled" in declared and "isFilledWithLiquid" in nearest:
                state = {f for f in state if not (f[0] == "filled" and f[1] == name)}
                if nearest["isFilledWithLiquid"]:
                    liquid = str(nearest.get("fillLiquid") or "water").lower()
                    state.add(("filled", name, liquid))
        if "hand-empty" in declared:
            if any(f[0] == "holding" for f in state):
                state.discard(("hand-empty",))
            else:
                state.add(("hand-empty",))
        self._state = frozenset(state)

    def _finish(self, plan_step: PlanStep, pre: frozenset[Fact], success: bool, message: str,
                code: str | None) -> StepResult:
        self._last_error = "" if success else message  # shown by the observation
        return super()._finish(plan_step, pre, success, message, code)
