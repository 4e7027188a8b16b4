"""Compile a PDDL domain and problem into a precondition table that grounds lazily.

Semantics
---------
* **Objects and types.** The objects of a task are the domain constants followed by the problem
  objects (a name declared in both is one object whose types are merged; constants that the
  domain's actions use without declaring them, as ALFWorld does, are simply problem objects). An
  object belongs to its declared types, their ancestors (a type with several parents, an
  `either` parent, belongs to all of them) and `object`. An `(either a b)` parameter or
  quantified variable accepts an object of any of the listed types; an untyped one accepts any.
* **Atoms.** A ground atom is a tuple of lower-case strings, `("holding", "apple")`; every atom
  the table creates is interned, so equal atoms are the same object. A state is a frozenset of
  atoms (closed world: what is not in it is false). `Not` facts in `:init` are documentation of
  absence and ignored; numeric initial values are ignored.
* **Grounding.** An action and a tuple of object names become a `GroundAction` on first use and
  are cached. Quantifiers range over the objects of their types and are expanded when the action
  is grounded (`forall` becomes a conjunction, `exists` a disjunction); equality is decided at
  grounding time. What remains is a conjunction whose literals are two frozensets (`pre_pos`,
  `pre_neg`) plus, only where the formula has a disjunction or an implication, a closure per such
  part. Checking is `pre_pos <= state and state.isdisjoint(pre_neg)` then the closures; applying
  is `(state - delete) | add`, with conditional effects evaluated on the state *before* the step
  (delete-then-add: an atom both deleted and added holds afterwards).
* **Costs.** `increase`/`decrease` of a 0-ary cost fluent (the one the problem's metric names,
  or `total-cost`/`totalCost`) is ignored: costs never change whether a plan is valid.
* **Scope.** Numeric comparisons, other numeric effects, durative actions, derived predicates,
  preferences, `oneof` and any other `Unsupported` node make `compile_table` raise
  `UnsupportedConstruct` naming the construct and its line:column.

* **Speed.** Everything that depends on the domain alone (annotations, names, types, the
  scope hazards, canonical texts, one template per action) is compiled once per `Domain` object
  (`schema.domain_schema`), so a table costs only its problem. Grounding substitutes the step's
  objects into the action's template (one generated function goes straight from the objects to
  the bit masks of all literal atoms; the atom sets are built only when read) and walks only
  quantifiers, disjunctions, implications and conditional effects. For checking, a ground
  action also has a bit-set form (`BitSets`, `PreconditionTable.fast_step`): states are ints,
  a STRIPS step is a few C-level int operations.

Annotations (`; @sage alias|step|reason`, see docs/annotations.md) are read with the schema:
action aliases and name matching (case, spaces, `_` and `-` ignored), the JSON-field map of each
action's parameters, and the friendly code and message of a precondition literal.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Union

from ..pddl.errors import PDDLSemanticError, UnsupportedConstruct
from ..pddl.model import (
    Action, And, Atom, Comparison, Constant, Domain, Equals, Exists, Forall, ForallEffect, FunctionTerm,
    Imply, Location, Not, NumericEffect, Or, Problem, Typed, Unsupported, Variable, When, key,
    walk,
)
from .schema import (  # noqa: F401 - canonical_sexpr, formula_text, loose_name, Reason re-exported
    Reason, canonical_sexpr, domain_schema, formula_text, loose_name,
)

GroundAtom = tuple  # ("predicate", "arg", ...), all lower case
State = frozenset

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

    parts: tuple["Cond", ...]
    source: object
    bindings: tuple[tuple[str, str], ...]
    positive: bool
    schema: str
    anchor: str
    any_pos: frozenset = frozenset()
    any_neg: frozenset = frozenset()
    complex_parts: tuple["Cond", ...] = ()

    @classmethod
    def of(cls, parts: tuple["Cond", ...], source: object, bindings: tuple, positive: bool,
           schema: str, anchor: str) -> "AnyOf":
        any_pos, any_neg, complex_parts = set(), set(), []
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

    def holds(self, state: State) -> bool:
        return (not self.any_pos.isdisjoint(state) or not self.any_neg <= state
                or any(part.holds(state) for part in self.complex_parts))


class ClauseIndex:
    """Many clauses checked together: a clause can only fail when all its negative atoms are
    present, so each is filed under one of them and only clauses whose atom is in the state are
    evaluated (the `(not (exists (?o) (and (inside ?x ?o) (closed ?o))))` pattern)."""

    __slots__ = ("index", "keys")

    def __init__(self, clauses: list[AnyOf]):
        self.index: dict = {}
        for clause in clauses:
            trigger = min(clause.any_neg)  # any of them; min keeps it deterministic
            self.index.setdefault(trigger, []).append(clause)
        self.keys = frozenset(self.index)

    def holds(self, state: State) -> bool:
        for atom in self.keys & state:
            for clause in self.index[atom]:
                if not clause.holds(state):
                    return False
        return True


@dataclass(frozen=True, slots=True, eq=False)
class Implies:
    """A ground implication: when `condition` holds, `then` must hold."""

    condition: "Cond"
    then: "Cond"

    def holds(self, state: State) -> bool:
        return not self.condition.holds(state) or self.then.holds(state)


@dataclass(frozen=True, slots=True, eq=False)
class Cond:
    """A ground conjunction: literals as two frozensets, plus disjunctions/implications.

    `literals` lists the literals in source order (for reporting every failed one); `unsat` holds
    equalities decided false at grounding time, which make the conjunction false in every state.
    """

    pos: frozenset
    neg: frozenset
    literals: tuple[GroundLiteral, ...] = ()
    subs: tuple[Union[AnyOf, Implies], ...] = ()
    unsat: tuple[GroundLiteral, ...] = ()

    def holds(self, state: State) -> bool:
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
    add: frozenset
    delete: frozenset


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

    triggered: dict
    trigger_keys: frozenset
    absent: dict
    absent_keys: frozenset
    absent_add: frozenset
    absent_delete: frozenset
    general: tuple[ConditionalEffect, ...]

    @classmethod
    def build(cls, effects: list[ConditionalEffect]) -> "ConditionalEffects | None":
        if not effects:
            return None
        triggered: dict = {}
        absent: dict = {}
        general: list[ConditionalEffect] = []
        for effect in effects:
            cond = effect.condition
            if cond.pos:
                trigger = next(lit.atom for lit in cond.literals if lit.positive)
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

    def fire(self, state: State) -> tuple[set, set]:
        """(add, delete) of the effects whose conditions hold in `state` (the pre-state)."""
        add: set = set()
        delete: set = set()
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
    (`PreconditionTable.fast_step`). Instances are values: treat them as immutable.
    """

    __slots__ = ("schema", "args", "checks", "conditional", "fast", "_table", "_subs", "_unsat",
                 "_literals", "_extra", "_sets", "_text", "_bindings", "_precondition")

    def __init__(self, table: "PreconditionTable", schema: Action, args: tuple[str, ...],
                 literals: tuple[tuple, tuple, tuple, tuple] | None,
                 extra: tuple[frozenset, frozenset, frozenset, frozenset] | None,
                 subs: tuple, unsat: bool, conditional: "ConditionalEffects | None"):
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
        self.fast: tuple = ()
        self._sets: tuple[frozenset, frozenset, frozenset, frozenset] | None = None
        self._text: str | None = None
        self._bindings: tuple[tuple[str, str], ...] | None = None
        self._precondition: Cond | None = None

    def _build_sets(self) -> tuple[frozenset, frozenset, frozenset, frozenset]:
        intern = self._table._interned.setdefault
        literals = self._literals
        if literals is None:
            literals = self._table.schema.template(self.schema).build(self.args)[:4]
        sets = tuple(frozenset(map(intern, atoms, atoms)) if atoms else _EMPTY
                     for atoms in literals)
        if self._extra is not None:
            sets = tuple(a | b for a, b in zip(sets, self._extra))
        self._sets = sets
        return sets

    @property
    def pre_pos(self) -> frozenset:
        """Atoms the precondition requires (interned)."""
        return (self._sets or self._build_sets())[0]

    @property
    def pre_neg(self) -> frozenset:
        """Atoms the precondition forbids."""
        return (self._sets or self._build_sets())[1]

    @property
    def add(self) -> frozenset:
        """Atoms the unconditional effect adds."""
        return (self._sets or self._build_sets())[2]

    @property
    def delete(self) -> frozenset:
        """Atoms the unconditional effect deletes."""
        return (self._sets or self._build_sets())[3]

    @property
    def name(self) -> str:
        return self.schema.name

    @property
    def text(self) -> str:
        """`(Pick Apple)`: the action and its objects in original spelling."""
        if self._text is None:
            names = self._table.object_names
            self._text = "(" + " ".join([self.schema.name, *(names.get(a, a) for a in self.args)]) + ")"
        return self._text

    @property
    def bindings(self) -> tuple[tuple[str, str], ...]:
        """(parameter name, object in original spelling) pairs."""
        if self._bindings is None:
            names = self._table.object_names
            self._bindings = tuple((p.name, names.get(a, a))
                                   for p, a in zip(self.schema.parameters, self.args))
        return self._bindings

    @property
    def precondition(self) -> Cond:
        """The ground precondition with every literal's source (what `explain` reports)."""
        if self._precondition is None:
            env = {key(p.name): a for p, a in zip(self.schema.parameters, self.args)}
            self._precondition = self._table.ground_formula(self.schema.precondition, env, True,
                                                            anchor=None)
        return self._precondition

    def __repr__(self) -> str:
        return f"GroundAction{self.text}"

    def applicable(self, state: State) -> bool:
        return (self.pre_pos <= state and state.isdisjoint(self.pre_neg)
                and all(check(state) for check in self.checks))

    def apply(self, state: State) -> State:
        """The successor state (a new frozenset)."""
        if self.conditional is None:
            return (state - self.delete) | self.add
        add, delete = self.conditional.fire(state)
        return ((state - self.delete) - delete) | self.add | add

    def apply_in_place(self, state: set) -> None:
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


