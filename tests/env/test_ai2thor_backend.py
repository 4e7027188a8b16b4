"""The AI2-THOR action mapping, driven by a fake Controller (no simulator can run here)."""
from __future__ import annotations

import importlib.util

import pytest

from sage_pddl.env import get_env
from sage_pddl.env.faults import Disappear
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.env.thor.ai2thor_backend import AI2ThorEnv, ThorMissing
from sage_pddl.pddl import parse_problem
from tests.steps import as_step

from .fake_thor import FakeController

PROBLEM = """
(define (problem apple-to-counter) (:domain ithor)
  (:objects Apple Mug Fridge CounterTop Microwave Sink SinkBasin Faucet - thing)
  (:init (pickupable Apple) (pickupable Mug) (washable Mug) (dirtyable Mug) (dirty Mug)
         (openable Fridge) (closed Fridge) (openable Microwave) (closed Microwave)
         (receptacle Fridge) (receptacle CounterTop) (receptacle Microwave) (receptacle SinkBasin)
         (receptacle Sink) (container Fridge) (container Microwave) (container SinkBasin)
         (container Sink) (toggleable Microwave) (toggleable Faucet) (heater Microwave)
         (cooler Fridge) (water-source SinkBasin) (water-source Faucet) (water-source Sink)
         (near Faucet SinkBasin) (near Faucet Sink)
         (inside Apple Fridge) (shut-in Apple Fridge) (on Mug CounterTop) (hand-empty))
  (:goal (and (on Apple CounterTop) (closed Fridge))))
"""
PLAN = ["MoveTo Fridge", "Open Fridge", "Pick Apple", "Close Fridge", "MoveTo CounterTop",
        "Place CounterTop"]


@pytest.fixture(scope="module")
def ithor():
    from sage_pddl.domains import load_domain

    return load_domain("ithor")


@pytest.fixture
def thor(ithor):
    env = AI2ThorEnv(FakeController())
    env.reset(parse_problem(PROBLEM), domain=ithor, scene="FloorPlan1")
    yield env
    env.close()


def actions(env, since=0):
    return [name for name, _ in env.controller.calls[since:]]


def test_reference_plan_executes_and_matches_the_symbolic_environment(thor, ithor):
    symbolic = SymbolicEnv(ithor)
    symbolic.reset(parse_problem(PROBLEM))
    for step in PLAN:
        real, model = thor.step(as_step(step)), symbolic.step(as_step(step))
        assert real.success and model.success, (step, real.message, model.message)
    assert thor.goal_reached() is True and symbolic.goal_reached() is True
    apple = next(o for o in thor.describe_objects() if o["objectType"] == "Apple")
    assert apple["parentReceptacles"] == ["CounterTop|+01.00|+00.90|+00.00"]
    assert ("on", "apple", "countertop") in thor.true_state()
    assert thor.true_state() == symbolic.true_state()


def test_moveto_teleports_to_the_nearest_interactable_pose(thor):
    assert thor.step(as_step("MoveTo Fridge")).success
    assert actions(thor) == ["GetInteractablePoses", "TeleportFull"]
    _, teleport = thor.controller.calls[-1]
    assert (teleport["x"], teleport["z"]) == (-2.75, 1.0)  # the nearer of the two poses
    assert ("reachable", "fridge") in thor.true_state()


def test_simulator_failures_carry_the_controller_error(thor):
    thor.step(as_step("MoveTo Fridge"))
    result = thor.step(as_step("Pick Apple"))  # the fridge is still closed
    assert (result.success, result.code) == (False, "simulator-failure")
    assert "inside a closed receptacle" in result.message
    assert "PickupObject" in actions(thor)
    assert "Last action failed" in result.observation.text
    assert ("hand-empty",) in thor.true_state()


def test_planner_memory_preconditions_are_refused_before_the_simulator(thor):
    calls = len(thor.controller.calls)
    result = thor.step(as_step("Pick Mug"))  # never located: the reference server says "use Find first"
    assert (result.success, result.code) == (False, "not-reachable")
    assert len(thor.controller.calls) == calls
    assert thor.step(as_step("Fly Mug")).code == "unknown-action"
    assert thor.step(as_step("Pick Banana")).code == "unknown-object"
    assert len(thor.controller.calls) == calls


def test_open_toggle_and_sensed_state(thor):
    thor.step(as_step("MoveTo Microwave"))
    assert thor.step(as_step("Open Microwave")).success and ("opened", "microwave") in thor.true_state()
    assert actions(thor)[-1] == "OpenObject"
    again = thor.step(as_step("Open Microwave"))  # the gate's already-open is not memory: THOR refuses
    assert not again.success and "already open" in again.message
    assert thor.step(as_step("TurnOn Microwave")).success and ("turned-on", "microwave") in thor.true_state()
    assert thor.step(as_step("TurnOff Microwave")).success
    assert ("turned-on", "microwave") not in thor.true_state()
    assert thor.step(as_step("Close Microwave")).success and ("closed", "microwave") in thor.true_state()


