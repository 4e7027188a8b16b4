"""The gate's fast paths against its reference paths.

* `Gate.check` (bit-set states, cached step resolution, lazy final state) must return exactly
  the verdict of `reference.check_sets` (frozenset states, `GroundAction.applicable`/`apply`) on every
  iTHOR reference plan of the bundled task set and on every mutant of it
  (`sage_pddl.tasks.mutations`), in both modes, on a fresh gate (steps ground on first use) and
  on a warm one (every step a cache hit), from the initial state and from a given state.
* Template grounding (tuple substitution) must give the same sets as walking the whole action,
  on every step of every corpus plan and every iTHOR reference plan.
* A gate's first check runs on sets, with each action's generated step function
  (`compiled.py`) instead of its ground action: on every step of every corpus plan and every
  iTHOR reference plan and mutant, in the state the step meets (mode "all", so rejected steps
  are met too), the function must accept exactly when the ground action is applicable and
  leave exactly the state `apply` gives, for every candidate of a step whose words name
  instances; the words form must agree or decline; a rejected step's failures read from the
  template must be the walker's. The first check's verdict must equal a warm gate's on every
  corpus triple.
* The bit-set form decides what the static facts decide (an `imply` with a static condition,
  an `or` with a static alternative) and stays equal to the reference, also from a state whose
  static facts differ.
* The per-domain schema cache is per object: equal domains whose `@sage` annotations differ
  (annotations are not part of equality) do not share a schema.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain as load_bundled_domain
from sage_pddl.gate import compile_gate
from sage_pddl.gate import gate as gate_module
from sage_pddl.gate.gate import Instances, _failures
from sage_pddl.gate.schema import domain_schema
from sage_pddl.pddl import limits, load_domain, load_plan, load_problem, parse_domain, parse_problem
from sage_pddl.pddl.errors import GroundingTooLarge, UnsupportedConstruct
from sage_pddl.pddl.model import Annotation, Atom, Domain, Plan, PlanStep, Problem
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.mutations import plan_mutants

from .reference import check_sets
from .test_gate_corpus import load_triples

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ithor_cases():
    domain = load_bundled_domain("ithor")
    tasks = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")
    cases = []
    for task in tasks:
        problem = task_problem(task, domain)
        steps = [dict(s) for s in task.reference_steps]
        mutants = plan_mutants(domain, problem, steps, task.task_id, per_class=2)
        cases.append((domain, problem, steps, [[dict(s) for s in m.steps] for m in mutants]))
    return cases


def _assert_same(gate, plan, **options):
    fast = gate.check(plan, **options)
    slow = check_sets(gate, plan, **options)
    assert fast == slow, (plan, options)
    assert type(fast.final_state) is frozenset


@pytest.mark.slow  # every iTHOR reference plan and every mutant
def test_fast_check_equals_reference_on_ithor_plans_and_mutants(ithor_cases):
    plans = mutants = 0
    for domain, problem, reference, mutated in ithor_cases:
        for plan in [reference, *mutated]:
            for mode in ("first", "all"):
                _assert_same(compile_gate(domain, problem), plan, mode=mode)  # grounds on first use
            warm = compile_gate(domain, problem)
            warm.check(plan)
            for mode in ("first", "all"):
                _assert_same(warm, plan, mode=mode)  # every step a cache hit
            for mode in ("first", "all"):  # every move remembered, accepted verdicts too
                _assert_same(warm, plan, mode=mode)
        mutants += len(mutated)
        plans += 1
        gate = compile_gate(domain, problem)
        middle = gate.check(reference[: len(reference) // 2]).final_state
        for _ in range(2):  # the second time, from remembered moves
            _assert_same(gate, reference[len(reference) // 2:], state=middle)
            _assert_same(gate, reference[len(reference) // 2:], state=list(middle))
    assert plans == 75 and mutants >= 300, (plans, mutants)


def test_rejections_agree_in_both_paths(ithor_cases):
    domain, problem, reference, mutated = ithor_cases[0]
    gate = compile_gate(domain, problem)
    odd_plans = [
        [{"action": "Teleport", "object": "Mug"}, *reference],
        [{"action": "MoveTo"}, *reference],  # no "object": key built with .get
        [reference[0], "Pick Nothing", {"action": ["unhashable"]}],
        [PlanStep(s["action"], tuple(v for v in (s["object"], s["target"]) if v), index=i,
                  fields=(("object", s["object"]), ("target", s["target"])))
         for i, s in enumerate(reference)] + ["Wait"],
    ]
    for plan in odd_plans:
        for mode in ("first", "all"):
            _assert_same(gate, plan, mode=mode)
            _assert_same(gate, plan, mode=mode)


def test_lazy_final_state_behaves_as_a_frozenset_field(ithor_cases):
    domain, problem, reference, _ = ithor_cases[0]
    gate = compile_gate(domain, problem)
    verdict = gate.check(reference)
    expected = check_sets(gate, reference).final_state
    assert pickle.loads(pickle.dumps(verdict)) == verdict
    assert type(pickle.loads(pickle.dumps(verdict)).final_state) is frozenset
    assert copy.deepcopy(gate.check(reference)).final_state == expected
    assert gate.check(reference).to_dict()["final_state"] == expected
    assert hash(gate.check(reference)) == hash(check_sets(gate, reference))
    assert verdict.final_state is verdict.final_state == expected
    assert "final_state=frozenset(" in repr(gate.check(reference))
    with pytest.raises(AttributeError):
        verdict.final_state = frozenset()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        verdict.valid = False  # type: ignore[misc]


def _compare_grounding(gate, steps) -> int:
    compared = 0
    for step in steps:
        try:
            ground = gate.ground(step)
        except Exception:  # noqa: BLE001 - structural rejections have no ground action
            continue
        pos, neg, add, delete, conditional, precondition = gate.table.ground_by_walking(
            ground.schema, ground.args)
        assert (ground.pre_pos, ground.pre_neg, ground.add, ground.delete) == (pos, neg, add, delete)
        assert (precondition.pos, precondition.neg) == (pos, neg)
        assert (ground.precondition.pos, ground.precondition.neg) == (pos, neg)
        assert (ground.conditional is None) == (not conditional)
        compared += 1
    return compared


def _corpus_cases(corpus_dir: Path) -> Iterator[tuple[Domain, Problem, Plan]]:
    """(domain, problem, plan) of every corpus triple inside the gate's scope."""
    domains: dict[str, Domain] = {}
    for triple in load_triples(corpus_dir):
        path = str(corpus_dir / triple["domain"])
        if path not in domains:
            domains[path] = load_domain(path)
        problem = load_problem(corpus_dir / triple["problem"])
        try:
            compile_gate(domains[path], problem)
        except UnsupportedConstruct:
            continue
        yield domains[path], problem, load_plan(corpus_dir / triple["plan"])