_EMPTY: frozenset = frozenset()


def _never(state: object) -> bool:
    return False


def _set_checks(subs: tuple, unsat: bool) -> tuple[Callable[[State], bool], ...]:
    """The closures a precondition needs beyond its literal sets, on frozenset states."""
    clauses = [sub for sub in subs if isinstance(sub, AnyOf) and sub.is_clause]
    checks = tuple(sub.holds for sub in subs if not (isinstance(sub, AnyOf) and sub.is_clause))
    if len(clauses) > 1:
        checks = (ClauseIndex(clauses).holds, *checks)
    elif clauses:
        checks = (clauses[0].holds, *checks)
    if unsat:
        checks = (_never, *checks)
    return checks


# --- bit sets ----------------------------------------------------------------------------------

class BitSets:
    """Atoms as bits of Python ints, for the gate's check loop.

    An atom gets a bit the first time a mask names it (the initial state's atoms first, then
    those of the ground actions as they are used), so the ints stay as small as the atoms a
    problem's plans actually touch. A state is an int; a precondition check is
    `s & pos == pos and not s & neg`, applying an action `s & keep | add` (`keep` = ~delete):
    constant-time C operations, and an int state needs no copy. Every `Cond`, `AnyOf`,
    `Implies`, clause index and conditional effect of the set form has a closure here that
    computes the same thing on ints.
    """

    __slots__ = ("bit_of", "atoms", "_interned")

    ALWAYS = 1
    """Bit 0 is no atom's: it is set in every state mask (`PreconditionTable.initial_mask`,
    the gate's masks of given states; effects never clear it), so a step whose `trigger` is
    ALWAYS always takes its special path (see `PreconditionTable.fast_step`)."""

    def __init__(self, interned: dict | None = None) -> None:
        self.bit_of: dict[GroundAtom, int] = {}
        """Atom -> its bit (a power of two, never ALWAYS)."""
        self.atoms: list[GroundAtom | None] = [None]
        """Bit position -> atom (position 0: ALWAYS)."""
        self._interned = {} if interned is None else interned

    def bit(self, atom: GroundAtom) -> int:
        found = self.bit_of.get(atom)
        if found is None:
            found = self.bit_of[atom] = 1 << len(self.atoms)
            self.atoms.append(atom)
        return found

    def new(self, atom: GroundAtom) -> int:
        """The bit of an atom that has none yet, interned first (what templates call)."""
        atom = self._interned.setdefault(atom, atom)
        found = self.bit_of[atom] = 1 << len(self.atoms)
        self.atoms.append(atom)
        return found

    def mask(self, atoms: Union[frozenset, set]) -> int:
        """The bit set of a set of atoms (a set: the bits are summed, duplicates would carry)."""
        bit_of = self.bit_of
        if not bit_of:  # a fresh table's initial state: consecutive bits, no lookups
            atoms = list(atoms)
            first = len(self.atoms)
            self.atoms.extend(atoms)
            bit_of.update(zip(atoms, map((1).__lshift__, range(first, first + len(atoms)))))
            return ((1 << len(atoms)) - 1) << first
        try:
            return sum(map(bit_of.__getitem__, atoms))  # the bits are distinct: sum = or
        except KeyError:
            # new atoms get consecutive bits in one go (a fresh table's initial state)
            new = [atom for atom in atoms if atom not in bit_of]
            first = len(self.atoms)
            self.atoms.extend(new)
            bit_of.update(zip(new, map((1).__lshift__, range(first, first + len(new)))))
            return sum(map(bit_of.__getitem__, atoms))

    def atoms_of(self, mask: int) -> list[GroundAtom]:
        """The atoms of `mask` (cost: one step per atom in it)."""
        atoms = self.atoms
        out = []
        mask &= ~self.ALWAYS
        while mask:
            low = mask & -mask
            out.append(atoms[low.bit_length() - 1])
            mask ^= low
        return out

    def state(self, start: State, start_mask: int, mask: int) -> State:
        """The frozenset of `mask`, given a frozenset `start` whose mask is `start_mask`:
        only the atoms that differ are converted."""
        if mask == start_mask:
            return start
        removed = start_mask & ~mask
        added = mask & ~start_mask
        out = start.difference(self.atoms_of(removed)) if removed else start
        return out.union(self.atoms_of(added)) if added else out

    # -- conditions -------------------------------------------------------------------------

    def cond_test(self, cond: Cond) -> Callable[[int], bool]:
        if cond.unsat:
            return _never
        pos, neg = self.mask(cond.pos), self.mask(cond.neg)
        subs = tuple(self._sub_test(sub) for sub in cond.subs)
        if subs:
            return lambda s: s & pos == pos and not s & neg and all(t(s) for t in subs)
        if neg:
            return lambda s: s & pos == pos and not s & neg
        return lambda s: s & pos == pos

    def _sub_test(self, sub: Union[AnyOf, Implies]) -> Callable[[int], bool]:
        if isinstance(sub, Implies):
            condition, then = self.cond_test(sub.condition), self.cond_test(sub.then)
            return lambda s: not condition(s) or then(s)
        return self._any_of_test(sub)

    def _any_of_test(self, any_of: AnyOf) -> Callable[[int], bool]:
        some, every = self.mask(any_of.any_pos), self.mask(any_of.any_neg)
        parts = tuple(self.cond_test(part) for part in any_of.complex_parts)
        if parts:
            return lambda s: bool(s & some) or s & every != every or any(p(s) for p in parts)
        return lambda s: bool(s & some) or s & every != every

    def _clause_index_test(self, clauses: list[AnyOf]) -> Callable[[int], bool]:
        """ClauseIndex on ints: a clause fails when all its negative atoms are present and none
        of its positive ones; only clauses filed under a present trigger atom are looked at."""
        index: dict[int, list[tuple[int, int]]] = {}
        for clause in clauses:
            trigger = self.bit(min(clause.any_neg))
            index.setdefault(trigger, []).append((self.mask(clause.any_pos),
                                                  self.mask(clause.any_neg)))
        table = {k: tuple(v) for k, v in index.items()}
        keys = 0
        for k in table:
            keys |= k

        def holds(s: int) -> bool:
            hit = s & keys
            while hit:
                low = hit & -hit
                for some, every in table[low]:
                    if not s & some and s & every == every:
                        return False
                hit ^= low
            return True
        return holds

    def guard(self, subs: tuple, unsat: bool) -> Callable[[int], bool] | None:
        """What `_set_checks` checks, on ints (None: nothing beyond the literal masks)."""
        if unsat:
            return _never
        clauses = [sub for sub in subs if isinstance(sub, AnyOf) and sub.is_clause]
        tests = tuple(self._sub_test(sub) for sub in subs
                      if not (isinstance(sub, AnyOf) and sub.is_clause))
        if len(clauses) > 1:
            tests = (self._clause_index_test(clauses), *tests)
        elif clauses:
            tests = (self._any_of_test(clauses[0]), *tests)
        if not tests:
            return None
        if len(tests) == 1:
            return tests[0]
        return lambda s: all(t(s) for t in tests)

    # -- effects ----------------------------------------------------------------------------

    def effects(self, effects: ConditionalEffects, keep: int,
                plain_add: int) -> tuple[Callable[[int], int], int | None]:
        """A whole step's effect on ints, `(fire, trigger)`: `fire(s)` is the successor of `s`
        for an action whose unconditional effect is `s & keep | plain_add` and whose conditional
        effects are `effects` (their conditions read `s`, `ConditionalEffects.fire`); when only
        effects filed under a trigger atom exist, none fires unless `s & trigger`, so the caller
        can apply the plain effect instead of calling (`trigger` is None when it cannot)."""
        triggered = {self.bit(atom): tuple((None if c is None else self.cond_test(c),
                                            self.mask(a), self.mask(d)) for c, a, d in entries)
                     for atom, entries in effects.triggered.items()}
        trigger_keys = 0
        for k in triggered:
            trigger_keys |= k
        absent = {self.bit(atom): (self.mask(a), self.mask(d))
                  for atom, (a, d) in effects.absent.items()}
        absent_keys = 0
        for k in absent:
            absent_keys |= k
        absent_add, absent_delete = self.mask(effects.absent_add), self.mask(effects.absent_delete)
        general = tuple((self.cond_test(e.condition), self.mask(e.add), self.mask(e.delete))
                        for e in effects.general)

        def fire(s: int) -> int:
            add = delete = 0
            hit = s & trigger_keys
            while hit:
                low = hit & -hit
                for test, effect_add, effect_delete in triggered[low]:
                    if test is None or test(s):
                        add |= effect_add
                        delete |= effect_delete
                hit ^= low
            if absent_keys:
                fired_add, fired_delete = absent_add, absent_delete
                present = s & absent_keys
                while present:
                    low = present & -present
                    not_add, not_delete = absent[low]
                    fired_add &= ~not_add
                    fired_delete &= ~not_delete
                    present ^= low
                add |= fired_add
                delete |= fired_delete
            for test, effect_add, effect_delete in general:
                if test(s):
                    add |= effect_add
                    delete |= effect_delete
            return s & keep & ~delete | plain_add | add
        return fire, (trigger_keys if not absent_keys and not general else None)


