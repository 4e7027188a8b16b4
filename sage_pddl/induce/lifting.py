"""Lifted atoms and literals: ground facts seen from a step's arguments.

A ground fact whose objects are all step arguments becomes a lifted atom over argument
positions (`("inside", (0, 1))` for `(inside ?x ?y)`); a fact naming the same object twice
gives every lifting. Position `EXTRA` stands for one object that is not an argument: the
quantified `?o` of a universal effect, or, in the conditions of any other effect, "some
object other than the arguments" (`lift_with_some_object`). Position `SECOND` stands for a
further object `?m` in the condition of a universal effect, other than the arguments and ?o and
related to both (`bridges`): "?o is inside some ?m that is inside ?x"; in a precondition, for
the further object of an `Either`, related to the arguments of its literal (`further_objects`):
"the character is next to something next to ?y". A literal is an atom with a sign; a clause is
a conjunction of literals, and a state satisfies it when every literal holds.
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

EXTRA = -1  # the index of the universally quantified variable ?o in lifted atoms
SECOND = -2  # the index of ?m, the further object of a universal effect's condition

Fact = tuple[str, ...]


class LiftedAtom(NamedTuple):
    """An atom over a step's argument positions: `(inside ?x ?y)` is
    `LiftedAtom("inside", (0, 1))`."""

    predicate: str
    slots: tuple[int, ...]
    """The argument position of each of the atom's objects (`EXTRA`: the one that is not)."""


class Literal(NamedTuple):
    """A lifted atom with a sign: `(not (inside ?x ?y))` is `Literal(False, "inside", (0, 1))`."""

    positive: bool
    predicate: str
    slots: tuple[int, ...]
    """The argument position of each of the atom's objects (`EXTRA`: the one that is not)."""

    @property
    def atom(self) -> LiftedAtom:
        return LiftedAtom(self.predicate, self.slots)


class Either(NamedTuple):
    """A precondition that `literal` (over the parameters) holds or, where it does not, some
    further object ?m, other than the arguments, satisfies every literal of `through` (over
    the parameters and `SECOND`): `(or (next_to ?x ?y) (exists (?o) (and (not (= ?o ?x)) (not
    (= ?o ?y)) (next_to ?x ?o) (obj_next_to ?o ?y))))`, the character next to the target or
    next to something next to it. `through` relates ?m by true atoms to each argument that
    `literal` names (`reaches`), so only an object of `further_objects` can satisfy it."""

    literal: Literal
    through: tuple[Literal, ...]

    @property
    def positive(self) -> bool:
        return True

    @property
    def atom(self) -> LiftedAtom:
        """Observed where `literal`'s atom is (an unobserved one neither holds nor fails)."""
        return self.literal.atom


def variable_names(arity: int) -> tuple[str, ...]:
    if arity <= 3:
        return ("x", "y", "z")[:arity]
    return tuple(f"x{i + 1}" for i in range(arity))


def literal_text(literal: Literal, names: Sequence[str]) -> str:
    words = " ".join([literal.predicate, *(("?o" if i == EXTRA else "?m" if i == SECOND
                                            else "?" + names[i]) for i in literal.slots)])
    return f"({words})" if literal.positive else f"(not ({words}))"


# --- lifting ---------------------------------------------------------------------------------

def _positions(obj: str, binding: Mapping[str, tuple[int, ...]]) -> tuple[int, ...]:
    return binding.get(obj, ())


def lift_state(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]) -> frozenset[LiftedAtom]:
    """The lifted atoms (over the variables in `binding`) that a ground state makes true."""
    lifted: set[LiftedAtom] = set()
    for fact in state:
        choices = [_positions(obj, binding) for obj in fact[1:]]
        if all(choices):
            for combo in itertools.product(*choices):
                lifted.add(LiftedAtom(fact[0], combo))
    return frozenset(lifted)