def test_template_grounding_equals_walking_on_the_corpus(corpus_dir: Path):
    compared = sum(_compare_grounding(compile_gate(domain, problem), plan.steps)
                   for domain, problem, plan in _corpus_cases(corpus_dir))
    assert compared > 3000


def test_template_grounding_equals_walking_on_ithor(ithor_cases):
    compared = sum(_compare_grounding(compile_gate(d, p), steps)
                   for d, p, steps, _ in ithor_cases)
    assert compared > 200


def _assert_problem_tables_as_defined(domain: Domain, problem: Problem) -> None:
    """The initial state and object types a compile reads on its fast paths (names used as
    keys when they are written in lower case, objects of one declaration typed once) equal
    their definitions, read from the model one fact and one declaration at a time."""
    table = compile_gate(domain, problem).table
    assert table.initial_state == frozenset(
        (fact.predicate.lower(), *(term.name.lower() for term in fact.args))
        for fact in problem.init if isinstance(fact, Atom))
    types: dict[str, frozenset[str]] = {}
    for typed in itertools.chain(domain.constants, problem.objects):
        name = typed.name.lower()
        types[name] = types.get(name, frozenset({"object"})).union(
            *map(table.schema.ancestors, typed.types))
    assert table.object_types == types


def test_problem_tables_equal_their_definitions_on_the_corpus_and_ithor(corpus_dir: Path,
                                                                        ithor_cases):
    problems = 0
    for domain, problem, _ in _corpus_cases(corpus_dir):
        _assert_problem_tables_as_defined(domain, problem)
        problems += 1
    for domain, problem, _, _ in ithor_cases:
        _assert_problem_tables_as_defined(domain, problem)
    assert problems > 300


