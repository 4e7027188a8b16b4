"""Set cover and sequential covering over lifted literals: the two searches of the learner.

`greedy_cover` picks literals until every instance to explain violates one (preconditions
explaining failures; the fewest literals of a clause excluding negatives). `learn_conditions`
finds clauses covering positive instances and excluding every negative (conditions of
effects): the most specific description of a positive, generalised by intersecting with
further positives while no negative satisfies it, then pruned by `greedy_cover`.
`learn_bridged_conditions` does the same where a clause also says something of a further
object ?m (an instance is its atoms and, per object that could be ?m, the atoms naming it;
it satisfies the clause when its atoms do and the atoms of one ?m do): the conditions of
universal effects through ?m, and the alternatives of precondition literals (`Either`).
"""
from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from .lifting import (
    Either,
    LiftedAtom,
    Literal,
    any_satisfies,
    bridge_is_linked,
    bridge_links,
    description,
    holds,
    literal_order,
    split_clause,
)

Candidate = Literal | Either
"""What `greedy_cover` chooses among: literals, and a literal or its alternative through a
further object (a precondition's `Either`)."""
C = TypeVar("C", bound=Candidate)


def _violating(literal: Literal | Either, instances: Sequence[frozenset[LiftedAtom]],
               unseen: Sequence[frozenset[LiftedAtom]],
               further: Sequence[Sequence[frozenset[LiftedAtom]]]) -> set[int]:
    """The instances where `literal` is observed false (`holds`, with the atom made once)."""
    atom = literal.atom
    if isinstance(literal, Either):
        return {i for i, atoms in enumerate(instances)
                if atom not in unseen[i] and not holds(literal, atoms, further[i])}
    if literal.positive:
        return {i for i, atoms in enumerate(instances) if atom not in atoms and atom not in unseen[i]}
    return {i for i, atoms in enumerate(instances) if atom in atoms and atom not in unseen[i]}


def greedy_cover(candidates: Iterable[C], to_explain: Sequence[frozenset[LiftedAtom]],
                 weights: Sequence[int] | None = None, min_support: int = 1,
                 preference: Mapping[C, float] | None = None,
                 hidden: Sequence[frozenset[LiftedAtom]] | None = None,
                 costs: Mapping[C, frozenset[int]] | None = None,
                 later: frozenset[C] = frozenset(),
                 further: Sequence[Sequence[frozenset[LiftedAtom]]] | None = None
                 ) -> tuple[list[C], list[int]]:
    """Choose literals until each described instance violates one; return (chosen, uncovered).
    An instance violates a literal only where its atom was observed (`hidden`: the atoms each
    instance did not observe); an `Either` reads each instance's further objects (`further`,
    `lifting.further_objects`). With `costs` (per candidate, the instances of another set, such
    as the successes, that it contradicts), a pick's gain is the instances it newly explains
    less those it newly contradicts; each pick must gain at least `min_support`. A candidate
    that contradicts nothing new is picked before any that does: an exception is a cost paid
    only for instances that no exact literal explains (a literal false in 9 of 22 successes
    that explains many failures must not displace one false in 7 that explains the failures
    the exact literals leave). Among the exact ones, and among the others, a candidate in
    `later` is picked only when no other will do."""
    weights = list(weights) if weights is not None else [1] * len(to_explain)
    candidates = sorted(set(candidates), key=literal_order)
    unseen = list(hidden) if hidden is not None else [frozenset()] * len(to_explain)
    others = list(further) if further is not None else [()] * len(to_explain)
    violates = {c: _violating(c, to_explain, unseen, others) for c in candidates}
    costs = costs or {}
    uncovered = set(range(len(to_explain)))
    contradicted: set[int] = set()
    chosen: list[C] = []
    preference = preference or {}
    while uncovered:
        best, best_key = None, None
        for c in candidates:
            gain = sum(weights[i] for i in violates[c] & uncovered)
            gain -= len(costs.get(c, frozenset()) - contradicted)
            if gain <= 0 or gain < min_support:
                continue
            exact = not costs.get(c, frozenset()) - contradicted
            rank = (exact, c not in later, gain, preference.get(c, 0.0), c.positive)
            if best_key is None or rank > best_key:
                best, best_key = c, rank
        if best is None:
            break
        chosen.append(best)
        uncovered -= violates[best]
        contradicted |= costs.get(best, frozenset())
    # drop literals made redundant by later choices
    for c in list(reversed(chosen)):
        rest = [d for d in chosen if d != c]
        explained = set().union(*(violates[d] for d in rest)) if rest else set()
        if explained >= set(range(len(to_explain))) - uncovered:
            chosen = rest
    return chosen, sorted(uncovered)


