"""The iTHOR/ProcTHOR domains: the paper's reference plans, goals, and the executor's rules."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import load_problem, parse_problem
from sage_pddl.tasks import load_taskset, normalize_steps

REPO = Path(__file__).resolve().parents[2]
SETS = {"ithor": 75, "procthor": 20}


@cache
def _gates(set_name: str):
    out = []
    for task in load_taskset(set_name):
        domain = load_domain(task.domain)
        problem = load_problem(REPO / "problems" / set_name / f"{task.task_id}.pddl")
        out.append((task, domain, compile_gate(domain, problem)))
    return tuple(out)


@pytest.mark.parametrize("set_name", SETS)
def test_every_reference_plan_passes_the_gate(set_name):
    gates = _gates(set_name)
    assert len(gates) == SETS[set_name]
    rejected = {}
    for task, domain, gate in gates:
        verdict = gate.check(normalize_steps(task.reference_steps, domain), mode="all")
        if not verdict.valid:
            rejected[task.task_id] = [v.code for v in verdict.violations]
    assert rejected == {}


def _goal_report(set_name):
    reached, incomplete, no_goal = [], {}, []
    for task, domain, gate in _gates(set_name):
        verdict = gate.check(normalize_steps(task.reference_steps, domain))
        if verdict.goal_reached is None:
            no_goal.append(task.task_id)
        elif verdict.goal_reached:
            reached.append(task.task_id)
        else:
            incomplete[task.task_id] = gate.goal_unmet(verdict.final_state)
    return reached, incomplete, no_goal


def test_ithor_goal_completion_of_the_references():
    """The goals are written from the instructions, so a reference that leaves part of its
    instruction undone does not reach its goal (docs/goals.md lists what each leaves undone)."""
    reached, incomplete, no_goal = _goal_report("ithor")
    # REFERENCE §6.5: the curated references are the executed prefixes of failed attempts.
    assert incomplete["X01"] == ["(inside Apple Microwave)", "(heated Apple)"]
    assert incomplete["B08"] == ["(on Pillow Bed)"]
    assert set(incomplete) == {
        "K01", "K02", "K04", "K05", "K06", "K07", "K08", "K09", "L07", "B05", "B06",
        "B08", "A01", "A04", "A05", "A06", "A07", "A08", "X01", "X02", "X03", "X04", "X05"}
    assert no_goal == [] and len(reached) == 52
    # every generated (template) task, the 37 after the curated 38, reaches its goal
    generated = {t.task_id for t in load_taskset("ithor")[38:]}
    assert len(generated) == 37 and not generated & set(incomplete)


def test_procthor_references_reach_their_goals():
    reached, incomplete, no_goal = _goal_report("procthor")
    assert (len(reached), incomplete, no_goal) == (20, {}, [])


# --- the executor's rules, on small problems ---------------------------------------------------

ITHOR_PROBLEM = """
(define (problem rules) (:domain ithor)
  (:objects Apple Mug Fridge CounterTop Faucet Sink Laptop - thing)
  (:init (hand-empty) (pickupable Apple) (pickupable Mug) (pickupable Laptop)
         (openable Fridge) (receptacle Fridge) (container Fridge) (closed Fridge)
         (receptacle CounterTop) (receptacle Sink) (container Sink) (water-source Sink)
         (toggleable Faucet) (toggleable Laptop) (near Faucet Sink) (near Sink Faucet)
         (washable Apple) (inside Apple Fridge) (shut-in Apple Fridge))
  (:goal (on Mug CounterTop)))
