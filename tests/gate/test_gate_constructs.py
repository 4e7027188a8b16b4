"""Unit tests of the gate, one PDDL construct at a time, on hand-built models."""
from __future__ import annotations

import dataclasses

import pytest

from sage_pddl.gate import StepRejected, compile_gate
from sage_pddl.pddl.errors import PDDLSemanticError, SageError, UnsupportedConstruct
from sage_pddl.pddl.model import (
    And,
    Comparison,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    FunctionTerm,
    Imply,
    Location,
    Metric,
    Not,
    Number,
    NumericEffect,
    Or,
    Plan,
    PlanStep,
    Typed,
    Unsupported,
    Variable,
    When,
)

from .helpers import action, atom, domain, neg, problem

# A tiny household: one agent hand, receptacles that may be openable.
PICK = action("Pick", "?o - item ?r - receptacle",
              pre=[atom("at", "?r"), atom("in", "?o", "?r"), neg("holding-any")],
              eff=[atom("holding", "?o"), atom("holding-any"), Not(atom("in", "?o", "?r"))])
GOTO = action("GoTo", "?r - receptacle",
              pre=[],
              eff=[atom("at", "?r"),
                   ForallEffect((Typed("x", ("receptacle",)),),
                                When(Not(Equals(Variable("x"), Variable("r")))
                                     , Not(atom("at", "?x"))))])
OPEN = action("Open", "?r - receptacle",
              pre=[atom("openable", "?r"), atom("at", "?r"), neg("opened", "?r")],
              eff=[atom("opened", "?r")])
HOUSE_TYPES = [("item", ""), ("receptacle", ""), ("fridge", "receptacle")]


def house(*extra_actions, annotations=(), init=(),
          objects="Apple - item Fridge - fridge Table - receptacle", goal=None):
    d = domain([PICK, GOTO, OPEN, *extra_actions], types=HOUSE_TYPES, annotations=annotations,
               predicates=("at", "in", "holding", "holding-any", "opened", "openable"))
    p = problem(objects, init=init or [atom("in", "Apple", "Fridge"), atom("openable", "Fridge")],
                goal=goal)
    return compile_gate(d, p)


def codes(verdict):
    return [v.code for v in verdict.violations]


def test_valid_plan_and_goal():
    gate = house(goal=atom("holding", "Apple"))
    verdict = gate.check(["GoTo Fridge", "Pick Apple Fridge"])
    assert verdict.valid and verdict.goal_reached and verdict.solved
    assert verdict.steps_checked == 2
    assert ("holding", "apple") in verdict.final_state
    assert ("in", "apple", "fridge") not in verdict.final_state


def test_goal_none_without_goal_and_false_when_unmet():
    assert house().check(["GoTo Fridge"]).goal_reached is None
    verdict = house(goal=atom("holding", "Apple")).check(["GoTo Fridge"])
    assert verdict.valid and verdict.goal_reached is False and not verdict.solved


def test_failed_positive_literal_code_and_text_in_original_spelling():
    verdict = house().check(["pick apple fridge"])
    (violation,) = verdict.violations
    assert violation.step == 0
    assert violation.code == "pick/requires/at"
    assert violation.literal == "(at Fridge)"
    assert violation.action == "(Pick Apple Fridge)"
    assert violation.step_text == "pick apple fridge"
    assert "(at Fridge)" in violation.message


def test_negative_precondition_forbids_code():
    gate = house(init=[atom("in", "Apple", "Fridge"), atom("at", "Fridge"), atom("holding-any")])
    (violation,) = gate.check(["Pick Apple Fridge"]).violations
    assert violation.code == "pick/forbids/holding-any"
    assert violation.literal == "(not (holding-any))"


def test_every_failed_literal_of_a_step_is_reported_in_source_order():
    gate = house(init=[atom("holding-any")])
    verdict = gate.check(["Pick Apple Table"])
    assert codes(verdict) == ["pick/requires/at", "pick/requires/in", "pick/forbids/holding-any"]
    assert {v.step for v in verdict.violations} == {0}


def test_mode_first_stops_and_mode_all_continues_skipping_effects():
    plan = ["Pick Apple Fridge", "GoTo Fridge", "Pick Apple Fridge", "GoTo Table", "Open Table"]
    first = house().check(plan)
    assert first.steps_checked == 1 and codes(first) == ["pick/requires/at"]
    every = house().check(plan, mode="all")
    assert every.steps_checked == 5
    assert [v.step for v in every.violations] == [0, 4]
    assert codes(every) == ["pick/requires/at", "open/requires/openable"]
    assert ("holding", "apple") in every.final_state
    with pytest.raises(SageError):
        house().check(plan, mode="some")