def test_find_turns_towards_a_visible_object_and_refuses_enclosed_ones(thor):
    assert thor.step(as_step("Find Mug")).success
    assert actions(thor)[-1] == "Teleport"
    assert thor.controller.calls[-1][1]["rotation"]["y"] == 90  # the mug is along +x
    assert "Found: Mug" in thor.observe().text
    hidden = thor.step(as_step("Find Apple"))
    assert not hidden.success


def test_heat_and_wash_follow_alfred_sequences(thor):
    for step in ("MoveTo CounterTop", "Pick Mug", "MoveTo Microwave"):
        assert thor.step(as_step(step)).success, step
    start = len(thor.controller.calls)
    assert thor.step(as_step("Heat Mug")).success
    assert [a for a in actions(thor, start) if a not in ("GetInteractablePoses", "TeleportFull")] \
        == ["OpenObject", "PutObject", "CloseObject", "ToggleObjectOn", "ToggleObjectOff",
            "OpenObject", "PickupObject", "CloseObject"]
    assert ("heated", "mug") in thor.true_state() and ("holding", "mug") in thor.true_state()
    assert thor.step(as_step("MoveTo Sink")).success
    start = len(thor.controller.calls)
    assert thor.step(as_step("Wash Mug")).success
    assert [a for a in actions(thor, start) if a not in ("GetInteractablePoses", "TeleportFull")] \
        == ["PutObject", "ToggleObjectOn", "ToggleObjectOff", "PickupObject"]
    mug = next(o for o in thor.describe_objects() if o["objectType"] == "Mug")
    assert mug["isPickedUp"] and ("cleaned", "mug") in thor.true_state()
    assert ("dirty", "mug") not in thor.true_state()  # sensed: the running water cleaned it


def test_wait_is_pass_and_a_vanished_object_is_disabled(ithor):
    env = AI2ThorEnv(FakeController(), faults=Disappear("Mug", 1))
    env.reset(parse_problem(PROBLEM), domain=ithor, scene="FloorPlan1")
    assert env.step(as_step("Wait")).success and actions(env)[-1] == "Pass"
    result = env.step(as_step("MoveTo Mug"))
    assert (result.success, result.code) == (False, "object-gone")
    assert "DisableObject" in actions(env)
    assert all(o["objectType"] != "Mug" for o in env.describe_objects())


def test_controller_is_built_once_and_reset_per_episode(ithor):
    built = []

    def factory(**options):
        built.append(options)
        return FakeController(**options)

    env = get_env("ai2thor", controller_factory=factory, controller_options={"width": 300})
    for _ in range(2):
        env.reset(parse_problem(PROBLEM), domain=ithor, scene="FloorPlan1")
    assert built == [{"scene": "FloorPlan1", "width": 300}]
    with pytest.raises(Exception, match="needs a scene"):
        env.reset(parse_problem(PROBLEM), domain=ithor)
    controller = env.controller
    env.close()
    assert controller.stopped


@pytest.mark.skipif(importlib.util.find_spec("ai2thor") is not None,
                    reason="ai2thor is installed: the missing-extra message cannot be shown")
def test_missing_ai2thor_is_a_clear_error(ithor):
    env = AI2ThorEnv()
    with pytest.raises(ThorMissing, match=r"pip install 'sage-pddl\[thor\]'"):
        env.reset(parse_problem(PROBLEM), domain=ithor, scene="FloorPlan1")


def test_run_episode_passes_the_task_scene_to_ai2thor(ithor):
    """Before, run_episode never passed a scene and the AI2-THOR backend refused to reset."""
    from sage_pddl.llm import get_backend
    from sage_pddl.planners import get_planner
    from sage_pddl.planners.base import PlanningTask
    from sage_pddl.runtime import run_episode

    built = []

    def factory(**options):
        built.append(options)
        return FakeController(**options)

    task = PlanningTask("Put the apple on the counter and close the fridge", ithor,
                        parse_problem(PROBLEM), task_id="fake-1", scene="FloorPlan1")
    llm = get_backend("scripted", script={"direct": [{"steps": PLAN}]})
    env = get_env("ai2thor", controller_factory=factory)
    try:
        report = run_episode(task, get_planner("Direct", llm=llm), env)
    finally:
        env.close()
    assert built == [{"scene": "FloorPlan1"}]
    assert report.success is True and report.attempted == len(PLAN)


def test_run_through_the_zmq_server_with_the_ai2thor_backend_passes_the_scene(ithor):
    """End to end: client -> thor-server (ai2thor backend, fake controller) -> worker; the task's
    scene travels with the reset."""
    import threading

    from sage_pddl.env.thor.server import serve
    from sage_pddl.llm import get_backend
    from sage_pddl.planners import get_planner
    from sage_pddl.planners.base import PlanningTask
    from sage_pddl.runtime import run_episode

    from .server_process import free_port

    port, ready, stop = free_port(), threading.Event(), threading.Event()
    server = threading.Thread(target=serve, kwargs=dict(
        port=port, backend="ai2thor", backend_options={"controller_factory": FakeController},
        on_ready=lambda _endpoint: ready.set(), stop=stop, handle_signals=False), daemon=True)
    server.start()
    assert ready.wait(10)
    env = get_env("thor", port=port, timeout=20)
    task = PlanningTask("Put the apple on the counter and close the fridge", ithor,
                        parse_problem(PROBLEM), task_id="fake-1", scene="FloorPlan1")
    llm = get_backend("scripted", script={"direct": [{"steps": PLAN}]})
    try:
        report = run_episode(task, get_planner("Direct", llm=llm), env)
        assert report.success is True and report.attempted == len(PLAN)
        assert "Scene: FloorPlan1" in env.reset(parse_problem(PROBLEM), domain=ithor,
                                                scene="FloorPlan1").text
    finally:
        env.close()
        stop.set()
        server.join(10)


