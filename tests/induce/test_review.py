"""The induced domain as a person reviews it: a comment per action with its support, identical
actions named, typed quantified variables, and `induce --explain`."""
from __future__ import annotations

import dataclasses
import json

from sage_pddl.induce.learner import learn
from sage_pddl.induce.review import explain, identical_actions, reviewed_text
from sage_pddl.pddl import parse_domain, write_domain
from sage_pddl.pddl.model import ForallEffect

from .test_learner import _run_cli, toy_transitions

TYPED = """
(define (domain toy-typed)
  (:requirements :strips :typing)
  (:types thing)
  (:predicates (holding ?x - thing) (hand-empty) (on ?x ?y - thing) (in ?x ?y - thing)
               (reachable ?x - thing) (pickupable ?x - thing) (receptacle ?x - thing)
               (container ?x - thing))
  (:action Pick :parameters (?o - thing) :precondition (and) :effect (and))
  (:action Place :parameters (?r - thing) :precondition (and) :effect (and)))
"""


def with_serve():
    """The toy logs, with every Place step also logged as a Serve step."""
    ts = toy_transitions()
    return ts + [dataclasses.replace(t, action=dataclasses.replace(t.action, action="Serve"))
                 for t in ts if t.action.action == "Place"]


def test_each_action_has_a_comment_with_its_support_and_the_text_parses_the_same():
    result = learn(with_serve())
    text = reviewed_text(result)
    assert "; Pick: learned from 2 successes, 5 failures (5 explained by the preconditions)" in text
    assert parse_domain(text) == parse_domain(write_domain(result.domain))


def test_identical_actions_are_said_identical():
    result = learn(with_serve())
    assert identical_actions(result) == {"place": ("Serve",), "serve": ("Place",)}
    assert "; identical to Serve: the logs do not tell them apart" in reviewed_text(result)


def test_quantified_variables_are_typed_too():
    types_from = parse_domain(TYPED)
    objects = {o: "thing" for o in ("apple", "cup", "table", "box")}
    domain = learn(toy_transitions(), types_from=types_from, object_types=objects).domain
    foralls = [part for a in domain.actions for part in a.effect.parts
               if isinstance(part, ForallEffect)]
    assert foralls and all(v.types == ("thing",) for f in foralls for v in f.variables)


def test_explain_gives_the_evidence_of_each_literal(tmp_path, capsys):
    result = learn(toy_transitions())
    text = explain(result, "pick")
    assert "(reachable ?x): held in 2 of 2 successes where observed; false in 2" in text
    assert "(holding ?x): 2" in text
    log = tmp_path / "t.jsonl"
    log.write_text("".join(json.dumps(t.to_json()) + "\n" for t in toy_transitions()))
    code, out = _run_cli(["induce", str(log), "--explain", "Place"], capsys)
    assert code == 0 and out.out.startswith("Place/1: 4 successes, 3 failures")
    code, out = _run_cli(["induce", str(log), "--explain", "Fly"], capsys)
    assert code == 2 and "--explain Fly: no such action" in out.err
