"""Read the robot's observation text into facts: the initial state of a household problem.

The paper's task sets carry three observation formats (REFERENCE §6.2-6.4, §8.4):

* **nearby** (the 38 curated iTHOR tasks, recorded on the older server)::

      Location: (-1.00, 1.00), facing 270°
      Holding: nothing
      Nearby objects:
        - CreditCard [closed, off] (0.6m)
        - LightSwitch [closed, on] (1.9m)

  Each nearby object carries AI2-THOR's isOpen/isToggled flags (printed for every object, so
  "closed" only means something for openable types) and its distance. An object within
  AI2-THOR's interaction distance (`visibilityDistance`, 1.5 m) is within reach from the start.

* **sentence** (the 37 generated iTHOR tasks): "You are in the kitchen. Relevant objects are
  visible." It states nothing but the room.

* **server** (ProcTHOR, and iTHOR on the current server): ``Current room: <room>``,
  ``Holding: <type|nothing>``, ``Found: <type|nothing>``, ``Arrived: <x|none>``, an ``Env:``
  block with one ``  <Room>: A, B, C`` line per room listing its non-pickupable objects, an
  optional ``Last action failed: ...`` line, then an ``Environment:`` block with a ``<Room>:``
  label per room followed by ``  - A, B, C`` lines of pickupable objects. iTHOR labels its one
  block with the scene name (FloorPlanN), which is not a room.

`read_observation(text)` returns an `ObservedState`; unknown lines are ignored, so a future
server line does not break problem generation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

INTERACTION_DISTANCE = 1.5
"""AI2-THOR's default visibilityDistance in metres: the reach of an interaction."""

_NEARBY = re.compile(r"^\s*-\s*(?P<name>[A-Za-z_][\w]*)\s*(?:\[(?P<flags>[^\]]*)\])?\s*"
                     r"(?:\((?P<dist>[\d.]+)\s*m\))?\s*$")
_ROOM_LINE = re.compile(r"^\s+(?P<room>[A-Za-z][\w ]*?)\s*:\s*(?P<objects>.*)$")
_LABEL = re.compile(r"^(?P<room>[A-Za-z][\w ]*?)\s*:\s*$")
_ITEMS = re.compile(r"^\s*-\s*(?P<objects>.+)$")
_SENTENCE = re.compile(r"you are in the (?P<room>[\w ]+?)\s*\.", re.IGNORECASE)
_SCENE = re.compile(r"^FloorPlan\w*$", re.IGNORECASE)
_NOTHING = {"", "nothing", "none", "null", "-"}


@dataclass(frozen=True)
class NearbyObject:
    name: str
    is_open: bool = False
    is_on: bool = False
    distance: float | None = None

    @property
    def within_reach(self) -> bool:
        return self.distance is not None and self.distance <= INTERACTION_DISTANCE


@dataclass(frozen=True)
class ObservedState:
    """What an observation text says. Rooms keep the spelling of the text."""

    format: str  # "nearby" | "sentence" | "server" | "empty"
    current_room: str | None = None
    holding: str | None = None
    found: str | None = None
    arrived: str | None = None
    nearby: tuple[NearbyObject, ...] = ()
    rooms: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(room, objects) per room, fixed objects (Env) then pickupable ones (Environment)."""
    scene_objects: tuple[str, ...] = ()
    """Objects listed under a scene label (iTHOR on the current server): no room."""
    last_failure: str | None = None

    def objects(self) -> tuple[str, ...]:
        """Every object the text names, first mention first, without repeats."""
        seen: dict[str, None] = {}
        for name in (self.holding, self.found, self.arrived):
            if name:
                seen.setdefault(name, None)
        for obj in self.nearby:
            seen.setdefault(obj.name, None)
        for _, names in self.rooms:
            for name in names:
                seen.setdefault(name, None)
        for name in self.scene_objects:
            seen.setdefault(name, None)
        return tuple(seen)


def _value(line: str) -> str | None:
    text = line.split(":", 1)[1].strip()
    return None if text.lower() in _NOTHING else text


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def read_observation(text: str | None) -> ObservedState:
    """Parse an observation text in any of the three formats (see the module docstring)."""
    text = text or ""
    if not text.strip():
        return ObservedState(format="empty")
    lines = text.splitlines()
    current_room = holding = found = arrived = failure = None
    nearby: list[NearbyObject] = []
    rooms: dict[str, list[str]] = {}
    scene_objects: list[str] = []
    section: str | None = None
    label: str | None = None
    has_server_lines = False

    def add(room: str, names: list[str]) -> None:
        if _SCENE.match(room):
            scene_objects.extend(n for n in names if n not in scene_objects)
            return
        bucket = rooms.setdefault(room, [])
        bucket.extend(n for n in names if n not in bucket)

    for line in lines:
        stripped = line.strip()
        lowered = stripped.lower()
        if not stripped:
            continue
        if lowered.startswith("current room:"):
            current_room, has_server_lines, section = _value(stripped), True, None
        elif lowered.startswith("holding:"):
            holding, section = _value(stripped), None
        elif lowered.startswith("found:"):
            found, has_server_lines, section = _value(stripped), True, None
        elif lowered.startswith("arrived:"):
            arrived, has_server_lines, section = _value(stripped), True, None
        elif lowered.startswith("location:"):
            section = None
        elif lowered.startswith("last action failed:"):
            failure, section = stripped.split(":", 1)[1].strip(), None
        elif lowered == "nearby objects:":
            section = "nearby"
        elif lowered == "env:":
            section, has_server_lines = "env", True
        elif lowered == "environment:":
            section, label, has_server_lines = "environment", None, True
        elif section == "nearby" and (match := _NEARBY.match(line)):
            flags = {f.strip().lower() for f in (match["flags"] or "").split(",")}
            nearby.append(NearbyObject(
                name=match["name"], is_open="open" in flags, is_on="on" in flags,
                distance=float(match["dist"]) if match["dist"] else None))
        elif section == "env" and (match := _ROOM_LINE.match(line)):
            add(match["room"].strip(), _names(match["objects"]))
        elif section == "environment" and (match := _ITEMS.match(line)) and label:
            add(label, _names(match["objects"]))
        elif section == "environment" and (match := _LABEL.match(stripped)):
            label = match["room"].strip()
    if nearby or any(line.strip().lower() == "nearby objects:" for line in lines):
        fmt = "nearby"
    elif has_server_lines:
        fmt = "server"
    elif (match := _SENTENCE.search(text)):
        fmt, current_room = "sentence", match["room"].strip()
    else:
        fmt = "sentence"
    return ObservedState(
        format=fmt, current_room=current_room, holding=holding, found=found, arrived=arrived,
        nearby=tuple(nearby), rooms=tuple((r, tuple(ns)) for r, ns in rooms.items()),
        scene_objects=tuple(scene_objects), last_failure=failure,
    )
