"""The induced iTHOR domain keeps what is in a closed container enclosed: a plan that puts the
apple in cabinet 1, closes it, opens cabinet 2 and picks the apple is refused, as the
hand-written domain refuses it: Find, Pick and Open require `(not (exists (?o) (and (not (= ?o
?x)) (shut-in ?x ?o))))`, and Close shuts in what is inside ?x, directly or inside something
inside ?x (a universal effect of two clauses, one through a further object ?m). The domain is
induced from the collection whose figures docs/induction.md shows (`ithor_symbolic_logs`)."""
from __future__ import annotations

import dataclasses

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.induce import induce
from sage_pddl.tasks import load_task, task_problem

PLAN = [{"action": "Find", "object": "Apple"}, {"action": "Pick", "object": "Apple"},
        {"action": "Find", "object": "Cabinet_1"}, {"action": "Open", "object": "Cabinet_1"},
        {"action": "PutIn", "object": "Cabinet_1"}, {"action": "Close", "object": "Cabinet_1"},
        {"action": "Find", "object": "Cabinet_2"}, {"action": "Open", "object": "Cabinet_2"},
        {"action": "Pick", "object": "Apple"}]


@pytest.mark.slow
def test_the_enclosed_apple_plan_is_refused_by_the_induced_ithor_domain(ithor_symbolic_logs):
    ithor = load_domain("ithor")
    # probed through the environment interface (the symbolic world), as `collect --env symbolic`
    induced = induce([ithor_symbolic_logs], types_from=ithor, domain_name="ithor-induced").domain
    problem = task_problem(load_task("ithor#K01"), ithor)
    mine = dataclasses.replace(problem, domain_name=induced.name)
    for domain, world in ((ithor, problem), (induced, mine)):
        gate = compile_gate(domain, world)
        assert gate.check(PLAN[:-1]).valid  # everything up to the last pick is fine
        verdict = gate.check(PLAN)
        assert not verdict.valid and verdict.violations[0].step == len(PLAN) - 1
