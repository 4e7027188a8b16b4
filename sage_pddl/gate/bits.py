"""Bit-set states: atoms as bits of Python ints, for the gate's check loop.

An atom gets a bit the first time a mask names it (the initial state's atoms first, then those
of the ground actions as they are used), so the ints stay as small as the atoms a problem's plans
actually touch. A state is an int; a precondition check is `s & (pos | neg) == pos`,
applying an action `(s | add) ^ delete` (`successor_masks`): constant-time C operations, and an
int state needs no copy. Every condition and conditional effect of the set form (`ground.py`) has a
closure here that computes the same thing on ints.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ground import (
    AnyOf,
    Atoms,
    Cond,
    ConditionalEffects,
    GroundAtom,
    Implies,
    State,
    _never,
)


class BitSets:
    """Atoms as bits of Python ints, for the gate's check loop.

    An atom gets a bit the first time a mask names it (the initial state's atoms first, then
    those of the ground actions as they are used), so the ints stay as small as the atoms a
    problem's plans actually touch. A state is an int; a precondition check is
    `s & (pos | neg) == pos`, applying an action `(s | add) ^ delete` (`successor_masks`):
    constant-time C operations, and an int state needs no copy. Every `Cond`, `AnyOf`,
    `Implies`, clause index and conditional effect of the set form has a closure here that
    computes the same thing on ints.
    """

    __slots__ = ("bit_of", "atoms", "_interned")

    ALWAYS = 1
    """Bit 0 is no atom's: it is set in every state mask (`PreconditionTable.initial_mask`,
    the gate's masks of given states; effects never clear it), so a step whose `trigger` is
    ALWAYS always takes its special path (see `GroundAction.fast`)."""

    def __init__(self, interned: dict[Any, Any] | None = None) -> None:
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

    def mask(self, atoms: Atoms | set[GroundAtom]) -> int:
        """The bit set of a set of atoms (a set: the bits are summed, duplicates would carry)."""
        bit_of = self.bit_of
        if not bit_of:  # a fresh table's initial state: consecutive bits, no lookups
            ordered = list(atoms)
            first = len(self.atoms)
            self.atoms.extend(ordered)
            bit_of.update(zip(ordered, map((1).__lshift__, range(first, first + len(ordered)))))
            return ((1 << len(ordered)) - 1) << first
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
        out: list[Any] = []
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

    def _sub_test(self, sub: AnyOf | Implies) -> Callable[[int], bool]:
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

    def guard(self, subs: tuple[Any, ...], unsat: bool) -> Callable[[int], bool] | None:
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

    # -- what a test reads ------------------------------------------------------------------

    def cond_reads(self, cond: Cond) -> int:
        """The bits `cond_test(cond)` can read: a test's result depends on `s & reads` only."""
        reads = self.mask(cond.pos) | self.mask(cond.neg)
        for sub in cond.subs:
            reads |= self.sub_reads(sub)
        return reads

    def sub_reads(self, sub: AnyOf | Implies) -> int:
        if isinstance(sub, Implies):
            return self.cond_reads(sub.condition) | self.cond_reads(sub.then)
        reads = self.mask(sub.any_pos) | self.mask(sub.any_neg)
        for part in sub.complex_parts:
            reads |= self.cond_reads(part)
        return reads

    # -- effects ----------------------------------------------------------------------------

    def effects(self, effects: ConditionalEffects) -> tuple[Callable[[int], tuple[int, int]],
                                                            int | None, int]:
        """A step's conditional effects on ints, `(delta, trigger, reads)`: `delta(s)` is the
        `(add, delete)` masks of the effects whose conditions hold in `s` (the pre-state,
        `ConditionalEffects.fire`); when only effects filed under a trigger atom exist, none
        fires unless `s & trigger` (`trigger` is None when that cannot be said); `delta(s)`
        depends on `s & reads` only."""
        triggered = {self.bit(atom): tuple((None if c is None else self.cond_test(c),
                                            self.mask(a), self.mask(d)) for c, a, d in entries)
                     for atom, entries in effects.triggered.items()}
        reads = 0
        trigger_keys = 0
        for k, entries in effects.triggered.items():
            trigger_keys |= self.bit(k)
            for condition, _, _ in entries:
                if condition is not None:
                    reads |= self.cond_reads(condition)
        absent = {self.bit(atom): (self.mask(a), self.mask(d))
                  for atom, (a, d) in effects.absent.items()}
        absent_keys = 0
        for k in absent:
            absent_keys |= k
        absent_add, absent_delete = self.mask(effects.absent_add), self.mask(effects.absent_delete)
        general = tuple((self.cond_test(e.condition), self.mask(e.add), self.mask(e.delete))
                        for e in effects.general)
        for e in effects.general:
            reads |= self.cond_reads(e.condition)
        reads |= trigger_keys | absent_keys

        def delta(s: int) -> tuple[int, int]:
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
            return add, delete
        return delta, (trigger_keys if not absent_keys and not general else None), reads


MEMO_LIMIT = 256
"""Pre-states (by the bits a step reads) whose successors one special step remembers."""


def successor_masks(add: int, delete: int) -> tuple[int, int]:
    """`(U, D)` with `(s | U) ^ D == s & ~delete | add` for every state `s`: the successor
    in two operations on non-negative ints (`s & ~delete` would first build the two's
    complement of `~delete`). `D` is what is deleted and not added (an atom both deleted and
    added holds afterwards), `U` is what is added or deleted."""
    gone = delete & ~add
    return add | gone, gone


class Successors(dict[int, "tuple[int, int] | None"]):
    """A special step's successors (see `GroundAction.fast`), read by the check loop as
    `successors[s & reads]`: the `(U, D)` masks of the successor `(s | U) ^ D`, or None
    when the guard fails. The guard and the conditional effects depend on `s & reads` only,
    so an entry is computed from that projection on its first read (`__missing__`) and kept:
    a transition table of the one step over the bits it reads (at most `MEMO_LIMIT` entries),
    never a state or a plan's result."""

    __slots__ = ("guard", "delta", "trigger", "add", "delete")

    def __init__(self, guard: Callable[[int], bool] | None,
                 delta: Callable[[int], tuple[int, int]] | None, trigger: int | None,
                 add: int, delete: int) -> None:
        super().__init__()
        self.guard = guard
        self.delta = delta
        self.trigger = trigger
        self.add = add
        self.delete = delete

    def __missing__(self, projected: int) -> tuple[int, int] | None:
        found: tuple[int, int] | None
        if self.guard is not None and not self.guard(projected):
            found = None
        elif self.delta is None or (self.trigger is not None and not projected & self.trigger):
            found = successor_masks(self.add, self.delete)
        else:
            more_add, more_delete = self.delta(projected)
            found = successor_masks(self.add | more_add, self.delete | more_delete)
        if len(self) >= MEMO_LIMIT:
            self.clear()
        self[projected] = found
        return found