"""


@pytest.fixture(scope="module")
def rules():
    return compile_gate(load_domain("ithor"), parse_problem(ITHOR_PROBLEM))


def _codes(gate, steps):
    verdict = gate.check([{"action": a, "object": o, "target": t} for a, o, t in steps])
    return verdict, [(v.step, v.code) for v in verdict.violations]


def test_moveto_makes_an_object_reachable_for_pick(rules):
    verdict, codes = _codes(rules, [("Navigate", "Mug", ""), ("Grab", "Mug", ""),
                                    ("Place", "CounterTop", "")])
    assert codes == [] and verdict.goal_reached


def test_legacy_place_takes_the_receptacle_from_target(rules):
    _, codes = _codes(rules, [("MoveTo", "Mug", ""), ("Pick", "Mug", ""),
                              ("Place", "Mug", "CounterTop")])
    assert codes == []


def test_closed_container_hides_its_contents(rules):
    assert _codes(rules, [("Find", "Apple", "")])[1] == [(0, "shut-in")]
    assert _codes(rules, [("MoveTo", "Fridge", ""), ("Pick", "Apple", "")])[1] == [
        (1, "shut-in")]
    verdict, codes = _codes(rules, [("MoveTo", "Fridge", ""), ("Open", "Fridge", ""),
                                    ("Pick", "Apple", ""), ("MoveTo", "Sink", ""),
                                    ("Wash", "Apple", "")])
    assert codes == [] and ("cleaned", "apple") in verdict.final_state


def test_fixtures_near_each_other_are_reached_together(rules):
    assert _codes(rules, [("MoveTo", "Sink", ""), ("TurnOn", "Faucet", "")])[1] == []
    assert _codes(rules, [("TurnOn", "Faucet", "")])[1] == [(0, "not-reachable")]


def test_already_in_that_state_is_refused(rules):
    assert _codes(rules, [("MoveTo", "Laptop", ""), ("TurnOff", "Laptop", "")])[1] == [
        (1, "already-off")]
    assert _codes(rules, [("MoveTo", "Laptop", ""), ("TurnOn", "Laptop", ""),
                          ("TurnOn", "Laptop", "")])[1] == [(2, "already-on")]
    assert _codes(rules, [("MoveTo", "Fridge", ""), ("Close", "Fridge", "")])[1] == [
        (1, "already-closed")]


def test_rooms_are_not_objects_in_ithor(rules):
    assert _codes(rules, [("MoveTo", "Kitchen", "")])[1] == [(0, "unknown-object")]


def test_wait_takes_no_argument(rules):
    assert _codes(rules, [("Wait", "", "")])[1] == []


PROCTHOR_PROBLEM = """
(define (problem rooms) (:domain procthor)
  (:objects Kitchen Bedroom - room Apple CounterTop Bed - thing)
  (:init (hand-empty) (pickupable Apple) (receptacle CounterTop) (receptacle Bed)
         (is-room Kitchen) (is-room Bedroom) (here Kitchen) (here Bedroom) (robot-in Kitchen)
         (in-room Apple Kitchen) (in-room CounterTop Kitchen) (in-room Bed Bedroom)
         (here Apple) (here CounterTop))
  (:goal (on Apple Bed)))
"""


@pytest.fixture(scope="module")
def house():
    return compile_gate(load_domain("procthor"), parse_problem(PROCTHOR_PROBLEM))


def test_procthor_objects_must_be_in_the_current_room(house):
    assert _codes(house, [("MoveTo", "Bed", "")])[1] == [(0, "not-in-current-room")]
    assert _codes(house, [("Find", "Bed", "")])[1] == [(0, "not-in-current-room")]
    verdict, codes = _codes(house, [("MoveTo", "Apple", ""), ("Pick", "Apple", ""),
                                    ("MoveTo", "Bedroom", ""), ("MoveTo", "Bed", ""),
                                    ("Place", "Bed", "")])
    assert codes == [] and verdict.goal_reached
    assert ("in-room", "apple", "bedroom") in verdict.final_state


def test_procthor_leaving_a_room_forgets_what_was_located(house):
    assert _codes(house, [("MoveTo", "Apple", ""), ("MoveTo", "Bedroom", ""),
                          ("MoveTo", "Kitchen", ""), ("Pick", "Apple", "")])[1] == [
        (3, "not-reachable")]


@pytest.fixture(scope="module")
def kitchen():
    """K01's generated problem: FloorPlan1, with an Apple, a Pot, a Mug and a CoffeeMachine."""
    return compile_gate(load_domain("ithor"), load_problem(REPO / "problems/ithor/K01.pddl"))


@pytest.mark.parametrize("held,put,receptacle", [
    ("Apple", "Place", "CoffeeMachine"), ("Pot", "PutIn", "Mug"), ("Apple", "Serve", "Toaster")])
def test_a_receptacle_refuses_an_object_type_it_does_not_take(kitchen, held, put, receptacle):
    verdict, codes = _codes(kitchen, [("MoveTo", held, ""), ("Pick", held, ""),
                                      (put, receptacle, "")])
    assert codes == [(2, "does-not-fit")]
    assert receptacle in verdict.violations[0].message


def test_a_receptacle_takes_the_types_it_is_listed_for(kitchen):
    assert _codes(kitchen, [("MoveTo", "Mug", ""), ("Pick", "Mug", ""),
                            ("Place", "CoffeeMachine", "")])[1] == []
    assert _codes(kitchen, [("MoveTo", "Apple", ""), ("Pick", "Apple", ""),
                            ("PutIn", "Pot", "")])[1] == []


def test_a_receptacle_the_sources_do_not_restrict_takes_anything(kitchen):
    """The Sink and the Stool have no row in data/ai2thor/receptacles.toml: no refusal."""
    for receptacle in ("Sink", "Stool"):
        assert _codes(kitchen, [("MoveTo", "Pot", ""), ("Pick", "Pot", ""),
                                ("Place", receptacle, "")])[1] == []