def test_typing_hierarchy_and_type_mismatch():
    gate = house()
    assert gate.check(["GoTo Fridge"]).valid  # fridge is a receptacle through the hierarchy
    verdict = gate.check(["GoTo Apple"])
    (violation,) = verdict.violations
    assert violation.code == "type-mismatch"
    assert "receptacle" in violation.message and "Apple" in violation.message


def test_either_parameter_and_either_object():
    wash = action("Wash", "?x - item|fridge", eff=[atom("clean", "?x")])
    gate = house(wash)
    assert gate.check(["Wash Apple", "Wash Fridge"]).valid
    assert codes(gate.check(["Wash Table"])) == ["type-mismatch"]
    gate = house(wash, objects="Apple - item Fridge - fridge Table - receptacle Box - item|receptacle")
    assert gate.check(["Wash Box", "GoTo Box"]).valid


def test_an_object_of_a_type_the_domain_does_not_declare():
    polish = action("Polish", "?x - gem", eff=[atom("shiny", "?x")])
    gate = house(polish, objects="Apple - item Fridge - fridge Table - receptacle Ruby - gem")
    assert gate.check(["Polish Ruby"]).valid  # a type only the parameter and the object name
    assert codes(gate.check(["Polish Apple"])) == ["type-mismatch"]
    assert codes(gate.check(["GoTo Ruby"])) == ["type-mismatch"]


def test_untyped_parameters_accept_any_object():
    touch = action("Touch", "?x", eff=[atom("touched", "?x")])
    assert house(touch).check(["Touch Table", "Touch Apple"]).valid


def test_domain_constants_and_constants_declared_only_in_the_problem():
    heat = action("Heat", "?o - item ?r - receptacle",
                  pre=[atom("holding", "?o"), atom("kind", "?r", "MicrowaveType")],
                  eff=[atom("hot", "?o")])
    d = domain([PICK, GOTO, heat], types=HOUSE_TYPES, constants="Robot")
    p = problem("Apple - item Oven - receptacle MicrowaveType",
                init=[atom("holding", "Apple"), atom("kind", "Oven", "MicrowaveType")])
    gate = compile_gate(d, p)
    assert "robot" in gate.objects and gate.objects["microwavetype"] == "MicrowaveType"
    assert gate.check(["Heat Apple Oven"]).valid


def test_equality_on_parameters():
    move = action("Move", "?a - receptacle ?b - receptacle",
                  pre=[Not(Equals(Variable("a"), Variable("b")))], eff=[atom("at", "?b")])
    same = action("Stay", "?a - receptacle ?b - receptacle",
                  pre=[Equals(Variable("a"), Variable("b"))], eff=[])
    gate = house(move, same)
    assert gate.check(["Move Fridge Table", "Stay Table Table"]).valid
    (violation,) = gate.check(["Move Table Table"]).violations
    assert violation.code == "move/forbids/equal"
    assert violation.literal == "(not (= Table Table))"
    assert codes(gate.check(["Stay Table Fridge"])) == ["stay/requires/equal"]


def test_or_precondition_reports_any_of():
    take = action("Take", "?o - item ?r - receptacle",
                  pre=[Or((Not(atom("openable", "?r")), atom("opened", "?r")))],
                  eff=[atom("holding", "?o")])
    gate = house(take)
    assert gate.check(["Take Apple Table"]).valid  # Table is not openable
    (violation,) = gate.check(["Take Apple Fridge"]).violations
    assert violation.code == "take/requires/any-of"
    assert violation.literal == "(or (not (openable Fridge)) (opened Fridge))"
    assert (True, ("opened", "fridge")) in violation.atoms
    assert gate.check(["GoTo Fridge", "Open Fridge", "Take Apple Fridge"]).valid


def test_imply_precondition_reports_the_consequent():
    take = action("Take", "?o - item ?r - receptacle",
                  pre=[Imply(atom("openable", "?r"), atom("opened", "?r"))],
                  eff=[atom("holding", "?o")])
    gate = house(take)
    assert gate.check(["Take Apple Table"]).valid
    (violation,) = gate.check(["Take Apple Fridge"]).violations
    assert violation.code == "take/requires/opened"
    assert violation.literal == "(opened Fridge)"


