"""The domain's causal graph: which actions can make a literal true, and what they need.

`CausalGraph.of(domain)` is a `networkx.DiGraph` over two kinds of node: actions
(`ActionNode(name)`) and lifted literals (`LiteralNode(predicate, holds)`, where `holds` is
False for "the predicate is made false"). An edge literal -> action says the action's
precondition mentions the literal; an edge action -> literal says its effect sets it. The graph
is built from the model alone (every literal of every precondition and effect, `when` conditions
as needs), so it over-approximates: what it calls impossible is impossible, what it calls
possible may still be impossible in a particular problem.

It answers three questions:

* `achievers(predicate, holds)`: the actions whose effects set the literal;
* `relevant_actions(literals)`: every action that can contribute to the literals, directly or
  by providing what an achiever needs (backward reachability: the actions a planner or a
  lazy grounder needs to look at);
* `reachable(true_predicates)` / `settable(...)`: a delete-relaxed fixpoint over predicates
  from a state: the literals some sequence of actions could make hold, and those that some
  action in it sets.

`unreachable_goals(table, state)` turns the last into a diagnosis the gate can print: the goal
conjuncts that no plan can make hold from `state`, each with the reason.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import networkx as nx

from ..pddl.model import (
    Action,
    And,
    Atom,
    Domain,
    Exists,
    Forall,
    ForallEffect,
    Imply,
    Not,
    Or,
    PredicateDef,
    Variable,
    When,
    effect_literals,
    key,
)
from ..pddl.vocabulary import PerDomain
from .ground import State
from .table import PreconditionTable


class ActionNode(NamedTuple):
    """A node of the causal graph: an action, by its name as declared."""

    name: str


class LiteralNode(NamedTuple):
    """A lifted literal, and its node of the causal graph: a predicate key and the truth value
    it is asked or set to (`holds` False: the predicate made false)."""

    predicate: str
    holds: bool


def condition_literals(formula: object, holds: bool = True) -> Iterator[LiteralNode]:
    """Every predicate a condition mentions, with the truth value it asks of it (negation
    and an implication's antecedent flip it)."""
    if isinstance(formula, Atom):
        yield LiteralNode(key(formula.predicate), holds)
    elif isinstance(formula, Not):
        yield from condition_literals(formula.arg, not holds)
    elif isinstance(formula, (And, Or)):
        for part in formula.parts:
            yield from condition_literals(part, holds)
    elif isinstance(formula, Imply):
        yield from condition_literals(formula.antecedent, not holds)
        yield from condition_literals(formula.consequent, holds)
    elif isinstance(formula, (Exists, Forall)):
        yield from condition_literals(formula.body, holds)


def _possible(formula: object, made: set[LiteralNode], holds: bool = True) -> bool:
    """Whether `formula` could hold when exactly the literals in `made` are achievable (an
    over-approximation: a disjunction needs one branch, anything non-propositional passes)."""
    if isinstance(formula, Atom):
        return LiteralNode(key(formula.predicate), holds) in made
    if isinstance(formula, Not):
        return _possible(formula.arg, made, not holds)
    if isinstance(formula, (And, Or)):
        conjunctive = isinstance(formula, And) == holds
        results = (_possible(p, made, holds) for p in formula.parts)
        return all(results) if conjunctive else any(results)
    if isinstance(formula, Imply):
        if holds:
            return _possible(formula.antecedent, made, False) or \
                _possible(formula.consequent, made, True)
        return _possible(formula.antecedent, made, True) and \
            _possible(formula.consequent, made, False)
    if isinstance(formula, (Exists, Forall)):
        return _possible(formula.body, made, holds)
    return True  # equality, numeric comparisons: not tracked here


def _conditional_needs(effect: object) -> Iterator[LiteralNode]:
    if isinstance(effect, When):
        yield from condition_literals(effect.condition)
        yield from _conditional_needs(effect.effect)
    elif isinstance(effect, And):
        for part in effect.parts:
            yield from _conditional_needs(part)
    elif isinstance(effect, ForallEffect):
        yield from _conditional_needs(effect.effect)


@dataclass(frozen=True)
class CausalGraph:
    """See the module docstring; build it with `CausalGraph.of(domain)` (kept while that domain
    object lives). It holds the domain's predicates and actions, not the domain, so that the
    domain can be collected."""

    predicates: tuple[PredicateDef, ...]
    actions: tuple[Action, ...]
    graph: nx.DiGraph

    @staticmethod
    def of(domain: Domain) -> CausalGraph:
        return _graph_of(domain)

    def achievers(self, predicate: str, holds: bool = True) -> list[str]:
        node = LiteralNode(key(predicate), holds)
        if node not in self.graph:
            return []
        return sorted(n.name for n in self.graph.predecessors(node))

    def relevant_actions(self, literals: Iterable[tuple[str, bool]]) -> set[str]:
        relevant: set[str] = set()
        for predicate, holds in literals:
            node = LiteralNode(key(predicate), holds)
            if node in self.graph:
                relevant |= {n.name for n in nx.ancestors(self.graph, node)
                             if isinstance(n, ActionNode)}
        return relevant

    def reachable(self, true_predicates: Iterable[str]) -> set[LiteralNode]:
        """Literals that could hold after some plan from a state in which `true_predicates`
        have at least one true atom (every predicate may start with a false atom)."""
        return self._fixpoint(true_predicates)[0]

    def settable(self, true_predicates: Iterable[str]) -> set[LiteralNode]:
        """Literals that some action enabled in that relaxed fixpoint sets: what a particular
        ground atom needs to change from its value in the state."""
        return self._fixpoint(true_predicates)[1]

    def _fixpoint(self, true_predicates: Iterable[str]
                  ) -> tuple[set[LiteralNode], set[LiteralNode]]:
        made = {LiteralNode(key(p), True) for p in true_predicates}
        made |= {LiteralNode(key(p.name), False) for p in self.predicates}
        settable: set[LiteralNode] = set()
        pending = list(self.actions)
        changed = True
        while changed:
            changed = False
            for action in list(pending):
                if action.precondition is not None and \
                        not _possible(action.precondition, made):
                    continue
                pending.remove(action)
                changed = True
                for atom, added in effect_literals(action.effect):
                    literal = LiteralNode(key(atom.predicate), added)
                    settable.add(literal)
                    made.add(literal)
        return made, settable


def _build_graph(domain: Domain) -> CausalGraph:
    graph = nx.DiGraph()
    for action in domain.actions:
        node = ActionNode(action.name)
        graph.add_node(node)
        needs = list(condition_literals(action.precondition)) if action.precondition else []
        needs += list(_conditional_needs(action.effect))
        for literal in needs:
            graph.add_edge(literal, node)
        for atom, added in effect_literals(action.effect):
            graph.add_edge(node, LiteralNode(key(atom.predicate), added))
    return CausalGraph(tuple(domain.predicates), tuple(domain.actions), graph)


_graph_of = PerDomain(_build_graph)
"""`_graph_of(domain)`: the `CausalGraph` of this very domain object, one per live domain."""


def unreachable_goals(table: PreconditionTable, state: State) -> list[str]:
    """The goal's top-level literal conjuncts that no plan can make hold from `state`, each
    as "literal: reason". A literal already holding is never listed."""
    goal = table.problem.goal
    parts = goal.parts if isinstance(goal, And) else (goal,)
    causal = CausalGraph.of(table.domain)
    settable = causal.settable({atom[0] for atom in state})
    out = []
    for part in parts:
        holds = not isinstance(part, Not)
        atom = part if holds else part.arg
        if not isinstance(atom, Atom) or any(isinstance(a, Variable) for a in atom.args):
            continue
        predicate = key(atom.predicate)
        ground = (predicate, *(key(a.name) for a in atom.args))
        if (ground in state) == holds:
            continue
        if LiteralNode(predicate, holds) not in settable:
            text = table.canonical(part)
            verb = "makes" if holds else "removes"
            achievers = causal.achievers(predicate, holds)
            reason = (f"no action {verb} {predicate}" if not achievers else
                      f"the actions that could ({', '.join(achievers)}) need what no action "
                      "reachable from this state provides")
            out.append(f"{text}: {reason}")
    return out
