"""The causal graph (networkx): achievers, relevance, and the gate's unreachable-goal diagnosis."""
from __future__ import annotations

import dataclasses
import gc
import json
import weakref

from sage_pddl.cli import main
from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.gate.causal import CausalGraph, unreachable_goals
from sage_pddl.pddl import parse_domain, parse_problem

DOMAIN = """(define (domain glue)
  (:requirements :strips :negative-preconditions)
  (:predicates (ontable ?x) (clear ?x) (handempty) (holding ?x) (on ?x ?y) (glued ?x)
               (painted ?x) (dry ?x))
  (:action pick-up :parameters (?x)
    :precondition (and (clear ?x) (ontable ?x) (handempty) (not (glued ?x)))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action paint :parameters (?x)
    :precondition (and (holding ?x) (dry ?x))
    :effect (painted ?x))
  (:action stack :parameters (?x ?y)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y))))
"""
PROBLEM = """(define (problem p) (:domain glue) (:objects a b)
  (:init (ontable a) (ontable b) (clear a) (clear b) (handempty) (glued b))
  (:goal (and (on a b) (not (glued b)) (painted a))))
"""


def test_achievers_and_relevance_follow_preconditions_backwards():
    causal = CausalGraph.of(parse_domain(DOMAIN))
    assert causal.achievers("on") == ["stack"]
    assert causal.achievers("glued", False) == []
    assert causal.relevant_actions([("on", True)]) == {"stack", "pick-up"}
    # pick-up needs (clear ?x) and (handempty), which stack provides: relevant too
    assert causal.relevant_actions([("painted", True)]) == {"paint", "pick-up", "stack"}
    assert causal.relevant_actions([("dry", True)]) == set()  # nothing makes things dry


def test_the_relaxed_fixpoint_reaches_what_actions_enabled_from_the_state_set():
    causal = CausalGraph.of(parse_domain(DOMAIN))
    # from a state with (ontable ?) (clear ?) (handempty) atoms: pick-up, then stack
    start = {"ontable", "clear", "handempty"}
    assert causal.settable(start) == {("ontable", False), ("clear", False), ("clear", True),
                                      ("handempty", False), ("handempty", True),
                                      ("holding", True), ("holding", False), ("on", True)}
    reachable = causal.reachable(start)
    assert {("on", True), ("holding", True), ("glued", False)} <= reachable
    assert ("painted", True) not in reachable and ("dry", True) not in reachable
    # with nothing true, no action is enabled: only the predicates' false atoms
    assert causal.settable(set()) == set()
    assert causal.reachable(set()) == {(p, False) for p in ("ontable", "clear", "handempty",
                                       "holding", "on", "glued", "painted", "dry")}


def test_the_graph_is_kept_per_domain_object_and_does_not_keep_it_alive():
    # a domain object of its own (the parser keeps the one it made of DOMAIN's text)
    domain = dataclasses.replace(parse_domain(DOMAIN))
    assert CausalGraph.of(domain) is CausalGraph.of(domain)
    assert CausalGraph.of(parse_domain(DOMAIN)) is not CausalGraph.of(domain)
    alive = weakref.ref(domain)
    del domain
    gc.collect()
    assert alive() is None


def test_unreachable_goals_name_the_literal_and_why():
    domain, problem = parse_domain(DOMAIN), parse_problem(PROBLEM)
    gate = compile_gate(domain, problem)
    found = unreachable_goals(gate.table, gate.check([]).final_state)
    assert found[0] == "(not (glued b)): no action removes glued"
    assert any(line.startswith("(painted a): the actions that could (paint)") for line in found)
    assert not any("(on a b)" in line for line in found)  # reachable: pick-up, stack


def test_gate_prints_and_reports_unreachable_goals(tmp_path, capsys):
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(PROBLEM)
    (tmp_path / "plan").write_text("(pick-up a)\n")
    code = main(["gate", str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl"),
                 str(tmp_path / "plan"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and "(not (glued b)): no action removes glued" in report["unreachable_goals"]


def test_the_bundled_domains_have_no_unreachable_literal_in_their_reference_goals():
    from sage_pddl.tasks import load_task, task_problem

    domain = load_domain("ithor")
    problem = task_problem(load_task("ithor#K01"), domain)
    gate = compile_gate(domain, problem)
    assert unreachable_goals(gate.table, gate.check([]).final_state) == []
    assert len(CausalGraph.of(domain).graph) > len(domain.actions)
