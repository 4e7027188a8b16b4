"""Comparing induced preconditions with a reference domain whose preconditions have
disjunctions (as EAI's virtualhome.pddl writes `holds_lh or holds_rh`)."""
from __future__ import annotations

from sage_pddl.induce.evaluate import compare_preconditions, precondition_alternatives
from sage_pddl.pddl import parse_domain

REFERENCE = """
(define (domain ref)
  (:requirements :strips :negative-preconditions :disjunctive-preconditions
                 :existential-preconditions)
  (:predicates (next_to ?a ?b) (holds_lh ?a ?b) (holds_rh ?a ?b) (closed ?a)
               (inside ?a ?b) (sitting ?a) (lying ?a) (grabbable ?a))
  (:action put :parameters (?c ?o ?r)
    :precondition (and (next_to ?c ?r) (or (holds_lh ?c ?o) (holds_rh ?c ?o))
                       (not (exists (?b) (and (inside ?o ?b) (closed ?b)))))
    :effect (and))
  (:action standup :parameters (?c)
    :precondition (or (sitting ?c) (lying ?c)) :effect (and))
  (:action never :parameters (?c) :precondition (and (sitting ?c) (lying ?c)) :effect (and)))
"""


def induced(put: str, standup: str) -> str:
    return f"""
(define (domain induced)
  (:requirements :strips :negative-preconditions)
  (:predicates (next_to ?a ?b) (holds_lh ?a ?b) (holds_rh ?a ?b) (sitting ?a) (lying ?a)
               (grabbable ?a))
  (:action put :parameters (?x ?y ?z) :precondition (and {put}) :effect (and))
  (:action standup :parameters (?x) :precondition (and {standup}) :effect (and)))
"""


def test_a_disjunction_multiplies_into_conjunctions_and_the_rest_is_not_comparable():
    action = parse_domain(REFERENCE).action("put")
    alternatives, other = precondition_alternatives(action.precondition, ["c", "o", "r"])
    assert sorted(map(sorted, alternatives)) == [
        [(True, "holds_lh", (0, 1)), (True, "next_to", (0, 2))],
        [(True, "holds_rh", (0, 1)), (True, "next_to", (0, 2))]]
    assert len(other) == 1 and "exists" in other[0]


def test_the_induced_conjunction_is_compared_with_the_alternative_it_matches():
    reference = parse_domain(REFERENCE)
    matches = {m.action: m for m in compare_preconditions(
        parse_domain(induced("(next_to ?x ?z) (holds_rh ?x ?y)", "(lying ?x)")), reference)}
    put = matches["put"]
    assert put.recovered == ("(holds_rh ?1 ?2)", "(next_to ?1 ?3)")
    assert not put.missing and not put.extra and put.alternatives == 2
    assert len(put.not_comparable) == 1
    assert matches["standup"].recovered == ("(lying ?1)",) and not matches["standup"].extra
    assert not matches["never"].induced and len(matches["never"].missing) == 2
    # a literal in no alternative is extra; a missing one is reported against the best match
    matches = {m.action: m for m in compare_preconditions(
        parse_domain(induced("(holds_lh ?x ?y) (grabbable ?y)", "(sitting ?x) (lying ?x)")),
        reference)}
    assert matches["put"].recovered == ("(holds_lh ?1 ?2)",)
    assert matches["put"].missing == ("(next_to ?1 ?3)",)
    assert matches["put"].extra == ("(grabbable ?2)",)
    assert matches["standup"].extra in (("(lying ?1)",), ("(sitting ?1)",))


def test_a_literal_required_only_with_an_alternative_is_missing_and_said_so():
    # induce writes EAI's loose "close to" as (or L (exists (?o) ...)): not the reference's
    # literal, which stays missing, but the comparison says which missing ones it widens
    either = ("(or (next_to ?x ?z) (exists (?o) (and (not (= ?o ?x)) (not (= ?o ?z)) "
              "(next_to ?x ?o) (next_to ?o ?z))))")
    matches = {m.action: m for m in compare_preconditions(
        parse_domain(induced(f"(holds_rh ?x ?y) {either}", "(lying ?x)")),
        parse_domain(REFERENCE))}
    put = matches["put"]
    assert put.recovered == ("(holds_rh ?1 ?2)",) and put.missing == ("(next_to ?1 ?3)",)
    assert put.widened == ("(next_to ?1 ?3)",) and not put.extra
    assert not matches["standup"].widened
