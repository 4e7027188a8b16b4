"""Bit-set states: the gate's fast form of the ground actions of `ground.py`.

Each atom a check meets gets a bit of a Python int, the first time a mask names it (the
initial state's atoms first, then those of the ground actions as steps use them). A state is
an int; a ground action becomes a `BitStep` whose masks are its sets (`bit_step`): it applies
in `s` when `s & (pos | neg) == pos` and its guard (the disjunctions and implications of its
precondition, as closures on ints) holds, and its successor is `s & ~delete | add`, the
conditional effects whose conditions hold in `s` included. Every `Cond`, `AnyOf`, `Implies`
and conditional effect of the set form has a closure here computing the same thing on ints;
nothing is remembered between calls.
"""
from __future__ import annotations

from collections.abc import Callable

from .ground import (
    AnyOf,
    Atoms,
    Cond,
    ConditionalEffects,
    GroundAction,
    GroundAtom,
    Implies,
    State,
)


def _never(state: object) -> bool:
    return False


class BitSets:
    """Atoms as bits of Python ints: `bit_of` maps an atom to its bit (a power of two), `atoms`
    a bit's position back to its atom."""

    __slots__ = ("bit_of", "atoms")

    def __init__(self) -> None:
        self.bit_of: dict[GroundAtom, int] = {}
        self.atoms: list[GroundAtom] = []

    def bit(self, atom: GroundAtom) -> int:
        found = self.bit_of.get(atom)
        if found is None:
            found = self.bit_of[atom] = 1 << len(self.atoms)
            self.atoms.append(atom)
        return found

    def mask(self, atoms: Atoms | set[GroundAtom]) -> int:
        """The bit set of a set of atoms, each new atom given the next bit."""
        bit_of = self.bit_of
        total = 0
        for atom in atoms:  # most sets here hold zero to two atoms: a plain loop is cheapest
            found = bit_of.get(atom)
            total |= self.bit(atom) if found is None else found
        return total

    def first_mask(self, atoms: Atoms) -> int:
        """`mask(atoms)` for the first atoms given bits (the initial state's): bits 0 to
        len(atoms) - 1, in one pass."""
        if self.atoms:
            return self.mask(atoms)
        self.atoms = list(atoms)
        self.bit_of = {atom: 1 << position for position, atom in enumerate(self.atoms)}
        return (1 << len(self.atoms)) - 1

    def atoms_of(self, mask: int) -> list[GroundAtom]:
        """The atoms of `mask` (cost: one step per atom in it)."""
        atoms = self.atoms
        out: list[GroundAtom] = []
        while mask:
            low = mask & -mask
            out.append(atoms[low.bit_length() - 1])
            mask ^= low
        return out

    def state(self, start: State, start_mask: int, mask: int) -> State:
        """The frozenset of `mask`, given a frozenset `start` whose mask is `start_mask`: the
        atoms whose membership differs are toggled (one copy of the state)."""
        if mask == start_mask:
            return start
        return frozenset(self.atoms_of(start_mask ^ mask)).symmetric_difference(start)

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

    def _trigger(self, sub: AnyOf | Implies) -> GroundAtom | None:
        """An atom without which `sub` holds, or None: a clause fails only when all its
        negative atoms are present, an implication only when its condition holds."""
        if isinstance(sub, AnyOf):
            return min(sub.any_neg) if sub.is_clause else None
        return min(sub.condition.pos) if sub.condition.pos else None

    def _indexed_test(self, triggered: list[tuple[GroundAtom, AnyOf | Implies]]
                      ) -> Callable[[int], bool]:
        """Disjunctions and implications, each filed under an atom without which it holds
        (`_trigger`), as one test: only those filed under a present atom are looked at."""
        index: dict[int, list[Callable[[int], bool]]] = {}
        for trigger, sub in triggered:
            index.setdefault(self.bit(trigger), []).append(self._sub_test(sub))
        table = {k: tuple(v) for k, v in index.items()}
        keys = 0
        for k in table:
            keys |= k

        def holds(s: int) -> bool:
            hit = s & keys
            while hit:
                low = hit & -hit
                for test in table[low]:
                    if not test(s):
                        return False
                hit ^= low
            return True
        return holds

    def guard(self, subs: tuple[AnyOf | Implies, ...], never: bool
              ) -> Callable[[int], bool] | None:
        """The precondition's disjunctions and implications (`Cond.subs`) as one test on ints
        (None: nothing beyond the literal masks); `never` when the precondition cannot hold."""
        if never:
            return _never
        if not subs:
            return None
        triggered: list[tuple[GroundAtom, AnyOf | Implies]] = []
        tests: list[Callable[[int], bool]] = []
        for sub in subs:
            trigger = self._trigger(sub)
            if trigger is None:
                tests.append(self._sub_test(sub))
            else:
                triggered.append((trigger, sub))
        if len(triggered) > 1:
            tests.insert(0, self._indexed_test(triggered))
        elif triggered:
            tests.insert(0, self._sub_test(triggered[0][1]))
        if len(tests) == 1:
            return tests[0]
        checks = tuple(tests)
        return lambda s: all(t(s) for t in checks)

    # -- effects ----------------------------------------------------------------------------

    def effects(self, effects: ConditionalEffects) -> Callable[[int], tuple[int, int]]:
        """A step's conditional effects on ints: `delta(s)` is the `(add, delete)` masks of
        the effects whose conditions hold in `s` (the pre-state, `ConditionalEffects.fire`)."""
        triggered = {self.bit(atom): tuple((None if c is None else self.cond_test(c),
                                            self.mask(a), self.mask(d)) for c, a, d in entries)
                     for atom, entries in effects.triggered.items()}
        trigger_keys = 0
        for k in effects.triggered:
            trigger_keys |= self.bit(k)
        absent = {self.bit(atom): (self.mask(a), self.mask(d))
                  for atom, (a, d) in effects.absent.items()}
        absent_keys = 0
        for k in absent:
            absent_keys |= k
        absent_add, absent_delete = self.mask(effects.absent_add), self.mask(effects.absent_delete)
        general = tuple((self.cond_test(e.condition), self.mask(e.add), self.mask(e.delete))
                        for e in effects.general)

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
        return delta


