"""A domain at a glance, as HTML: its actions in plain words and its causal graph as SVG.

`domain_section(domain)` is an HTML fragment: every action with its parameters, the step a
planner writes for it, what it requires and what it changes in plain words (`pddl.plain`), the
reasons a domain gives for a failed literal (`; @sage reason`), and `causal_svg(domain)`: the
graph of which action makes which predicate true or false (the action -> literal edges of
`gate.causal.CausalGraph`), in two columns, actions on the left and the literals they set on the
right, each column ordered by the mean rank of its nodes' neighbours in the other, starting from
the actions as the domain declares them, so that few edges cross and the same domain gives the
same picture in every process. Hovering a node lights its edges (the page's script); each action
node's tooltip says what it requires.
"""
from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable
from typing import Any

import networkx as nx

from sage_pddl.gate.causal import ActionNode, CausalGraph, LiteralNode
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.plain import words
from sage_pddl.pddl.vocabulary import vocabulary

ROW = 22
"""Vertical pixels per node of the longer column."""
SWEEPS = 3
"""Barycentre sweeps that order the two columns (few edges cross after two or three)."""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _literal_label(predicate: str, holds: bool) -> str:
    return ("" if holds else "not ") + predicate.replace("-", " ")


def _by_barycentre(nodes: list, fixed: list, neighbours: Callable[[Any], Iterable[Any]]
                   ) -> list:
    """`nodes` ordered by the mean position of their neighbours in `fixed` (ties by their
    fields: an action's name, a literal's predicate and sign)."""
    rank = {node: index for index, node in enumerate(fixed)}

    def key(node: Any) -> tuple[float, str]:
        places = [rank[n] for n in neighbours(node) if n in rank]
        return (sum(places) / len(places) if places else len(fixed), str(tuple(node)))

    return sorted(nodes, key=key)


