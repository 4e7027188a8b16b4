"""Types learned from the objects' roles (`induce --role-types`, `sage_pddl/induce/roles.py`):
derived from a hand-made transition set and from real logs of EAI's VirtualHome simulator,
written as `(:types ...)` with a comment per type, and never refusing a step seen to succeed
(checked with the learned predictor and with the gate on the written PDDL)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sage_pddl.gate import compile_gate
from sage_pddl.induce import read_logs
from sage_pddl.induce.learner import learn
from sage_pddl.induce.plans import without_preconditions
from sage_pddl.induce.review import reviewed_text
from sage_pddl.induce.roles import learn_role_types, role_typed_problem
from sage_pddl.pddl import Problem, check_domain, parse_domain, write_domain
from sage_pddl.pddl.model import Atom, Constant, Typed

from .test_learner import _run_cli, tr

VH_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "vh-logs"
STATIC = ["(grabbable apple)", "(movable apple)", "(grabbable cup)", "(movable cup)",
          "(surface table)", "(surface box)", "(container box)", "(grabbable lamp)"]


def role_transitions():
    """Pick succeeds on apple and cup (grabbable, movable) and fails on table, box and lamp
    (grabbable only); Place succeeds on table and box (both surfaces)."""
    ts = []
    for obj in ("apple", "cup"):
        ts.append(tr("Pick", [obj], STATIC + ["(free)"], True, STATIC + [f"(held {obj})"]))
    for obj in ("table", "box", "lamp"):
        ts.append(tr("Pick", [obj], STATIC + ["(free)"], False, code="cannot"))
    ts.append(tr("Pick", ["cup"], STATIC + ["(held apple)"], False, code="hand-full"))
    for obj, target in (("apple", "table"), ("cup", "box")):
        ts.append(tr("Place", [obj, target], STATIC + [f"(held {obj})"], True,
                     STATIC + ["(free)", f"(on {obj} {target})"]))
    ts.append(tr("Place", ["apple", "table"], STATIC + ["(free)"], False, code="empty-hand"))
    return ts


def problem_of(state, domain_name: str, args=()) -> Problem:
    """A problem whose initial state is a logged state, its objects (and `args`) untyped."""
    objects = sorted({obj for fact in state for obj in fact[1:]} | set(args))
    return Problem("p", domain_name, objects=tuple(Typed(o) for o in objects),
                   init=tuple(Atom(f[0], tuple(Constant(a) for a in f[1:])) for f in state))


def accepted_by_gate(result, transition) -> bool:
    """Whether the written domain's gate, every precondition removed (so only the parameter
    types judge), accepts the transition's step on its pre-state typed by the learned roles."""
    domain = without_preconditions(result.domain)
    problem = role_typed_problem(problem_of(transition.pre, domain.name, transition.action.args),
                                 result.roles)
    step = " ".join([transition.action.action, *transition.action.args])
    return compile_gate(domain, problem).check([step]).valid


def test_types_are_derived_from_the_roles_and_written_with_a_comment_each():
    result = learn(role_transitions(), domain_name="roles", role_types=True)
    types = {t.name: (t.properties, t.parent) for t in result.roles.types}
    assert types == {"grabbable_movable_thing": (frozenset({"grabbable", "movable"}), "object"),
                     "surface_thing": (frozenset({"surface"}), "object")}
    domain = result.domain
    assert [p.types for p in domain.action("Pick").parameters] == [("grabbable_movable_thing",)]
    assert [p.types for p in domain.action("Place").parameters] == [
        ("grabbable_movable_thing",), ("surface_thing",)]
    assert ":typing" in domain.requirements
    text = reviewed_text(result)
    assert "; grabbable_movable_thing: objects that are (grabbable ?o) (movable ?o) in every state" \
        in text
    assert "; surface_thing: objects that are (surface ?o) in every state" in text
    reread = parse_domain(text)
    assert reread == parse_domain(write_domain(domain))
    assert not [d for d in check_domain(reread) if d.severity == "error"]


