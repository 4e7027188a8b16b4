"""The safe learner (SAM), conservative actions learned from too few successes, and the
plan-level precision measure (mutants of gold plans, gated; `sage_pddl.induce.plans`)."""
from __future__ import annotations

import random

from sage_pddl.induce.learner import learn
from sage_pddl.induce.plans import (
    PlanVerdict,
    edited_plans,
    gate_accepts,
    precision_summary,
    without_preconditions,
)
from sage_pddl.induce.review import reviewed_text
from sage_pddl.pddl import parse_domain, parse_problem

from .test_learner import fact, toy_transitions


def test_the_safe_learner_requires_every_literal_true_in_all_successes():
    safe = learn(toy_transitions(), safe=True)
    normal = learn(toy_transitions())
    pick_safe, pick = safe.actions[("pick", 1)], normal.actions[("pick", 1)]
    assert set(pick.preconditions) < set(pick_safe.preconditions)
    texts = {r.name: r for r in safe.report.actions}["Pick"].preconditions
    assert "(not (holding ?x))" in texts and "(pickupable ?x)" in texts
    # it accepts nothing unlike every success: a success's own state passes, one fact off fails
    state = {fact(f) for f in ("(pickupable apple)", "(pickupable cup)", "(receptacle table)",
                               "(receptacle box)", "(container box)", "(hand-empty)",
                               "(reachable pear)", "(pickupable pear)", "(on pear table)")}
    assert pick_safe.applicable(state, ["pear"]) and pick.applicable(state, ["pear"])
    state.add(fact("(holding pear)"))  # no success showed it: the safe learner refuses
    assert not pick_safe.applicable(state, ["pear"]) and pick.applicable(state, ["pear"])
    assert safe.report.settings["safe"] is True


def test_an_action_with_too_few_successes_is_conservative_and_says_so():
    result = learn(toy_transitions(), min_successes=3)  # Pick has 2 successes, Place 4
    reports = {r.name: r for r in result.report.actions}
    assert reports["Pick"].conservative and not reports["Place"].conservative
    safe_pick = learn(toy_transitions(), safe=True).actions[("pick", 1)]
    assert result.actions[("pick", 1)].preconditions == safe_pick.preconditions
    text = reviewed_text(result)
    assert "; conservative: 2 success(es) are too few" in text
    assert "CONSERVATIVE" in result.report.render()
    assert reports["Pick"].to_json()["conservative"] is True


DOMAIN = parse_domain("""(define (domain box)
  (:requirements :strips :typing :negative-preconditions)
  (:types agent thing)
  (:predicates (open ?t - thing) (holding ?a - agent ?t - thing))
  (:action open :parameters (?a - agent ?t - thing)
    :precondition (not (open ?t)) :effect (open ?t))
  (:action grab :parameters (?a - agent ?t - thing)
    :precondition (open ?t) :effect (holding ?a ?t)))""")
PROBLEM = parse_problem("""(define (problem p) (:domain box)
  (:objects me - agent b1 b2 - thing) (:init) (:goal (holding me b1)))""")


def test_mutants_drop_swap_and_change_an_argument_to_an_object_of_its_type():
    gold = ["open me b1", "grab me b1"]
    objects = {"me": "agent", "b1": "thing", "b2": "thing"}
    mutants = edited_plans(gold, objects, random.Random(0), per_kind=2)
    kinds = {kind: [steps for k, steps in mutants if k == kind] for kind in ("drop", "swap",
                                                                              "argument")}
    assert sorted(kinds["drop"]) == [("grab me b1",), ("open me b1",)]
    assert kinds["swap"] == [("grab me b1", "open me b1")]
    assert sorted(kinds["argument"]) == [("open me b1", "grab me b2"),
                                         ("open me b2", "grab me b1")]
    assert all(tuple(gold) != steps for _, steps in mutants)
    assert edited_plans(gold, objects, random.Random(0), per_kind=2) == mutants  # seeded


def test_precision_rewards_refusing_what_the_simulator_refuses():
    bare = without_preconditions(DOMAIN)
    gold = ("open me b1", "grab me b1")
    swapped = ("grab me b1", "open me b1")
    assert gate_accepts(DOMAIN, PROBLEM, gold) and gate_accepts(bare, PROBLEM, gold)
    assert not gate_accepts(DOMAIN, PROBLEM, swapped) and gate_accepts(bare, PROBLEM, swapped)
    rows = [PlanVerdict("p", kind, steps, executes,
                        {d.name: gate_accepts(d, PROBLEM, steps) for d in (DOMAIN, bare)})
            for kind, steps, executes in (("gold", gold, True), ("swap", swapped, False),
                                          ("drop", ("open me b1",), True))]
    summary = precision_summary(rows)
    assert summary["box"] == {"gold_executes": 1, "gold_accepted": 1.0,
                              "mutants_refused_by_simulator": 1, "of_those_refused": 1.0,
                              "balance": 1.0}
    assert summary["box-no-preconditions"]["of_those_refused"] == 0.0
    assert summary["box-no-preconditions"]["balance"] == 0.5
