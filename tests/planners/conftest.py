"""Fixtures for planner tests: a small kitchen domain written for these tests, the scripted
LLM backend wrapped in a call counter (the independent ledger accounting is checked against)."""
from __future__ import annotations

import pytest

from sage_pddl.llm import CallCounter, get_backend
from sage_pddl.pddl import parse_domain, parse_problem
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import step_from_json
from sage_pddl.planners import PlanningTask

KITCHEN_DOMAIN = """
(define (domain kitchen)
  ; @sage fields object target
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types thing)
  (:predicates (pickupable ?x - thing) (openable ?x - thing) (toggleable ?x - thing)
               (receptacle ?x - thing) (reachable ?x - thing) (holding ?o - thing)
               (hand-empty) (inside ?o - thing ?c - thing) (opened ?x - thing)
               (closed ?x - thing) (turned-on ?x - thing))
  ; @sage alias MoveTo Navigate GoTo
  (:action MoveTo
    :parameters (?x - thing)
    :precondition (and)
    :effect (reachable ?x))
  ; @sage alias Pick Grab PickUp
  ; @sage reason Pick (hand-empty) hand-full "the hand already holds an object"
  (:action Pick
    :parameters (?o - thing)
    :precondition (and (pickupable ?o) (hand-empty) (reachable ?o))
    :effect (and (holding ?o) (not (hand-empty))
                 (forall (?c - thing) (not (inside ?o ?c)))))
  ; @sage step Place target|object
  (:action Place
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (not (closed ?r)) (reachable ?r))
    :effect (and (hand-empty)
                 (forall (?o - thing) (when (holding ?o) (and (inside ?o ?r) (not (holding ?o)))))))
  (:action Open
    :parameters (?x - thing)
    :precondition (and (openable ?x) (reachable ?x) (closed ?x))
    :effect (and (opened ?x) (not (closed ?x))))
  (:action Close
    :parameters (?x - thing)
    :precondition (and (openable ?x) (reachable ?x) (opened ?x))
    :effect (and (closed ?x) (not (opened ?x))))
  (:action TurnOn
    :parameters (?x - thing)
    :precondition (and (toggleable ?x) (reachable ?x) (not (turned-on ?x)))
    :effect (turned-on ?x))
  (:action TurnOff
    :parameters (?x - thing)
    :precondition (and (toggleable ?x) (reachable ?x) (turned-on ?x))
    :effect (not (turned-on ?x))))
"""

KITCHEN_PROBLEM = """
(define (problem apple-in-fridge)
  (:domain kitchen)
  (:objects Apple Mug Fridge CounterTop CoffeeMachine - thing)
  (:init (pickupable Apple) (pickupable Mug) (openable Fridge) (closed Fridge)
         (receptacle Fridge) (receptacle CounterTop) (toggleable CoffeeMachine)
         (hand-empty) (inside Apple CounterTop))
  (:goal (and (inside Apple Fridge) (closed Fridge))))
"""


def s(action: str, obj: str = "", target: str = "") -> dict:
    """A JSON step, as a model writes it in an answer."""
    return {"action": action, "object": obj, "target": target}


def ps(action: str, obj: str = "", target: str = "") -> PlanStep:
    """The same step as the program holds it (what `plan` returns and `repair` is given)."""
    return step_from_json(s(action, obj, target))


def steps(*items) -> dict:
    return {"steps": [s(*i) if isinstance(i, tuple) else i for i in items]}


GOOD_PLAN = [("MoveTo", "Apple"), ("Pick", "Apple"), ("MoveTo", "Fridge"), ("Open", "Fridge"),
             ("Place", "Fridge"), ("Close", "Fridge")]


@pytest.fixture(scope="session")
def domain():
    return parse_domain(KITCHEN_DOMAIN)


@pytest.fixture(scope="session")
def problem():
    return parse_problem(KITCHEN_PROBLEM)


@pytest.fixture
def task(domain, problem):
    return PlanningTask("Put the apple in the fridge and close it", domain, problem,
                        task_id="T01")


@pytest.fixture
def scripted():
    """scripted(script) -> (counting backend, raw scripted backend)."""
    def make(script, **options):
        raw = get_backend("scripted", script=script, **options)
        return CallCounter(raw), raw
    return make


def assert_accounting(result, counter, calls=None):
    """The result's totals equal the counter's ledger, exactly."""
    usage = counter.usage()
    assert result.calls == usage.calls
    assert result.prompt_tokens == usage.prompt_tokens
    assert result.output_tokens == usage.output_tokens
    assert len(result.call_log) == result.calls
    if calls is not None:
        assert result.calls == calls
    counter.reset()
