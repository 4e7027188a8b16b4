"""Ground conditions and ground actions: the set form of a compiled step.

Semantics
---------
* **Atoms.** A ground atom is a tuple of lower-case strings, `("holding", "apple")`; the table
  interns the atoms of the ground actions it builds, so those equal atoms are one object (the
  initial state's atoms, and those a first check's step functions add, are equal by value).
  A state is a frozenset of atoms (closed world: what is not in it is false).
* **Conditions.** A ground condition (`Cond`) is a conjunction: its literals as two frozensets
  (`pos` must be present, `neg` absent) plus, only where the formula has a disjunction or an
  implication, `AnyOf`/`Implies` parts. Equalities are decided when grounding: a false one is
  kept in `unsat`, which makes the condition false in every state.
* **Actions.** A `GroundAction` is pyperplan's operator: precondition sets, add and delete sets,
  closures only where the precondition needs them (`checks`), and indexed conditional effects.
  `applicable(state)` is `pre_pos <= state and state.isdisjoint(pre_neg)` and the checks;
  `apply(state)` is `(state - delete) | add`, conditional effects evaluated on the state
  *before* the step (delete-then-add: an atom both deleted and added holds afterwards).

This set form is the reference semantics; the gate's check loop runs the same actions on bit
sets (`bits.py`), and tests hold the two to identical verdicts.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..pddl.model import Action, key

if TYPE_CHECKING:
    from .table import PreconditionTable

GroundAtom = tuple[str, ...]
"""`("predicate", "arg", ...)`, all lower case."""
Atoms = frozenset[GroundAtom]
State = Atoms
"""A state: the atoms that hold (closed world)."""
Sets4 = tuple[Atoms, Atoms, Atoms, Atoms]
"""pre_pos, pre_neg, add, delete."""

EQUALS = "="
"""Predicate name of the pseudo-atom `("=", a, b)` used to report a failed equality."""


# --- ground conditions ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GroundLiteral:
    """A ground literal of a condition, with where it came from for reporting.

    `schema` is the canonical text of the literal as written in the action (variables kept,
    `(not ...)` when negative); `anchor` the canonical text of the top-level precondition conjunct
    that contains it. A `@sage reason` annotation may name either.
    """

    atom: GroundAtom
    positive: bool
    schema: str
    anchor: str


@dataclass(frozen=True, slots=True, eq=False)
class AnyOf:
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


class ClauseIndex:
    """Many clauses checked together: a clause can only fail when all its negative atoms are
    present, so each is filed under one of them and only clauses whose atom is in the state are
    evaluated (the `(not (exists (?o) (and (inside ?x ?o) (closed ?o))))` pattern)."""

    __slots__ = ("index", "keys")

    def __init__(self, clauses: list[AnyOf]):
        self.index: dict[Any, Any] = {}
        for clause in clauses:
            trigger = min(clause.any_neg)  # any of them; min keeps it deterministic
            self.index.setdefault(trigger, []).append(clause)
        self.keys = frozenset(self.index)

    def holds(self, state: State | set[GroundAtom]) -> bool:
        for atom in self.keys & state:
            for clause in self.index[atom]:
                if not clause.holds(state):
                    return False
        return True


@dataclass(frozen=True, slots=True, eq=False)
class Implies:
    """A ground implication: when `condition` holds, `then` must hold."""

    condition: Cond
    then: Cond

    def holds(self, state: State | set[GroundAtom]) -> bool:
        return not self.condition.holds(state) or self.then.holds(state)


@dataclass(frozen=True, slots=True, eq=False)
class Cond:
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

@dataclass(frozen=True, slots=True, eq=False)
class ConditionalEffect:
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

class GroundAction:
    """An action with its parameters bound to objects, compiled to sets (pyperplan's Operator).

    `pre_pos`/`pre_neg`/`add`/`delete` are frozensets of interned atoms. `checks` holds the
    closures the precondition needs beyond the two literal sets (one per disjunction/implication,
    a clause index for many clauses, a constant-false one when an equality failed at grounding);
    `conditional` the indexed conditional effects. `text`, `bindings` and `precondition` (the
    ground condition with each literal's source, for explanations) are built on first use, since
    checking a plan never needs them. `fast` is the bit-set form the gate's check loop uses
    (see `fast` below). Instances are values: treat them as immutable.
    """

    __slots__ = ("schema", "args", "checks", "conditional", "_fast", "_table", "_subs",
                 "_unsat", "_literals", "_extra", "_sets", "_text", "_bindings", "_precondition")

    def __init__(self, table: PreconditionTable, schema: Action, args: tuple[str, ...],
                 literals: tuple[tuple[GroundAtom, ...], ...] | None,
                 extra: Sets4 | None,
                 subs: tuple[Any, ...], unsat: bool, conditional: ConditionalEffects | None):
        self.schema = schema
        self.args = args
        self.conditional = conditional
        self._table = table
        # the template's atoms: pre_pos, pre_neg, add, delete (None: built when first needed)
        self._literals = literals
        self._extra = extra  # the same four from the walked (non-template) parts, or None
        self._subs = subs
        self._unsat = unsat
        self.checks = _set_checks(subs, unsat) if subs or unsat else ()
        self._fast: tuple[Any, ...] | None = None
        self._sets: Sets4 | None = None
        self._text: str | None = None
        self._bindings: tuple[tuple[str, str], ...] | None = None
        self._precondition: Cond | None = None

    @property
    def fast(self) -> tuple[Any, ...]:
        """The check loop's form (`PreconditionTable.fast_form`, built on first read):
        `(test, pos, add, delete, (literals, reads, successors, ground))`. `literals` is the
        `pos | neg` mask of the literal precondition (it holds when `s & literals == pos`);
        `test` is `literals` plus the atoms whose presence makes the step special: the trigger
        atoms of its conditional effects, or `BitSets.ALWAYS` (set in every state) when it has
        a guard (a disjunction or implication the static facts do not decide). When
        `s & test == pos` the successor is `(s | add) ^ delete`; otherwise, if the literals
        hold and `successors` is not None, it is `(s | u) ^ d` for `(u, d) =
        successors[s & reads]`, None when the guard fails (`bits.Successors`)."""
        if self._fast is None:
            self._fast = self._table.fast_form(self)
        return self._fast

    def _build_sets(self) -> Sets4:
        intern = self._table._interned.setdefault
        literals = self._literals
        if literals is None:
            literals = self._table.schema.template(self.schema).build(self.args)[:4]
        sets: tuple[Any, ...] = tuple(frozenset(map(intern, atoms, atoms)) if atoms else _EMPTY
                            for atoms in literals)
        if self._extra is not None:
            sets = tuple(a | b for a, b in zip(sets, self._extra))
        self._sets = sets
        return sets

    @property
    def pre_pos(self) -> Atoms:
        """Atoms the precondition requires (interned)."""
        return (self._sets or self._build_sets())[0]

    @property
    def pre_neg(self) -> Atoms:
        """Atoms the precondition forbids."""
        return (self._sets or self._build_sets())[1]

    @property
    def add(self) -> Atoms:
        """Atoms the unconditional effect adds."""
        return (self._sets or self._build_sets())[2]

    @property
    def delete(self) -> Atoms:
        """Atoms the unconditional effect deletes."""
        return (self._sets or self._build_sets())[3]

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def text(self) -> str:
        """`(Pick Apple)`: the action and its objects in original spelling."""
        if self._text is None:
            self._text = action_text(self.schema, self.args, self._table.object_names)
        return self._text

    @property
    def bindings(self) -> tuple[tuple[str, str], ...]:
        """(parameter name, object in original spelling) pairs."""
        if self._bindings is None:
            self._bindings = action_bindings(self.schema, self.args, self._table.object_names)
        return self._bindings

    @property
    def precondition(self) -> Cond:
        """The ground precondition with every literal's source (what `explain` reports)."""
        if self._precondition is None:
            env = {key(p.name): a for p, a in zip(self.schema.parameters, self.args)}
            self._precondition = self._table.ground_condition(self.schema.precondition, env,
                                                              anchor=None)
        return self._precondition

    def __repr__(self) -> str:
        return f"GroundAction{self.text}"

    def applicable(self, state: State | set[GroundAtom]) -> bool:
        return (self.pre_pos <= state and state.isdisjoint(self.pre_neg)
                and all(check(state) for check in self.checks))

    def apply(self, state: State) -> State:
        """The successor state (a new frozenset)."""
        if self.conditional is None:
            return (state - self.delete) | self.add
        add, delete = self.conditional.fire(state)
        return ((state - self.delete) - delete) | self.add | add

    def apply_in_place(self, state: set[GroundAtom]) -> None:
        """Apply to a mutable set: O(|effects|), no copy of the state."""
        if self.conditional is None:
            state -= self.delete
            state |= self.add
            return
        add, delete = self.conditional.fire(state)  # conditions read the pre-state
        state -= self.delete
        state -= delete
        state |= self.add
        state |= add


_EMPTY: Atoms = frozenset()


def action_text(action: Action, args: tuple[str, ...], names: dict[str, str]) -> str:
    """`(Pick Apple)`: `action` with object keys `args`, objects in their spelling `names`."""
    return spelled(action.name, args, names)


def spelled(head: str, keys: tuple[str, ...], names: dict[str, str]) -> str:
    """`(head a b)`: `head` and each of `keys` in its spelling `names[key]` (the key itself
    when it has none)."""
    if not keys:
        return f"({head})"
    return f"({head} {' '.join(map(names.get, keys, keys))})"


def action_bindings(action: Action, args: tuple[str, ...], names: dict[str, str]
                    ) -> tuple[tuple[str, str], ...]:
    """(parameter name, object in original spelling) pairs of `action` with `args`."""
    return tuple((p.name, names.get(a, a)) for p, a in zip(action.parameters, args))


def _never(state: object) -> bool:
    return False


def _set_checks(subs: tuple[Any, ...], unsat: bool) -> tuple[Callable[[State | set[GroundAtom]], bool], ...]:
    """The closures a precondition needs beyond its literal sets, on set states."""
    clauses = [sub for sub in subs if isinstance(sub, AnyOf) and sub.is_clause]
    checks = tuple(sub.holds for sub in subs if not (isinstance(sub, AnyOf) and sub.is_clause))
    if len(clauses) > 1:
        checks = (ClauseIndex(clauses).holds, *checks)
    elif clauses:
        checks = (clauses[0].holds, *checks)
    if unsat:
        checks = (_never, *checks)
    return checks
