"""The gate's one check loop (bit sets, `bits.py`) against the set form of its ground actions.

* `Gate.check` must return exactly the verdict of `reference.check_sets` (frozenset states,
  `applicable`/`apply`) on every corpus triple, on every iTHOR reference
  plan of the bundled task set and on every mutant of it (`sage_pddl.tasks.mutations`), in both
  modes, on a fresh gate and on a warm one (every step resolved before), from the initial
  state and from a given state.
* The gate's methods on sets (`applies`, `applicable`, `effects`, `apply`, `explain`), which
  run the same engine, give the reference's answers at every step of every corpus plan.
* A verdict is a plain value: a frozen dataclass whose fields are values (none a gate); equal
  verdicts are equal, it pickles and copies, its final state is a frozenset, the start state
  with the changed atoms toggled.
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
from sage_pddl.gate import StepRejected, Verdict, compile_gate
from sage_pddl.gate.explain import violations
from sage_pddl.gate.schema import domain_schema
from sage_pddl.pddl import limits, load_domain, load_plan, load_problem, parse_domain, parse_problem
from sage_pddl.pddl.errors import GroundingTooLarge, UnsupportedConstruct
from sage_pddl.pddl.model import Annotation, Atom, Domain, Plan, PlanStep, Problem
from sage_pddl.pddl.plans import written_json
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.mutations import plan_mutants

from . import reference as ref
from .reference import apply, check_sets
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
        cases.append((domain, problem, steps, [[written_json(s) for s in m.steps] for m in mutants]))
    return cases


def _assert_same(gate, plan, **options):
    fast = gate.check(plan, **options)
    slow = check_sets(gate, plan, **options)
    assert fast == slow, (plan, options)
    assert type(fast.final_state) is frozenset


def _assert_same_on_every_path(d, p, plans, other_state=None):
    """Each plan, in both modes, gives the reference's verdict on a gate warmed by it and on a
    fresh one, and from `other_state` (a state with other static facts) when it is given."""
    for plan in plans:
        for mode in ("first", "all"):
            warm = compile_gate(d, p)
            warm.check(plan)
            _assert_same(warm, plan, mode=mode)
            _assert_same(compile_gate(d, p), plan, mode=mode)
            if other_state is not None:
                _assert_same(warm, plan, mode=mode, state=other_state)


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
                _assert_same(warm, plan, mode=mode)  # every step resolved before
        mutants += len(mutated)
        plans += 1
        gate = compile_gate(domain, problem)
        middle = gate.check(reference[: len(reference) // 2]).final_state
        for _ in range(2):  # the second time, from a start state's kept mask
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


def test_a_verdict_is_a_plain_value(ithor_cases):
    domain, problem, reference, _ = ithor_cases[0]
    gate = compile_gate(domain, problem)
    verdict = gate.check(reference)
    expected = check_sets(gate, reference)
    assert verdict == expected and hash(verdict) == hash(expected)
    assert type(verdict.final_state) is frozenset
    assert pickle.loads(pickle.dumps(verdict)) == verdict
    assert copy.deepcopy(verdict) == verdict
    values = [getattr(verdict, name) for name in Verdict._fields]
    assert [type(v) for v in values] == [bool, int, frozenset, frozenset, bool, tuple,
                                         type(None)]  # (no refusal: no verdict of it)
    assert verdict.start_state == gate.initial_state and verdict.changed
    assert verdict.final_state == gate.initial_state ^ verdict.changed == expected.final_state
    assert "changed=frozenset(" in repr(verdict)
    with pytest.raises(AttributeError):
        verdict.valid = False  # type: ignore[misc]
    rejected = gate.check([{"action": "Pick", "object": reference[0]["object"]}])
    assert rejected.violations and pickle.loads(pickle.dumps(rejected)) == rejected
    assert rejected.final_state is gate.initial_state  # nothing changed: no copy
    every = gate.check([*reference[:2], rejected_step := {"action": "Pick", "object":
                        reference[0]["object"]}, *reference[2:]], mode="all")
    first = gate.check([*reference[:2], rejected_step, *reference[2:]], mode="first")
    assert not every.valid and every.first_refusal == first and every.stopped == first
    assert first.first_refusal is None and first.stopped is first
    assert pickle.loads(pickle.dumps(every)) == every


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


def test_check_equals_the_set_form_on_the_corpus(corpus_dir: Path):
    checked = 0
    for domain, problem, plan in _corpus_cases(corpus_dir):
        warm = compile_gate(domain, problem)
        for mode in ("first", "all"):
            _assert_same(compile_gate(domain, problem), plan, mode=mode)
            _assert_same(warm, plan, mode=mode)
            _assert_same(warm, plan, mode=mode)  # every step resolved before
            checked += 1
    assert checked > 700, checked


def _assert_set_methods_same(gate, plan) -> tuple[int, int]:
    """Walk `plan` with the reference; at each step the gate's methods on sets answer as the
    reference does; (the steps compared, those refused)."""
    state = gate.initial_state
    compared = 0
    for index, step in enumerate(gate.plan_steps(plan)):
        try:
            ground = ref.ground_in(gate, step, index, state)
        except StepRejected:
            continue
        applies = ref.applicable(ground, state)
        assert gate.applies(state, ground) is applies, (index, step)
        assert gate.effects(state, ground) == ref.effects(ground, state), (index, step)
        assert gate.apply(state, ground) == apply(ground, state), (index, step)
        compared += 1
        if not applies:
            expected = violations(gate.table, ref.failures(ground.precondition, state),
                                  ground, index, "")
            assert gate.explain(state, ground, index) == expected, (index, step)
            assert gate.applicable(state, ground, index) == expected[0], (index, step)
            return compared, 1
        assert gate.applicable(state, ground, index) is None, (index, step)
        state = apply(ground, state)
    return compared, 0


def test_set_methods_equal_the_reference_on_the_corpus(corpus_dir: Path):
    compared = refused = 0
    for domain, problem, plan in _corpus_cases(corpus_dir):
        steps, stopped = _assert_set_methods_same(compile_gate(domain, problem), plan)
        compared, refused = compared + steps, refused + stopped
    assert compared > 4000 and refused > 100, (compared, refused)


def test_check_equals_the_set_form_on_ithor_mutants(ithor_cases):
    """The first ten tasks of the slow test below: their reference plans and mutants."""
    mutants = 0
    for domain, problem, reference, mutated in ithor_cases[:10]:
        gate = compile_gate(domain, problem)
        for plan in [reference, *mutated]:
            for mode in ("first", "all"):
                _assert_same(gate, plan, mode=mode)
        mutants += len(mutated)
    assert mutants >= 30, mutants


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
    assert table.objects.object_types == types


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
    assert table.objects.declared == {"home": "place", "shared": ("block", "place"), "a": "block",
                              "b": "block", "c": "big", "d": "object", "e": "object"}
    assert ("between", "a", "b", "home") in table.initial_state
    assert ("on", "undeclared", "a") in table.initial_state
    assert table.objects.object_types["shared"] >= {"block", "place"}


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


def test_quantifiers_past_the_grounding_budget_are_refused_on_every_path(monkeypatch):
    """A step whose quantifiers range over more instances than the grounder may enumerate is
    refused, on every check."""
    domain = load_bundled_domain("ithor")
    task = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")[0]
    problem = task_problem(task, domain)
    steps = [dict(s) for s in task.reference_steps]
    monkeypatch.setattr(limits, "MAX_GROUND", 1)
    gate = compile_gate(domain, problem)
    for _ in range(2):
        with pytest.raises(GroundingTooLarge):
            gate.check(steps)


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
    verdict = gate.check(["mark"])  # grounding `mark` takes 6 of the 10 instances
    assert verdict.valid and not verdict.goal_reached
    assert gate.goal_conditions(verdict.final_state) == (1, 2)


def test_guards_on_bit_sets_equal_the_set_form():
    """Disjunctions and implications (`imply` with a static condition, `or` with a static
    alternative, one over a fluent) give the reference's verdicts, from the initial state and
    from a state whose static facts differ (checked without pruning)."""
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
    assert not compile_gate(d, p).check(plans[1]).valid
    _assert_same_on_every_path(d, p, plans, [("lockable", "hall"), ("lit", "cellar")])


def test_nested_disjunctions_on_bit_sets_equal_the_set_form():
    """A disjunction whose alternative is itself only a disjunction (an `exists` of an `or`,
    an `or` in an `or`) is tested as one: with positive and negative alternatives, a static
    one, alternatives that are conjunctions (with a literal, with an equality), in a
    precondition and in the goal."""
    from sage_pddl.pddl.model import And, Equals, Exists, Or

    from .helpers import action, atom, domain, neg, problem, term, typed
    somewhere = Exists(typed("?r - room"), Or((atom("on", "?o", "?r"), atom("in", "?o", "?r"))))
    only_a = And((Equals(term("?o"), term("a")), Or((atom("loose", "?o"), atom("glued", "?o")))))
    stow = action("Stow", "?o - thing",
                  pre=[Or((somewhere, Or((neg("loose", "?o"), atom("glued", "?o"))), only_a)),
                       Or((Or((atom("held", "?o"),)),
                           And((atom("lit",), Or((neg("held", "?o"), atom("glued", "?o"))))),
                           And((neg("loose", "?o"), Or((atom("lit",), atom("glued", "?o")))))))],
                  eff=[atom("stowed", "?o")])
    put = action("Put", "?o - thing ?r - room", eff=[atom("on", "?o", "?r"), atom("held", "?o")])
    drop = action("Drop", "?o - thing", eff=[neg("held", "?o"), atom("loose", "?o")])
    light = action("Light", "", eff=[atom("lit",)])
    d = domain([stow, put, drop, light], types=[("thing", ""), ("room", "")],
               predicates=("on", "in", "loose", "glued", "held", "lit", "stowed"))
    goal = And((Exists(typed("?o - thing"), Or((Exists(typed("?r - room"),
                                                       atom("in", "?o", "?r")),
                                                atom("stowed", "?o")))),))
    p = problem("a - thing b - thing g - thing hall - room attic - room",
                init=[atom("loose", "a"), atom("loose", "b"), atom("glued", "g"), atom("loose", "g")],
                goal=goal)
    plans = [["Stow a"], ["Stow g"], ["Put a hall", "Stow a"], ["Light", "Stow g"],
             ["Drop b", "Light", "Stow b"], ["Put b attic", "Drop b", "Stow b"],
             ["Light", "Put a hall", "Drop a", "Stow a", "Stow g"], ["Light", "Stow a"],
             ["Light", "Stow b"]]
    assert compile_gate(d, p).check(plans[2]).solved
    assert not compile_gate(d, p).check(plans[0]).valid
    _assert_same_on_every_path(d, p, plans, [("glued", "a"), ("loose", "a")])


def _carts() -> tuple[Domain, Problem]:
    """Things grabbed and loaded on a cart: a literal written twice, an implication over a
    fluent in a `forall`, a precondition that contradicts itself."""
    from sage_pddl.pddl.model import Forall, Imply

    from .helpers import action, atom, domain, neg, problem, typed
    grab = action("Grab", "?o - thing", pre=[atom("free", "?o"), atom("free", "?o")],
                  eff=[atom("held", "?o"), neg("free", "?o")])
    fit = action("Fit", "?o - thing ?c - cart", eff=[atom("fits", "?o", "?c")])
    load = action("Load", "?c - cart",
                  pre=[atom("empty", "?c"),
                       Forall(typed("?o - thing"), Imply(atom("held", "?o"),
                                                         atom("fits", "?o", "?c")))],
                  eff=[neg("empty", "?c")])
    odd = action("Odd", "?o - thing", pre=[atom("free", "?o"), neg("free", "?o")])
    d = domain([grab, fit, load, odd], types=[("thing", ""), ("cart", "")],
               predicates=("free", "held", "fits", "empty"))
    p = problem("a - thing b - thing c - thing k - cart",
                init=[atom("free", "a"), atom("free", "b"), atom("empty", "k")])
    return d, p


def test_explanations_on_bit_sets_equal_the_set_form():
    """A rejected step's violations in the check loop (`explain.Explainer`) are `explain`'s
    on sets: implications over a fluent (filed under their condition's atom in the guard), a
    literal written twice, a precondition that contradicts itself, in both modes."""
    d, p = _carts()
    plans = [["Grab a", "Grab a"], ["Grab a", "Grab b", "Load k"], ["Odd a", "Odd c"],
             ["Grab a", "Fit a k", "Load k", "Load k"], ["Grab c", "Grab a", "Fit b k", "Load k"],
             ["Grab a", "Grab b", "Fit a k", "Fit b k", "Load k"]]
    assert compile_gate(d, p).check(plans[-1]).valid
    _assert_same_on_every_path(d, p, plans)


def test_kept_violations_follow_the_refusal_index_and_the_state_read():
    """One gate keeps a refused step's violations per state of the atoms its precondition
    reads (`explain.Explainer`): checking plan after plan, it reports them at each refusal's
    index, the same where only atoms the precondition does not read differ, and anew where
    those it reads differ, as the set form does."""
    d, p = _carts()
    gate = compile_gate(d, p)
    plans = [["Grab a", "Grab a"], ["Grab b", "Grab a", "Grab a"], ["Load k", "Load k"],
             ["Grab a", "Load k"], ["Grab a", "Fit a k", "Load k", "Load k"],
             ["Grab a", "Grab b", "Fit a k", "Load k"], ["Grab c", "Grab c", "Grab c"],
             ["Grab a", "Grab a", "Grab a"]]
    for plan in plans:
        for mode in ("first", "all"):
            _assert_same(gate, plan, mode=mode)
    again = gate.check(["Grab b", "Grab a", "Grab a"], mode="all").violations
    assert [v.step for v in again] == [2]
    assert ({v.code for v in gate.check(plans[3]).violations}
            != {v.code for v in gate.check(plans[2][1:] + ["Load k"]).violations})


def test_static_literals_decided_on_bit_sets_equal_the_set_form():
    """Static atoms have no bit (`bits.BitSets`): a static literal is decided when its mask is
    made. The verdicts stay the set form's where static literals fail beside fluent ones (both
    reported, in source order), decide an alternative of a disjunction, and trigger a
    conditional effect whose condition is not a plain conjunction; from the initial state and
    from a state with other static facts (checked without pruning)."""
    from sage_pddl.pddl.model import And, Or, When

    from .helpers import action, atom, domain, neg, problem
    enter = action("Enter", "?r - room", pre=[atom("lockable", "?r"), neg("inside", "?r")],
                   eff=[atom("inside", "?r")])
    look = action("Look", "?r - room",
                  pre=[Or((And((atom("lit", "?r"), atom("inside", "?r"))), atom("has-lamp")))],
                  eff=[When(And((atom("lit", "?r"), Or((atom("inside", "?r"),
                                                         atom("has-lamp"))))),
                            atom("seen", "?r"))])
    light = action("Light", "", pre=[], eff=[atom("has-lamp")])
    d = domain([enter, look, light], types=[("room", "")],
               predicates=("lockable", "lit", "inside", "has-lamp", "seen"))
    p = problem("Hall - room Vault - room Cellar - room",
                init=[atom("lockable", "Vault"), atom("lit", "Vault"), atom("inside", "Hall")])
    plans = [["Enter Hall"], ["Enter Cellar"], ["Enter Vault", "Look Vault"], ["Look Cellar"],
             ["Light", "Look Cellar", "Look Hall", "Enter Vault", "Look Vault"]]
    assert compile_gate(d, p).check(plans[2]).final_state >= {("seen", "vault")}
    codes = [v.code for v in compile_gate(d, p).check(plans[0]).violations]
    assert codes == ["enter/requires/lockable", "enter/forbids/inside"]
    lit_cellar = frozenset({("lit", "cellar"), ("has-lamp",)})  # another static fact
    gate = compile_gate(d, p)
    ground = gate.ground("Look Cellar", state=lit_cellar)
    assert ("seen", "cellar") in gate.apply(lit_cellar, ground)
    assert gate.apply(lit_cellar, ground) == apply(ground, lit_cellar)
    _assert_same_on_every_path(d, p, plans, [("lockable", "hall"), ("lit", "cellar")])


def test_a_refused_step_is_explained_from_its_literals_bits_read_on_refusal():
    """A compiled condition keeps its ground source and reads each literal's bit only when a
    step is refused (`engine.CompiledCond.failures`): a false equality is reported first and
    once (it has no bit), then the failed static and fluent literals in source order, the
    same from the initial state and from a state with other static facts (the unpruned
    form, where every atom is fluent), as the set form says."""
    from sage_pddl.pddl.model import Equals, Not, Variable

    from .helpers import action, atom, domain, neg, problem
    swap = action("Swap", "?a - thing ?b - thing",
                  pre=[Not(Equals(Variable("a"), Variable("b"))), atom("fixed", "?a"),
                       atom("holding", "?a"), neg("holding", "?b")],
                  eff=[atom("holding", "?b"), neg("holding", "?a")])
    d = domain([swap], types=[("thing", "")], predicates=("fixed", "holding"))
    p = problem("Cup - thing Pen - thing", init=[atom("fixed", "Cup"), atom("holding", "Pen")])
    codes = [v.code for v in compile_gate(d, p).check(["Swap Pen Pen"]).violations]
    assert codes == ["swap/forbids/equal", "swap/requires/fixed", "swap/forbids/holding"]
    plans = [["Swap Pen Pen"], ["Swap Cup Pen"], ["Swap Pen Cup"], ["Swap Cup Cup"]]
    _assert_same_on_every_path(d, p, plans, [("fixed", "pen"), ("holding", "cup")])