def successor_masks(add: int, delete: int) -> tuple[int, int]:
    """`(U, D)` with `(s | U) ^ D == s & ~delete | add` for every state `s`: the successor
    in two operations on non-negative ints. `D` is what is deleted and not added (an atom
    both deleted and added holds afterwards), `U` is what is added or deleted."""
    gone = delete & ~add
    return add | gone, gone


class BitStep:
    """A ground action on bit sets (`bit_step`): `successor(s)` is the state after it, or
    None when it does not apply in `s`."""

    __slots__ = ("ground", "literals", "pos", "plain_add", "plain_delete", "add", "delete",
                 "guard", "effects")

    def __init__(self, ground: GroundAction, pos: int, neg: int, add: int, delete: int,
                 guard: Callable[[int], bool] | None,
                 effects: Callable[[int], tuple[int, int]] | None) -> None:
        self.ground = ground
        self.literals = pos | neg
        self.pos = pos
        self.add = add
        self.delete = delete
        self.plain_add, self.plain_delete = successor_masks(add, delete)
        self.guard = guard
        self.effects = effects

    def successor(self, s: int) -> int | None:
        if s & self.literals != self.pos or (self.guard is not None and not self.guard(s)):
            return None
        if self.effects is None:
            after: int = (s | self.plain_add) ^ self.plain_delete
            return after
        more_add, more_delete = self.effects(s)  # read in the state before the step
        add, delete = successor_masks(self.add | more_add, self.delete | more_delete)
        return (s | add) ^ delete


def bit_step(bits: BitSets, ground: GroundAction) -> BitStep:
    """`ground` on bit sets: its literal sets as masks, its disjunctions and implications as
    one guard, its conditional effects as one function of the state before the step. A false
    equality, or an atom both required and forbidden (which the masks' test would pass when
    the atom holds), makes the guard refuse every state."""
    pre = ground.precondition
    effects = None
    if ground.conditional is not None:
        effects = bits.effects(ground.conditional)
    never = bool(pre.unsat) or not pre.pos.isdisjoint(pre.neg)
    return BitStep(ground, bits.mask(pre.pos), bits.mask(pre.neg), bits.mask(ground.add),
                   bits.mask(ground.delete), bits.guard(pre.subs, never), effects)
