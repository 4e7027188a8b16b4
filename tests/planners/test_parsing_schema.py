"""Reading LLM output and the domain-generated JSON schema."""
from __future__ import annotations

import jsonschema
import pytest

from sage_pddl.pddl.plans import written_json
from sage_pddl.pddl.vocabulary import step_text, vocabulary
from sage_pddl.planners.parsing import Canonicalizer, parse_steps, parse_subgoals
from sage_pddl.planners.prompts import describe_domain
from sage_pddl.planners.schema import steps_schema, subgoals_schema
from tests.steps import as_step


@pytest.mark.parametrize("text", [
    '{"steps": [{"action": "Pick", "object": "Apple"}]}',
    'Sure! ```json\n{"plan": [{"action": "Pick", "object": "Apple"}]}\n``` done',
    'Here [not json] and then [{"action": "Pick", "object": "Apple"}]',
    "1. Pick Apple",
    '{"steps": ["Pick Apple"]}',
    '{"steps": [{"action": "Pick", "args": ["Apple"]}]}',
])
def test_parse_steps_variants(text):
    assert [step_text(x) for x in parse_steps(text)] == ["Pick Apple"]


def test_parse_steps_gives_nothing_for_prose():
    assert parse_steps("I cannot help with that.") == []


def test_parse_subgoals_variants():
    assert parse_subgoals('{"subgoals": ["a", " b  c "]}') == ["a", "b c"]
    assert parse_subgoals("1. first\n2. second") == ["first", "second"]
    assert parse_subgoals('[{"subgoal": "x"}]') == ["x"]


def test_canonicalizer_uses_aliases_and_object_spelling(domain, problem):
    canon = Canonicalizer(domain, problem)
    step = canon.step(as_step({"action": "navigate", "object": "counter_top"}))
    assert written_json(step) == {"action": "MoveTo", "object": "CounterTop", "target": ""}
    assert canon.step(as_step({"action": "grab", "object": "Banana"})).field("object") == "Banana"
    assert canon.step(as_step({"action": "teleport", "object": "apple"})).action == "teleport"


def test_step_from_args_follows_step_annotation(domain):
    assert vocabulary(domain).step_from_args("place", ["Fridge"]) == {"action": "Place", "object": "",
                                                          "target": "Fridge"}


def test_schema_enums_reject_unknown_names(domain, problem):
    schema = steps_schema(domain, problem)
    good = {"steps": [{"action": "Pick", "object": "Apple", "target": ""}]}
    jsonschema.validate(good, schema)
    for bad in ({"steps": [{"action": "Teleport", "object": "Apple"}]},
                {"steps": [{"action": "Pick", "object": "Banana"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"subgoals": ["a"] * 6}, subgoals_schema())


def test_domain_description_comes_from_the_pddl(domain):
    text = describe_domain(domain)
    assert "Pick" in text and "requires: pickupable ?o and hand empty and reachable ?o" in text
    assert '"target": "<?r: thing>"' in text  # Place's parameter comes from `target`
    assert "also called: Navigate, GoTo" in text


def test_plan_task_end_to_end_on_a_bundled_task(scripted):
    from sage_pddl.planners import plan_task

    llm, raw = scripted({"direct": [{"steps": [
        {"action": "MoveTo", "object": "Mug"}, {"action": "Pick", "object": "Mug"},
        {"action": "MoveTo", "object": "CoffeeMachine"},
        {"action": "TurnOn", "object": "CoffeeMachine"}]}]})
    result = plan_task("ithor#K01", planner="Direct", llm=llm)
    assert result.calls == 1 and len(result.steps) == 4
    assert "CoffeeMachine" in raw.calls[0].prompt


def test_schema_follows_each_actions_form_in_a_mixed_domain():
    """A `fields` domain with an action too long for the fields: that action is written with
    `args` in the prompt, so the schema must take `args` for it and fields for the others."""
    from sage_pddl.pddl import parse_domain, parse_problem
    from sage_pddl.planners.prompts import describe_domain

    domain = parse_domain("""(define (domain mixed)
      ; @sage fields object target
      (:types thing)
      (:predicates (held ?x - thing) (at ?x ?y ?z - thing))
      (:action take :parameters (?x - thing) :precondition (and) :effect (held ?x))
      (:action set3 :parameters (?x ?y ?z - thing) :precondition (and) :effect (at ?x ?y ?z)))""")
    problem = parse_problem("(define (problem p) (:domain mixed) (:objects a b c - thing) "
                            "(:init) (:goal (held a)))")
    text = describe_domain(domain)
    assert '"object": "<?x: thing>"' in text and '"args": ["<?x: thing>"' in text
    schema = steps_schema(domain, problem)
    jsonschema.validate({"steps": [{"action": "take", "object": "a", "target": ""},
                                   {"action": "set3", "args": ["a", "b", "c"]}]}, schema)
    for bad in ({"action": "take", "args": ["a"]},
                {"action": "set3", "object": "a", "target": "b"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"steps": [bad]}, schema)
