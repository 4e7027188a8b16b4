"""Typed induction (`--types-from DOMAIN`): the induced domain reads that domain's problems and
plans, and its gate stands in for the hand-written one."""
from __future__ import annotations

import pytest

from sage_pddl.gate import compile_gate
from sage_pddl.induce.evaluate import gate_agreement
from sage_pddl.induce.learner import learn
from sage_pddl.pddl import check_problem, parse_domain, parse_problem, write_domain

from .test_learner import toy_transitions

TYPED = """
(define (domain toy)
  (:requirements :strips :typing :negative-preconditions)
  (:types item receptacle - thing container - receptacle)
  (:predicates (pickupable ?o - item) (receptacle ?r - receptacle) (container ?c - container)
               (hand-empty) (reachable ?x - thing) (holding ?o - item)
               (on ?o - item ?r - receptacle) (in ?o - item ?c - container)
               (closed ?c - container))
  ; @sage fields object target
  ; @sage alias Pick Grab
  ; @sage reason Pick (hand-empty) hand-full "the hand already holds something"
  ; @sage reason Pick (reachable ?o) not-reachable "?o is out of reach"
  (:action Pick
    :parameters (?o - item)
    :precondition (and (pickupable ?o) (reachable ?o) (hand-empty))
    :effect (and (holding ?o) (not (hand-empty))))
  ; @sage alias Place Put
  ; @sage reason Place (not (closed ?r)) closed "?r is closed"
  (:action Place
    :parameters (?r - receptacle)
    :precondition (and (receptacle ?r) (not (hand-empty)) (not (closed ?r)))
    :effect (hand-empty))
  (:action Heat :parameters (?o - item) :precondition (holding ?o) :effect (and)))
"""
PROBLEM = """
(define (problem p) (:domain toy)
  (:objects apple cup - item table - receptacle box - container)
  (:init (pickupable apple) (pickupable cup) (receptacle table) (receptacle box)
         (container box) (hand-empty) (reachable cup))
  (:goal (holding apple)))
"""
TYPES = {"apple": "item", "cup": "item", "table": "receptacle", "box": "container"}


def test_parameters_take_the_most_specific_type_of_the_objects_seen():
    reference = parse_domain(TYPED)
    induced = learn(toy_transitions(), domain_name="toy-induced", types_from=reference,
                    object_types=TYPES).domain
    assert induced.action("Pick").parameters[0].types == ("item",)
    # table and box: the nearest type they share
    assert induced.action("Place").parameters[0].types == ("receptacle",)
    assert ":typing" in induced.requirements and induced.types == reference.types
    # an object of unknown type leaves its parameter untyped
    loose = learn(toy_transitions(), types_from=reference,
                  object_types={k: v for k, v in TYPES.items() if k != "box"}).domain
    assert loose.action("Place").parameters[0].types == ()


def test_the_typed_domain_reads_the_problems_and_keeps_the_vocabulary_that_still_holds():
    reference = parse_domain(TYPED)
    induced = learn(toy_transitions(), domain_name="toy-induced", types_from=reference,
                    object_types=TYPES).domain
    again = parse_domain(write_domain(induced))
    assert again == induced
    texts = [f"{a.kind} {a.text}" for a in again.annotations]
    assert "alias Pick Grab" in texts and "fields object target" in texts
    # a reason survives with the learned action's variable names, where the literal was learned
    assert 'reason Pick (hand-empty) hand-full "the hand already holds something"' in texts
    assert 'reason Pick (reachable ?x) not-reachable "?x is out of reach"' in texts
    assert not any("closed" in t for t in texts)  # Place learned no (not (closed ?r))
    assert not any("Heat" in t for t in texts)  # never logged, never induced
    problem = parse_problem(PROBLEM)
    assert not [d for d in check_problem(problem, again) if d.severity == "error"]
    gate = compile_gate(again, problem)
    blocked = gate.check([{"action": "Grab", "object": "apple"}])
    assert not blocked.valid and blocked.violations[0].code == "not-reachable"
    assert gate.check([{"action": "Grab", "object": "cup"}, {"action": "Put", "object": "box"}]).valid


@pytest.fixture(scope="module")
def ithor_run(tmp_path_factory):
    """`collect --env symbolic` on two iTHOR tasks and `induce --types-from ithor` (the CLI)."""
    from sage_pddl import cli

    root = tmp_path_factory.mktemp("typed")
    tasks = ["L11", "L06"]  # the two smallest iTHOR problems: what is shown needs no kitchen
    assert cli.main(["collect", "--domain", "ithor", "--tasks", "ithor", "--env", "symbolic",
                     "--out", str(root / "logs"), "--no-progress", "--json",
                     *[w for t in tasks for w in ("--task", t)]]) == 0
    # two tasks make some of ithor's actions succeed, not all: induce says so and exits 1
    typed = ["induce", str(root / "logs"), "--types-from", "ithor", "-q",
             "--domain-name", "ithor-induced", "--out", str(root / "typed.pddl")]
    assert cli.main(typed) == 1
    assert cli.main([*typed, "--allow-missing"]) == 0
    assert cli.main(["induce", str(root / "logs"), "-q", "--allow-missing",
                     "--out", str(root / "untyped.pddl")]) == 0
    return root, tasks


def test_check_accepts_the_typed_induced_domain_with_a_bundled_problem(ithor_run, capsys):
    from sage_pddl import cli

    root, tasks = ithor_run
    capsys.readouterr()
    assert cli.main(["check", str(root / "untyped.pddl"), f"ithor#{tasks[0]}"]) != 0
    assert "type" in capsys.readouterr().out.lower()
    assert cli.main(["check", str(root / "typed.pddl"), f"ithor#{tasks[0]}"]) == 0


def test_the_induced_gate_accepts_the_reference_plans_the_hand_written_one_accepts(ithor_run):
    from sage_pddl.domains import load_domain
    from sage_pddl.pddl import load_domain as load_domain_file
    from sage_pddl.tasks import load_task

    root, tasks = ithor_run
    agreement = gate_agreement(load_domain_file(root / "typed.pddl"), load_domain("ithor"),
                               [load_task(f"ithor#{t}") for t in tasks])
    assert agreement.problems_read == agreement.tasks == len(tasks)
    assert agreement.reference_accepts == agreement.plans > 0
    assert agreement.induced_accepts == agreement.both_accept == agreement.reference_accepts
    assert not agreement.disagreements


def test_types_from_a_domain_that_reads_no_logged_task_is_an_error(tmp_path):
    import json

    from sage_pddl.induce import induce
    from sage_pddl.pddl.errors import SageError

    log = tmp_path / "toy.jsonl"
    log.write_text("".join(json.dumps(t.to_json()) + "\n" for t in toy_transitions()))
    with pytest.raises(SageError, match="no logged task's problem could be read"):
        induce(log, types_from=parse_domain(TYPED))
