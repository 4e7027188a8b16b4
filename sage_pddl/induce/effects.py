"""Learn the effects of an action schema from its successful transitions.

For each lifted fact that some success adds (deletes), the successes are split into
positives (the fact was added / deleted), negatives (it is false / true afterwards) and
indifferent ones (it already held / was already false). No negative: an unconditional effect.
Otherwise a condition is learned by sequential covering over the pre-state literals: the most
specific description of a positive, generalised by intersecting with further positives while no
negative satisfies it, then pruned to the literals needed to exclude the negatives. The effect is
written `(when C e)` only when one such clause C covers every change: a condition needed to
explain the data. Conditions range over the arguments and over "some object other than the
arguments" (`(exists (?o) (inside_room ?y ?o))`). When the changes take several clauses but
one clause describes the successes where the change did *not* happen, the effect is written
as happening unless that clause holds, `(when (not (and X)) e)` (a walk puts the walker next
to its target unless the target is a room). When neither works (the changes share no
condition over the arguments, as a grab that fills whichever hand is free), the effect is
reported as not learned rather than written as a union of incidental conditions.

Facts naming one object that is not an argument are lifted with an extra variable `?o` and
become universal effects `(forall (?o) (when C(?o) e(?o)))`, learned the same way over all
(transition, object) pairs and bounded by their anchor: the relations between ?o and the
arguments that held before every such change (`(inside ?o ?x)` for what an Open
un-encloses), since the data says nothing of objects not so related. A change that no
consistent condition explains (the same description both with and without the change), or
that names two non-argument objects, is reported, never guessed.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from sage_pddl.env.transitions import Transition
from sage_pddl.pddl.model import key

from .cover import learn_conditions
from .learned import LearnedEffect
from .lifting import (
    EXTRA,
    LiftedAtom,
    Literal,
    arg_binding,
    lift_state,
    lift_with_some_object,
    literal_order,
    literal_text,
    universe,
    variable_names,
)


def _split_by_change(atom, positive: bool, transitions) -> tuple[list, list]:
    """Pre-states of the (pre, post, unobserved) triples where the effect literal on `atom`
    happened (made true when `positive`, made false otherwise) and of those where it did not
    hold afterwards (so it cannot be an unconditional effect there). A triple where the atom was
    not observed before the step says neither."""
    happened, missed = [], []
    for pre, post, unobserved in transitions:
        if atom in unobserved:
            continue
        before, after = atom in pre, atom in post
        if positive:
            if after and not before:
                happened.append(pre)
            elif not after:
                missed.append(pre)
        elif before and not after:
            happened.append(pre)
        elif after:
            missed.append(pre)
    return happened, missed

def learn_effects(successes: Sequence[Transition], arity: int, arities: Mapping[str, int],
                  min_support: int) -> tuple[tuple[LearnedEffect, ...], tuple[str, ...]]:
    """The effects of a schema of `arity` parameters that `successes` show, and the changes
    not learned (one message each); `arities`: every observed predicate's arity."""
    variables = list(range(arity))
    effects: list[LearnedEffect] = []
    issues: list[str] = []
    names = variable_names(arity)
    # parameter-level effects
    # conditions over the arguments, and over "some other object" (?o read existentially)
    arg_atoms = universe(arities, [*variables, EXTRA], max_extra=1)
    lifted = []
    adds: set[LiftedAtom] = set()
    dels: set[LiftedAtom] = set()
    extra_adds: set[LiftedAtom] = set()
    extra_dels: set[LiftedAtom] = set()
    two_extra: Counter = Counter()
    for t in successes:
        binding = arg_binding([key(a) for a in t.action.args])
        pre = lift_state(t.pre, binding)
        post = lift_state(t.post, binding)
        unobserved = lift_state(t.unknown, binding)
        lifted.append((t, binding, pre, post, unobserved, lift_with_some_object(t.pre, binding)))
        adds |= post - pre - unobserved
        dels |= pre - post
        for fact in t.added | t.deleted:
            others = {obj for obj in fact[1:] if obj not in binding}
            if len(others) == 1:
                extended = dict(binding)
                extended[next(iter(others))] = (EXTRA,)
                for atom in lift_state([fact], extended):
                    if EXTRA in atom.slots:
                        (extra_adds if fact in t.added else extra_dels).add(atom)
            elif len(others) > 1:
                two_extra[fact[0]] += 1
    for predicate, count in sorted(two_extra.items()):
        issues.append(f"{count} change(s) of ({predicate} ...) name two or more objects that are "
                      "not arguments")
    for positive, candidates in ((True, adds), (False, dels)):
        for atom in sorted(candidates):
            pos, neg = _split_by_change(atom, positive,
                                        ((some, post, hid) for _t, _b, _pre, post, hid, some in lifted))
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
        objects_per = []
        for t, binding, *_ in lifted:
            objects = {obj for fact in t.pre | t.post for obj in fact[1:]} - set(binding)
            rows = []
            for obj in sorted(objects):
                extended = dict(binding)
                extended[obj] = (EXTRA,)
                rows.append((lift_state(t.pre, extended), lift_state(t.post, extended),
                             lift_state(t.unknown, extended)))
            objects_per.append(rows)
        for positive, candidates in ((True, extra_adds), (False, extra_dels)):
            for atom in sorted(candidates):
                pos, neg = _split_by_change(atom, positive,
                                            (row for rows in objects_per for row in rows))
                literal = Literal(positive, atom.predicate, atom.slots)
                effects_here, unexplained = _conditional(literal, pos, neg, extra_atoms,
                                                         min_support, universal=True)
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
    clauses, unexplained = learn_conditions(pos, neg, atoms, min_support)
    if len(clauses) != 1 or unexplained:
        # no one condition describes the changes; one may describe the exceptions (a walk
        # puts the walker next to its target unless the target is a room)
        exceptions, left = learn_conditions(neg, pos, atoms)
        if len(exceptions) == 1 and not left:
            return [LearnedEffect(literal, anchor, universal, len(pos), exceptions[0])], 0
        # a union of clauses each covering a few changes by incidental facts
        # (`(when (cuttable ?y) ...)`) would be a guess, so the effect is reported, not written
        return [], len(pos)
    clause = tuple(sorted(set(clauses[0]) | set(anchor), key=literal_order))
    return [LearnedEffect(literal, clause, universal, len(pos))], 0
