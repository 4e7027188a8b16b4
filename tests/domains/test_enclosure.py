"""What is inside a closed container is shut in it: it can be the object or the target of no
action until the container is opened, directly or through an open container inside it, in
the iTHOR and ProcTHOR domains, and the violation names the closed container (issue 42's
five plans the gate used to accept)."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.tasks import load_task, task_problem


def _step(action: str, obj: str = "") -> dict[str, str]:
    return {"action": action, "object": obj, "target": ""}


def _gate(ref: str):
    task = load_task(ref)
    domain = load_domain(task.domain)
    return compile_gate(domain, task_problem(task, domain))


def _shut_in_drawer(obj: str) -> list[dict[str, str]]:
    """`obj` of FloorPlan301 (B01's bedroom) put in its first drawer, which is closed."""
    return [_step("Find", obj), _step("Pick", obj), _step("Find", "Drawer"),
            _step("Open", "Drawer"), _step("PutIn", "Drawer_1"), _step("Close", "Drawer_1")]


BOWL_IN_CABINET = [_step("Find", "Bowl"), _step("Pick", "Bowl"), _step("Find", "Cabinet"),
                   _step("Open", "Cabinet"), _step("PutIn", "Cabinet")]
"""FloorPlan1's bowl in its first cabinet, left open."""
APPLE_INTO_BOWL = [_step("Find", "Apple"), _step("Pick", "Apple"), _step("PutIn", "Bowl")]

ENCLOSED_PLANS = {
    "open a book inside a closed drawer": (
        "ithor#B01", [*_shut_in_drawer("Book"), _step("Open", "Book")], "Book", "Drawer_1"),
    "turn on a cell phone in a closed drawer": (
        "ithor#B01", [*_shut_in_drawer("CellPhone"), _step("TurnOn", "CellPhone")],
        "CellPhone", "Drawer_1"),
    "slice an apple in a closed fridge": (
        "ithor#K01",
        [_step("Find", "Knife"), _step("Find", "Apple"), _step("Pick", "Apple"),
         _step("MoveTo", "Fridge"), _step("Open", "Fridge"), _step("PutIn", "Fridge"),
         _step("Close", "Fridge"), _step("Pick", "Knife"), _step("Slice", "Apple")],
        "Apple", "Fridge"),
    "put something into a bowl in a closed cabinet": (
        "ithor#K01", [*BOWL_IN_CABINET, _step("Close", "Cabinet"), *APPLE_INTO_BOWL],
        "Bowl", "Cabinet_1"),
    "pick an apple out of a bowl in a closed cabinet": (
        "ithor#K01",
        [*BOWL_IN_CABINET, *APPLE_INTO_BOWL, _step("Close", "Cabinet"), _step("Pick", "Apple")],
        "Apple", "Cabinet_1"),
}


@pytest.mark.parametrize("name", sorted(ENCLOSED_PLANS))
def test_an_object_shut_in_a_closed_container_is_refused_naming_the_container(name):
    ref, plan, obj, container = ENCLOSED_PLANS[name]
    gate = _gate(ref)
    assert gate.check(plan[:-1]).valid, gate.check(plan[:-1]).violations
    verdict = gate.check(plan)
    assert not verdict.valid
    (violation,) = verdict.violations
    assert violation.step == len(plan) - 1 and violation.code == "shut-in"
    assert violation.literal == f"(not (shut-in {obj} {container}))"
    assert f"the closed {container}" in violation.message


def test_opening_the_container_frees_what_is_in_it_but_not_what_an_inner_closed_one_holds():
    _, plan, _, _ = ENCLOSED_PLANS["pick an apple out of a bowl in a closed cabinet"]
    gate = _gate("ithor#K01")
    assert gate.check([*plan[:-1], _step("Open", "Cabinet_1"), plan[-1]]).valid


def test_procthor_shuts_in_the_same_way():
    task = load_task("procthor#P14_05")  # "Put the bowl in the safe and close it"
    domain = load_domain("procthor")
    gate = compile_gate(domain, task_problem(task, domain))
    plan = list(task.reference_steps)
    assert gate.check(plan).valid
    verdict = gate.check([*plan, _step("Pick", "Bowl")])
    assert [v.code for v in verdict.violations] == ["shut-in"]
    assert "the closed Safe" in verdict.violations[0].message
    assert gate.check([*plan, _step("Open", "Safe"), _step("Pick", "Bowl")]).valid


def test_a_second_already_open_is_not_reported_for_an_object_that_cannot_open():
    gate = _gate("ithor#K01")
    for action in ("Open", "Close"):
        verdict = gate.check([_step("Find", "CounterTop"), _step(action, "CounterTop")])
        assert [v.code for v in verdict.violations] == ["not-openable"]
    verdict = gate.check([_step("Find", "CounterTop"), _step("TurnOff", "CounterTop")])
    assert [v.code for v in verdict.violations] == ["not-toggleable"]
