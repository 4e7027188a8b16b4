"""Parser, writer and semantic checks on small texts and the bundled corpus fixtures."""
from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from sage_pddl.pddl import (
    PDDLSemanticError,
    PDDLSyntaxError,
    UnsupportedConstruct,
    builder,
    check_domain,
    check_problem,
    collect_annotations,
    load_domain,
    load_problem,
    parse_domain,
    parse_problem,
    raise_first_error,
    write_domain,
    write_problem,
)
from sage_pddl.pddl import parser as pddl_parser
from sage_pddl.pddl.model import (
    And,
    Atom,
    Comparison,
    Constant,
    Exists,
    FluentValue,
    ForallEffect,
    Location,
    Not,
    NumericEffect,
    PredicateDef,
    Problem,
    Typed,
    Unsupported,
    Variable,
    When,
    frozen_maker,
)

from .conftest import DRIVEN, QUIRKY_DOMAIN, QUIRKY_PROBLEM, same_model


def test_quirks_parse_into_the_model():
    domain = parse_domain(QUIRKY_DOMAIN, "kitchen.pddl")
    assert domain.name == "Kitchen"
    assert ":domain-axioms" in domain.requirements
    assert [t.parents for t in domain.types] == [(), (), ()]
    assert domain.functions[0].parameters[0].types == ()
    assert {f.type for f in domain.functions} == {"number"}
    open_action = domain.action("OPEN")
    assert domain.predicate("open") is not None and open_action is not None
    assert open_action.precondition == And(())
    effect = open_action.effect
    assert isinstance(effect.parts[1], When) and isinstance(effect.parts[2], NumericEffect)
    look = domain.action("look")
    assert isinstance(look.precondition, Exists)
    assert [v.name for v in look.precondition.variables] == ["q", "t"]
    assert isinstance(look.effect.parts[1], ForallEffect)
    assert domain.action("noop").effect == And(())
    assert domain.predicate("handempty").parameters == ()

    problem = parse_problem(QUIRKY_PROBLEM, "p1.pddl")
    assert problem.metric is not None and problem.metric.direction == "minimize"
    assert Not(Atom("open", (Constant("apple"),))) in problem.init
    assert any(isinstance(e, FluentValue) for e in problem.init)
    assert ("thing", ("thing",)) in [(o.name, o.types) for o in problem.objects]


def test_a_problem_holds_its_facts_by_key_whoever_makes_it():
    """`Problem.facts`: the `:init` atoms by key (negated and numeric facts are no facts);
    derived from `init` by every constructor, outside equality, kept by pickle."""
    problem = parse_problem(QUIRKY_PROBLEM, "p1.pddl")
    atoms = [fact for fact in problem.init if isinstance(fact, Atom)]
    assert atoms and len(atoms) < len(problem.init)
    assert problem.facts == {(a.predicate.lower(), *(t.name.lower() for t in a.args))
                             for a in atoms}
    made = Problem("p", "d", init=(Atom("On", (Constant("A"), Constant("b"))),
                                   Not(Atom("Clear", (Constant("A"),)))))
    assert made.facts == {("on", "a", "b")}
    assert dataclasses.replace(made, init=()).facts == frozenset()
    assert pickle.loads(pickle.dumps(problem)).facts == problem.facts
    assert dataclasses.replace(problem, init=problem.init) == problem
    assert "facts" not in repr(made)


@pytest.mark.parametrize("goal, expected", [
    ("(and (On A b) (not (Clear A)))", ({("on", "a", "b")}, {("clear", "a")})),
    ("(On A b)", ({("on", "a", "b")}, set())),
    ("(not (Flag))", (set(), {("flag",)})),
    ("(and)", (set(), set())),
    ("(and (On A ?x))", None),  # a free variable: the gate's grounder reports it
    ("(or (On A b) (Flag))", None),
    ("(and (and (On A b)))", None),
    ("(exists (?x) (On A ?x))", None),
])
def test_a_problem_holds_a_goal_of_literals_by_key(goal, expected):
    problem = parse_problem(f"(define (problem p) (:domain d) (:objects A b) (:init) "
                            f"(:goal {goal}))")
    if expected is None:
        assert problem.goal_literals is None
    else:
        assert problem.goal_literals == tuple(frozenset(atoms) for atoms in expected)