def test_exists_precondition():
    serve = action("Serve", "",
                   pre=[Exists((Typed("o", ("item",)),), atom("holding", "?o"))], eff=[])
    # with one item the disjunction has one alternative, which is reported as a plain literal
    (violation,) = house(serve).check(["Serve"]).violations
    assert (violation.code, violation.literal) == ("serve/requires/holding", "(holding Apple)")
    gate = house(serve, objects="Apple - item Pear - item Fridge - fridge Table - receptacle")
    (violation,) = gate.check(["Serve"]).violations
    assert violation.code == "serve/requires/any-of"
    assert violation.literal == "(exists (?o - item) (holding ?o))"
    assert gate.check(["GoTo Fridge", "Pick Apple Fridge", "Serve"]).valid


def test_negated_exists_reports_the_failing_instance():
    # "no closed receptacle holds ?o" -> forall r: (or (not (in ?o r)) (opened r))
    grab = action("Grab", "?o - item",
                  pre=[Not(Exists((Typed("r", ("receptacle",)),),
                                  And((atom("in", "?o", "?r"), neg("opened", "?r")))))],
                  eff=[atom("holding", "?o")])
    gate = house(grab)
    (violation,) = gate.check(["Grab Apple"]).violations
    assert violation.code == "grab/requires/any-of"
    assert violation.literal == "(not (and (in Apple Fridge) (not (opened Fridge))))"
    assert gate.check(["GoTo Fridge", "Open Fridge", "Grab Apple"]).valid


def test_forall_precondition_reports_each_failing_instance():
    leave = action("Leave", "", pre=[Forall((Typed("r", ("receptacle",)),),
                                            neg("opened", "?r"))], eff=[])
    gate = house(leave, init=[atom("opened", "Fridge"), atom("opened", "Table")])
    verdict = gate.check(["Leave"])
    assert codes(verdict) == ["leave/forbids/opened", "leave/forbids/opened"]
    assert [v.literal for v in verdict.violations] == ["(not (opened Fridge))",
                                                       "(not (opened Table))"]


def test_conditional_and_universal_effects_read_the_pre_state():
    gate = house()
    verdict = gate.check(["GoTo Fridge", "GoTo Table"])
    assert ("at", "table") in verdict.final_state
    assert ("at", "fridge") not in verdict.final_state
    toggle = action("Toggle", "?r - receptacle", eff=[
        When(atom("opened", "?r"), Not(atom("opened", "?r"))),
        When(Not(atom("opened", "?r")), atom("opened", "?r"))])
    gate = house(toggle)
    once = gate.check(["Toggle Fridge"]).final_state
    assert ("opened", "fridge") in once
    twice = gate.check(["Toggle Fridge", "Toggle Fridge"]).final_state
    assert ("opened", "fridge") not in twice


def test_delete_then_add():
    refresh = action("Refresh", "?r - receptacle", eff=[Not(atom("at", "?r")), atom("at", "?r")])
    assert ("at", "table") in house(refresh).check(["Refresh Table"]).final_state


def test_action_costs_are_ignored():
    cost = NumericEffect("increase", FunctionTerm("total-cost"), Number("5"))
    walk = action("Walk", "?r - receptacle", eff=[atom("at", "?r"), cost])
    assert house(walk).check(["Walk Table"]).valid


@pytest.mark.parametrize("node, construct", [
    (Comparison(">=", FunctionTerm("battery"), Number("1"), loc=Location("d.pddl", 7, 12)),
     "numeric comparison"),
    (Unsupported("preference", "(preference p (at ?r))", loc=Location("d.pddl", 7, 12)),
     "preference"),
])
def test_unsupported_precondition_names_construct_and_location(node, construct):
    bad = action("Bad", "?r - receptacle", pre=[node])
    with pytest.raises(UnsupportedConstruct) as error:
        house(bad)
    assert construct in str(error.value) and "7:12" in str(error.value)
    assert error.value.loc == Location("d.pddl", 7, 12)


def test_numeric_effect_other_than_cost_and_durative_actions_are_rejected():
    fuel = NumericEffect("decrease", FunctionTerm("fuel"), Number("1"), loc=Location(None, 3, 4))
    with pytest.raises(UnsupportedConstruct, match="numeric effect"):
        house(action("Drive", "", eff=[fuel]))
    d = domain([PICK], types=HOUSE_TYPES)
    d = type(d)(**{**d.__dict__, "unsupported": (
        Unsupported(":durative-action", "(:durative-action fly ...)", loc=Location(None, 9, 3)),)})
    with pytest.raises(UnsupportedConstruct, match=":durative-action"):
        compile_gate(d, problem("Apple - item"))


