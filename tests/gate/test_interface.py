"""The gate's interface (`gate/interface.py`: `PlanChecker`): the gate has it, member for member
with the same signatures, and the environments, the runtime, the planners, the benchmark and
induction use a gate through it alone: they annotate what they take as a `PlanChecker` (never
`Gate`), and every attribute they read of a gate is one of its members."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

from sage_pddl.gate import Gate, compile_gate
from sage_pddl.gate.interface import PlanChecker
from sage_pddl.pddl import parse_domain, parse_problem

PACKAGE = Path(__file__).resolve().parents[2] / "sage_pddl"

USERS = sorted([*(PACKAGE / "env").rglob("*.py"), PACKAGE / "runtime.py",
                *(PACKAGE / "induce").glob("*.py"), *(PACKAGE / "planners").glob("*.py"),
                *(PACKAGE / "bench").glob("*.py"),
                PACKAGE / "gate" / "feedback.py", PACKAGE / "gate" / "outcome.py"])
"""The modules that take a gate through the interface: the environments, the runtime,
induction, the planners and the benchmark, every module of each, and the two of the gate
package that the planners and the benchmark hand their checker to (`feedback.render_feedback`,
`outcome.plan_outcomes`). Those among them that compile a gate (the bench's run context, one
per task; its reference responder; a planner given a task without one; the planners' memory,
which gates its seeds; induction) are in too: `compile_gate` is called there, and what it
returns is held and used as a `PlanChecker` like any other. Left out: the rest of the gate
package, which is the implementation, and the command line (`cli/`), which compiles the gates
it checks plans with and shows what only a `Gate` has (`readings`: the synonyms a plan was
read through)."""

MEMBERS = frozenset(name for name in vars(PlanChecker)
                    if not name.startswith("_") and name not in ("mro",))

DOMAIN = """(define (domain d) (:requirements :strips :negative-preconditions)
  (:predicates (on ?x) (lit))
  (:action flip :parameters (?x) :precondition (not (on ?x)) :effect (and (on ?x) (lit))))"""
PROBLEM = "(define (problem p) (:domain d) (:objects a b) (:init (on b)) (:goal (lit)))"


def test_the_interface_is_small_and_the_gate_has_it_with_the_same_signatures():
    gate = compile_gate(parse_domain(DOMAIN), parse_problem(PROBLEM))
    assert isinstance(gate, PlanChecker)
    assert {"initial_state", "ground", "apply", "check", "goal_conditions"} <= MEMBERS
    # four groups (what it checks, a step, a plan, the goal): what a planner asks of a compiled
    # domain and problem, not what a gate holds
    assert len(MEMBERS) <= 20, sorted(MEMBERS)
    for name in sorted(MEMBERS):
        theirs, mine = inspect.getattr_static(PlanChecker, name), inspect.getattr_static(Gate, name)
        if isinstance(theirs, property):
            assert isinstance(mine, property), name
            continue
        expected, actual = inspect.signature(theirs), inspect.signature(mine)
        assert [(p.name, p.kind, p.default) for p in expected.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in actual.parameters.values()], name


def test_the_interface_runs_a_step_a_plan_and_the_goal():
    """What a caller of the interface sees on a problem small enough to check by hand."""
    checker: PlanChecker = compile_gate(parse_domain(DOMAIN), parse_problem(PROBLEM))
    start = checker.initial_state
    assert start == {("on", "b")} and checker.objects == {"a": "a", "b": "b"}
    from sage_pddl.pddl.model import PlanStep

    flip_a, flip_b = (checker.ground(PlanStep("flip", (o,))) for o in ("a", "b"))
    assert checker.applies(start, flip_a) and checker.applicable(start, flip_a) is None
    assert not checker.applies(start, flip_b)
    assert [v.code for v in checker.explain(start, flip_b)] == [
        checker.applicable(start, flip_b).code]
    assert checker.effects(start, flip_a) == ({("on", "a"), ("lit",)}, frozenset())
    after = checker.apply(start, flip_a)
    assert after == {("on", "a"), ("on", "b"), ("lit",)}
    assert checker.goal_conditions(start) == (0, 1) and checker.goal_holds(after)
    flip = checker.domain.actions[0]
    assert checker.precondition_holds(flip, ("a",), start)
    assert not checker.precondition_holds(flip, ("b",), start)
    assert checker.format_atom(("on", "a")) == "(on a)"
    (_, holds), = checker.goal_report(start)
    assert not holds and checker.goal_report(after)[0][1]
    assert [f.atom for f in checker.goal_failures(start)] == [("lit",)]
    assert checker.goal_unmet(start) == ["(lit)"] and checker.goal_unmet(after) == []
    assert checker.check("(flip a)").valid and not checker.check("(flip b)").valid
    assert checker.for_state(after) is checker


CHECKER = ("PlanChecker", "PlanChecker | None")


def _annotated_checkers(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names, self attributes) annotated `PlanChecker` (or `PlanChecker | None`) in `tree`."""
    names, attributes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            if ast.unparse(node.annotation) in CHECKER:
                names.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) in CHECKER:
            target = node.target
            if isinstance(target, ast.Name):
                names.add(target.id)
            elif isinstance(target, ast.Attribute):
                attributes.add(target.attr)
    return names, attributes


def _gate_reads(path: Path) -> list[tuple[int, str]]:
    """(line, attribute) of every attribute read of a gate in the module: of a name or `self.`
    attribute annotated `PlanChecker`, or called `gate`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names, attributes = _annotated_checkers(tree)
    names.add("gate")
    attributes.add("gate")
    decorators = {id(d) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                  for d in node.decorator_list}  # `@gate.setter` reads no gate
    reads = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in decorators:
            continue
        owner = node.value
        if (isinstance(owner, ast.Name) and owner.id in names) or (
                isinstance(owner, ast.Attribute) and owner.attr in attributes
                and isinstance(owner.value, ast.Name) and owner.value.id == "self"):
            reads.append((node.lineno, node.attr))
    return reads


def test_everything_that_takes_a_gate_uses_it_through_the_interface():
    beyond, typed_as_gate, takers = [], [], set()
    for path in USERS:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        where = path.relative_to(PACKAGE.parent)
        for node in ast.walk(tree):
            annotation = getattr(node, "annotation", None) or getattr(node, "returns", None)
            if annotation is not None and "Gate" in {
                    n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}:
                typed_as_gate.append(f"{where}:{node.lineno}")
        if _annotated_checkers(tree)[0] | _annotated_checkers(tree)[1]:
            takers.add(str(path.relative_to(PACKAGE)))
        beyond += [f"{where}:{line} .{attribute}" for line, attribute in _gate_reads(path)
                   if attribute not in MEMBERS]
    assert not typed_as_gate, typed_as_gate
    assert not beyond, beyond
    # the check reads something: what takes a checker where the program runs a step or a plan
    assert TAKERS <= takers, sorted(TAKERS - takers)


TAKERS = {"env/symbolic.py", "env/thor/ai2thor_backend.py", "env/episode.py", "runtime.py",
          "induce/probe.py", "induce/collect.py", "planners/base.py", "planners/session.py",
          "planners/gating.py", "bench/cell.py", "bench/metrics.py", "bench/trace.py",
          "bench/oracle.py", "gate/feedback.py", "gate/outcome.py"}
"""Modules known to take a gate as a `PlanChecker` (a parameter, a field or an attribute): the
worlds, the episode and the runtime; induction's probe and collection; the planning task, the
planners' session and their gating helpers; the bench's cell, metrics, trace and reference
responder; the feedback and outcome the planners and the bench call."""