def test_problem_tables_with_mixed_case_names_and_every_arity():
    domain = parse_domain("""(define (domain Mixed) (:requirements :typing)
      (:types Block Place - object Big - Block)
      (:constants Home - Place Shared - Block)
      (:predicates (Flag) (On ?a ?b) (Clear ?a) (Between ?a ?b ?c) (Four ?a ?b ?c ?d))
      (:action Noop :parameters () :effect (and)))""")
    problem = parse_problem("""(define (problem P) (:domain Mixed)
      (:objects A b - Block C - Big Shared - Place d e)
      (:init (flag) (ON A b) (on a B) (Clear C) (clear HOME) (between A B home)
             (BETWEEN a c Shared) (four A b C d) (not (clear e)) (On Undeclared a))
      (:goal (and (On A b))))""")
    _assert_problem_tables_as_defined(domain, problem)
    table = compile_gate(domain, problem).table
    assert table.declared == {"home": "place", "shared": ("block", "place"), "a": "block",
                              "b": "block", "c": "big", "d": "object", "e": "object"}
    assert table.schema.fitting(frozenset({"block"})) == {"block", "big"}
    assert table.schema.fitting(frozenset({"big", "undeclared"})) == {"big", "undeclared"}
    assert ("between", "a", "b", "home") in table.initial_state
    assert ("on", "undeclared", "a") in table.initial_state
    assert table.object_types["shared"] >= {"block", "place"}


def test_domain_schema_is_cached_per_object_not_per_equality():
    domain = load_bundled_domain("ithor")
    assert domain_schema(domain) is domain_schema(domain)
    renamed = dataclasses.replace(domain, annotations=(
        *domain.annotations, Annotation("alias", "MoveTo Teleport")))
    assert renamed == domain  # annotations do not take part in equality...
    assert domain_schema(renamed) is not domain_schema(domain)  # ...so the cache keys on identity
    assert domain_schema(renamed).vocabulary.action("Teleport").name == "MoveTo"
    assert domain_schema(domain).vocabulary.action("Teleport") is None
    schema = domain_schema(renamed)  # neither it nor its vocabulary holds the domain itself
    assert all(value is not renamed for value in vars(schema).values())
    assert all(value is not renamed for value in vars(schema.vocabulary).values())


def test_cached_steps_are_keyed_by_content_not_by_the_step_object(ithor_cases):
    """A planner may edit a step in place: the gate must see the edit on the next check."""
    domain, problem, reference, _ = ithor_cases[0]
    gate = compile_gate(domain, problem)
    plan = [dict(s) for s in reference]
    assert gate.check(plan).valid
    plan[-1]["action"] = "Teleport"
    edited = gate.check(plan)
    assert not edited.valid and edited.violations[0].code == "unknown-action"
    assert edited == check_sets(gate, plan)
    plan[-1] = dict(reference[-1])
    assert gate.check(plan) == check_sets(gate, plan) and gate.check(plan).valid


def test_remembered_moves_are_bounded_and_never_stand_for_a_rejection(ithor_cases):
    """A step remembers at most `_MOVES_KEPT` states; a state in which it does not apply is
    not remembered, so checking it again explains it again."""
    domain, problem, reference, _ = ithor_cases[0]
    gate = compile_gate(domain, problem)
    gate.check(reference)
    gate.check(reference)
    moves = gate._moves_of(reference[0], 0)
    assert moves, "the second check remembered the first step's move"
    first_state = next(iter(moves))
    assert moves[first_state] == moves.move(first_state)
    for extra in range(gate_module._MOVES_KEPT + 1):  # made-up states with a bit no atom has
        moves.move(first_state | 1 << (10_000 + extra))
    assert 0 < len(moves) <= gate_module._MOVES_KEPT
    pick = {"action": "Pick", "object": reference[0]["object"], "target": ""}
    rejected = gate.check([pick])
    assert not rejected.valid and gate._moves_of(pick, 0).move(gate.table.initial_mask) is None
    assert not gate._moves_of(pick, 0), "a rejection is not a move"
    again = gate.check([pick])
    assert again == rejected == check_sets(gate, [pick])
    assert again.violations and again.violations is not rejected.violations


def test_an_accepted_verdict_is_made_again_for_another_length(ithor_cases):
    """The verdicts of accepted plans are kept by final state, and given again only to a plan
    of the same length; from another start, its final state is still the check's."""
    domain, problem, reference, _ = ithor_cases[0]
    gate = compile_gate(domain, problem)
    for _ in range(3):
        whole = gate.check(reference)
        assert whole == check_sets(gate, reference)
    assert gate.check(reference) is whole
    final = whole.final_state
    empty = gate.check([], state=final)  # the same final state, from another start, 0 steps
    assert empty is not whole and empty == check_sets(gate, [], state=final)
    assert empty.steps_checked == 0 and whole.steps_checked == len(reference)
    middle = gate.check(reference[:2]).final_state
    for _ in range(2):  # the last steps from the middle: the same length as no plan, but not 0
        rest = gate.check(reference[2:], state=middle)
        assert rest == check_sets(gate, reference[2:], state=middle)
        assert rest.final_state == final
    once, twice = reference[:1], reference[:1] * 2  # a second MoveTo to where it stands
    for _ in range(2):
        first, second = gate.check(once), gate.check(twice)
        assert first.final_state == second.final_state, "the same start and final state"
        assert (first.steps_checked, second.steps_checked) == (1, 2)
        assert first == check_sets(gate, once) and second == check_sets(gate, twice)
    there = gate.check(once).final_state  # from there, the same one step ends there again
    for _ in range(2):
        assert gate.check(once, state=there) == check_sets(gate, once, state=there)
    assert gate.check(once, state=there) is gate.check(once)


