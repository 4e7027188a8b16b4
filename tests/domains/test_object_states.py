"""The AI2-THOR object states the household domains can say (sliced, cooked, filled, dirty,
heated, cooled; a burner and the knob the scene pairs it with; several instances of a type):
for each, an action that produces it, a plan that reaches a goal stating it, and a mutant of
that plan that misses it, on problems built by the task generator for an iTHOR kitchen."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.tasks import Task, scene_problem, task_scene

OBJECTS = ("Tomato", "Knife", "Potato", "Bread", "Mug", "Cup", "Pot", "Plate", "CoffeeMachine",
           "Microwave", "Fridge", "Sink", "StoveBurner")


@pytest.fixture(scope="module")
def ithor():
    return load_domain("ithor")


def gate_for(ithor, goal: str):
    task = Task(task_id="S", instruction="(test)", scene="FloorPlan1", room="kitchen",
                obs="You are in the kitchen. Relevant objects are visible.",
                visible_objects=OBJECTS, goal=goal)
    return compile_gate(ithor, scene_problem(task_scene(task, ithor), ithor))


CASES = {
    # goal: (plan that reaches it, index of the step the mutant drops, the mutant's first code)
    "(sliced Tomato)": (["MoveTo Knife", "Pick Knife", "MoveTo Tomato", "Slice Tomato"],
                        1, "no-knife"),
    "(cooked Potato)": (["MoveTo Potato", "Pick Potato", "MoveTo Microwave", "Open Microwave",
                         "PutIn Microwave", "Close Microwave", "TurnOn Microwave"],
                        5, "must-be-closed"),
    "(filled Mug coffee)": (["MoveTo Mug", "Pick Mug", "MoveTo CoffeeMachine",
                             "Place CoffeeMachine", "TurnOn CoffeeMachine"], 4, None),
    "(filled Cup water)": (["MoveTo Cup", "Pick Cup", "MoveTo Sink", "Fill Cup"], 2, "no-water"),
    "(and (heated Pot) (exists (?b - StoveBurner) (and (on Pot ?b) (turned-on ?b))))": (
        ["MoveTo Pot", "Pick Pot", "MoveTo StoveBurner", "Place StoveBurner",
         "TurnOn StoveBurner"], 4, None),
    "(cooled Tomato)": (["MoveTo Tomato", "Pick Tomato", "MoveTo Fridge", "Open Fridge",
                         "PutIn Fridge"], 3, "container-closed"),
}


@pytest.mark.parametrize("goal", list(CASES))
def test_a_plan_reaches_the_state_and_its_mutant_misses_it(ithor, goal):
    plan, dropped, code = CASES[goal]
    gate = gate_for(ithor, goal)
    assert gate.check([], mode="all").goal_reached is False  # nothing holds it at the start
    verdict = gate.check(plan, mode="all")
    assert verdict.valid and verdict.goal_reached, verdict.violations
    mutant = plan[:dropped] + plan[dropped + 1:]
    missed = gate.check(mutant, mode="all")
    assert not missed.goal_reached
    if code is None:
        assert missed.valid  # every step still applies; the state just never comes about
    else:
        assert [v.code for v in missed.violations][:1] == [code]


def test_bread_cooks_only_once_sliced(ithor):
    gate = gate_for(ithor, "(cooked Bread)")
    toast = ["MoveTo Bread", "Pick Bread", "MoveTo Microwave", "Open Microwave", "PutIn Microwave",
             "Close Microwave", "TurnOn Microwave"]
    assert gate.check(toast, mode="all").valid and not gate.check(toast).goal_reached
    sliced = ["MoveTo Knife", "Pick Knife", "MoveTo Bread", "Slice Bread", "Place Plate", *toast]
    assert gate.check(sliced).goal_reached


def test_running_water_cleans_a_dirty_dish_and_wash_does_too(ithor):
    gate = gate_for(ithor, "(not (dirty Plate))")
    dirty = gate.initial_state | {("dirty", "plate")}
    in_the_sink = ["MoveTo Plate", "Pick Plate", "MoveTo Sink", "PutIn SinkBasin",
                   "TurnOn Faucet"]
    assert gate.check(in_the_sink, state=dirty).goal_reached
    assert not gate.check(in_the_sink[:-1], state=dirty).goal_reached  # the faucet stays off
    washed = gate.check(["MoveTo Plate", "Pick Plate", "MoveTo Sink", "Wash Plate"], state=dirty)
    assert washed.goal_reached and ("cleaned", "plate") in washed.final_state


def test_a_burner_and_its_knob_switch_together(ithor, monkeypatch):
    from dataclasses import replace

    from sage_pddl.tasks import catalogue

    scenes = catalogue._scenes()  # a floor plan whose data names the pairing
    monkeypatch.setitem(scenes, "floorplan1", replace(
        scenes["floorplan1"], controls=(("StoveKnob_1", "StoveBurner_1"),)))
    gate = gate_for(ithor, "(turned-on StoveKnob)")
    verdict = gate.check(["MoveTo StoveBurner", "TurnOn StoveBurner"])
    assert verdict.valid and verdict.goal_reached
    state = verdict.final_state
    assert ("turned-on", "stoveburner_1") in state and ("turned-on", "stoveknob_1") in state
    off = gate.check(["TurnOff StoveKnob"], state=state)
    assert off.valid and ("turned-on", "stoveburner_1") not in off.final_state


def test_an_open_microwave_cannot_be_switched_on_nor_an_on_one_opened(ithor):
    gate = gate_for(ithor, "(turned-on Microwave)")
    refused = gate.check(["MoveTo Microwave", "Open Microwave", "TurnOn Microwave"])
    assert [v.code for v in refused.violations] == ["must-be-closed"]
    on = gate.check(["MoveTo Microwave", "TurnOn Microwave", "Open Microwave"])
    assert [v.code for v in on.violations] == ["turned-on"]
