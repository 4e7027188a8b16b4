"""The three observation formats of the task sets."""
from __future__ import annotations

from sage_pddl.tasks import load_task
from sage_pddl.tasks.observation import read_observation


def test_nearby_format():
    state = read_observation(load_task("ithor#B01").obs)
    assert state.format == "nearby"
    assert state.holding is None
    light = next(o for o in state.nearby if o.name == "LightSwitch")
    assert light.is_on and not light.is_open and light.distance == 1.1 and light.within_reach
    box = next(o for o in state.nearby if o.name == "Box")
    assert box.is_open
    far = read_observation(load_task("ithor#K02").obs).nearby[-1]
    assert far.name == "LightSwitch" and not far.within_reach


def test_sentence_format():
    state = read_observation(load_task("ithor#K10").obs)
    assert state.format == "sentence" and state.current_room == "kitchen"
    assert state.objects() == ()


def test_server_format_with_rooms():
    state = read_observation(load_task("procthor#P04_01").obs)
    assert state.format == "server"
    assert state.current_room == "Kitchen"
    rooms = dict(state.rooms)
    assert set(rooms) == {"Kitchen", "LivingRoom", "Bedroom", "Bathroom"}
    assert "Television" in rooms["Kitchen"] and "Apple" in rooms["Kitchen"]
    assert "Plunger" in rooms["Bathroom"]


def test_server_format_of_ithor_and_held_object():
    text = ("Current room: Kitchen\nLocation: (1.00, 2.00), facing 90°\nHolding: Apple\n"
            "Found: Fridge\nArrived: none\nLast action failed: nope\n\nEnvironment:\n"
            "FloorPlan1:\n  - Apple, Bread\n  - Egg")
    state = read_observation(text)
    assert state.holding == "Apple" and state.found == "Fridge" and state.arrived is None
    assert state.rooms == () and state.scene_objects == ("Apple", "Bread", "Egg")
    assert state.last_failure == "nope"
