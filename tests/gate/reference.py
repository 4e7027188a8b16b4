"""The reference semantics of `Gate.check`, on frozenset states, for the fast-path tests.

`check_sets(gate, plan, state, mode)` walks the plan step by step with the set form of every
ground action (`GroundAction.applicable` / `apply_in_place`, `sage_pddl/gate/ground.py`): no bit
sets, no step cache, no `Choice` tuples. A step naming several instances acts on the first
candidate applicable in the current state (`Gate.ground(step, index, state)`). The gate's one
check loop must return exactly this verdict.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sage_pddl.gate import StepRejected, Verdict
from sage_pddl.gate.gate import Gate, Violation
from sage_pddl.pddl.errors import SageError


def _at(violation: Violation, index: int) -> Violation:
    return Violation(index, violation.step_text, violation.action, violation.code,
                     violation.literal, violation.message, violation.atoms)


def check_sets(gate: Gate, plan: Any, state: Iterable[tuple] | None = None,
               mode: str = "first") -> Verdict:
    if mode not in ("first", "all"):
        raise SageError(f"mode must be first or all, not {mode!r}")
    stop = mode == "first"
    start = gate.initial_state if state is None else gate._state(state)
    current = set(start)
    violations: list[Violation] = []
    checked = 0
    for index, step in enumerate(gate.plan_steps(plan)):
        checked = index + 1
        try:
            ground = gate.ground(step, index, frozenset(current))
        except StepRejected as rejected:
            violations.append(_at(rejected.violation, index))
            if stop:
                break
            continue
        if ground.applicable(current):
            ground.apply_in_place(current)
        else:
            from sage_pddl.gate.gate import _step_text

            violations.extend(gate.explain(frozenset(current), ground, index, _step_text(step)))
            if stop:
                break
    final = frozenset(current)
    goal = None if gate.table.goal is None else gate.table.goal.holds(final)
    return Verdict(not violations, checked, final, goal, tuple(violations))
