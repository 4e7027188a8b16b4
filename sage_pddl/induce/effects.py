"""Learn the effects of an action schema from its successful transitions.

For each lifted fact that some success adds (deletes), the successes are split into
positives (the fact was added / deleted), negatives (it is false / true afterwards) and
indifferent ones (it already held / was already false). No negative: an unconditional effect.
Otherwise a condition is learned by sequential covering over the pre-state literals: the most
specific description of a positive, generalised by intersecting with further positives while no
negative satisfies it, then pruned to the literals needed to exclude the negatives. The effect is
written `(when C e)` only when one such clause C covers every change: a condition needed to
explain the data. Conditions range over the arguments and over "some object other than the
arguments" (`(exists (?o) (inside_room ?y ?o))`). When one clause X describes the successes
where the change did *not* happen, the effect may instead be written as happening unless X
holds, `(when (not (and X)) e)` (a walk puts the walker next to its target unless the target
is a room); it is, when the change happened in more successes than it did not (the change is
the rule, the exceptions are described), or when no one clause describes the changes. X is
the *most specific* clause of the exceptions: every literal they all share that some change
lacks, not the fewest that separate them in the logs, so the effect is kept in any state
unlike every exception seen (EAI's problem files spell a couch's room `(obj_inside couch
home_office)` where the simulator's states say `inside_room`; a couch is still sittable and
movable, as no logged room was). When neither works (the changes share no condition over
the arguments, as a grab that fills whichever hand is free), the effect is reported as not
learned rather than written as a union of incidental conditions.

Facts naming one object that is not an argument are lifted with an extra variable `?o` and
become universal effects `(forall (?o) (when C(?o) e(?o)))`, learned the same way over all
(transition, object) pairs and bounded by their anchor: the relations between ?o and the
arguments that held before every such change (`(inside ?o ?x)` for what an Open
un-encloses), since the data says nothing of objects not so related. Where no one clause
explains a universal effect, several may (`_several`): each written as its own `(forall (?o)
(when C_i e))`, which together say the disjunction; each relates ?o to the arguments
(an anchor: a clause that does not is an incidental description and is not kept), directly
or through a further object ?m related to ?o and to an argument (`(exists (?m) (and (inside
?o ?m) (inside ?m ?x)))`: what is inside something inside ?x; `lifting.bridges`); each keeps
out every object whose literal did not change; and they are written only when together
they explain every change. A change that no consistent condition explains (the same
description both with and without the change), or that names two non-argument objects, is
reported, never guessed.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sage_pddl.env.transitions import Transition
from sage_pddl.pddl.model import key

from .cover import learn_bridged_conditions, learn_conditions
from .learned import LearnedEffect
from .lifting import (
    EXTRA,
    SECOND,
    Fact,
    LiftedAtom,
    Literal,
    arg_binding,
    bridges,
    lift_state,
    lift_with_some_object,
    literal_order,
    literal_text,
    satisfies,
    universe,
    variable_names,
)

SEVERAL_MIN_SUPPORT = 2
"""The changes each clause of an effect written as several clauses (`_several`) must cover at
least: a clause drawn from one change describes that change, not a rule (on EAI's VirtualHome
logs such clauses, `(not (dirty ?m)) (not (has_switch ?m))` for one object a find put next to
the character, lowered the held-out precision of the predicted changes)."""


def _split_by_change(atom, positive: bool, transitions) -> tuple[list, list]:
    """Pre-states of the (pre, post, unobserved) triples where the effect literal on `atom`
    happened (made true when `positive`, made false otherwise) and of those where it did not
    hold afterwards (so it cannot be an unconditional effect there). A triple where the atom was
    not observed before the step says neither."""
    happened, missed = [], []
    for pre, post, unobserved, *more in transitions:
        if atom in unobserved:
            continue
        instance = (pre, *more) if more else pre
        before, after = atom in pre, atom in post
        if positive:
            if after and not before:
                happened.append(instance)
            elif not after:
                missed.append(instance)
        elif before and not after:
            happened.append(instance)
        elif after:
            missed.append(instance)
    return happened, missed

@dataclass(frozen=True)
class EffectRow:
    """A successful transition as effect learning reads it, without its ground states (so a
    log's successes fit in memory): the states lifted over the arguments (`pre`, `post`,
    `unobserved`), the pre-state lifted with "some other object" (`some`), the changes of one
    object that is not an argument (`extra_changes`: (atom over ?o, added)), the predicates of
    changes naming two such objects, per other object of the states in name order, the
    (pre, post, unobserved) triple lifted with that object as ?o (`per_object`), and, in the
    same order, the atoms naming ?m of each of that object's bridges (`bridges`: the objects
    through which it relates to the arguments, `lifting.bridges`)."""

    pre: frozenset[LiftedAtom]
    post: frozenset[LiftedAtom]
    unobserved: frozenset[LiftedAtom]
    some: frozenset[LiftedAtom]
    extra_changes: tuple[tuple[LiftedAtom, bool], ...]
    two_extra: tuple[str, ...]
    per_object: tuple[tuple[frozenset[LiftedAtom], ...], ...]
    bridges: tuple[tuple[frozenset[LiftedAtom], ...], ...]


def _by_other_object(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]
                     ) -> dict[str, list[Fact]]:
    """The facts of `state` naming exactly one object outside `binding`, by that object."""
    grouped: dict[str, list[Fact]] = {}
    for fact in state:
        others = {obj for obj in fact[1:] if obj not in binding}
        if len(others) == 1:
            grouped.setdefault(next(iter(others)), []).append(fact)
    return grouped


def effect_row(t: Transition, intern: Callable[[Any], Any] = lambda value: value) -> EffectRow:
    """The `EffectRow` of a successful transition; `intern` shares equal lifted states
    between rows (a log's successes repeat the same few descriptions)."""
    binding = arg_binding([key(a) for a in t.action.args])
    pre, post = intern(lift_state(t.pre, binding)), intern(lift_state(t.post, binding))
    unobserved = intern(lift_state(t.unknown, binding))
    extra_changes: set[tuple[LiftedAtom, bool]] = set()
    two_extra: list[str] = []
    added = t.added
    for fact in added | t.deleted:
        others = {obj for obj in fact[1:] if obj not in binding}
        if len(others) == 1:
            extended = {**binding, next(iter(others)): (EXTRA,)}
            extra_changes.update((atom, fact in added) for atom in lift_state([fact], extended)
                                 if EXTRA in atom.slots)
        elif len(others) > 1:
            two_extra.append(fact[0])
    per_object = []
    bridged = []
    objects = {obj for fact in t.pre | t.post for obj in fact[1:]} - set(binding)
    if objects:
        groups = [_by_other_object(state, binding) for state in (t.pre, t.post, t.unknown)]
        bridges_of = bridges(t.pre, binding)
        for obj in sorted(objects):
            extended = {**binding, obj: (EXTRA,)}
            per_object.append(intern(tuple(
                intern(base | lift_state(group.get(obj, ()), extended)) if obj in group else base
                for base, group in zip((pre, post, unobserved), groups))))
            bridged.append(intern(tuple(intern(atoms) for atoms in bridges_of(obj))))
    return EffectRow(pre, post, unobserved, intern(lift_with_some_object(t.pre, binding)),
                     tuple(sorted(extra_changes)), tuple(two_extra), tuple(per_object),
                     tuple(bridged))


def learn_effects(rows: Sequence[EffectRow], arity: int, arities: Mapping[str, int],
                  min_support: int) -> tuple[tuple[LearnedEffect, ...], tuple[str, ...]]:
    """The effects of a schema of `arity` parameters that its successes (`rows`) show, and
    the changes not learned (one message each); `arities`: every observed predicate's arity."""
    variables = list(range(arity))
    effects: list[LearnedEffect] = []
    issues: list[str] = []
    names = variable_names(arity)
    # parameter-level effects
    # conditions over the arguments, and over "some other object" (?o read existentially)
    arg_atoms = universe(arities, [*variables, EXTRA], max_extra=1)
    adds: set[LiftedAtom] = set()
    dels: set[LiftedAtom] = set()
    extra_adds: set[LiftedAtom] = set()
    extra_dels: set[LiftedAtom] = set()
    two_extra: Counter = Counter()
    for row in rows:
        adds |= row.post - row.pre - row.unobserved
        dels |= row.pre - row.post
        for atom, added in row.extra_changes:
            (extra_adds if added else extra_dels).add(atom)
        two_extra.update(row.two_extra)
    for predicate, count in sorted(two_extra.items()):
        issues.append(f"{count} change(s) of ({predicate} ...) name two or more objects that are "
                      "not arguments")
    for positive, candidates in ((True, adds), (False, dels)):
        for atom in sorted(candidates):
            pos, neg = _split_by_change(atom, positive,
                                        ((row.some, row.post, row.unobserved) for row in rows))
            literal = Literal(positive, atom.predicate, atom.slots)
            effects_here, unexplained = _conditional(literal, pos, neg, arg_atoms, min_support,
                                                     universal=False)
            effects += effects_here
            if unexplained:
                issues.append(f"{literal_text(literal, names)}: {unexplained} of {len(pos)} "
                              "change(s) not explained by a consistent condition")
    # effects on one object that is not an argument: universal
    if extra_adds or extra_dels:
        extra_atoms = universe(arities, variables + [EXTRA])
        bridge_atoms = frozenset(a for a in universe(arities, variables + [EXTRA, SECOND])
                                 if SECOND in a.slots)
        for positive, candidates in ((True, extra_adds), (False, extra_dels)):
            for atom in sorted(candidates):
                pos, neg = _split_by_change(atom, positive, (
                    (*triple, bridged) for row in rows
                    for triple, bridged in zip(row.per_object, row.bridges)))
                literal = Literal(positive, atom.predicate, atom.slots)
                effects_here, unexplained = _universal(literal, pos, neg, extra_atoms,
                                                       bridge_atoms, min_support)
                effects += effects_here
                if unexplained:
                    issues.append(f"{literal_text(literal, names)} for other objects ?o: "
                                  f"{unexplained} of {len(pos)} change(s) not explained by a "
                                  "consistent condition")
    return tuple(effects), tuple(issues)


def _anchor(literal: Literal, positives: Sequence[frozenset[LiftedAtom]]
            ) -> tuple[Literal, ...]:
    """The relations between ?o and the arguments (true atoms naming ?o and a parameter) that
    hold before every change of a universal effect on `literal`: the objects it was seen to
    act on (the changed atom itself left out: a delete needs no condition that it held)."""
    shared = frozenset.intersection(*(
        frozenset(a for a in p if EXTRA in a.slots and any(i != EXTRA for i in a.slots)
                  and a != literal.atom)
        for p in positives))
    return tuple(sorted((Literal(True, atom.predicate, atom.slots) for atom in shared), key=literal_order))


def _conditional(literal: Literal, pos, neg, atoms, min_support: int, universal: bool):
    """The effect on `literal` under the conditions that separate `pos` from `neg`. A
    universal effect is also bounded by its anchor (`_anchor`): the data shows what happens
    to the objects so related to the arguments, and says nothing of the others (an Open seen
    only on containers with nothing enclosed elsewhere must not un-enclose every object)."""
    if not pos:
        return [], 0
    anchor = _anchor(literal, pos) if universal else ()
    if not neg:
        return [LearnedEffect(literal, anchor, universal, len(pos))], 0
    # the exceptions (a walk puts the walker next to its target unless the target is a
    # room), described by every literal they share that some change lacks: the effect is
    # kept wherever a state is unlike every exception seen, not only where it shares the one
    # fact that happened to separate them in the logs
    exceptions, left = learn_conditions(neg, pos, atoms, specific=True)
    unless = exceptions[0] if len(exceptions) == 1 and not left else None
    if unless is not None and len(pos) > len(neg):  # the change is the rule: say when not
        return [LearnedEffect(literal, anchor, universal, len(pos), unless)], 0
    clauses, unexplained = learn_conditions(pos, neg, atoms, min_support)
    if len(clauses) == 1 and not unexplained:
        clause = tuple(sorted(set(clauses[0]) | set(anchor), key=literal_order))
        return [LearnedEffect(literal, clause, universal, len(pos))], 0
    if unless is not None:
        return [LearnedEffect(literal, anchor, universal, len(pos), unless)], 0
    # a union of clauses each covering a few changes by incidental facts
    # (`(when (cuttable ?y) ...)`) would be a guess, so the effect is reported, not written
    return [], len(pos)


def _universal(literal: Literal, pos, neg, atoms, bridge_atoms, min_support: int):
    """The universal effect on `literal` (`pos`, `neg`: (pre-state, bridges) pairs): as
    `_conditional` when one clause, or the exceptions, explain it; else as several clauses
    (`_several`), and reported when they do not explain every change either."""
    effects, unexplained = _conditional(literal, [p for p, _ in pos], [n for n, _ in neg],
                                        atoms, min_support, universal=True)
    if effects or not unexplained:
        return effects, unexplained
    several = _several(literal, pos, neg, atoms, bridge_atoms, min_support)
    return (several, 0) if several else ([], unexplained)


def _several(literal: Literal, pos, neg, atoms, bridge_atoms, min_support: int
             ) -> list[LearnedEffect]:
    """A universal effect that no one clause explains, as one `(forall (?o) (when C_i e))` per
    clause (together, the disjunction of the clauses): the clauses of sequential covering that
    relate ?o to the arguments (an anchor, `_anchor`: a clause with none is an incidental
    description of a few changes, `(when (heater ?x) ...)`, and is not kept), then, for the
    changes they leave, clauses through a further object ?m related to ?o and to an argument
    (`(exists (?m) (and (inside ?o ?m) (inside ?m ?x)))`: what is inside something inside ?x).
    Each clause excludes every object whose literal did not change, so none predicts a change
    that did not happen, and covers at least `SEVERAL_MIN_SUPPORT` changes; none is written
    unless together they explain every change."""
    min_support = max(min_support, SEVERAL_MIN_SUPPORT)
    clauses, _ = learn_conditions([p for p, _ in pos], [n for n, _ in neg], atoms, min_support)
    effects: list[LearnedEffect] = []
    left = list(range(len(pos)))
    for clause in clauses:
        covered = [i for i in left if satisfies(pos[i][0], clause)]
        anchor = _anchor(literal, [pos[i][0] for i in covered]) if covered else ()
        if anchor:
            effects.append(LearnedEffect(
                literal, tuple(sorted(set(clause) | set(anchor), key=literal_order)), True,
                len(covered)))
            left = [i for i in left if i not in set(covered)]
    if left:
        rest = [pos[i] for i in left]
        bridged, unexplained = learn_bridged_conditions(rest, neg, atoms, bridge_atoms,
                                                        min_support)
        if unexplained:
            return []
        for plain, bridge in bridged:
            states = [p for p, ms in rest
                      if satisfies(p, plain) and any(satisfies(m, bridge) for m in ms)]
            condition = set(plain) | set(_anchor(literal, states))
            effects.append(LearnedEffect(literal, tuple(sorted(condition, key=literal_order)),
                                         True, len(states), bridge=bridge))
    return effects
