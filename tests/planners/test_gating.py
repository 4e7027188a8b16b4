"""How planners ask the gate about one step (`planners/gating.py`): `feasible` refuses a step
that names nothing the problem has, or cannot apply, with the gate's own violation, never an
exception. (A step that names no action is no `PlanStep`: the answer's reader drops it.)"""
from __future__ import annotations

from sage_pddl.gate import Violation, compile_gate
from sage_pddl.planners.gating import drop_noop_repeats, feasible, is_noop

from .conftest import ps as s


def test_feasible_step_has_its_ground_action_and_no_violation(domain, problem):
    gate = compile_gate(domain, problem)
    judged = feasible(gate, gate.initial_state, s("MoveTo", "Apple"))
    assert judged.applicable and judged.violation is None
    assert judged.ground is not None and judged.ground.schema.name == "MoveTo"


def test_inapplicable_step_names_its_failed_precondition(domain, problem):
    gate = compile_gate(domain, problem)
    judged = feasible(gate, gate.initial_state, s("Pick", "Apple"))  # not reachable yet
    assert not judged.applicable and judged.ground is not None
    assert isinstance(judged.violation, Violation)
    assert judged.violation.literal == "(reachable Apple)"


def test_unreadable_step_is_refused_with_its_structural_violation(domain, problem):
    gate = compile_gate(domain, problem)
    for step, code in [(s("Juggle", "Apple"), "unknown-action"),
                       (s("Pick", "Banana"), "unknown-object")]:
        judged = feasible(gate, gate.initial_state, step)
        assert judged.ground is None and not judged.applicable
        assert isinstance(judged.violation, Violation) and judged.violation.code == code


def test_a_repeated_step_that_changes_nothing_is_dropped(domain, problem):
    gate = compile_gate(domain, problem)
    moved = gate.apply(gate.initial_state, gate.ground(s("MoveTo", "Apple")))
    assert is_noop(gate, moved, s("MoveTo", "Apple"))
    assert not is_noop(gate, gate.initial_state, s("MoveTo", "Apple"))
    kept, dropped = drop_noop_repeats(
        gate, [s("MoveTo", "Apple"), s("MoveTo", "Apple"), s("Pick", "Apple")],
        gate.initial_state)
    assert kept == [s("MoveTo", "Apple"), s("Pick", "Apple")]
    assert dropped == [s("MoveTo", "Apple")]