def test_a_problem_holds_its_objects_declared_types_by_key():
    """`Problem.declared` (`object_keys`): each object's key with its type key, "object"
    when untyped, all its type keys when it has several (`either`, or declared twice)."""
    problem = parse_problem("""(define (problem p) (:domain d)
      (:objects A b - Block C - (either Big Small) D d - Place Twice - Block Twice - Place
                F - (either Block block) e)
      (:init) (:goal (and)))""")
    assert problem.declared == {"a": "block", "b": "block", "c": ("big", "small"),
                                "d": "place", "twice": ("block", "place"), "f": "block",
                                "e": "object"}
    assert list(problem.declared) == ["a", "b", "c", "d", "twice", "f", "e"]
    # and with their first spelling, in the same order
    assert problem.spelling == {"a": "A", "b": "b", "c": "C", "d": "D", "twice": "Twice",
                                "f": "F", "e": "e"}
    once = parse_problem("(define (problem p) (:domain d) (:objects A b - Block C) (:init) "
                         "(:goal (and)))")
    assert once.declared == {"a": "block", "b": "block", "c": "object"}
    assert list(once.spelling.items()) == [("a", "A"), ("b", "b"), ("c", "C")]


def _position(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """1-based line and column of `needle` (plus `offset` characters) in `text`."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def test_locations_point_at_the_source():
    domain = parse_domain(QUIRKY_DOMAIN, "kitchen.pddl")
    look = domain.action("look")
    assert look.loc.file == "kitchen.pddl"
    assert (look.loc.line, look.loc.column) == _position(QUIRKY_DOMAIN, "look\n")
    atom = look.precondition.body.parts[0]
    assert isinstance(atom, Atom) and isinstance(atom.args[0], Variable)
    assert (atom.loc.line, atom.loc.column) == _position(QUIRKY_DOMAIN, "(at ?a ?q)")
    assert (atom.args[0].loc.line, atom.args[0].loc.column) == _position(
        QUIRKY_DOMAIN, "(at ?a ?q)", 4)
    loc = domain.predicates[0].loc
    assert (loc.line, loc.column) == _position(QUIRKY_DOMAIN, "at ?a - agent")


def test_quirky_files_check_with_warnings_only():
    domain = parse_domain(QUIRKY_DOMAIN, "kitchen.pddl")
    diagnostics = check_domain(domain)
    assert not [d for d in diagnostics if d.is_error]
    undeclared = [d for d in diagnostics if d.code == "undeclared-constant"]
    assert undeclared and "SinkType" in undeclared[0].message
    problem = parse_problem(QUIRKY_PROBLEM, "p1.pddl")
    assert not [d for d in check_problem(problem, domain) if d.is_error]
    without_sink = parse_problem(QUIRKY_PROBLEM.replace(" SinkType", ""), "p2.pddl")
    errors = [d for d in check_problem(without_sink, domain) if d.is_error]
    assert errors and "SinkType" in errors[0].message


def test_round_trip_keeps_model_and_annotations():
    domain = parse_domain(QUIRKY_DOMAIN, "kitchen.pddl")
    text = write_domain(domain)
    again = parse_domain(text)
    assert again == domain
    assert [(a.kind, a.text) for a in again.annotations] == [("alias", "Open OpenObject")]
    assert text.index("; @sage alias") < text.index("(:action open")
    problem = parse_problem(QUIRKY_PROBLEM)
    assert parse_problem(write_problem(problem)) == problem


def test_annotations_keep_their_location():
    domain = parse_domain(QUIRKY_DOMAIN, "kitchen.pddl")
    (annotation,) = domain.annotations
    assert (annotation.loc.line, annotation.loc.column) == _position(QUIRKY_DOMAIN, "; @sage")


@pytest.mark.parametrize("text, line, column, message", [
    ("(define (domain d)\n  (:predicates (p ?x))\n", 2, 23, "is never closed"),
    ("(define (domain d) (:predicates (p)))\n)", 2, 1, "closes nothing"),
    ("(define (domain d)\n  (:action a :parameters (?x hoist) :effect (p)))", 2, 30, "'hoist'"),
    ("(define (domain d) (:predicates (p ?x - )))", 1, 41, "unexpected"),
])
def test_syntax_errors_are_located(text, line, column, message):
    with pytest.raises(PDDLSyntaxError) as raised:
        parse_domain(text, "bad.pddl")
    error = raised.value
    assert (error.loc.file, error.loc.line, error.loc.column) == ("bad.pddl", line, column)
    assert message in str(error)


def test_syntax_error_shows_source_line_caret_and_expected():
    with pytest.raises(PDDLSyntaxError) as raised:
        parse_domain("(define (domain d)\n  (:action a :parameters (?x hoist)))", "bad.pddl")
    rendered = str(raised.value)
    assert rendered.startswith("bad.pddl:2:30: error:")
    assert "expected" in rendered and "a variable" in rendered
    assert "(:action a :parameters (?x hoist)))" in rendered
    assert "\n" + " " * 4 + " " * 29 + "^" in rendered


def test_missing_goal_is_a_located_syntax_error():
    text = "(define (problem p) (:domain d)\n (:objects a)\n (:init (p a))\n)"
    with pytest.raises(PDDLSyntaxError) as raised:
        parse_problem(text, "p.pddl")
    assert "(:goal ...)" in str(raised.value)
    assert (raised.value.loc.line, raised.value.loc.column) == (4, 1)


def test_a_problem_is_not_a_domain():
    with pytest.raises(PDDLSyntaxError) as raised:
        parse_domain(QUIRKY_PROBLEM, "p1.pddl")
    assert raised.value.loc.line == 1


def test_unsupported_constructs_parse_with_text_and_location():
    text = """(define (domain t)
  (:predicates (p) (q))
  (:functions (fuel))
  (:durative-action fly :parameters () :duration (= ?duration 2)
     :condition (at start (p)) :effect (at end (q)))
  (:derived (q) (p))
  (:action a :parameters () :precondition (and (>= (fuel) 1) (p))
     :effect (and (oneof (p) (q)) (assign (fuel) 3))))"""
    domain = parse_domain(text, "t.pddl")
    assert [u.construct for u in domain.unsupported] == [":durative-action", ":derived"]
    assert domain.unsupported[0].text.startswith("(:durative-action fly")
    assert (domain.unsupported[0].loc.line, domain.unsupported[0].loc.column) == (4, 3)
    action = domain.action("a")
    assert isinstance(action.precondition.parts[0], Comparison)
    assert isinstance(action.effect.parts[0], Unsupported)
    diagnostics = [d for d in check_domain(domain) if d.code == "unsupported"]
    messages = [str(d) for d in diagnostics]
    assert "t.pddl:4:3: error: :durative-action is outside the gate's scope [unsupported]" in messages
    assert "t.pddl:6:3: error: :derived is outside the gate's scope [unsupported]" in messages
    assert any(m.startswith("t.pddl:7:48: error: numeric comparison (>= (fuel) 1)") for m in messages)
    assert any(m.startswith("t.pddl:8:19: error: oneof") for m in messages)
    assert any(m.startswith("t.pddl:8:35: error: numeric effect (assign (fuel) 3)") for m in messages)
    with pytest.raises(UnsupportedConstruct):
        raise_first_error(diagnostics)
    assert parse_domain(write_domain(domain)) == domain


HIERARCHY = """(define (domain h)
  (:types crate hoist - locatable place)
  (:constants depot - place)
  (:predicates (lifting ?h - hoist ?c - crate) (at ?x - locatable ?p - place) (free))
  (:action lift :parameters (?h - hoist ?c - crate ?p - place)
    :precondition (and (at ?h ?p) (free))
    :effect (and (lifting ?h ?c) (lifting ?c ?h) (at ?h depot)))
  (:action drop :parameters (?h - hoist ?h - crate)
    :precondition (and (free ?h) (gone ?h) (at ?z ?h) (at ?h nowhere))
    :effect (and))
  (:action drop :parameters () :effect (and)))
"""


def test_semantic_errors_are_named_and_located():
    diagnostics = check_domain(parse_domain(HIERARCHY, "h.pddl"))
    by_code = {}
    for diagnostic in diagnostics:
        by_code.setdefault(diagnostic.code, []).append(diagnostic)
    assert by_code["type-mismatch"][0].severity == "error"  # explicit hierarchy: certain
    assert "?c is crate but lifting expects hoist" in by_code["type-mismatch"][0].message
    assert by_code["wrong-arity"][0].loc.line == 9
    assert "gone" in by_code["unknown-predicate"][0].message
    assert "?z" in by_code["unknown-variable"][0].message
    assert {d.severity for d in by_code["duplicate"]} == {"error"}
    assert any("nowhere" in d.message for d in by_code["undeclared-constant"])
    with pytest.raises(PDDLSemanticError) as raised:
        raise_first_error(diagnostics)
    assert raised.value.loc.file == "h.pddl" and raised.value.loc.line > 0


def test_problem_errors_unknown_object_arity_and_type():
    domain = parse_domain(HIERARCHY.replace("(lifting ?c ?h)", "").split("(:action drop")[0] + ")")
    assert not [d for d in check_domain(domain) if d.is_error]
    problem = parse_problem("""(define (problem p) (:domain h)
      (:objects h1 - hoist c1 - crate p1 - place c1 - hoist)
      (:init (at h1 p1) (at c1) (lifting c1 h1) (free) (at b9 p1))
      (:goal (forall (?c - crate) (lifting h1 ?c))))""", "p.pddl")
    codes = [d.code for d in check_problem(problem, domain) if d.is_error]
    assert codes.count("duplicate") == 1
    assert "wrong-arity" in codes and "unknown-object" in codes
    assert "type-mismatch" in codes


def test_flat_types_make_mismatches_warnings(fixtures_dir: Path):
    domain = load_domain(fixtures_dir / "corpus" / "alfworld" / "alfred.pddl")
    diagnostics = check_domain(domain)
    assert not [d for d in diagnostics if d.is_error]
    mismatches = [d for d in diagnostics if d.code == "type-mismatch"]
    assert any("(checked ?l)" in d.message for d in mismatches)


CORPUS_FIXTURES = [
    ("val-depots/Depots.pddl", "val-depots/pfile1"),
    ("alfworld/alfred.pddl", None),
    ("eai-virtualhome/virtualhome.pddl", "eai-virtualhome/problems/60_1.pddl"),
    ("triangle-tireworld/domain.pddl", "triangle-tireworld/p01.pddl"),
    ("hello-world-functions/domain.pddl", "hello-world-functions/p0.pddl"),
]


@pytest.mark.parametrize("domain_file, problem_file", CORPUS_FIXTURES)
def test_fixture_files_parse_round_trip_and_check(fixtures_dir, domain_file, problem_file):
    root = fixtures_dir / "corpus"
    domain = load_domain(root / domain_file)
    assert parse_domain(write_domain(domain)) == domain
    in_scope = "tireworld" not in domain_file and "functions" not in domain_file
    errors = [d for d in check_domain(domain) if d.is_error]
    assert (not errors) if in_scope else errors and all(d.code == "unsupported" for d in errors)
    if problem_file:
        problem = load_problem(root / problem_file)
        assert parse_problem(write_problem(problem)) == problem
        problem_errors = [d for d in check_problem(problem, domain) if d.is_error]
        assert all(d.code == "unsupported" for d in problem_errors)


def test_truncated_skeleton_is_a_located_syntax_error(fixtures_dir):
    path = fixtures_dir / "corpus" / "eai-virtualhome" / "virtualhome_pd.pddl"
    with pytest.raises(PDDLSyntaxError) as raised:
        load_domain(path)
    assert raised.value.loc.file == str(path) and raised.value.loc.line > 1
    assert "never closed" in raised.value.message


# --- the parse driver and its fast paths ---------------------------------------------------------

def test_the_model_comparison_sees_every_location():
    domain = parse_domain(DRIVEN["commas split words into several tokens"], "d.pddl")
    action = domain.actions[0]
    first = action.precondition.variables[0]
    moved = dataclasses.replace(first, loc=first.loc._replace(column=first.loc.column + 1))
    precondition = dataclasses.replace(action.precondition,
                                       variables=(moved, *action.precondition.variables[1:]))
    changed = dataclasses.replace(domain, actions=(dataclasses.replace(action, precondition=precondition),))
    assert changed == domain  # model equality ignores locations; the driver's test does not
    assert same_model(domain, domain) and not same_model(domain, changed)
    assert not same_model(domain, dataclasses.replace(domain, name="other"))
    assert not same_model(action.parameters, list(action.parameters))  # a list is no tuple


def test_text_kept_as_source_runs_to_the_parenthesis_that_closes_it():
    domain = parse_domain(DRIVEN["outside the scope, comments with parentheses"], "d.pddl")
    assert [(u.construct, u.text, u.loc.line, u.loc.column) for u in domain.unsupported] == [
        (":derived", "(:derived (q ?x) ; a comment with ) and (\n     (p ?x))", 4, 3),
        (":durative-action", "(:durative-action fly :parameters (?x) :duration (= ?duration 2)\n"
                             "     :condition (at start (p ?x)) :effect (at end (q ?x)))", 6, 3),
        (":vars", "(:action v :parameters () :vars (?y) :effect (p ?y))", 8, 3)]
    action = domain.action("w")
    assert action.precondition == Unsupported("preference", "(preference ok (p ?x))")
    assert action.effect == Unsupported("oneof", "(oneof (p ?x) (q ?x))")
    assert (action.effect.loc.line, action.effect.loc.column) == (10, 14)


def test_a_location_is_a_named_tuple_made_without_its_constructor():
    made = builder._new_tuple(Location, ("d.pddl", 3, 7))
    assert type(made) is Location and made == Location("d.pddl", 3, 7)
    assert (made.file, made.line, made.column) == ("d.pddl", 3, 7) and str(made) == "d.pddl:3:7"
    assert str(Location(None, 1, 2)) == "<string>:1:2" and hash(made) == hash(Location(*made))
    assert pickle.loads(pickle.dumps(made)) == made
    with pytest.raises(AttributeError):
        made.line = 4  # type: ignore[misc]


@pytest.mark.parametrize("make, cls, fields", [
    (builder._atom, Atom, ("p", (Constant("a"),), Location(None, 1, 2))),
    (builder._constant, Constant, ("a", Location("d.pddl", 1, 1))),
    (builder._variable, Variable, ("x", None)),
    (builder._typed, Typed, ("x", ("t", "u"), Location("d.pddl", 2, 9))),
    (builder._and, And, ((Atom("p"),), Location("d.pddl", 1, 1))),
    (builder._not, Not, (Atom("p"), Location("d.pddl", 1, 1))),
    (builder._when, When, (Atom("p"), Atom("q"), None)),
    (builder._forall_effect, ForallEffect, ((Typed("x"),), Atom("q"), None)),
    (builder._predicate, PredicateDef, ("p", (Typed("x"),), Location("d.pddl", 4, 4))),
])
def test_the_builders_constructors_make_the_dataclass_objects(make, cls, fields):
    made, plain = make(*fields), cls(*fields)
    assert type(made) is cls and vars(made) == vars(plain)
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert pickle.loads(pickle.dumps(made)) == plain
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.loc = None


@dataclasses.dataclass(frozen=True)
class _Four:
    a: int
    b: str
    c: tuple
    d: object = None


@dataclasses.dataclass(frozen=True)
class _Checked:
    a: int
    b: int

    def __post_init__(self):
        if self.a > self.b:
            raise ValueError("a > b")


def test_a_frozen_maker_of_any_width_makes_the_object_and_refuses_what_it_cannot_make():
    make = frozen_maker(_Four)
    made, plain = make(1, "x", (2,), None), _Four(1, "x", (2,))
    assert type(made) is _Four and vars(made) == vars(plain) and made == plain
    assert hash(made) == hash(plain) and repr(made) == repr(plain)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2
    with pytest.raises(TypeError):  # every field, none left to its default
        make(1, "x", (2,))
    with pytest.raises(TypeError, match="_Checked checks or derives fields"):
        frozen_maker(_Checked)


def test_annotations_are_read_from_comment_lines_only():
    text = ("; @sage alias Open OpenObject \t\r\n"
            "(define (domain d) ; @sage not at the start of a line\n"
            "  ;;  @sage\tnote  two words @sage  \n"
            "  (:predicates (p)))\n"
            ";@sagex")
    found = [(a.kind, a.text, a.loc.line, a.loc.column) for a in collect_annotations(text, "d")]
    assert found == [("alias", "Open OpenObject", 1, 1), ("note", "two words @sage", 3, 3),
                     ("", "x", 5, 1)]


def test_nesting_past_the_limit_over_many_lines_is_located():
    text = ("(define (domain d) (:predicates (p)) (:action a :parameters () :precondition\n"
            + "(and\n" * 200 + "(p)" + ")" * 200 + " :effect (p)))")
    with pytest.raises(PDDLSyntaxError, match="deeper than 128") as raised:
        parse_domain(text, "deep.pddl")
    assert (raised.value.loc.line, raised.value.loc.column) == (128, 1)


def test_forgetting_parsed_texts_leaves_a_process_as_if_it_had_read_nothing():
    text = "(define (domain forgotten) (:action a :parameters () :effect (and)))"
    first = parse_domain(text)
    assert parse_domain(text) is first  # the content cache answers
    pddl_parser.forget_parsed()
    assert not any(pddl_parser._driver().known) and not pddl_parser._PARSED
    again = parse_domain(text)
    assert again is not first and again == first


@pytest.mark.parametrize("parse, text, where", [
    (parse_domain, "(define (domain d)\n (:predicates (p))\n (:predicates (q)))", (3, 2)),
    (parse_problem, "(define (problem p) (:domain d)\n (:init) (:init (p)) (:goal (p)))", (2, 10)),
])
def test_a_section_written_twice_is_an_error_at_the_second(parse, text, where):
    with pytest.raises(PDDLSyntaxError) as raised:
        parse(text, "x.pddl")
    error = raised.value
    assert "duplicate" in error.message and (error.loc.line, error.loc.column) == where


def test_an_unknown_requirement_is_a_warning_where_it_is_written():
    text = ("(define (domain d)\n  (:requirements :strips :stripz :TYPING)\n  (:types t)\n"
            "  (:predicates (p ?x - t))\n  (:action a :parameters (?x - t) :precondition (p ?x)\n"
            "   :effect (not (p ?x))))")
    domain = parse_domain(text, "d.pddl")
    assert domain.requirements == (":strips", ":stripz", ":typing")
    assert [(loc.line, loc.column) for loc in domain.requirement_locs] == [
        _position(text, ":strips"), _position(text, ":stripz"), _position(text, ":TYPING")]
    (warning,) = [d for d in check_domain(domain) if d.code == "unknown-requirement"]
    assert (warning.severity, warning.loc.line, warning.loc.column) == (
        "warning", *_position(text, ":stripz"))
    assert str(warning).startswith("d.pddl:2:26: warning: unknown requirement :stripz")
    problem = parse_problem("(define (problem q) (:domain d) (:requirements :adl :fluentz)\n"
                            "  (:objects o - t) (:init) (:goal (p o)))", "q.pddl")
    (warning,) = [d for d in check_problem(problem, domain) if d.code == "unknown-requirement"]
    assert (warning.loc.line, warning.loc.column) == (1, 53) and ":fluentz" in warning.message