def learn_conditions(positives: Sequence[frozenset[LiftedAtom]],
                     negatives: Sequence[frozenset[LiftedAtom]], atoms: frozenset[LiftedAtom],
                     min_support: int = 1, specific: bool = False
                     ) -> tuple[list[tuple[Literal, ...]], int]:
    """Clauses (conjunctions) covering the positives and excluding every negative.

    Returns (clauses, number of positives left unexplained). Identical descriptions are merged
    first: the instance counts become weights. Each clause is pruned to the fewest literals
    that exclude the negatives (the most general clause), or, when `specific`, keeps every
    literal its positives share that some negative violates (the most specific clause that
    still says what separates them: what holds in the positives and in none of the
    negatives' states alike)."""
    pos_counts = Counter(positives)
    neg_counts = Counter(negatives)
    negs = list(neg_counts)
    remaining = sorted(pos_counts, key=lambda a: (-pos_counts[a], sorted(a)))
    clauses: list[tuple[Literal, ...]] = []
    unexplained = 0
    while remaining:
        seed = remaining[0]
        clause = description(seed, atoms)
        if any_satisfies(negs, clause):
            unexplained += pos_counts[seed]
            remaining = remaining[1:]
            continue
        for other in remaining[1:]:
            trial = clause & description(other, atoms)
            if not any_satisfies(negs, trial):
                clause = trial
        must, must_not = split_clause(clause)
        covered = [p for p in remaining if must <= p and must_not.isdisjoint(p)]
        support = sum(pos_counts[p] for p in covered)
        remaining = [p for p in remaining if p not in covered]
        if support < min_support:
            unexplained += support
            continue
        if specific:
            chosen = [c for c in clause if not all(holds(c, n) for n in negs)]
        else:  # the fewest literals that still exclude every negative
            chosen, left = greedy_cover(clause, negs, [neg_counts[n] for n in negs])
            assert not left  # the clause excludes every negative, so its literals can
        clauses.append(tuple(sorted(chosen, key=literal_order)))
    return clauses, unexplained


Bridged = tuple[frozenset[LiftedAtom], tuple[frozenset[LiftedAtom], ...]]
"""An instance for `learn_bridged_conditions`: its atoms, and the atoms naming ?m of each
object that could be ?m."""


def _matching(instances: Sequence[Bridged], plain: Iterable[Literal],
              bridge: Iterable[Literal]) -> list[int]:
    """The indices of the instances satisfying (plain, bridge)."""
    must, must_not = split_clause(plain)
    m_must, m_must_not = split_clause(bridge)
    return [i for i, (atoms, bridged) in enumerate(instances)
            if must <= atoms and must_not.isdisjoint(atoms)
            and any(m_must <= b and m_must_not.isdisjoint(b) for b in bridged)]