def test_metric_fluent_counts_as_cost():
    cost = NumericEffect("increase", FunctionTerm("fuel-used"), Number("2"))
    d = domain([action("Walk", "?r - receptacle", eff=[atom("at", "?r"), cost])],
               types=HOUSE_TYPES)
    p = problem("Table - receptacle")
    with pytest.raises(UnsupportedConstruct):
        compile_gate(d, p)
    p = dataclasses.replace(p, metric=Metric("minimize", FunctionTerm("fuel-used")))
    assert compile_gate(d, p).check(["Walk Table"]).valid


def test_negated_and_numeric_init_facts_are_ignored():
    from sage_pddl.pddl.model import FluentValue
    gate = house(init=[atom("in", "Apple", "Fridge"), Not(atom("opened", "Fridge")),
                       FluentValue(FunctionTerm("total-cost"), Number("0"))])
    assert gate.initial_state == frozenset({("in", "apple", "fridge")})


def test_structural_codes():
    gate = house()
    assert codes(gate.check(["Fly Table"])) == ["unknown-action"]
    assert codes(gate.check(["GoTo"])) == ["wrong-arity"]
    assert codes(gate.check(["GoTo Table Fridge"])) == ["wrong-arity"]
    (unknown,) = gate.check(["GoTo Tabel"]).violations
    assert unknown.code == "unknown-object" and "Table" in unknown.message  # suggestion
    assert codes(gate.check([{"object": "Table"}])) == ["unparsable-step"]
    assert codes(gate.check([42])) == ["unparsable-step"]
    assert codes(gate.check([""])) == ["unparsable-step"]
    with pytest.raises(StepRejected) as error:
        gate.ground("Fly Table")
    assert error.value.violation.code == "unknown-action"


def test_actions_resolve_case_insensitively_and_through_aliases():
    gate = house(annotations=[("alias", "GoTo Navigate MoveTo")])
    plan = ["goto Fridge", "GOTO Table", "Navigate Fridge", "move_to Table", "Move-To Fridge",
            "go_to Table"]
    verdict = gate.check(plan)
    assert verdict.valid, verdict.violations


def test_json_steps_fill_parameters_from_fields():
    put = action("Put", "?o - item ?r - receptacle", pre=[atom("holding", "?o"), atom("at", "?r")],
                 eff=[atom("in", "?o", "?r"), Not(atom("holding", "?o"))])
    gate = house(put, annotations=[("step", "Put object target|receptacle")],
                 init=[atom("holding", "Apple"), atom("at", "Table")])
    assert gate.check([{"action": "Put", "object": "Apple", "target": "Table"}]).valid
    assert gate.check([{"action": "Put", "object": "Apple", "target": "", "receptacle": "Table"}]).valid
    (violation,) = gate.check([{"action": "Put", "object": "Apple", "target": ""}]).violations
    assert violation.code == "wrong-arity" and "target" in violation.message
    # without an annotation: object then target, positionally
    gate = house(put, init=[atom("holding", "Apple"), atom("at", "Table")])
    assert gate.check([{"action": "Put", "object": "Apple", "target": "Table"}]).valid
    step = PlanStep("Put", ("Apple", "Table"), fields=(("object", "Apple"), ("target", "Table")))
    assert gate.check(Plan((step,))).valid


def test_reason_annotation_overrides_code_and_message():
    gate = house(annotations=[
        ("reason", 'Pick (not (holding-any)) hand-full '
                   '"the hand already holds something: place it before taking ?o"'),
        ("reason", 'Pick (at ?r) not-there "go to ?r first"'),
    ], init=[atom("in", "Apple", "Fridge"), atom("holding-any")])
    verdict = gate.check(["Pick Apple Fridge"])
    assert codes(verdict) == ["not-there", "hand-full"]
    assert verdict.violations[0].message == "go to Fridge first"
    assert verdict.violations[1].message.endswith("before taking Apple")
    assert verdict.violations[1].literal == "(not (holding-any))"


