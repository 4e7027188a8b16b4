"""Ground conditions and ground actions: what an action is, as immutable data.

Semantics (pyperplan's `task.py`, with ADL's conditions and conditional effects on top)
-----------------------------------------------------------------------------------------
* **Atoms and states.** A ground atom is a tuple of lower-case strings, `("holding", "apple")`.
  A state is a frozenset of atoms (closed world: what is not in it is false).
* **Conditions.** A ground condition (`Cond`) is a conjunction: its literals as two frozensets
  (`pos` must be present, `neg` absent) plus, only where the formula has a disjunction or an
  implication, `AnyOf`/`Implies` parts. Equalities are decided when grounding: a false one is
  kept in `unsat`, which makes the condition false in every state.
* **Actions.** A `GroundAction` holds its precondition (a `Cond`), its unconditional effect
  (`add`, `delete`) and its conditional effects (`ConditionalEffect`: a `Cond` with what it
  adds and deletes when that holds in the state *before* the step).

What these mean on a state (when a condition holds, what a step changes, which literal of a
refused step failed) is executed in one place, `engine.py`, on the compiled form of these
values; this module only states them as data. The tests keep a set interpreter of the same
meaning (`tests/gate/reference.py`) that the engine is held to on the whole corpus.

Ground literals, conditions and actions are NamedTuples: immutable values, compared by
value, cheap to make (a first check makes them for each step of an action that is not plain,
`engine.compile_plain`, and for each refused step).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from itertools import repeat
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


def ground_literals(atoms: Iterable[GroundAtom], positive: Iterable[bool],
                    schemas: Iterable[str], anchors: Iterable[str]) -> tuple[GroundLiteral, ...]:
    """The `GroundLiteral`s of these columns, in order: made as `GroundLiteral._make` makes
    one (`tuple.__new__`), without a Python call per literal (a plan's first check makes one
    per step and literal)."""
    return tuple(map(tuple.__new__, repeat(GroundLiteral),
                     zip(atoms, positive, schemas, anchors)))


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


class Implies(NamedTuple):
    """A ground implication: when `condition` holds, `then` must hold."""

    condition: Cond
    then: Cond


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
    """`add` and `delete` happen when `condition` holds in the state before the step."""

    condition: Cond
    add: Atoms
    delete: Atoms


class GroundAction(NamedTuple):
    """An action with its parameters bound to objects: pyperplan's operator on sets.

    `precondition` is the ground precondition (its literals as the sets `pre_pos` and
    `pre_neg`, plus disjunctions and implications, each literal with its source for
    explanations); `add` and `delete` the unconditional effect; `conditional` the conditional
    effects (`()` when there are none). `spelling` holds the objects in their original
    spelling, for `text` (`(Pick Apple)`) and `bindings` (the (parameter, object) pairs). A
    value: it refers to nothing but the action schema it instantiates.
    """

    schema: Action
    args: tuple[str, ...]
    precondition: Cond
    add: Atoms
    delete: Atoms
    conditional: tuple[ConditionalEffect, ...]
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


def spelled(head: str, keys: tuple[str, ...], names: dict[str, str]) -> str:
    """`(head a b)`: `head` and each of `keys` in its spelling `names[key]` (the key itself
    when it has none)."""
    if not keys:
        return f"({head})"
    return f"({head} {' '.join(map(names.get, keys, keys))})"