def _compare_step_functions(gate, plan) -> tuple[int, int, int]:
    """Walk `plan` in mode "all" on sets; at each step compare the generated functions (and a
    rejected step's template failures) with the ground action's set form, and the precondition
    alone (`precondition_holds`, on a table that grounds no action) with its `applicable`, and
    a rejected step's violations read from the template (`_explain_literals`, what a first
    check reports) with `explain` of its ground action; and the words function of a PlanStep
    with the ground action, which it must not decline when the words name objects of one
    declared type each. Returns how many steps had a function to compare, how many
    rejections were explained from the template and how many steps a words function bound."""
    table = gate.table
    preconditions_only = compile_gate(table.domain, table.problem).table
    state = set(gate.initial_state)
    compared = explained_rejections = words_answered = 0
    for index, step in enumerate(gate.plan_steps(plan)):
        try:
            bound = gate._bind(step, index)
        except Exception:  # noqa: BLE001 - structural rejections have no action to run
            continue
        if isinstance(bound, Instances):  # words naming instances: each candidate's function
            named, candidates = bound.named, bound.candidates
        else:
            named, objects = bound
            candidates = (objects,)
        expected = set(state)
        acted = False  # the first candidate that applies is the one the step acts on
        for objects in candidates:
            holds = preconditions_only.precondition_holds(named.action, objects, state)
            ground = table.ground(named.action, objects)
            applicable = ground.applicable(state)
            assert holds is applicable, step
            if applicable and not acted:
                ground.apply_in_place(expected)
                acted = True
            if not applicable:
                failures = table.literal_failures(ground, frozenset(state))
                if failures is not None:
                    assert failures == _failures(ground.precondition, frozenset(state)), step
                # a first check explains a rejected step from the template, grounding nothing
                explained = gate._explain_literals(named.action, objects, state, index, "s")
                assert (explained is None) is (failures is None), step
                if explained is not None:
                    assert explained == gate.explain(frozenset(state), ground, index, "s"), step
                    explained_rejections += 1
            if named.template.step is not None:
                after = set(state)
                assert named.template.step(after, objects, table.objects_of_keys) is applicable, step
                if applicable:
                    ground.apply_in_place(target := set(state))
                    assert after == target, step
                else:
                    assert after == state, step
                compared += 1
        run = table.schema.runs.get(step.action) if isinstance(step, PlanStep) else None
        if run is not None:
            after = set(state)
            answer = run(after, step.args, table.declared.get, table.objects_of_keys)
            assert answer is None or (answer is applicable and after == expected), step
            assert answer is not None or after == state, step
            # words that name objects of one declared type each are bound by the function
            exact = (not isinstance(bound, Instances) and len(candidates) == 1
                     and all(type(table.declared[o]) is str for o in candidates[0]))
            assert answer is not None or not exact or named.template.step is None, step
            words_answered += answer is not None
        state = expected
    return compared, explained_rejections, words_answered


def test_step_functions_equal_ground_actions_on_the_corpus(corpus_dir: Path):
    compared = first_checks = explained = answered = 0
    for domain, problem, plan in _corpus_cases(corpus_dir):
        functions, rejections, words = _compare_step_functions(compile_gate(domain, problem),
                                                               plan)
        compared += functions
        explained += rejections
        answered += words
        for mode in ("first", "all"):
            first = compile_gate(domain, problem).check(plan, mode=mode)  # on sets
            warm = compile_gate(domain, problem)
            warm.check(plan)
            assert first == warm.check(plan, mode=mode) == check_sets(warm, plan, mode=mode)
            first_checks += 1
    assert compared > 3000 and first_checks > 700 and explained > 100, (compared, first_checks,
                                                                         explained)
    assert answered > 3000, answered  # the words functions bind the corpus plans' steps


@pytest.mark.slow  # every iTHOR reference plan and every mutant
def test_step_functions_equal_ground_actions_on_ithor(ithor_cases):
    compared = explained = 0
    for domain, problem, reference, mutated in ithor_cases:
        for plan in [reference, *mutated]:
            functions, rejections, _ = _compare_step_functions(compile_gate(domain, problem),
                                                               plan)
            compared += functions
            explained += rejections
    assert compared > 1500 and explained > 100, (compared, explained)