def causal_svg(domain: Domain) -> str:
    """The action -> literal graph of `domain` as an SVG element (see module docstring)."""
    graph = CausalGraph.of(domain).graph
    actions = [n for n in graph if isinstance(n, ActionNode)]
    effects = nx.DiGraph()
    effects.add_nodes_from(actions)
    effects.add_edges_from((a, lit) for a in actions for lit in graph.successors(a))
    literals = [n for n in effects if isinstance(n, LiteralNode)]
    # the sweeps start from the actions as the domain declares them (networkx's bipartite
    # layout would start them in the order of a set: another picture in every process)
    action_order = actions
    literal_order = literals
    for _ in range(SWEEPS):  # barycentre sweeps: each side ordered by its neighbours' mean rank
        literal_order = _by_barycentre(literal_order, action_order, effects.predecessors)
        action_order = _by_barycentre(action_order, literal_order, effects.successors)
    literal_order = _by_barycentre(literal_order, action_order, effects.predecessors)
    rows = max(len(action_order), len(literal_order), 1)
    height = rows * ROW + 40
    width = 900
    left_x, right_x = 210, width - 250

    def ys(count: int) -> list[float]:
        step = (height - 40) / max(count, 1)
        return [20 + step * (i + 0.5) for i in range(count)]

    where: dict[ActionNode | LiteralNode, tuple[float, float]] = {
        n: (left_x, y) for n, y in zip(action_order, ys(len(action_order)))}
    where.update({n: (right_x, y) for n, y in zip(literal_order, ys(len(literal_order)))})
    requires = {a.name: words(a.precondition) if a.precondition is not None else "nothing"
                for a in domain.actions}
    parts = [f'<svg class="causal" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
             f'{height}" width="{width}" height="{height}" role="img" aria-label="which action '
             f'makes which predicate true or false in {_e(domain.name)}">']
    parts.append('<g class="edges">')
    for action, literal in effects.edges:
        (x1, y1), (x2, y2) = where[action], where[literal]
        middle = (x1 + x2) / 2
        kind = "adds" if literal.holds else "deletes"
        parts.append(f'<path class="edge {kind}" data-a="{_e(action.name)}" '
                     f'data-l="{_e(_literal_label(literal.predicate, literal.holds))}" '
                     f'd="M{x1 + 6:.1f},{y1:.1f} C{middle:.1f},{y1:.1f} {middle:.1f},{y2:.1f} '
                     f'{x2 - 6:.1f},{y2:.1f}"/>')
    parts.append("</g>")
    for action in action_order:
        x, y = where[action]
        name = action.name
        parts.append(f'<g class="node action" data-a="{_e(name)}"><title>{_e(name)} requires: '
                     f'{_e(requires.get(name, ""))}</title><circle cx="{x}" cy="{y:.1f}" r="6"/>'
                     f'<text x="{x - 12}" y="{y + 4:.1f}" text-anchor="end">{_e(name)}</text></g>')
    for literal in literal_order:
        x, y = where[literal]
        label = _literal_label(literal.predicate, literal.holds)
        makers = ", ".join(sorted(a.name for a in effects.predecessors(literal)))
        kind = "adds" if literal.holds else "deletes"
        parts.append(f'<g class="node literal {kind}" data-l="{_e(label)}"><title>made '
                     f'{"true" if literal.holds else "false"} by {_e(makers)}</title>'
                     f'<rect x="{x - 6}" y="{y - 6:.1f}" width="12" height="12" rx="2"/>'
                     f'<text x="{x + 12}" y="{y + 4:.1f}">{_e(label)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def domain_section(domain: Domain) -> str:
    """The domain's actions and causal graph as an HTML fragment (see module docstring)."""
    vocab = vocabulary(domain)
    rows = []
    for action in domain.actions:
        parameters = ", ".join(f"?{p.name} ({'/'.join(p.types) or 'object'})"
                               for p in action.parameters) or "none"
        step = vocab.written_step(action.name, [f"?{p.name}" for p in action.parameters])
        reasons = sorted({r.message for r in vocab.reasons_of(action.name) if r.message})
        aliases = vocab.aliases.get(action.name) or ()
        rows.append(
            f'<tr id="action-{_e(action.name)}"><th scope="row">{_e(action.name)}'
            + (f'<div class="muted">also: {_e(", ".join(aliases))}</div>' if aliases else "")
            + f'</th><td>{_e(parameters)}<div class="mono muted">{_e(json.dumps(step))}</div></td>'
            f'<td>{_e(words(action.precondition) if action.precondition is not None else "nothing")}'
            f'</td><td>{_e(words(action.effect) if action.effect is not None else "nothing")}</td>'
            f'<td>{"<br>".join(_e(r) for r in reasons) or "—"}</td></tr>')
    description = vocab.description or ""
    return (
        f'<section class="domain" id="domain-{_e(domain.name)}">'
        f'<h2>Domain <code>{_e(domain.name)}</code></h2>'
        + (f'<p class="lead">{_e(description)}</p>' if description else "")
        + f'<p class="muted">{len(domain.actions)} actions, {len(domain.predicates)} predicates, '
        f'{len(domain.types)} types. Requirements: {_e(" ".join(domain.requirements)) or "none"}.'
        '</p><h3>Which action makes which predicate true</h3>'
        '<p class="muted">Each action (left) linked to the literals its effects set (right): '
        '<span class="key adds">made true</span> <span class="key deletes">made false</span>. '
        'Hover a node to follow its edges; an action\'s tooltip says what it requires.</p>'
        f'<div class="graph">{causal_svg(domain)}</div>'
        '<h3>Actions in plain words</h3><div class="table-wrap"><table class="actions">'
        '<thead><tr><th>action</th><th>parameters and step</th><th>requires</th>'
        '<th>changes</th><th>if it fails</th></tr></thead><tbody>'
        + "".join(rows) + "</tbody></table></div></section>")
