"""The reference semantics of the gate, on frozenset states: the set interpreter.

The program executes a step in one place only, the engine (`sage_pddl/gate/engine.py`, on bit
sets). This module states the same meaning a second, plain way, for the tests to hold the
engine to (`test_gate_fast_path.py`, on the whole corpus, the iTHOR plans and their mutants):

* a ground condition holds when `pos <= state`, `state.isdisjoint(neg)`, no equality of it was
  false (`unsat`) and each disjunction (one alternative holds) and implication (its condition
  fails or its consequent holds) holds (`holds`);
* a step applies when its precondition holds, and gives `(state - delete) | add`, the
  conditional effects whose condition holds in the state before it included (`effects`,
  `apply`);
* a refused step fails in the literals and disjunctions `failures` lists, in source order,
  each literal once (false equalities first; an implication whose condition holds reports its
  consequent's failed literals);
* `check_sets(gate, plan, state, mode)` walks a plan with these (no bit sets, no step cache):
  a step naming several instances acts on the first candidate applicable in the current state.
  The gate's one check loop must return exactly this verdict.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sage_pddl.gate import Gate, GroundAction, StepRejected, Verdict, Violation
from sage_pddl.gate.binding import text_of
from sage_pddl.gate.explain import violations
from sage_pddl.gate.ground import AnyOf, Cond, GroundLiteral, Implies
from sage_pddl.pddl.errors import SageError

State = frozenset | set


def holds(cond: Cond, state: State) -> bool:
    if cond.unsat or not cond.pos <= state or not state.isdisjoint(cond.neg):
        return False
    return all(sub_holds(sub, state) for sub in cond.subs)


def sub_holds(sub: AnyOf | Implies, state: State) -> bool:
    if isinstance(sub, Implies):
        return not holds(sub.condition, state) or holds(sub.then, state)
    return any(holds(part, state) for part in sub.parts)


def applicable(ground: GroundAction, state: State) -> bool:
    return holds(ground.precondition, state)


def effects(ground: GroundAction, state: State) -> tuple[frozenset, frozenset]:
    """`(add, delete)`: what `ground` adds and deletes in `state`, the conditional effects
    whose condition holds there included."""
    add, delete = set(ground.add), set(ground.delete)
    for effect in ground.conditional:
        if holds(effect.condition, state):
            add |= effect.add
            delete |= effect.delete
    return frozenset(add), frozenset(delete)


def apply(ground: GroundAction, state: State) -> frozenset:
    """The state after `ground`'s effects in `state` (its precondition not checked)."""
    add, delete = effects(ground, state)
    return frozenset((set(state) - delete) | add)


def failures(cond: Cond, state: State) -> list[GroundLiteral | AnyOf]:
    """The failed literals and disjunctions of `cond` in `state`, in source order, each once."""
    out: list[GroundLiteral | AnyOf] = list(cond.unsat)
    seen = {(lit.positive, lit.atom) for lit in cond.unsat}
    for lit in cond.literals:
        if (lit.atom in state) != lit.positive and (lit.positive, lit.atom) not in seen:
            seen.add((lit.positive, lit.atom))
            out.append(lit)
    for sub in cond.subs:
        if sub_holds(sub, state):
            continue
        if isinstance(sub, Implies):
            for failure in failures(sub.then, state):
                if isinstance(failure, GroundLiteral):
                    if (failure.positive, failure.atom) in seen:
                        continue
                    seen.add((failure.positive, failure.atom))
                out.append(failure)
        else:
            out.append(sub)
    return out


def ground_in(gate: Gate, step: Any, index: int, state: State) -> GroundAction:
    """The ground action `step` acts on in `state`: its first candidate applicable there."""
    try:
        bound = gate.binder.bind(step, index)
    except StepRejected as rejected:
        raise StepRejected(rejected.violation.at(index)) from None
    candidates = [gate.table.ground(bound.action, objects) for objects in bound.candidates]
    return next((g for g in candidates if applicable(g, state)), candidates[0])


def check_sets(gate: Gate, plan: Any, state: Iterable[tuple] | None = None,
               mode: str = "first") -> Verdict:
    if mode not in ("first", "all"):
        raise SageError(f"mode must be first or all, not {mode!r}")
    stop = mode == "first"
    start = gate.initial_state if state is None else frozenset(
        tuple(str(p).lower() for p in atom) for atom in state)
    gate = gate.for_state(start)  # other static facts: ground actions without their pruning
    current = start
    found: list[Violation] = []
    checked = 0
    first_refusal = None  # mode "all": the verdict where mode "first" stops
    for index, step in enumerate(gate.plan_steps(plan)):
        checked = index + 1
        try:
            ground = ground_in(gate, step, index, current)
        except StepRejected as rejected:
            found.append(rejected.violation.at(index))
        else:
            if applicable(ground, current):
                current = apply(ground, current)
                continue
            found.extend(violations(gate.table, failures(ground.precondition, current), ground,
                                    index, text_of(step)))
        if stop:
            break
        if first_refusal is None:
            first_refusal = _verdict(gate, start, current, checked, found, None)
    return _verdict(gate, start, current, checked, found, first_refusal)


def _verdict(gate: Gate, start: frozenset, current: frozenset, checked: int,
             found: list[Violation], first_refusal: Verdict | None) -> Verdict:
    ground = gate.table.goal.ground
    goal = None if ground is None else holds(ground, current)
    return Verdict(not found, checked, start, start ^ current, goal, tuple(found),
                   first_refusal)
