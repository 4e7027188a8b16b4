"""A plain action's step compiled straight from its template (`engine.compile_plain`).

* On every corpus plan, each step of a plain action (`lifted.PlainTemplate`: literals of
  atoms, an unconditional effect), compiled from its action's template, is the step
  `engine.compile_step` makes of its ground action: the same successor, effects, state after
  its effects and precondition test in every state the plan passes through, and the same
  failed literals where it is refused.
* A plain step is ground only when it is explained (or read as sets): a valid plan of plain
  steps grounds nothing; a refusal by a static literal (a literal whose atom has no bit) is
  explained as the set form says, from the pruned gate and from a state with other static
  facts (the unpruned gate, where every atom has a bit).
"""
from __future__ import annotations

import threading
from pathlib import Path

from sage_pddl.gate import StepRejected, compile_gate
from sage_pddl.gate.engine import compile_step
from sage_pddl.pddl.model import And

from . import reference as ref
from .helpers import action, atom, domain, neg, problem
from .reference import check_sets
from .test_gate_fast_path import _corpus_cases


def test_a_plain_step_from_its_template_is_the_step_from_its_ground_action(corpus_dir: Path):
    compared = refused = 0
    for corpus_domain, corpus_problem, plan in _corpus_cases(corpus_dir):
        gate = compile_gate(corpus_domain, corpus_problem)
        schema = gate.table.schema
        state = gate.initial_state
        for index, step in enumerate(gate.plan_steps(plan)):
            try:
                ground = ref.ground_in(gate, step, index, state)
            except StepRejected:  # a structural refusal: no ground action to compare
                break
            if schema.template(ground.name).plain is None:
                state = ref.apply(ground, state) if ref.applicable(ground, state) else state
                continue
            plain = gate.compiled(ground)
            general = compile_step(gate.bits, ground, threading.RLock())
            s = gate.bits.mask(state)
            assert plain.successor(s) == general.successor(s), (index, step)
            assert plain.effects(s) == general.effects(s), (index, step)
            assert plain.apply(s) == general.apply(s), (index, step)
            assert plain.holds(s) == general.holds(s), (index, step)
            compared += 1
            if general.successor(s) is None:
                assert plain.precondition.failures(s) == general.precondition.failures(s)
                refused += 1
                break
            state = ref.apply(ground, state)
    assert compared > 2000 and refused > 20, (compared, refused)


def _static_domain():
    """`go` needs a static `road` between two places and a fluent `at`: a plain action."""
    go = action("go", "?a ?b - place",
                pre=[atom("at", "?a"), atom("road", "?a", "?b"), neg("closed", "?b")],
                eff=[atom("at", "?b"), neg("at", "?a")])
    shut = action("shut", "?p - place", pre=[neg("closed", "?p")], eff=[atom("closed", "?p")])
    return domain([go, shut], types=(("place", ""),), predicates=("at", "road", "closed"))


def test_a_plain_step_is_ground_only_to_be_explained():
    home = problem("a - place b - place c - place", init=[atom("at", "a"), atom("road", "a", "b"),
                                          atom("road", "b", "c")], goal=And((atom("at", "c"),)))
    gate = compile_gate(_static_domain(), home)
    assert gate.table.schema.template("go").plain is not None
    valid = gate.check(["go a b", "go b c"])
    assert valid.valid and valid.goal_reached
    assert gate.table.grounded_count == 0  # compiled from the template, never ground
    for plan in (["go a c"], ["go a b", "go b a"], ["shut b", "go a b"]):
        for mode in ("first", "all"):
            verdict = gate.check(plan, mode=mode)
            assert verdict == check_sets(gate, plan, mode=mode), plan
            assert not verdict.valid
    codes = [v.code for v in gate.check(["go a c"]).violations]
    assert codes == ["go/requires/road"]  # a static literal, decided by the facts
    assert gate.table.grounded_count >= 1  # ground to explain the refusal
    # from a state whose static facts differ: the unpruned gate, every atom a bit
    other = [("at", "a"), ("road", "a", "c")]
    for plan in (["go a c"], ["go a b"], ["go a c", "shut a", "go c a"]):
        for mode in ("first", "all"):
            verdict = gate.check(plan, state=other, mode=mode)
            assert verdict == check_sets(gate, plan, other, mode), plan
    assert gate.for_state(frozenset(other)) is not gate
    assert gate.check(["go a c"], state=other).valid
    assert [v.code for v in gate.check(["go a b"], state=other).violations] == [
        "go/requires/road"]
