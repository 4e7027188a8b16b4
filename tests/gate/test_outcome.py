"""A plan's outcome in the gate's strict view and in the simulator's view (`gate/outcome.py`),
on a bundled iTHOR task, held equal to what the symbolic world does with the same steps."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.gate import compile_gate
from sage_pddl.gate.outcome import Outcome, plan_outcomes
from sage_pddl.planners.base import PlanningTask
from sage_pddl.tasks import load_task
from tests.steps import as_step


def s(action: str, obj: str = "", target: str = "") -> dict:
    return {"action": action, "object": obj, "target": target}


# K04 (FloorPlan2): "Boil water in a pot on the stove": water in the pot, the pot on a burner,
# that burner on (three goal conditions)
BOIL = [s("MoveTo", "Pot"), s("Pick", "Pot"), s("MoveTo", "Sink"), s("Fill", "Pot"),
        s("MoveTo", "StoveBurner"), s("Place", "StoveBurner"), s("TurnOn", "StoveBurner")]
# a step naming what the kitchen does not have (AI2-THOR has no Dishwasher): the simulator
# refuses it and nothing changes
HARMLESS = s("MoveTo", "Dishwasher")


@pytest.fixture(scope="module")
def k04():
    task = PlanningTask.from_task(load_task("ithor#K04"), load_domain("ithor"))
    return task.domain, task.problem


def test_a_harmless_refused_step_fails_the_gate_but_not_the_simulator(k04):
    gate = compile_gate(*k04)
    strict, simulated = plan_outcomes(gate, [HARMLESS, *BOIL])
    # the gate stops at the unknown object: nothing done, the goal not reached
    assert strict == Outcome(goal_reached=False, goal_conditions_met=0,
                             goal_conditions_total=3, steps_refused=1)
    # the simulator skips it and runs the rest: the pot boils
    assert simulated == Outcome(goal_reached=True, goal_conditions_met=3,
                                goal_conditions_total=3, steps_refused=1)
    assert simulated.goal_conditions == 1.0 and strict.goal_conditions == 0.0


def test_a_refused_step_that_matters_costs_its_condition_in_the_simulator(k04):
    gate = compile_gate(*k04)
    # Fill before the pot is in the hand: refused, and the pot stays empty (2 of 3 conditions)
    plan = [HARMLESS, BOIL[0], s("Fill", "Pot"), BOIL[1], *BOIL[4:]]
    strict, simulated = plan_outcomes(gate, plan)
    assert (strict.goal_reached, strict.goal_conditions_met, strict.steps_refused) == (False, 0, 1)
    assert simulated == Outcome(goal_reached=False, goal_conditions_met=2,
                                goal_conditions_total=3, steps_refused=2)


def test_a_plan_the_gate_accepts_has_one_outcome(k04):
    gate = compile_gate(*k04)
    outcomes = plan_outcomes(gate, BOIL)
    assert outcomes.strict == outcomes.simulated == Outcome(True, 3, 3, 0)
    empty = plan_outcomes(gate, [])
    assert empty.strict == empty.simulated == Outcome(False, 0, 3, 0)


@pytest.mark.parametrize("plan", [
    [HARMLESS, *BOIL],
    [HARMLESS, BOIL[0], s("Fill", "Pot"), BOIL[1], *BOIL[4:]],
    [s("Open", "Cabinet"), *BOIL, s("Pick", "Unicorn"), s("TurnOff", "StoveBurner")],
    [s("TurnOn", "StoveBurner"), s("Fly"), *BOIL[:3], {"action": "Fill"}, *BOIL[3:]],
], ids=["unknown-object", "precondition", "later-undo", "structural"])
def test_the_simulated_outcome_is_what_the_symbolic_world_does(k04, plan):
    domain, problem = k04
    gate = compile_gate(domain, problem)
    simulated = plan_outcomes(gate, plan).simulated
    env = SymbolicEnv(domain)
    env.reset(problem)
    refused = sum(1 for step in plan if not env.step(as_step(step)).success)
    met, total = env.goal_conditions()
    assert simulated == Outcome(env.goal_reached(), met, total, refused)
    assert gate.check(plan, mode="all").final_state == env.true_state()
