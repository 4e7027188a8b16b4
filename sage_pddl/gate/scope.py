"""The gate's scope: whether a task's constructs are ones the gate checks.

Numeric comparisons, numeric effects, durative actions, derived predicates, preferences,
`oneof` and any other `Unsupported` node are outside it: checking a task that has one raises
`UnsupportedConstruct` naming the construct, its line:column and where it stands. One numeric
effect is inside: `increase`/`decrease` of a 0-ary cost fluent (the one the problem's metric
names, or `total-cost`/`totalCost`), which the gate ignores, as costs never change whether a
plan is valid.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..pddl.model import (
    Comparison,
    Domain,
    FunctionTerm,
    NumericEffect,
    Problem,
    Unsupported,
    key,
    walk,
    walk_numeric,
)
from .lifted import unsupported


def cost_fluents(problem: Problem) -> frozenset[str]:
    """The keys of the 0-ary fluents whose `increase`/`decrease` the gate ignores."""
    names = {"total-cost", "totalcost"}
    if problem.metric is not None:
        for node in walk_numeric(problem.metric.expression):
            if isinstance(node, FunctionTerm) and not node.args:
                names.add(key(node.name))
    return frozenset(names)


def check_node(node: object, context: str, costs: frozenset[str]) -> None:
    """Raise `UnsupportedConstruct` if `node` is outside the scope (`costs`: `cost_fluents`)."""
    if isinstance(node, Comparison):
        raise unsupported(f"numeric comparison `{node.op}`", node.loc, context)
    if isinstance(node, Unsupported):
        raise unsupported(node.construct, node.loc, context)
    if isinstance(node, NumericEffect):
        cost = (node.op in ("increase", "decrease") and not node.fluent.args
                and key(node.fluent.name) in costs)
        if not cost:
            raise unsupported(
                f"numeric effect `({node.op} ({node.fluent.name}) ...)`", node.loc, context)


def check_formula(formula: object, context: str, costs: frozenset[str]) -> None:
    """`check_node` on every node of `formula`."""
    for node in walk(formula):
        check_node(node, context, costs)


def check_sections(domain: Domain, problem: Problem,
                   hazards: Iterable[tuple[object, str]]) -> None:
    """The domain's sections and actions (`hazards`: the actions' nodes that may be outside,
    with where they stand, `DomainSchema.hazards`), and the problem's sections (its facts are
    checked as the initial state is read, its goal on its own)."""
    if domain.unsupported:
        first = domain.unsupported[0]
        raise unsupported(first.construct, first.loc, f"in domain {domain.name}")
    costs = cost_fluents(problem)
    for node, context in hazards:
        check_node(node, context, costs)
    if problem.unsupported:
        first = problem.unsupported[0]
        raise unsupported(first.construct, first.loc, f"in problem {problem.name}")
