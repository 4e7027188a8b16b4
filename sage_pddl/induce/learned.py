"""What is learned: immutable learned effects and action schemas, and what they predict
(whether a step is applicable in a state, which facts it adds and deletes there). What they
predict is what the gate does on the PDDL `to_pddl.py` writes for them (closed world): the
tests hold the two to it on every kind of domain induce writes
(`tests/induce/test_learned_gate_agreement.py`)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sage_pddl.pddl.model import key

from .lifting import (
    EXTRA,
    Either,
    Fact,
    LiftedAtom,
    Literal,
    arg_binding,
    bridge_is_linked,
    bridges,
    further_objects,
    ground_literal,
    holds,
    lift_state,
    lift_with_some_object,
    satisfies,
)


@dataclass(frozen=True)
class LearnedEffect:
    """One learned effect: `literal` (over parameters and maybe ?o), which happens when every
    literal of `condition` holds and, if there is an `exception`, not all of its literals do
    (`(when (and C (not (and X))) e)`). In a universal effect ?o is the quantified object; in
    the conditions of any other effect, "some object other than the arguments". A universal
    effect's `bridge` (literals naming ?m, `SECOND`) asks that some object ?m other than the
    arguments and ?o satisfy all of them (`(exists (?m) (and ...))` in its condition); it
    relates ?m to ?o and to an argument by true atoms, so only a bridge (`lifting.bridges`)
    can satisfy it."""

    literal: Literal
    condition: tuple[Literal, ...] = ()
    universal: bool = False
    support: int = 0
    exception: tuple[Literal, ...] = ()
    bridge: tuple[Literal, ...] = ()

    def __post_init__(self) -> None:
        if self.bridge and not (self.universal and bridge_is_linked(self.bridge)):
            raise ValueError("a bridge condition belongs to a universal effect and relates ?m "
                             "to ?o and to an argument by true atoms")

    def fires(self, true_atoms: frozenset[LiftedAtom],
              bridged: tuple[frozenset[LiftedAtom], ...] = ()) -> bool:
        """Whether the effect happens where `true_atoms` hold (`bridged`: the atoms naming ?m
        of each bridge, read by a `bridge` condition)."""
        return satisfies(true_atoms, self.condition) and not (
            self.exception and satisfies(true_atoms, self.exception)) and (
            not self.bridge or any(satisfies(atoms, self.bridge) for atoms in bridged))



@dataclass(frozen=True)
class LearnedAction:
    """A learned action schema: enough to predict success and to write PDDL. A precondition
    literal naming ?o (`EXTRA`) is existential: `(not (shut-in ?x ?o))` says no object other
    than the arguments is so related (`(not (exists (?o) ...))`). An `Either` holds where its
    literal does or some object other than the arguments satisfies its condition on ?m
    (`(or L (exists (?o) ...))`)."""

    name: str
    arity: int
    preconditions: tuple[Literal | Either, ...]
    effects: tuple[LearnedEffect, ...]
    typing: tuple[Literal, ...] = ()
    """The parameters' role types as the properties they require (`roles.py`): written as
    the parameters' types, not in the precondition, and checked like preconditions."""

    def applicable(self, state: Iterable[Fact], args: Sequence[str],
                   unknown: Iterable[Fact] = ()) -> bool:
        """Whether every precondition literal holds in `state`, or is about a fact in
        `unknown` (not observed, so it contradicts nothing); a literal naming ?o is about
        some object other than the arguments (`lift_with_some_object`)."""
        binding = arg_binding([key(a) for a in args])
        further = (further_objects(state, binding)
                   if any(isinstance(p, Either) for p in self.preconditions) else ())
        return self.accepts(lift_with_some_object(state, binding),
                            lift_with_some_object(unknown, binding), further)

    def accepts(self, true_atoms: frozenset[LiftedAtom], unseen: frozenset[LiftedAtom],
                further: tuple[frozenset[LiftedAtom], ...] = ()) -> bool:
        """`applicable` on a state already lifted over the step's arguments (`true_atoms`),
        with the lifted atoms it did not observe (`unseen`) and what it says of the objects
        related to two arguments (`further`, `further_objects`: read by an `Either`)."""
        return all(holds(literal, true_atoms, further) or literal.atom in unseen
                   for literal in self.preconditions + self.typing)

    def changes(self, state: Iterable[Fact], args: Sequence[str]
                ) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """(added, deleted): the facts the step makes true that `state` lacks, and the facts
        of `state` it makes false, when the learned effects run there: each effect's condition
        read in `state`, a universal effect ranging over the objects that `state` mentions and
        the arguments do not (its ?m over their bridges), the next state
        `(state - deletes) | adds` as in PDDL."""
        state = frozenset(state)
        names = [key(a) for a in args]
        binding = arg_binding(names)
        added: set[Fact] = set()
        deleted: set[Fact] = set()
        if any(not e.universal for e in self.effects):
            true_atoms = lift_with_some_object(state, binding)
            for effect in self.effects:
                if not effect.universal and effect.fires(true_atoms):
                    (added if effect.literal.positive else deleted).add(
                        ground_literal(effect.literal, names, ""))
        if any(e.universal for e in self.effects):
            others = sorted({obj for fact in state for obj in fact[1:]} - set(binding))
            bridges_of = bridges(state, binding) if any(e.bridge for e in self.effects) else None
            for obj in others:
                extended = {**binding, obj: (EXTRA,)}
                true_atoms = lift_state(state, extended)
                bridged = bridges_of(obj) if bridges_of is not None else ()
                for effect in self.effects:
                    if effect.universal and effect.fires(true_atoms, bridged):
                        (added if effect.literal.positive else deleted).add(
                            ground_literal(effect.literal, names, obj))
        after = (state - deleted) | added
        return after - state, state - after


