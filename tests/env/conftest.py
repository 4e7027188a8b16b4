"""Fixtures for the environment tests: a small hand-written kitchen domain and problem.

The domain is written here (not one of the bundled household domains) so these tests depend
only on the parser and the gate. It has what the symbolic environment's partial view needs:
containment `(in ?o ?c)`, `(openable ?c)`, `(opened ?c)` and `(holding ?o)`.

Tests marked `alfworld` play ALFWorld's TextWorld games for real: they skip, with the reason,
where ALFWorld's environment is not set up (`sage-pddl env-setup alfworld`), and fail instead
when `SAGE_PDDL_REQUIRE_ALFWORLD=1` (CI's ALFWorld stage, which has just set it up).
"""
from __future__ import annotations

import os

import pytest

from sage_pddl.env.base import EnvError
from sage_pddl.env.textworld import require_textworld
from sage_pddl.pddl import parse_domain, parse_problem


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("alfworld") is None:
        return
    try:
        require_textworld()
    except EnvError as error:
        if os.environ.get("SAGE_PDDL_REQUIRE_ALFWORLD") == "1":
            pytest.fail(f"SAGE_PDDL_REQUIRE_ALFWORLD=1, but {error}")
        pytest.skip(str(error))

KITCHEN_DOMAIN = """
(define (domain mini-kitchen)
  (:requirements :strips :typing :negative-preconditions)
  (:types place item - object
          container - place)
  (:predicates (at ?p - place) (on ?i - item ?p - place) (in ?i - item ?c - container)
               (openable ?c - container) (opened ?c - container)
               (holding ?i - item) (hand-empty) (switched-on ?p - place))
  ; @sage reason pick (hand-empty) hand-full "the hand already holds an object"
  (:action moveto :parameters (?p - place)
    :effect (and (at ?p) (forall (?q - place) (when (and (at ?q) (not (= ?q ?p))) (not (at ?q))))))
  (:action open :parameters (?c - container)
    :precondition (and (at ?c) (openable ?c) (not (opened ?c)))
    :effect (opened ?c))
  (:action close :parameters (?c - container)
    :precondition (and (at ?c) (opened ?c))
    :effect (not (opened ?c)))
  (:action pick :parameters (?i - item ?p - place)
    :precondition (and (hand-empty) (at ?p) (or (on ?i ?p) (and (in ?i ?p) (opened ?p))))
    :effect (and (holding ?i) (not (hand-empty)) (not (on ?i ?p)) (not (in ?i ?p))))
  (:action place :parameters (?i - item ?p - place)
    :precondition (and (holding ?i) (at ?p))
    :effect (and (on ?i ?p) (hand-empty) (not (holding ?i))))
  (:action putin :parameters (?i - item ?c - container)
    :precondition (and (holding ?i) (at ?c) (opened ?c))
    :effect (and (in ?i ?c) (hand-empty) (not (holding ?i))))
  (:action turnon :parameters (?p - place)
    :precondition (and (at ?p) (not (switched-on ?p)))
    :effect (switched-on ?p)))
"""

# The planner's problem: it does not know the apple is in the fridge.
KITCHEN_PROBLEM = """
(define (problem fetch-apple)
  (:domain mini-kitchen)
  (:objects Counter Table Stove - place Fridge - container Apple Mug - item)
  (:init (at Counter) (hand-empty) (openable Fridge) (on Mug Counter))
  (:goal (and (on Apple Table) (not (opened Fridge)))))
"""

HIDDEN = ["(in apple fridge)"]

SOLUTION = ["moveto Fridge", "open Fridge", "pick Apple Fridge", "close Fridge", "moveto Table",
            "place Apple Table"]


@pytest.fixture(scope="session")
def kitchen_domain():
    return parse_domain(KITCHEN_DOMAIN, file="mini-kitchen.pddl")


@pytest.fixture(scope="session")
def kitchen_problem():
    return parse_problem(KITCHEN_PROBLEM, file="fetch-apple.pddl")