def lift_with_some_object(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]
                          ) -> frozenset[LiftedAtom]:
    """`lift_state` plus, for each fact naming exactly one object outside `binding`, its atom
    with that object lifted to ?o: read existentially, "some other object is so related"
    (`(inside_room ?o ?y)`: ?y contains something, so it is a room)."""
    lifted: set[LiftedAtom] = set()
    for fact in state:
        outside = sum(obj not in binding for obj in fact[1:])
        if outside > 1:
            continue
        choices = [binding.get(obj, (EXTRA,)) for obj in fact[1:]]
        for combo in itertools.product(*choices):
            lifted.add(LiftedAtom(fact[0], combo))
    return frozenset(lifted)


class _Outside(NamedTuple):
    """A state's facts about the objects outside a binding, grouped (`_outside`)."""

    own: dict[str, list[Fact]]
    """object -> the facts naming it and no other object outside the binding"""
    pairs: dict[tuple[str, str], list[Fact]]
    """(a, b) -> the facts naming exactly those two objects outside the binding"""
    neighbours: dict[str, set[str]]
    """object -> the objects outside the binding a fact names with it"""
    linked: set[str]
    """the objects outside the binding that some fact names with an argument"""


def _outside(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]) -> _Outside:
    """`state`'s facts about the objects outside `binding`, read once."""
    own: dict[str, list[Fact]] = defaultdict(list)
    pairs: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    neighbours: dict[str, set[str]] = defaultdict(set)
    linked: set[str] = set()
    for fact in state:
        if len(fact) == 2:  # most facts are unary
            if fact[1] not in binding:
                own[fact[1]].append(fact)
            continue
        outside = {obj for obj in fact[1:] if obj not in binding}
        if any(obj in binding for obj in fact[1:]):
            linked.update(outside)
        if len(outside) == 1:
            own[next(iter(outside))].append(fact)
        elif len(outside) == 2:
            a, b = outside
            pairs[(a, b)].append(fact)
            pairs[(b, a)].append(fact)
            neighbours[a].add(b)
            neighbours[b].add(a)
    return _Outside(own, pairs, neighbours, linked)


def bridges(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]
            ) -> Callable[[str], tuple[frozenset[LiftedAtom], ...]]:
    """obj -> per object ?m that bridges `obj` (?o) to the arguments, in name order, the atoms
    of `state` naming ?m over the arguments, ?o and ?m. A bridge is an object outside
    `binding`, not `obj`, that a fact over the arguments, `obj` and it names with `obj`, and
    that some fact names with an argument: only such an object can satisfy a condition on ?m
    that relates ?m to ?o and to an argument by true atoms, as every learned one does
    (`LearnedEffect.bridge`). The state is read once; each object's bridges are cheap."""
    own, pairs, neighbours, linked = _outside(state, binding)
    lifted_own: dict[str, frozenset[LiftedAtom]] = {}

    def of(obj: str) -> tuple[frozenset[LiftedAtom], ...]:
        found = []
        for m in sorted(neighbours.get(obj, set()) & linked):
            if m not in lifted_own:
                lifted_own[m] = lift_state(own.get(m, ()), {**binding, m: (SECOND,)})
            scope = {**binding, obj: (EXTRA,), m: (SECOND,)}
            found.append(lifted_own[m] | frozenset(
                atom for atom in lift_state(pairs[(m, obj)], scope) if SECOND in atom.slots))
        return tuple(found)

    return of


def further_objects(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]
                    ) -> tuple[frozenset[LiftedAtom], ...]:
    """Per object outside `binding` that facts relate to two argument positions or more (one
    fact or several), the atoms of `state` naming it as ?m (`SECOND`) over the arguments and
    it; each distinct description once, in a fixed order. Only such an object can satisfy a
    precondition's existential over a further object, which relates it by true atoms to each
    argument of its literal (`Either`), so these are what a step's pre-state says of them."""
    outside = _outside(state, binding)
    found = set()
    for m in outside.linked:
        atoms = lift_state(outside.own.get(m, ()), {**binding, m: (SECOND,)})
        if len({i for atom in atoms if SECOND in atom.slots for i in atom.slots if i >= 0}) > 1:
            found.add(atoms)
    return tuple(sorted(found, key=sorted))