def learn_bridged_conditions(positives: Sequence[Bridged], negatives: Sequence[Bridged],
                             atoms: frozenset[LiftedAtom], bridge_atoms: frozenset[LiftedAtom],
                             min_support: int = 1,
                             linked: Callable[[Iterable[Literal]], bool] = bridge_is_linked,
                             widest: bool = False
                             ) -> tuple[list[tuple[tuple[Literal, ...], tuple[Literal, ...]]],
                                        int]:
    """Clauses (literals over the arguments and ?o, literals naming ?m) covering the positives
    and excluding every negative, each relating ?m by true literals (its links) to ?o and to an
    argument (`linked`: what the links must relate ?m to; a precondition's `Either` relates
    it to each argument of its literal, `lifting.reaches`); returns (clauses, number of
    positives left unexplained). As `learn_conditions`: a positive's most specific
    description with the first of its ?m that keeps every negative out and the links, widened
    by intersecting with further positives (each with the first of its ?m that keeps them so);
    with `widest`, of the clauses its ?m start, the one covering the most positives (the
    first on ties: where few negatives pin ?m down, which ?m a seed starts from decides what
    the clause says, the character's room or the object next to it); then pruned (`_pruned`):
    the links, then the literals that keep out the most (negative, ?m) pairs still in, until
    none is."""
    pos_counts = Counter(positives)
    neg_counts = Counter(n for n in negatives if n[1])  # no ?m: no clause holds
    negs = list(neg_counts)

    def order(instance: Bridged) -> tuple:
        return (-pos_counts[instance], sorted(instance[0]), [sorted(b) for b in instance[1]])

    def consistent(plain: frozenset[Literal], bridge: frozenset[Literal]) -> bool:
        return linked(bridge) and not _matching(negs, plain, bridge)

    remaining = sorted(pos_counts, key=order)
    clauses: list[tuple[tuple[Literal, ...], tuple[Literal, ...]]] = []
    unexplained = 0
    def widened(clause: tuple[frozenset[Literal], frozenset[Literal]]
                ) -> tuple[frozenset[Literal], frozenset[Literal]]:
        for other in remaining[1:]:
            plain = clause[0] & description(other[0], atoms)
            for b in other[1]:
                bridge = clause[1] & description(b, bridge_atoms)
                if consistent(plain, bridge):
                    clause = (plain, bridge)
                    break
        return clause

    def support_of(clause: tuple[frozenset[Literal], frozenset[Literal]]) -> int:
        return sum(pos_counts[remaining[i]] for i in _matching(remaining, *clause))

    while remaining:
        seed = remaining[0]
        starts = ((description(seed[0], atoms), description(b, bridge_atoms)) for b in seed[1])
        kept = (start for start in starts if consistent(*start))
        tried = [widened(start) for start in itertools.islice(kept, None if widest else 1)]
        if not tried:
            unexplained += pos_counts[seed]
            remaining = remaining[1:]
            continue
        clause = max(tried, key=support_of)  # the seed's ?m that generalises furthest
        covered = set(_matching(remaining, *clause))
        support = sum(pos_counts[remaining[i]] for i in covered)
        remaining = [p for i, p in enumerate(remaining) if i not in covered]
        if support < min_support:
            unexplained += support
            continue
        clauses.append(_pruned(clause, negs, [neg_counts[n] for n in negs]))
    return clauses, unexplained


def _pruned(clause: tuple[frozenset[Literal], frozenset[Literal]], negs: Sequence[Bridged],
            weights: Sequence[int]) -> tuple[tuple[Literal, ...], tuple[Literal, ...]]:
    """The links of a consistent bridged clause, then, one at a time, the literal of it that
    keeps out the most (negative, ?m) pairs that still satisfy the choice, until none does (a
    negative is kept out when each of its ?m is; `weights`: per negative). Some literal of
    the clause keeps out each pair, since the whole clause keeps out every negative."""
    plain: set[Literal] = set()
    bridge = set(bridge_links(clause[1]))
    must, must_not = split_clause(bridge)
    pairs = [(i, atoms) for i, (_state, bridged) in enumerate(negs) for atoms in bridged
             if must <= atoms and must_not.isdisjoint(atoms)]
    rest = sorted([(lit, False) for lit in clause[0]] + [(lit, True) for lit in clause[1] - bridge],
                  key=lambda item: literal_order(item[0]))

    def kept_out(lit: Literal, on_m: bool, i: int, atoms: frozenset[LiftedAtom]) -> bool:
        return not holds(lit, atoms if on_m else negs[i][0])

    while pairs:
        best, best_key = None, None
        for lit, on_m in rest:
            gain = sum(weights[i] for i, atoms in pairs if kept_out(lit, on_m, i, atoms))
            if gain > 0 and (best_key is None or (gain, lit.positive) > best_key):
                best, best_key = (lit, on_m), (gain, lit.positive)
        assert best is not None  # the whole clause keeps every pair out
        rest.remove(best)
        (bridge if best[1] else plain).add(best[0])
        pairs = [(i, atoms) for i, atoms in pairs if not kept_out(*best, i, atoms)]
    return (tuple(sorted(plain, key=literal_order)), tuple(sorted(bridge, key=literal_order)))
