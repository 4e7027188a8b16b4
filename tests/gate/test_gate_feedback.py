"""The LLM feedback text: violations, the state at the failing step, and what would fix it."""
from __future__ import annotations

from sage_pddl.gate import compile_gate
from sage_pddl.gate.feedback import STATE_CAP, _hint, achievers, render_feedback
from sage_pddl.pddl.model import Not, Or

from .helpers import action, atom, domain, neg, problem

FIND = action("Find", "?o - item", pre=[atom("visible", "?o")], eff=[atom("found", "?o")])
PICK = action("Pick", "?o - item", pre=[atom("found", "?o"), neg("holding-any")],
              eff=[atom("holding", "?o"), atom("holding-any")])
PLACE = action("Place", "?r - receptacle", pre=[atom("holding-any")],
               eff=[Not(atom("holding-any"))])
OPEN = action("Open", "?r - receptacle", pre=[neg("opened", "?r")], eff=[atom("opened", "?r")])
PUTIN = action("PutIn", "?o - item ?r - receptacle",
               pre=[atom("holding", "?o"), Or((atom("opened", "?r"), neg("openable", "?r")))],
               eff=[atom("in", "?o", "?r")])


def kitchen(extra_objects: int = 0, goal=None):
    d = domain([FIND, PICK, PLACE, OPEN, PUTIN], types=[("item", ""), ("receptacle", "")])
    objects = "Apple - item Mug - item Fridge - receptacle Table - receptacle"
    objects += "".join(f" Thing{i} - item" for i in range(extra_objects))
    init = [atom("visible", "Apple"), atom("visible", "Mug"), atom("openable", "Fridge")]
    init += [atom("visible", f"Thing{i}") for i in range(extra_objects)]
    return compile_gate(d, problem(objects, init=init, goal=goal))


def test_feedback_lists_every_violation_state_and_achievers():
    gate = kitchen()
    plan = ["Pick Apple", "Find Mug", "Pick Mug", "PutIn Mug Fridge"]
    verdict = gate.check(plan, mode="all")
    text = render_feedback(gate, verdict, plan)
    assert "step 1 \"Pick Apple\": [pick/requires/found]" in text
    assert "failed precondition: (found Apple)" in text
    assert "[putin/requires/any-of]" in text
    assert "(or (opened Fridge) (not (openable Fridge)))" in text
    assert "needs (found Apple): Find Apple first" in text
    assert "needs (opened Fridge): Open Fridge first" in text
    assert "State before step 1 (3 facts)" in text
    assert "  (visible Apple)" in text
    assert render_feedback(gate, verdict, plan) == text  # deterministic


def test_feedback_for_negative_literal_names_deleting_actions():
    gate = kitchen()
    plan = ["Find Apple", "Pick Apple", "Find Mug", "Pick Mug"]
    verdict = gate.check(plan)
    text = render_feedback(gate, verdict, plan)
    assert "[pick/forbids/holding-any]" in text
    assert "needs (not (holding-any)): Place ?r first" in text
    # the state shown is the one before the failing step
    assert "State before step 4" in text and "(holding Apple)" in text


def test_feedback_state_is_capped_to_relevant_facts():
    gate = kitchen(extra_objects=40)
    plan = ["Find Thing3", "Pick Apple"]
    verdict = gate.check(plan)
    text = render_feedback(gate, verdict, plan)
    state_lines = text.split("State before step 2 (")[1].split("\n\n")[0].splitlines()[1:]
    assert len(state_lines) <= STATE_CAP
    assert "  (visible Apple)" in state_lines
    assert "  (visible Thing7)" not in state_lines
    assert "those about Apple" in text


def test_feedback_for_valid_plan_reports_unmet_goal():
    gate = kitchen(goal=atom("in", "Apple", "Fridge"))
    plan = ["Find Apple", "Pick Apple"]
    text = render_feedback(gate, gate.check(plan), plan)
    assert "executable" in text and "(in Apple Fridge)" in text
    assert "needs (in Apple Fridge): PutIn Apple Fridge first" in text
    done = plan + ["Open Fridge", "PutIn Apple Fridge"]
    assert "The goal holds" in render_feedback(gate, gate.check(done), done)


def test_achievers_respect_types_and_static_predicates():
    gate = kitchen()
    assert achievers(gate, ("found", "apple"), True) == ["Find Apple"]
    assert achievers(gate, ("found", "fridge"), True) == []  # Fridge is no item
    plan = ["Find Table"]
    text = render_feedback(gate, gate.check(plan), plan)
    assert "[type-mismatch]" in text
    plan = ["PutIn Apple Table"]
    text = render_feedback(gate, gate.check(plan), plan)
    assert "needs (holding Apple): Pick Apple first" in text
    assert achievers(gate, ("visible", "apple"), True) == []  # static: nothing achieves it
    assert "must hold from the start" in _hint(gate, True, ("visible", "apple"))