def test_reason_annotation_matches_a_whole_conjunct():
    grab = action("Grab", "?o - item",
                  pre=[Not(Exists((Typed("r", ("receptacle",)),),
                                  And((atom("in", "?o", "?r"), neg("opened", "?r")))))],
                  eff=[atom("holding", "?o")])
    note = ('Grab (not (exists (?r - receptacle) (and (in ?o ?r) (not (opened ?r))))) '
            'inside-closed "?o is inside a closed receptacle"')
    gate = house(grab, annotations=[("reason", note)])
    (violation,) = gate.check(["Grab Apple"]).violations
    assert violation.code == "inside-closed"
    assert violation.message == "Apple is inside a closed receptacle"


def test_bad_annotations_raise_semantic_errors():
    with pytest.raises(PDDLSemanticError, match="unknown action"):
        house(annotations=[("alias", "Fly Soar")])
    with pytest.raises(PDDLSemanticError, match="not a precondition literal"):
        house(annotations=[("reason", 'Pick (opened ?r) closed "closed"')])
    with pytest.raises(PDDLSemanticError, match="parameter"):
        house(annotations=[("step", "Pick object")])


def test_grounding_is_cached_and_reused_across_plans():
    gate = house()
    gate.check(["GoTo Fridge", "Pick Apple Fridge"])  # grounds each step it meets at most once
    first = gate.ground("GoTo Fridge")
    gate.ground("Pick Apple Fridge")
    count = gate.table.grounded_count
    gate.check(["goto fridge", "GoTo Fridge", "Pick Apple Fridge"])
    gate.check([{"action": "GoTo", "object": "FRIDGE"}])
    assert gate.table.grounded_count == count == 2
    assert gate.ground("goto FRIDGE") is first
    assert gate.ground(PlanStep("GoTo", ("Fridge",))) is first


def test_check_from_a_given_state():
    gate = house()
    verdict = gate.check(["Pick Apple Fridge"], state=[("AT", "Fridge"), ("in", "apple", "fridge")])
    assert verdict.valid
    ground = gate.ground("Pick Apple Fridge")
    assert gate.ground("pick apple fridge").add == ground.add
    again = gate.check(["GoTo Fridge", "Pick Apple Fridge"]).final_state
    assert ("holding", "apple") in again and again >= verdict.final_state - {("at", "fridge")}


def test_gate_api_pieces():
    gate = house(goal=atom("holding", "Apple"))
    ground = gate.ground("GoTo Fridge")
    state = gate.apply(gate.initial_state, ground)
    assert gate.applicable(state, gate.ground("Pick Apple Fridge")) is None
    violation = gate.applicable(gate.initial_state, gate.ground("Pick Apple Fridge"))
    assert violation.code == "pick/requires/at"
    assert not gate.goal_holds(state)
    assert gate.goal_unmet(state) == ["(holding Apple)"]
    assert gate.format_atom(("in", "apple", "fridge")) == "(in Apple Fridge)"
    assert gate.check("(goto fridge)\n(pick apple fridge)\n").solved


def test_a_word_naming_several_instances_acts_on_the_first_applicable_one():
    """`Open Cabinet` with Cabinet_1 and Cabinet_2: the step acts on the first instance whose
    ground action is applicable, and is rejected with the first instance's violations when none
    is; the same on a fresh gate, a warm one and `Gate.ground`."""
    objects = "Apple - item Cabinet_1 - receptacle Cabinet_2 - receptacle"
    init = [atom("openable", "Cabinet_1"), atom("openable", "Cabinet_2"), atom("at", "Cabinet_2")]
    warm = house(objects=objects, init=init)
    warm.check(["Open Cabinet"])
    warm.check(["Open Cabinet"])
    for gate in (house(objects=objects, init=init), warm):  # a fresh gate, then a warm one
        once = gate.check(["Open Cabinet"])
        assert once.valid and ("opened", "cabinet_2") in once.final_state
        assert ("opened", "cabinet_1") not in once.final_state
    for mode in ("first", "all"):
        for gate in (house(objects=objects, init=init), warm):
            twice = gate.check(["Open Cabinet", "Open Cabinet"], mode=mode)
            assert not twice.valid and twice.steps_checked == 2
            assert [(v.action, v.code) for v in twice.violations] == [
                ("(Open Cabinet_1)", "open/requires/at")]
    state = warm.check(["Open Cabinet"]).final_state
    assert warm.ground("Open Cabinet").args == ("cabinet_2",)
    assert warm.ground("Open Cabinet", state=state).args == ("cabinet_1",)  # none applies: first