# --- the table -------------------------------------------------------------------------------

_walk = walk


class PreconditionTable:
    """A domain and problem compiled for checking plans: objects, types, actions, annotations,
    the initial state, the goal, and a cache of ground actions. Build it with `compile_table`.

    Everything that depends on the domain alone comes from its cached `DomainSchema`, so a
    table costs only the problem's objects, initial state and goal."""

    def __init__(self, domain: Domain, problem: Problem):
        self.domain = domain
        self.problem = problem
        self.schema = schema = domain_schema(domain)
        self._interned: dict[GroundAtom, GroundAtom] = {}
        self._canon: dict[int, tuple[object, str]] = {}
        self._cost_fluents = self._find_cost_fluents()
        self._check_scope()
        if schema.annotation_error is not None:
            schema.reraise_annotation_error(domain.annotations)
        self._resolve_objects()
        self.predicate_names: dict[str, str] = schema.predicate_names
        self.actions: dict[str, Action] = schema.actions
        self.step_fields: dict[str, tuple[tuple[str, ...], ...]] = schema.step_fields
        self.reasons: dict[tuple[str, str], Reason] = schema.reasons
        self._ground_cache: dict[tuple[str, tuple[str, ...]], GroundAction] = {}
        self.initial_state: State = self._initial_state()
        self.goal: Cond | None = None
        if not (isinstance(problem.goal, And) and not problem.goal.parts):
            self.goal = self.ground_formula(problem.goal, {}, True, anchor="")
        self.bits = BitSets(self._interned)
        self._initial_mask: int | None = None
        self._goal_test: Callable[[int], bool] | None = None

    # -- scope ----------------------------------------------------------------------------

    def _find_cost_fluents(self) -> frozenset[str]:
        names = {"total-cost", "totalcost"}
        metric = self.problem.metric
        if metric is not None:
            for node in _walk_numeric(metric.expression):
                if isinstance(node, FunctionTerm) and not node.args:
                    names.add(key(node.name))
        return frozenset(names)

    def _unsupported(self, construct: str, loc: Location | None, context: str) -> UnsupportedConstruct:
        return UnsupportedConstruct(
            f"{construct} {context} is outside the gate's scope "
            "(it evaluates STRIPS/ADL with typing, equality, quantifiers, conditional effects "
            "and action costs)", loc)

    def _check_node_scope(self, node: object, context: str) -> None:
        if isinstance(node, Comparison):
            raise self._unsupported(f"numeric comparison `{node.op}`", node.loc, context)
        if isinstance(node, Unsupported):
            raise self._unsupported(node.construct, node.loc, context)
        if isinstance(node, NumericEffect):
            cost = (node.op in ("increase", "decrease") and not node.fluent.args
                    and key(node.fluent.name) in self._cost_fluents)
            if not cost:
                raise self._unsupported(
                    f"numeric effect `({node.op} ({node.fluent.name}) ...)`", node.loc, context)

    def _check_formula_scope(self, formula: object, context: str) -> None:
        for node in walk(formula):
            self._check_node_scope(node, context)

    def _check_scope(self) -> None:
        domain, problem = self.domain, self.problem
        if domain.unsupported:
            first = domain.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in domain {domain.name}")
        for node, context in self.schema.hazards:  # the domain's actions, walked once per domain
            self._check_node_scope(node, context)
        if problem.unsupported:
            first = problem.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in problem {problem.name}")
        for fact in problem.init:
            if isinstance(fact, Unsupported):
                raise self._unsupported(fact.construct, fact.loc, f"in the :init of {problem.name}")
        self._check_formula_scope(problem.goal, f"in the goal of {problem.name}")

    # -- types and objects ----------------------------------------------------------------

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        return self.schema.ancestors(type_name)

    def _resolve_objects(self) -> None:
        spelling: dict[str, str] = {}
        types: dict[str, set[str]] = {}
        declared: dict[str, list[str]] = {}
        ancestors = self.schema.ancestors
        for typed in (*self.domain.constants, *self.problem.objects):
            name = typed.name.lower()
            spelling.setdefault(name, typed.name)
            bucket = types.setdefault(name, set())
            names = declared.setdefault(name, [])
            for type_name in typed.types or ("object",):
                bucket |= ancestors(type_name)
                if type_name not in names:
                    names.append(type_name)
        self.object_names: dict[str, str] = spelling
        """Object key -> original spelling, in declaration order."""
        self.object_types: dict[str, frozenset[str]] = {n: frozenset(t) for n, t in types.items()}
        self.declared_types: dict[str, tuple[str, ...]] = {n: tuple(t) for n, t in declared.items()}
        self._objects_of: dict[tuple[str, ...], tuple[str, ...]] = {}

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """Object keys that fit a parameter typed `types` (() = any), in declaration order."""
        wanted = tuple(key(t) for t in types)
        found = self._objects_of.get(wanted)
        if found is None:
            if not wanted or "object" in wanted:
                found = tuple(self.object_names)
            else:
                want = set(wanted)
                found = tuple(o for o, t in self.object_types.items() if t & want)
            self._objects_of[wanted] = found
        return found

    def fits(self, obj: str, types: tuple[str, ...]) -> bool:
        if not types:
            return True
        have = self.object_types.get(obj, frozenset({"object"}))
        return any(key(t) in have for t in types)

    # -- names ----------------------------------------------------------------------------

    def resolve_action(self, name: str) -> Action | None:
        """The action a step names: exact (case-insensitive), then alias/loose match."""
        return self.schema.resolve_action(name)

    def atom(self, parts: tuple[str, ...]) -> GroundAtom:
        return self._interned.setdefault(parts, parts)

    def format_atom(self, atom: GroundAtom) -> str:
        """`("found", "apple")` -> `(found Apple)` in the domain's and problem's spelling."""
        head, *args = atom
        head = self.predicate_names.get(head, head)
        return "(" + " ".join([head, *(self.object_names.get(a, a) for a in args)]) + ")"

    def format_literal(self, literal: GroundLiteral) -> str:
        text = self.format_atom(literal.atom)
        return text if literal.positive else f"(not {text})"

    # -- annotations ----------------------------------------------------------------------

    def canonical(self, node: object, positive: bool = True) -> str:
        entry = self.schema._canon.get(id(node))  # the domain's nodes, computed once per domain
        if entry is None or entry[0] is not node:
            entry = self._canon.get(id(node))  # the problem's (the entry keeps the node alive)
            if entry is None or entry[0] is not node:
                entry = self._canon[id(node)] = (node, canonical_sexpr(formula_text(node)))
        return entry[1] if positive else f"(not {entry[1]})"

    def reason(self, action: Action, literal_or_anchor: Iterable[str]) -> Reason | None:
        action_key = key(action.name)
        for text in literal_or_anchor:
            found = self.reasons.get((action_key, text))
            if found is not None:
                return found
        return None

    # -- state ----------------------------------------------------------------------------

    def _initial_state(self) -> State:
        facts = []
        atom = self.atom
        for fact in self.problem.init:
            if isinstance(fact, Atom):  # Not facts document absence; FluentValues are numeric
                facts.append(atom((fact.predicate.lower(), *[a.name.lower() for a in fact.args])))
        return frozenset(facts)

    @property
    def initial_mask(self) -> int:
        """The initial state as a state mask (its atoms' bits and `BitSets.ALWAYS`)."""
        if self._initial_mask is None:
            self._initial_mask = self.bits.mask(self.initial_state) | BitSets.ALWAYS
        return self._initial_mask

    @property
    def goal_masks(self) -> tuple[int, int] | None:
        """(pos, neg) masks when the goal is a conjunction of literals, else None."""
        goal = self.goal
        if goal is None or goal.subs or goal.unsat:
            return None
        return self.bits.mask(goal.pos), self.bits.mask(goal.neg)

    @property
    def goal_test(self) -> Callable[[int], bool] | None:
        """The goal on bit-set states (None when the problem has no goal)."""
        if self._goal_test is None and self.goal is not None:
            self._goal_test = self.bits.cond_test(self.goal)
        return self._goal_test

    # -- grounding ------------------------------------------------------------------------

    def ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """The cached ground action for `action` with object keys `args` (already checked)."""
        cache_key = (action.name.lower(), args)
        found = self._ground_cache.get(cache_key)
        if found is None:
            found = self._ground_cache[cache_key] = self._ground(action, args)
        return found

    @property
    def grounded_count(self) -> int:
        return len(self._ground_cache)

    def _ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """Substitute `args` into the action's template; walk only its non-literal parts.

        The ground action's bit-set form (`fast`) is built here too: the template's generated
        `masks` gives the literal part's masks directly (no atom sets are built; the sets are
        made from `build` only when `pre_pos` & co. are read)."""
        template = self.schema.template(action)
        bits = self.bits
        pos_mask, neg_mask, add_mask, delete_mask, unsat = template.masks(
            args, bits.bit_of.get, bits.new)
        subs: tuple = ()
        conditional = None
        extra = None
        if template.complex_pre or template.complex_effects:
            env = dict(zip(template.param_keys, args))
            extra_pos = extra_neg = extra_add = extra_delete = _EMPTY
            if template.complex_pre:
                rest = conjoin(self.ground_formula(part, env, True, self.canonical(part))
                               for part in template.complex_pre)
                extra_pos, extra_neg, subs = rest.pos, rest.neg, rest.subs
                unsat = unsat or bool(rest.unsat)
            if template.complex_effects:
                more_add: list[GroundAtom] = []
                more_delete: list[GroundAtom] = []
                effects: list[ConditionalEffect] = []
                for node in template.complex_effects:
                    self._ground_effect(node, env, TRUE, more_add, more_delete, effects)
                extra_add, extra_delete = frozenset(more_add), frozenset(more_delete)
                conditional = ConditionalEffects.build(effects)
            extra = (extra_pos, extra_neg, extra_add, extra_delete)
        ground = GroundAction(self, action, args, None, extra, subs, unsat, conditional)
        if extra is not None:
            pos_mask |= bits.mask(extra[0])
            neg_mask |= bits.mask(extra[1])
            add_mask |= bits.mask(extra[2])
            delete_mask |= bits.mask(extra[3])
        guard = bits.guard(subs, unsat) if subs or unsat else None
        keep = ~delete_mask
        fire, fire_trigger = (None, None) if conditional is None else bits.effects(
            conditional, keep, add_mask)
        if guard is None and fire is None:
            trigger, special = 0, None
        elif guard is None and fire_trigger is not None:
            trigger, special = fire_trigger, fire
        else:
            trigger, special = BitSets.ALWAYS, _special(guard, fire, fire_trigger, keep, add_mask)
        # `s & (pos | neg) == pos`: every required atom present and no forbidden one
        ground.fast = (pos_mask | neg_mask, pos_mask, keep, add_mask, trigger, special, ground)
        return ground

    def ground_by_walking(self, action: Action, args: tuple[str, ...]) -> tuple:
        """(pre_pos, pre_neg, add, delete, conditional) by walking the whole action, uncached:
        the reference the templates must agree with (tests compare the two)."""
        env = {key(p.name): a for p, a in zip(action.parameters, args)}
        precondition = self.ground_formula(action.precondition, env, True, anchor=None)
        add: list[GroundAtom] = []
        delete: list[GroundAtom] = []
        conditional: list[ConditionalEffect] = []
        self._ground_effect(action.effect, env, TRUE, add, delete, conditional)
        return (precondition.pos, precondition.neg, frozenset(add), frozenset(delete),
                conditional, precondition)

    def fast_step(self, ground: GroundAction) -> tuple:
        """`ground` in the check loop's form, built when it was ground: `(literals, pos, keep,
        add, trigger, special, ground)` with `literals = pos | neg` masks (the literal
        precondition holds when `s & literals == pos`) and `keep = ~delete`. When `s & trigger`
        is 0 the successor is `s & keep | add`; otherwise it is `special(s)`, None when the
        rest of the precondition fails. `trigger` is 0 for a STRIPS step, the trigger atoms of
        its conditional effects when nothing else is special (see `BitSets.effects`), else
        `BitSets.ALWAYS`, set in every state mask."""
        return ground.fast

    def _term(self, term: object, env: dict[str, str]) -> str:
        if isinstance(term, Variable):
            value = env.get(key(term.name))
            if value is None:
                raise PDDLSemanticError(f"free variable ?{term.name}", term.loc)
            return value
        return key(term.name)  # a constant (declared or not: ALFWorld declares them per problem)

    def _instances(self, variables: tuple[Typed, ...], env: dict[str, str]) -> Iterator[dict[str, str]]:
        domains = [self.objects_of(v.types) for v in variables]
        names = [key(v.name) for v in variables]
        for values in itertools.product(*domains):
            inner = dict(env)
            inner.update(zip(names, values))
            yield inner

    def ground_formula(self, formula: object, env: dict[str, str], positive: bool,
                       anchor: str | None) -> Cond:
        """Ground `formula` (negated when not `positive`) under `env` into a `Cond`.

        `anchor` is the canonical text of the enclosing top-level precondition conjunct; None
        means `formula` is the whole precondition, whose conjuncts become the anchors.
        """
        if anchor is None:
            if isinstance(formula, And) and positive:
                return conjoin(self.ground_formula(p, env, True, self.canonical(p))
                               for p in formula.parts)
            anchor = self.canonical(formula, positive)
        if isinstance(formula, Atom):
            atom = self.atom((key(formula.predicate), *(self._term(a, env) for a in formula.args)))
            literal = GroundLiteral(atom, positive, self.canonical(formula, positive), anchor)
            if positive:
                return Cond(frozenset((atom,)), frozenset(), (literal,))
            return Cond(frozenset(), frozenset((atom,)), (literal,))
        if isinstance(formula, Equals):
            left, right = self._term(formula.left, env), self._term(formula.right, env)
            if (left == right) == positive:
                return TRUE
            literal = GroundLiteral((EQUALS, left, right), positive,
                                    self.canonical(formula, positive), anchor)
            return Cond(frozenset(), frozenset(), (literal,), (), (literal,))
        if isinstance(formula, Not):
            return self.ground_formula(formula.arg, env, not positive, anchor)
        if isinstance(formula, (And, Or)):
            conjunctive = isinstance(formula, And) == positive
            parts = (self.ground_formula(p, env, positive, anchor) for p in formula.parts)
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        if isinstance(formula, Imply):
            condition = self.ground_formula(formula.antecedent, env, True, anchor)
            if positive:
                if condition.is_false:
                    return TRUE
                then = self.ground_formula(formula.consequent, env, True, anchor)
                if condition.is_true or then.is_true:
                    return then
                return Cond(frozenset(), frozenset(), (), (Implies(condition, then),))
            return conjoin([condition, self.ground_formula(formula.consequent, env, False, anchor)])
        if isinstance(formula, (Exists, Forall)):
            conjunctive = isinstance(formula, Forall) == positive
            parts = (self.ground_formula(formula.body, inner, positive, anchor)
                     for inner in self._instances(formula.variables, env))
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        raise self._unsupported(type(formula).__name__, getattr(formula, "loc", None),
                                "in a condition")

    def _any_of(self, parts: Iterable[Cond], source: object, env: dict[str, str],
                positive: bool, anchor: str) -> Cond:
        kept = []
        for part in parts:
            if part.is_true:
                return TRUE
            if not part.is_false:
                kept.append(part)
        if len(kept) == 1:
            return kept[0]
        bindings = tuple(sorted(env.items()))
        any_of = AnyOf.of(tuple(kept), source, bindings, positive,
                          self.canonical(source, positive), anchor)
        return Cond(frozenset(), frozenset(), (), (any_of,))

    def _ground_effect(self, effect: object, env: dict[str, str], condition: Cond,
                       add: list, delete: list, conditional: list) -> None:
        if isinstance(effect, And):
            for part in effect.parts:
                self._ground_effect(part, env, condition, add, delete, conditional)
        elif isinstance(effect, (Atom, Not)):
            positive = isinstance(effect, Atom)
            atom_node = effect if positive else effect.arg
            if not isinstance(atom_node, Atom):
                raise PDDLSemanticError("an effect may only negate an atom", effect.loc)
            atom = self.atom((key(atom_node.predicate),
                              *(self._term(a, env) for a in atom_node.args)))
            if condition.is_true:
                (add if positive else delete).append(atom)
            else:
                conditional.append(ConditionalEffect(
                    condition, frozenset((atom,)) if positive else frozenset(),
                    frozenset() if positive else frozenset((atom,))))
        elif isinstance(effect, When):
            inner = conjoin([condition, self.ground_formula(effect.condition, env, True, "")])
            if not inner.is_false:
                self._ground_effect(effect.effect, env, inner, add, delete, conditional)
        elif isinstance(effect, ForallEffect):
            for inner_env in self._instances(effect.variables, env):
                self._ground_effect(effect.effect, inner_env, condition, add, delete, conditional)
        elif isinstance(effect, NumericEffect):
            pass  # a cost increase (anything else was rejected by _check_scope)
        else:
            raise self._unsupported(type(effect).__name__, getattr(effect, "loc", None),
                                    "in an effect")


def _special(guard: Callable[[int], bool] | None, fire: Callable[[int], int] | None,
             trigger: int | None, keep: int, add: int) -> Callable[[int], int | None]:
    """A step's successor on bit sets when it has a non-literal precondition part (`guard`)
    or conditional effects that cannot be skipped by a trigger: None when the guard fails."""
    def special(s: int) -> int | None:
        if guard is not None and not guard(s):
            return None
        if fire is None or (trigger is not None and not s & trigger):
            return s & keep | add
        return fire(s)
    return special


def _walk_numeric(expression: object) -> Iterator[object]:
    yield expression
    for arg in getattr(expression, "args", ()) or ():
        if not isinstance(arg, (Variable, Constant)):
            yield from _walk_numeric(arg)


def compile_table(domain: Domain, problem: Problem) -> PreconditionTable:
    """Resolve `domain` and `problem` into a `PreconditionTable` (raises UnsupportedConstruct)."""
    return PreconditionTable(domain, problem)
