"""Ground conditions and ground actions on sets: what an action means.

Semantics (pyperplan's `task.py`, with ADL's conditions and conditional effects on top)
-----------------------------------------------------------------------------------------
* **Atoms and states.** A ground atom is a tuple of lower-case strings, `("holding", "apple")`.
  A state is a frozenset of atoms (closed world: what is not in it is false).
* **Conditions.** A ground condition (`Cond`) is a conjunction: its literals as two frozensets
  (`pos` must be present, `neg` absent) plus, only where the formula has a disjunction or an
  implication, `AnyOf`/`Implies` parts. Equalities are decided when grounding: a false one is
  kept in `unsat`, which makes the condition false in every state.
* **Actions.** A `GroundAction` is applicable in `state` when `pre_pos <= state`,
  `state.isdisjoint(pre_neg)` and its disjunctions and implications hold; applying it gives
  `(state - delete) | add`, where `add` and `delete` include the conditional effects whose
  condition holds in the state *before* the step (delete, then add: an atom both deleted and
  added holds afterwards).

Ground literals, conditions and actions are NamedTuples: immutable values, compared by
value, cheap to make (a plan's first check makes one per step and literal).

This is the one statement of an action's meaning; the gate's check loop runs the same ground
actions on bit sets (`bits.py`, derived from these sets), and tests hold the two to identical
verdicts on the corpus, the iTHOR plans and their mutants.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..pddl.model import Action

GroundAtom = tuple[str, ...]
"""`("predicate", "arg", ...)`, all lower case."""
Atoms = frozenset[GroundAtom]
State = Atoms
"""A state: the atoms that hold (closed world)."""

EQUALS = "="
"""Predicate name of the pseudo-atom `("=", a, b)` used to report a failed equality."""


# --- ground conditions ---------------------------------------------------------------------

class GroundLiteral(NamedTuple):
    """A ground literal of a condition, with where it came from for reporting.

    `schema` is the canonical text of the literal as written in the action (variables kept,
    `(not ...)` when negative); `anchor` the canonical text of the top-level precondition conjunct
    that contains it. A `@sage reason` annotation may name either. A literal outside the
    domain's actions (the goal's) names neither: `""`.
    """

    atom: GroundAtom
    positive: bool
    schema: str
    anchor: str


class AnyOf(NamedTuple):
    """A ground disjunction (from `or`, `exists`, a negated `and`/`forall`, ...).

    Single-literal alternatives are kept as two sets (`any_pos`: one present suffices;
    `any_neg`: one absent suffices), so a clause is checked with two set operations.
    `source`/`bindings`/`positive` let the reporter print it as written, with the action's
    parameters (and enclosing quantified variables) replaced by objects.
    """

    parts: tuple[Cond, ...]
    source: object
    bindings: tuple[tuple[str, str], ...]
    positive: bool
    schema: str
    anchor: str
    any_pos: Atoms = frozenset()
    any_neg: Atoms = frozenset()
    complex_parts: tuple[Cond, ...] = ()

    @classmethod
    def of(cls, parts: tuple[Cond, ...], source: object, bindings: tuple[Any, ...], positive: bool,
           schema: str, anchor: str) -> AnyOf:
        any_pos: set[GroundAtom] = set()
        any_neg: set[GroundAtom] = set()
        complex_parts: list[Any] = []
        for part in parts:
            if part.subs or part.unsat or len(part.pos) + len(part.neg) != 1:
                complex_parts.append(part)
            elif part.pos:
                any_pos |= part.pos
            else:
                any_neg |= part.neg
        return cls(parts, source, bindings, positive, schema, anchor, frozenset(any_pos),
                   frozenset(any_neg), tuple(complex_parts))

    @property
    def is_clause(self) -> bool:
        """Only single-literal alternatives, at least one of them negative."""
        return not self.complex_parts and bool(self.any_neg)

    def holds(self, state: State | set[GroundAtom]) -> bool:
        return (not self.any_pos.isdisjoint(state) or not self.any_neg <= state
                or any(part.holds(state) for part in self.complex_parts))


class Implies(NamedTuple):
    """A ground implication: when `condition` holds, `then` must hold."""

    condition: Cond
    then: Cond

    def holds(self, state: State | set[GroundAtom]) -> bool:
        return not self.condition.holds(state) or self.then.holds(state)


class Cond(NamedTuple):
    """A ground conjunction: literals as two frozensets, plus disjunctions/implications.

    `literals` lists the literals in source order (for reporting every failed one); `unsat` holds
    equalities decided false at grounding time, which make the conjunction false in every state.
    """

    pos: Atoms
    neg: Atoms
    literals: tuple[GroundLiteral, ...] = ()
    subs: tuple[AnyOf | Implies, ...] = ()
    unsat: tuple[GroundLiteral, ...] = ()

    def holds(self, state: State | set[GroundAtom]) -> bool:
        if self.unsat or not self.pos <= state or not state.isdisjoint(self.neg):
            return False
        for sub in self.subs:
            if not sub.holds(state):
                return False
        return True

    @property
    def is_literal(self) -> bool:
        """Exactly one positive literal and nothing else."""
        return len(self.pos) == 1 and not (self.neg or self.subs or self.unsat)

    @property
    def is_true(self) -> bool:
        return not (self.pos or self.neg or self.subs or self.unsat)

    @property
    def is_false(self) -> bool:
        return bool(self.unsat)


TRUE = Cond(frozenset(), frozenset())


def conjoin(conds: Iterable[Cond]) -> Cond:
    """The conjunction of ground conditions, flattened."""
    conds = [c for c in conds if not c.is_true]
    if not conds:
        return TRUE
    if len(conds) == 1:
        return conds[0]
    return Cond(
        frozenset().union(*(c.pos for c in conds)),
        frozenset().union(*(c.neg for c in conds)),
        tuple(itertools.chain.from_iterable(c.literals for c in conds)),
        tuple(itertools.chain.from_iterable(c.subs for c in conds)),
        tuple(itertools.chain.from_iterable(c.unsat for c in conds)),
    )


# --- ground actions ------------------------------------------------------------------------

class ConditionalEffect(NamedTuple):
    condition: Cond
    add: Atoms
    delete: Atoms


@dataclass(frozen=True, slots=True, eq=False)
class ConditionalEffects:
    """The conditional effects of a ground action, indexed so that applying them costs about
    the number of effects that fire rather than the number of `forall` instances.

    * `triggered`: effects whose condition has a positive literal, filed under the first one as
      (rest of the condition or None, add, delete); only those whose trigger atom is in the state
      are evaluated.
    * `absent`: effects whose condition is one negative literal and whose effect atoms no other
      such effect touches: they all fire (`absent_add`/`absent_delete`) except those whose atom
      is present, which are subtracted.
    * `general`: the rest, evaluated one by one.
    """

    triggered: dict[Any, Any]
    trigger_keys: Atoms
    absent: dict[Any, Any]
    absent_keys: Atoms
    absent_add: Atoms
    absent_delete: Atoms
    general: tuple[ConditionalEffect, ...]

    @classmethod
    def build(cls, effects: list[ConditionalEffect]) -> ConditionalEffects | None:
        if not effects:
            return None
        triggered: dict[Any, Any] = {}
        absent: dict[Any, Any] = {}
        general: list[ConditionalEffect] = []
        for effect in effects:
            cond = effect.condition
            if cond.pos:
                trigger = next((lit.atom for lit in cond.literals if lit.positive),
                               None) or min(cond.pos)
                # the trigger alone decides a one-literal condition: no need to evaluate it
                rest = None if cond.is_literal else cond
                triggered.setdefault(trigger, []).append((rest, effect.add, effect.delete))
            elif len(cond.neg) == 1 and not cond.subs and not cond.unsat:
                (atom,) = cond.neg
                add, delete = absent.get(atom, (frozenset(), frozenset()))
                absent[atom] = (add | effect.add, delete | effect.delete)
            else:
                general.append(effect)
        absent_add = frozenset().union(*(a for a, _ in absent.values()))
        absent_delete = frozenset().union(*(d for _, d in absent.values()))
        disjoint = (sum(len(a) for a, _ in absent.values()) == len(absent_add)
                    and sum(len(d) for _, d in absent.values()) == len(absent_delete))
        if not disjoint:  # the subtraction trick needs each effect atom owned by one condition
            general += [ConditionalEffect(Cond(frozenset(), frozenset((atom,))), a, d)
                        for atom, (a, d) in absent.items()]
            absent, absent_add, absent_delete = {}, frozenset(), frozenset()
        return cls({k: tuple(v) for k, v in triggered.items()}, frozenset(triggered),
                   absent, frozenset(absent), absent_add, absent_delete, tuple(general))

    def fire(self, state: State | set[GroundAtom]) -> tuple[set[GroundAtom], set[GroundAtom]]:
        """(add, delete) of the effects whose conditions hold in `state` (the pre-state)."""
        add: set[GroundAtom] = set()
        delete: set[GroundAtom] = set()
        for atom in self.trigger_keys & state:
            for condition, effect_add, effect_delete in self.triggered[atom]:
                if condition is None or condition.holds(state):
                    add |= effect_add
                    delete |= effect_delete
        if self.absent_keys:
            present = self.absent_keys & state
            if present:
                fired_add, fired_delete = set(self.absent_add), set(self.absent_delete)
                for atom in present:
                    not_add, not_delete = self.absent[atom]
                    fired_add -= not_add
                    fired_delete -= not_delete
                add |= fired_add
                delete |= fired_delete
            else:
                add |= self.absent_add
                delete |= self.absent_delete
        for effect in self.general:
            if effect.condition.holds(state):
                add |= effect.add
                delete |= effect.delete
        return add, delete

class GroundAction(NamedTuple):
    """An action with its parameters bound to objects: pyperplan's operator on sets.

    `precondition` is the ground precondition (its literals as the sets `pre_pos` and
    `pre_neg`, plus disjunctions and implications, each literal with its source for
    explanations); `add` and `delete` the unconditional effect; `conditional` the conditional
    effects (None when there are none). `spelling` holds the objects in their original
    spelling, for `text` (`(Pick Apple)`) and `bindings` (the (parameter, object) pairs). A
    value: it refers to nothing but the action schema it instantiates.
    """

    schema: Action
    args: tuple[str, ...]
    precondition: Cond
    add: Atoms
    delete: Atoms
    conditional: ConditionalEffects | None
    spelling: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def text(self) -> str:
        """The step as PDDL, in the domain's and problem's spelling: `(Pick Apple)`."""
        return f"({' '.join((self.schema.name, *self.spelling))})"

    @property
    def bindings(self) -> tuple[tuple[str, str], ...]:
        """(parameter name as declared, object in its original spelling) pairs."""
        return tuple((p.name, o) for p, o in zip(self.schema.parameters, self.spelling))

    @property
    def pre_pos(self) -> Atoms:
        """Atoms the precondition requires."""
        return self.precondition.pos

    @property
    def pre_neg(self) -> Atoms:
        """Atoms the precondition forbids."""
        return self.precondition.neg

    def __repr__(self) -> str:
        return f"GroundAction{self.text}"

    def applicable(self, state: State | set[GroundAtom]) -> bool:
        """`pre_pos <= state and not (pre_neg & state)`, and every disjunction and
        implication of the precondition holds (`Cond.holds`)."""
        return self.precondition.holds(state)

    def effects(self, state: State | set[GroundAtom]) -> tuple[Atoms | set[GroundAtom],
                                                               Atoms | set[GroundAtom]]:
        """(add, delete) of the step in `state` (the state before it): the unconditional
        effect and every conditional effect whose condition holds in `state`."""
        if self.conditional is None:
            return self.add, self.delete
        add, delete = self.conditional.fire(state)
        return add | self.add, delete | self.delete

    def apply(self, state: State) -> State:
        """The successor: `(state - delete) | add` (an atom both deleted and added holds)."""
        add, delete = self.effects(state)
        return (state - delete) | add

    def apply_in_place(self, state: set[GroundAtom]) -> None:
        """`apply` on a mutable set, without copying it."""
        add, delete = self.effects(state)
        state -= delete
        state |= add


def spelled(head: str, keys: tuple[str, ...], names: dict[str, str]) -> str:
    """`(head a b)`: `head` and each of `keys` in its spelling `names[key]` (the key itself
    when it has none)."""
    if not keys:
        return f"({head})"
    return f"({head} {' '.join(map(names.get, keys, keys))})"