def arg_binding(args: Sequence[str]) -> dict[str, tuple[int, ...]]:
    binding: dict[str, list[int]] = defaultdict(list)
    for index, obj in enumerate(args):
        binding[obj].append(index)
    return {obj: tuple(indices) for obj, indices in binding.items()}


def universe(arities: Mapping[str, int], variables: Sequence[int],
             max_extra: int | None = None) -> frozenset[LiftedAtom]:
    """Every lifted atom of the observed predicates over `variables` (with `max_extra`, those
    naming ?o at most that many times)."""
    atoms = set()
    for predicate, arity in arities.items():
        for combo in itertools.product(variables, repeat=arity):
            if max_extra is None or combo.count(EXTRA) <= max_extra:
                atoms.add(LiftedAtom(predicate, combo))
    return frozenset(atoms)


def ground_literal(literal: Literal, args: Sequence[str], extra: str) -> Fact:
    """The ground fact of a lifted literal's atom: positions read in `args`, ?o as `extra`."""
    return (literal.predicate, *(extra if i == EXTRA else args[i] for i in literal.slots))


def holds(literal: Literal | Either, true_atoms: frozenset[LiftedAtom],
          further: Sequence[frozenset[LiftedAtom]] = ()) -> bool:
    """Whether a literal holds where `true_atoms` do; an `Either` reads the atoms of the
    further objects too (`further`, `further_objects`)."""
    if isinstance(literal, Either):
        return holds(literal.literal, true_atoms) or any(
            satisfies(atoms, literal.through) for atoms in further)
    return (literal.atom in true_atoms) == literal.positive


# --- clauses ---------------------------------------------------------------------------------

def description(true_atoms: frozenset[LiftedAtom], atoms: frozenset[LiftedAtom]) -> frozenset[Literal]:
    return frozenset([Literal(True, atom.predicate, atom.slots) for atom in true_atoms if atom in atoms]
                     + [Literal(False, atom.predicate, atom.slots) for atom in atoms - true_atoms])


def split_clause(clause: Iterable[Literal]) -> tuple[frozenset[LiftedAtom], frozenset[LiftedAtom]]:
    clause = list(clause)
    return (frozenset(lit.atom for lit in clause if lit.positive),
            frozenset(lit.atom for lit in clause if not lit.positive))


def satisfies(true_atoms: frozenset[LiftedAtom], clause: Iterable[Literal]) -> bool:
    must, must_not = split_clause(clause)
    return must <= true_atoms and must_not.isdisjoint(true_atoms)


def any_satisfies(instances: Sequence[frozenset[LiftedAtom]], clause: Iterable[Literal]) -> bool:
    must, must_not = split_clause(clause)
    return any(must <= n and must_not.isdisjoint(n) for n in instances)


def bridge_links(literals: Iterable[Literal]) -> tuple[Literal, ...]:
    """The true literals relating ?m (`SECOND`) to ?o or to an argument."""
    return tuple(lit for lit in literals if lit.positive and SECOND in lit.slots
                 and any(i != SECOND for i in lit.slots))


def bridge_is_linked(literals: Iterable[Literal]) -> bool:
    """Whether some true literal relates ?m to ?o, and some relates ?m to an argument (what
    every condition on ?m has: only a bridge can satisfy it, `bridges`)."""
    links = [lit.slots for lit in bridge_links(literals)]
    return any(EXTRA in slots for slots in links) and any(
        any(i >= 0 for i in slots) for slots in links)


def reaches(literals: Iterable[Literal], positions: Iterable[int]) -> bool:
    """Whether each of `positions` is related to ?m by a true literal (`bridge_links`): what
    every condition of an `Either` on ?m has."""
    linked = {i for lit in bridge_links(literals) for i in lit.slots}
    return set(positions) <= linked


def literal_order(literal: Literal | Either) -> tuple:
    if isinstance(literal, Either):
        return (*literal_order(literal.literal), tuple(map(literal_order, literal.through)))
    return (not literal.positive, literal.predicate, literal.slots)