INSTANCES = """
(define (problem instances) (:domain ithor)
  (:objects Cabinet_1 Cabinet_2 StoveBurner StoveKnob Knife Tomato Cup CounterTop Sink SinkBasin
            Faucet - thing)
  (:init (hand-empty) (openable Cabinet_1) (openable Cabinet_2) (closed Cabinet_1)
         (closed Cabinet_2) (receptacle Cabinet_1) (receptacle Cabinet_2) (container Cabinet_1)
         (container Cabinet_2) (same-kind Cabinet_1 Cabinet_2) (same-kind Cabinet_2 Cabinet_1)
         (toggleable StoveBurner) (toggleable StoveKnob) (heater StoveBurner)
         (receptacle StoveBurner) (controls StoveKnob StoveBurner) (near StoveKnob StoveBurner)
         (near StoveBurner StoveKnob) (pickupable Knife) (slicer Knife) (pickupable Tomato)
         (sliceable Tomato) (food Tomato) (pickupable Cup) (fillable Cup) (receptacle Cup)
         (container Cup) (washable Cup) (receptacle CounterTop) (receptacle Sink)
         (receptacle SinkBasin) (container Sink) (container SinkBasin) (toggleable Faucet)
         (water-source Sink) (water-source SinkBasin) (water-source Faucet) (near Faucet Sink)
         (near Faucet SinkBasin) (near Sink Faucet) (near SinkBasin Faucet))
  (:goal (and (sliced Tomato) (filled Cup water))))
"""


def test_instances_knobs_slicing_and_filling_agree_with_the_symbolic_world(ithor):
    """`Open Cabinet` twice opens both cabinets (the gate chooses the instance, the backend
    acts on the object bound to it); `TurnOn StoveBurner` turns its knob; Slice needs the held
    knife; Fill runs the faucet over the held cup; the sensed state equals the model's."""
    problem = parse_problem(INSTANCES)
    thor = AI2ThorEnv(FakeController())
    thor.reset(problem, domain=ithor, scene="FloorPlan1")
    symbolic = SymbolicEnv(ithor)
    symbolic.reset(problem)
    plan = ["MoveTo Cabinet", "Open Cabinet", "Open Cabinet", "MoveTo StoveBurner",
            "TurnOn StoveBurner", "MoveTo Knife", "Pick Knife", "MoveTo Tomato", "Slice Tomato",
            "Place CounterTop", "MoveTo Cup", "Pick Cup", "MoveTo Sink", "Fill Cup"]
    for step in plan:
        real, model = thor.step(as_step(step)), symbolic.step(as_step(step))
        assert real.success and model.success, (step, real.message, model.message)
        assert thor.true_state() == symbolic.true_state(), step
    scene = {o["objectId"]: o for o in thor.controller.objects.values()}
    assert all(o["isOpen"] for i, o in scene.items() if i.startswith("Cabinet"))
    assert scene["StoveBurner|-03.00|+00.90|-01.00"]["isToggled"]
    toggled = [args["objectId"] for name, args in thor.controller.calls if name == "ToggleObjectOn"]
    assert toggled[0].startswith("StoveKnob")  # AI2-THOR refuses to toggle a burner directly
    assert scene["Tomato|-01.40|+00.95|-02.00"]["isSliced"]
    assert scene["Cup|-01.60|+00.95|-02.00"]["fillLiquid"] == "water"
    assert thor.goal_reached() and symbolic.goal_reached()
    assert thor.step(as_step("Empty Cup")).success and symbolic.step(as_step("Empty Cup")).success
    assert thor.true_state() == symbolic.true_state()
    assert not thor.step(as_step("Open Cabinet")).success  # both are open now: the gate refuses


@pytest.mark.parametrize("forced", [True, False])
def test_place_sends_force_action_as_the_problems_placement_setting_says(ithor, forced):
    """The problem's `(forced-placement)` fact (tasks/placement.py) is what the gate checked
    the placement under; the backend sends PutObject's forceAction by it."""
    problem = PROBLEM.replace("(hand-empty))", "(hand-empty) (forced-placement))") if forced \
        else PROBLEM
    env = AI2ThorEnv(FakeController())
    env.reset(parse_problem(problem), domain=ithor, scene="FloorPlan1")
    for step in PLAN:
        assert env.step(as_step(step)).success
    puts = [args for name, args in env.controller.calls if name == "PutObject"]
    assert puts and puts[0]["forceAction"] is forced
    env.close()
