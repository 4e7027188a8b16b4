"""What the iTHOR tasks collected in the symbolic world show (`ithor_symbolic_logs`, the collection
docs/induction.md's iTHOR figures come from). Slow: the collection is most of their time; they are
in one module so that xdist's `--dist loadfile` runs them on one worker, on one collection.

* docs/induction.md holds the iTHOR figures `tools/induction_figures.py` computes (the
  collection's counts, the typed domain's check, the rule-deletion study).
* The induced domain keeps what is in a closed container enclosed: a plan that puts the apple in
  cabinet 1, closes it, opens cabinet 2 and picks the apple is refused, as the hand-written
  domain refuses it: Find, Pick and Open require `(not (exists (?o) (and (not (= ?o ?x))
  (shut-in ?x ?o))))`, and Close shuts in what is inside ?x, directly or inside something inside
  ?x (a universal effect of two clauses, one through a further object ?m).
"""
from __future__ import annotations

import dataclasses

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.induce import induce
from sage_pddl.tasks import load_task, task_problem

from .figures_tool import load as figures_tool

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


@pytest.mark.slow
def test_docs_induction_md_holds_the_ithor_figures(ithor_symbolic_logs):
    assert figures_tool().main(["--check", "--only", "ithor", "--only", "rule-deletion",
                                "--only", "ithor-typed", "--ithor-logs",
                                str(ithor_symbolic_logs)]) == 0, (
        "regenerate with `python tools/induction_figures.py --write`")