def test_no_step_seen_succeeding_is_refused_and_a_wrong_role_is():
    transitions = role_transitions()
    result = learn(transitions, role_types=True)
    typing_only = {slot: dataclasses.replace(a, preconditions=())
                   for slot, a in result.actions.items()}
    for t in transitions:
        action = typing_only[result.schema_key(t.action.action, len(t.action.args))]
        if t.success:
            assert action.applicable(t.pre, t.action.args)
            assert accepted_by_gate(result, t)
        elif t.code == "cannot":  # an object of another role
            assert not action.applicable(t.pre, t.action.args)
            assert not accepted_by_gate(result, t)


def test_an_object_never_seen_keeps_the_root_type_unless_its_properties_give_one():
    result = learn(role_transitions(), role_types=True)
    problem = problem_of(frozenset({("grabbable", "lamp"), ("movable", "lamp"),
                                    ("grabbable", "pen"), ("free",)}), "d")
    typed = {o.name: o.types for o in role_typed_problem(problem, result.roles).objects}
    assert typed == {"lamp": ("grabbable_movable_thing",), "pen": ()}


def test_types_form_a_tree_in_which_each_object_has_a_chain():
    # x succeeded where objects share {a} and where they share {b}: x is both, so only one of
    # the two types can be admitted (an object declares one type)
    roles = {"x": [frozenset("ab")], "y": [frozenset("a")], "z": [frozenset("b")],
             "w": [frozenset("abc"), frozenset("abcd")]}
    learned, typed = learn_role_types(
        {"p": [{"x", "y"}], "q": [{"x", "z"}], "r": [{"x", "y"}], "s": [{"w"}]},
        roles, static="abc", min_objects=1)
    assert [(t.name, t.parent) for t in learned.types] == [("a_thing", "object"),
                                                           ("a_b_c_thing", "a_thing")]
    assert typed["q"] == [None]
    assert [t.name for t in typed["p"]] == ["a_thing"]


def test_a_position_seen_with_one_object_stays_untyped():
    learned, typed = learn_role_types({"p": [{"x"}], "q": [{"x", "y"}]},
                                      {"x": [frozenset("ab")], "y": [frozenset("a")]}, "ab")
    assert [t.name for t in learned.types] == ["a_thing"]
    assert typed["p"] == [None] and [t.name for t in typed["q"]] == ["a_thing"]


def test_without_the_option_nothing_is_typed():
    result = learn(role_transitions())
    assert not result.roles.types and not result.domain.types
    assert all(not p.types for a in result.domain.actions for p in a.parameters)


@pytest.mark.parametrize("min_objects", [1, 2])
def test_real_virtualhome_logs_every_success_keeps_its_type(min_objects):
    """Logs of three tasks collected from EAI's VirtualHome simulator (tests/fixtures/vh-logs);
    with a type for positions seen with a single object too, more types, more to refuse."""
    transitions = list(read_logs([VH_LOGS]))
    result = learn(transitions, role_types=True, role_min_objects=min_objects)
    assert len(result.roles.types) >= (3 if min_objects == 1 else 1)
    walk = result.domain.action("walk_towards")
    # the character has no static property: its parameter stays untyped
    assert walk.parameters[0].types in ((), ("object",)) and walk.parameters[1].types
    if min_objects == 1:
        grab = result.domain.action("grab")
        grab_type = {t.name: t for t in result.roles.types}[grab.parameters[1].types[0]]
        assert "grabbable" in grab_type.properties
    successes = [t for t in transitions if t.success]
    assert len(successes) > 20
    for t in successes:
        action = result.actions[result.schema_key(t.action.action, len(t.action.args))]
        assert dataclasses.replace(action, preconditions=()).applicable(t.pre, t.action.args)
        assert accepted_by_gate(result, t), t.action.text


def test_induce_command_role_types(capsys):
    code, out = _run_cli(["induce", str(VH_LOGS), "--role-types", "--allow-missing", "-q"],
                         capsys)
    assert code == 0
    assert "(:types" in out.out and "in every state" in out.out
    assert "; grab: learned from" in out.out
