"""A fake AI2-THOR Controller for testing the action mapping without a simulator.

It starts from scene metadata in AI2-THOR's `event.metadata` schema (data/kitchen_scene.json)
and changes it the way the real controller does for the actions the backend uses: success and
the reason are reported through `lastActionSuccess` / `errorMessage`, objects move between
receptacles, open/toggle states flip, visibility and distance follow the agent. Error strings are
paraphrases of AI2-THOR's. Every call is recorded in `calls`.
"""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

SCENE = json.loads((Path(__file__).parent / "data" / "kitchen_scene.json").read_text())
REACH = 1.5  # visibilityDistance


class Event:
    def __init__(self, metadata: dict):
        self.metadata = metadata


class FakeController:
    def __init__(self, scene: str = "FloorPlan1", **options):
        self.options = options
        self.calls: list[tuple[str, dict]] = []
        self.stopped = False
        self.reset(scene)

    def reset(self, scene: str = "FloorPlan1"):
        if scene != SCENE["scene"]:
            raise ValueError(f"fake controller only knows {SCENE['scene']}")
        self.agent = copy.deepcopy(SCENE["agent"])
        self.objects = {o["objectId"]: {"visible": False, "distance": 0.0, "pickupable": False,
                                        "openable": False, "toggleable": False,
                                        "receptacle": False, "isPickedUp": False,
                                        "parentReceptacles": [], "receptacleObjectIds": [],
                                        **copy.deepcopy(o)} for o in SCENE["objects"]}
        self.calls = []
        self.last_event = self._event(True, "", None, "Initialize")
        return self.last_event

    def stop(self):
        self.stopped = True

    def step(self, action=None, **arguments):
        if isinstance(action, dict):
            arguments, action = dict(action), action["action"]
            arguments.pop("action")
        self.calls.append((action, arguments))
        handler = getattr(self, "_" + action, None)
        if handler is None:
            ok, error, value = False, f"Invalid action: {action}", None
        else:
            ok, error, value = handler(**arguments)
        self.last_event = self._event(ok, error, value, action)
        return self.last_event

    # --- state ---------------------------------------------------------------------------

    def _enclosed(self, obj: dict) -> bool:
        return any(self.objects[p]["openable"] and not self.objects[p]["isOpen"]
                   for p in obj["parentReceptacles"] if p in self.objects)

    def _event(self, ok: bool, error: str, value, action: str) -> Event:
        here = self.agent["position"]
        for obj in self.objects.values():
            p = obj["position"]
            obj["distance"] = round(math.hypot(p["x"] - here["x"], p["z"] - here["z"]), 2)
            obj["visible"] = obj["distance"] <= REACH and not self._enclosed(obj) \
                and not obj["isPickedUp"]
        held = [{"objectId": o["objectId"], "objectType": o["objectType"]}
                for o in self.objects.values() if o["isPickedUp"]]
        return Event({"lastActionSuccess": ok, "errorMessage": error, "actionReturn": value,
                      "lastAction": action, "agent": copy.deepcopy(self.agent),
                      "inventoryObjects": held,
                      "objects": copy.deepcopy(list(self.objects.values()))})

    def _get(self, object_id: str):
        obj = self.objects.get(object_id)
        if obj is None:
            raise KeyError(object_id)
        return obj

    def _in_reach(self, obj: dict, force: bool) -> str:
        if self._enclosed(obj):
            return f"{obj['objectId']} is not interactable: it is inside a closed receptacle"
        if not force and obj["distance"] > REACH:
            return f"{obj['objectId']} is not visible or too far away"
        return ""

    def _detach(self, obj: dict) -> None:
        for parent in obj["parentReceptacles"]:
            ids = self.objects[parent]["receptacleObjectIds"]
            if obj["objectId"] in ids:
                ids.remove(obj["objectId"])
        obj["parentReceptacles"] = []

    # --- actions -------------------------------------------------------------------------

    def _Pass(self):
        return True, "", None

    def _GetInteractablePoses(self, objectId, horizons=None, standings=None):
        obj = self.objects.get(objectId)
        if obj is None:
            return False, f"object {objectId} not found", None
        p = obj["position"]
        return True, "", [{"x": p["x"] - 0.75, "y": 0.9, "z": p["z"], "rotation": 90,
                           "horizon": 30, "standing": True},
                          {"x": p["x"] + 5.0, "y": 0.9, "z": p["z"], "rotation": 270,
                           "horizon": 30, "standing": True}]

    def _TeleportFull(self, x, y, z, rotation, horizon, standing=True):
        self.agent["position"] = {"x": x, "y": y, "z": z}
        self.agent["rotation"] = {"x": 0, "y": rotation, "z": 0}
        self.agent["cameraHorizon"] = horizon
        return True, "", None

    def _Teleport(self, position=None, rotation=None, horizon=None):
        if position:
            self.agent["position"] = dict(position)
        if rotation:
            self.agent["rotation"] = dict(rotation)
        return True, "", None

    def _PickupObject(self, objectId, forceAction=False):
        obj = self._get(objectId)
        if any(o["isPickedUp"] for o in self.objects.values()):
            return False, "Agent is already holding an object", None
        if not obj["pickupable"]:
            return False, f"{objectId} is not pickupable", None
        problem = self._in_reach(obj, forceAction)
        if problem:
            return False, problem, None
        self._detach(obj)
        obj["isPickedUp"] = True
        return True, "", None

    def _PutObject(self, objectId, forceAction=False, placeStationary=True):
        target = self._get(objectId)
        held = next((o for o in self.objects.values() if o["isPickedUp"]), None)
        if held is None:
            return False, "Nothing in the agent's hand to put", None
        if not target["receptacle"]:
            return False, f"{objectId} is not a receptacle", None
        if target["openable"] and not target["isOpen"]:
            return False, f"{objectId} is closed", None
        problem = self._in_reach(target, forceAction)
        if problem:
            return False, problem, None
        held["isPickedUp"] = False
        held["parentReceptacles"] = [objectId]
        held["position"] = dict(target["position"])
        target["receptacleObjectIds"].append(held["objectId"])
        return True, "", None

    def _open_close(self, objectId, want_open):
        obj = self._get(objectId)
        if not obj["openable"]:
            return False, f"{objectId} is not openable", None
        if obj["isOpen"] == want_open:
            return False, f"{objectId} is already {'open' if want_open else 'closed'}", None
        problem = self._in_reach(obj, False)
        if problem:
            return False, problem, None
        obj["isOpen"] = want_open
        return True, "", None

    def _OpenObject(self, objectId, **_):
        return self._open_close(objectId, True)

    def _CloseObject(self, objectId, **_):
        return self._open_close(objectId, False)

    def _toggle(self, objectId, want_on):
        obj = self._get(objectId)
        if not obj["toggleable"]:
            return False, f"{objectId} is not toggleable", None
        if any(objectId in (o.get("controlledObjects") or ()) for o in self.objects.values()):
            return False, f"{objectId} is controlled by another sim object", None
        if obj["isToggled"] == want_on:
            return False, f"{objectId} is already {'on' if want_on else 'off'}", None
        problem = self._in_reach(obj, False)
        if problem:
            return False, problem, None
        obj["isToggled"] = want_on
        for controlled in obj.get("controlledObjects") or ():
            self.objects[controlled]["isToggled"] = want_on
        if want_on and obj["objectType"] == "Faucet":  # water cleans and fills what is in the sink
            for other in self.objects.values():
                if any(self.objects[p]["objectType"] == "SinkBasin"
                       for p in other["parentReceptacles"]):
                    other["isDirty"] = False
                    if other.get("canFillWithLiquid"):
                        other["isFilledWithLiquid"], other["fillLiquid"] = True, "water"
        return True, "", None

    def _held_object(self):
        return next((o for o in self.objects.values() if o["isPickedUp"]), None)

    def _SliceObject(self, objectId, **_):
        obj = self._get(objectId)
        held = self._held_object()
        if not obj.get("sliceable"):
            return False, f"{objectId} is not sliceable", None
        if held is None or "Knife" not in held["objectType"]:
            return False, "Agent must be holding a knife to slice", None
        problem = self._in_reach(obj, False)
        if problem:
            return False, problem, None
        obj["isSliced"] = True
        return True, "", None

    def _FillObjectWithLiquid(self, objectId, fillLiquid="water", **_):
        obj = self._get(objectId)
        if not obj.get("canFillWithLiquid"):
            return False, f"{objectId} cannot be filled with liquid", None
        obj["isFilledWithLiquid"], obj["fillLiquid"] = True, fillLiquid
        return True, "", None

    def _EmptyLiquidFromObject(self, objectId, **_):
        obj = self._get(objectId)
        if not obj.get("isFilledWithLiquid"):
            return False, f"{objectId} is not filled with liquid", None
        obj["isFilledWithLiquid"], obj["fillLiquid"] = False, None
        return True, "", None

    def _ToggleObjectOn(self, objectId, **_):
        return self._toggle(objectId, True)

    def _ToggleObjectOff(self, objectId, **_):
        return self._toggle(objectId, False)

    def _CleanObject(self, objectId, **_):
        obj = self._get(objectId)
        if not obj.get("dirtyable"):
            return False, f"{objectId} is not dirtyable", None
        obj["isDirty"] = False
        return True, "", None

    def _DisableObject(self, objectId):
        obj = self._get(objectId)
        self._detach(obj)
        del self.objects[objectId]
        return True, "", None
