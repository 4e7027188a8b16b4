"""The reference semantics of `Gate.check`, on frozenset states, for the fast-path tests.

`check_sets(gate, plan, state, mode)` walks the plan step by step with the set form of every
ground action (`GroundAction.applicable` / `apply_in_place`, `sage_pddl/gate/ground.py`): no bit
sets, no step cache. A step naming several instances acts on the first
candidate applicable in the current state (`Gate.ground(step, index, state)`). The gate's one
check loop must return exactly this verdict.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sage_pddl.gate import Gate, StepRejected, Verdict, Violation
from sage_pddl.gate.binding import text_of
from sage_pddl.pddl.errors import SageError


def check_sets(gate: Gate, plan: Any, state: Iterable[tuple] | None = None,
               mode: str = "first") -> Verdict:
    if mode not in ("first", "all"):
        raise SageError(f"mode must be first or all, not {mode!r}")
    stop = mode == "first"
    start = gate.initial_state if state is None else frozenset(
        tuple(str(p).lower() for p in atom) for atom in state)
    gate = gate.for_state(start)  # other static facts: ground actions without their pruning
    current = set(start)
    violations: list[Violation] = []
    checked = 0
    first_refusal = None  # mode "all": the verdict where mode "first" stops
    for index, step in enumerate(gate.plan_steps(plan)):
        checked = index + 1
        try:
            ground = gate.ground(step, index, frozenset(current))
        except StepRejected as rejected:
            violations.append(rejected.violation.at(index))
        else:
            if ground.applicable(current):
                ground.apply_in_place(current)
                continue
            violations.extend(gate.explain(frozenset(current), ground, index, text_of(step)))
        if stop:
            break
        if first_refusal is None:
            first_refusal = _verdict(gate, start, current, checked, violations, None)
    return _verdict(gate, start, current, checked, violations, first_refusal)


def _verdict(gate: Gate, start: frozenset, current: set, checked: int,
             violations: list[Violation], first_refusal: Verdict | None) -> Verdict:
    final = frozenset(current)
    ground = gate.table.goal.ground
    goal = None if ground is None else ground.holds(final)
    return Verdict(not violations, checked, start, start ^ final, goal, tuple(violations),
                   first_refusal)