def test_quantifiers_past_the_grounding_budget_are_refused_on_every_path(monkeypatch):
    """A step function declines (None) when its quantifiers range over more instances than
    the grounder may enumerate, so the first check refuses the step as grounding does."""
    domain = load_bundled_domain("ithor")
    task = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")[0]
    problem = task_problem(task, domain)
    steps = [dict(s) for s in task.reference_steps]
    monkeypatch.setattr(limits, "MAX_GROUND", 1)
    with pytest.raises(GroundingTooLarge):
        compile_gate(domain, problem).check(steps)  # the first check, on sets
    warm = compile_gate(domain, problem)
    with pytest.raises(GroundingTooLarge):
        warm.check(steps)
    with pytest.raises(GroundingTooLarge):
        warm.check(steps)  # the bit-set loop grounds too


def test_each_condition_is_ground_under_a_budget_of_its_own(monkeypatch):
    """The budget is per grounding: what grounding an action used up does not count against a
    goal conjunct ground afterwards for goal-condition success."""
    domain = parse_domain(
        "(define (domain b) (:requirements :adl) (:predicates (p ?x) (q ?x))"
        " (:action mark :parameters () :precondition (and) :effect (forall (?x) (p ?x))))")
    problem = parse_problem(
        "(define (problem b1) (:domain b) (:objects o1 o2 o3 o4 o5 o6) (:init)"
        " (:goal (and (forall (?x) (p ?x)) (q o1))))")
    monkeypatch.setattr(limits, "MAX_GROUND", 10)  # one 6-object quantifier fits, two do not
    gate = compile_gate(domain, problem)
    verdict = gate.check(["mark"])
    verdict = gate.check(["mark"])  # the warm check grounds `mark`: 6 of the 10 instances
    assert verdict.valid and not verdict.goal_reached
    assert gate.goal_conditions(verdict.final_state) == (1, 2)


def test_static_facts_decide_guards_on_bit_sets():
    """The bit-set form takes out of a step's guard what the static facts decide (an
    `imply` with a static condition, an `or` with a static alternative): a step whose guard
    the static facts make true takes the plain path, and one whose implication holds gets
    the consequent in its literal test. Verdicts stay the reference's, from the initial state
    and from a state whose static facts differ (checked without pruning)."""
    from sage_pddl.gate.bits import BitSets
    from sage_pddl.pddl.model import Imply, Or

    from .helpers import action, atom, domain, neg, problem
    enter = action("Enter", "?r - room",
                   pre=[Imply(atom("lockable", "?r"), atom("unlocked", "?r")),
                        Or((atom("lit", "?r"), atom("has-lamp"))), neg("inside", "?r")],
                   eff=[atom("inside", "?r")])
    unlock = action("Unlock", "?r - room", pre=[atom("lockable", "?r")],
                    eff=[atom("unlocked", "?r")])
    light = action("Light", "", pre=[], eff=[atom("has-lamp")])
    d = domain([enter, unlock, light], types=[("room", "")],
               predicates=("lockable", "unlocked", "lit", "has-lamp", "inside"))
    p = problem("Hall - room Vault - room Cellar - room",
                init=[atom("lockable", "Vault"), atom("lit", "Hall"), atom("lit", "Vault")])
    plans = [["Enter Hall"], ["Enter Vault"], ["Unlock Vault", "Enter Vault"], ["Enter Cellar"],
             ["Light", "Enter Cellar", "Unlock Vault", "Enter Vault", "Enter Hall"]]
    assert compile_gate(d, p).check(plans[-1]).valid
    for plan in plans:
        for mode in ("first", "all"):
            warm = compile_gate(d, p)
            warm.check(plan)
            _assert_same(warm, plan, mode=mode)
            _assert_same(warm, plan, mode=mode, state=[("lockable", "hall"), ("lit", "cellar")])
    gate = compile_gate(d, p)
    gate.check(["Enter Hall"])
    hall = gate.ground("Enter Hall").fast
    assert not hall[0] & BitSets.ALWAYS  # no guard left: the plain path
    vault = gate.ground("Enter Vault").fast
    unlocked = gate.table.bits.bit_of[("unlocked", "vault")]
    assert vault[1] & unlocked and not vault[0] & BitSets.ALWAYS  # the consequent, tested
    cellar = gate.ground("Enter Cellar").fast
    assert cellar[0] & BitSets.ALWAYS  # `(or (lit Cellar) (has-lamp))` reads a fluent
