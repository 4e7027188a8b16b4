"""Bit-set states: the gate's fast form of the ground actions of `ground.py`.

A state is a Python int with one bit per *fluent* atom the check meets, given the first time a
mask names it (the initial state's atoms first, then those of the ground actions as steps use
them). Static atoms, those of predicates no action changes, get no bit when the states checked
all have the problem's static facts (the gate makes sure of it, `Gate.for_state`): a static
literal is true or false once and for all, so it is decided when its mask is made. One that
holds needs nothing; one that fails requires `FALSE`, a bit no state holds.

A ground action becomes its successor function, with its sets as masks (`bit_step`): it
applies in `s` when `s & (pos | neg) == pos` and its guard (the disjunctions and implications
of its precondition, as closures on ints) holds, and the state after it is
`s & ~delete | add`, the conditional effects whose conditions hold in `s` included. Every
`Cond`, `AnyOf`, `Implies` and conditional effect of the set form has a closure here computing
the same thing on ints; nothing is remembered between calls.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

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

FALSE = 1
"""Bit 0, which no state holds: what a static literal that fails requires."""


def _never(state: object) -> bool:
    return False


def _always(state: object) -> bool:
    return True


class BitSets:
    """Atoms as bits of Python ints: `bit_of` maps an atom to its bit (a power of two; 0 for a
    static atom), `atoms` a bit's position back to its atom.

    `dynamic` names the predicates some action changes; an atom of another predicate is
    static, and holds when it is in `facts` (the initial state: static atoms hold in every
    state checked exactly as there). With `dynamic` None every atom is fluent (for states
    whose static facts may differ from the problem's)."""

    __slots__ = ("bit_of", "atoms", "dynamic", "facts", "_static_facts")

    def __init__(self, dynamic: frozenset[str] | None = None,
                 facts: Atoms = frozenset()) -> None:
        self.bit_of: dict[GroundAtom, int] = {}
        self.atoms: list[GroundAtom] = [()]  # position 0 is FALSE, which names no atom
        self.dynamic = dynamic
        self.facts = facts
        self._static_facts: Atoms | None = None  # those of `facts`, made when `state` needs them

    def is_static(self, atom: GroundAtom) -> bool:
        return self.dynamic is not None and atom[0] not in self.dynamic

    def bit(self, atom: GroundAtom) -> int:
        """The atom's bit, given the next free one if it has none yet; 0 for a static atom."""
        found = self.bit_of.get(atom)
        if found is None:
            if self.is_static(atom):
                found = self.bit_of[atom] = 0
            else:
                found = self.bit_of[atom] = 1 << len(self.atoms)
                self.atoms.append(atom)
        return found

    def mask(self, atoms: Iterable[GroundAtom]) -> int:
        """The bit set of the fluent atoms of `atoms`, each new one given the next bit."""
        bit_of = self.bit_of
        total = 0
        for atom in atoms:  # most sets here hold zero to two atoms: a plain loop is cheapest
            found = bit_of.get(atom)
            total |= self.bit(atom) if found is None else found
        return total

    def first_mask(self, atoms: Atoms) -> int:
        """`mask(atoms)` for the first atoms given bits (the initial state's): its fluent atoms
        get bits 1 to n (static atoms get their 0 as masks meet them)."""
        if self.bit_of:
            return self.mask(atoms)
        dynamic = self.dynamic
        fluent = list(atoms) if dynamic is None else [a for a in atoms if a[0] in dynamic]
        self.bit_of = {atom: 2 << position for position, atom in enumerate(fluent)}
        self.atoms += fluent
        return (1 << len(self.atoms)) - 2

    def literal_masks(self, pos: Iterable[GroundAtom], neg: Iterable[GroundAtom]
                      ) -> tuple[int, int]:
        """`(required, forbidden)`: the masks of the conjunction of the atoms `pos` and the
        negations of the atoms `neg`. Its static literals are decided here: one that fails
        puts `FALSE` in `required`, so that no state meets the masks."""
        required = forbidden = 0
        bit_of, facts = self.bit_of, self.facts
        for atom in pos:
            bit = bit_of.get(atom)
            if bit is None:
                bit = self.bit(atom)
            required |= bit or (0 if atom in facts else FALSE)
        for atom in neg:
            bit = bit_of.get(atom)
            if bit is None:
                bit = self.bit(atom)
            if bit:
                forbidden |= bit
            elif atom in facts:
                required |= FALSE
        return required, forbidden

    def atoms_of(self, mask: int) -> list[GroundAtom]:
        """The atoms of `mask`, highest bit first (cost: one step per atom in it)."""
        atoms = self.atoms
        out: list[GroundAtom] = []
        while mask:
            position = mask.bit_length() - 1
            out.append(atoms[position])
            mask ^= 1 << position
        return out

    def state(self, mask: int) -> State:
        """The frozenset of `mask`: its atoms and the static facts (one copy of the state)."""
        if self._static_facts is None:
            self._static_facts = frozenset(a for a in self.facts if self.is_static(a))
        return self._static_facts.union(self.atoms_of(mask))

    # -- conditions -------------------------------------------------------------------------

    def reads(self, cond: Cond) -> int:
        """The bits of the fluent atoms whose truth `cond`'s value depends on: those of its
        literals, disjunctions and implications."""
        mask = self.mask(cond.pos) | self.mask(cond.neg)
        for sub in cond.subs:
            for part in (sub.parts if isinstance(sub, AnyOf) else (sub.condition, sub.then)):
                mask |= self.reads(part)
        return mask

    def cond_test(self, cond: Cond) -> Callable[[int], bool]:
        """`cond.holds` on ints; `_never` and `_always` when its static literals decide it."""
        pos, neg = self.literal_masks(cond.pos, cond.neg)
        if cond.unsat or pos & FALSE:
            return _never
        tests = [test for test in map(self._sub_test, cond.subs) if test is not _always]
        if neg:
            tests.insert(0, lambda s: s & pos == pos and not s & neg)
        elif pos:
            tests.insert(0, lambda s: s & pos == pos)
        return _joined(tests, conjunction=True)

    def _sub_test(self, sub: AnyOf | Implies) -> Callable[[int], bool]:
        if isinstance(sub, Implies):
            condition = self.cond_test(sub.condition)
            then = _always if condition is _never else self.cond_test(sub.then)
            if then is _always:
                return _always
            return lambda s: not condition(s) or then(s)
        return self._any_of_test(sub)

    def _any_of_test(self, any_of: AnyOf) -> Callable[[int], bool]:
        present: set[GroundAtom] = set()  # alternatives that hold when their atom is present
        absent: set[GroundAtom] = set()  # ... when it is absent
        complex_parts: list[Cond] = []
        _alternatives(any_of, present, absent, complex_parts)
        # it fails where the conjunction of its alternatives' negations holds
        every, some = self.literal_masks(absent, present)
        if every & FALSE:  # a static alternative holds
            return _always
        tests = [test for test in map(self.cond_test, complex_parts) if test is not _never]
        if every:
            tests.insert(0, lambda s: bool(s & some) or s & every != every)
        elif some:
            tests.insert(0, lambda s: bool(s & some))
        return _joined(tests, conjunction=False)

    def _trigger(self, sub: AnyOf | Implies) -> GroundAtom | None:
        """A fluent atom without which `sub` holds, or None: a clause fails only when all its
        negative atoms are present, an implication only when its condition holds."""
        if isinstance(sub, AnyOf):
            needed = sub.any_neg if sub.is_clause else frozenset()
        else:
            needed = sub.condition.pos
        return min((atom for atom in needed if self.bit(atom)), default=None)

    def _indexed_test(self, triggered: list[tuple[int, Callable[[int], bool]]]
                      ) -> Callable[[int], bool]:
        """Tests each filed under the bit of an atom without which it holds (`_trigger`), as
        one test: only those filed under a present atom are looked at."""
        index: dict[int, list[Callable[[int], bool]]] = {}
        for trigger, test in triggered:
            index.setdefault(trigger, []).append(test)
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
        triggered: list[tuple[int, Callable[[int], bool]]] = []
        tests: list[Callable[[int], bool]] = []
        for sub in subs:
            test = self._sub_test(sub)
            if test is _always:
                continue
            trigger = self._trigger(sub)
            if trigger is None:
                tests.append(test)
            else:
                triggered.append((self.bit(trigger), test))
        if len(triggered) > 1:
            tests.insert(0, self._indexed_test(triggered))
        elif triggered:
            tests.insert(0, triggered[0][1])
        return _joined(tests, conjunction=True) if tests else None

    # -- effects ----------------------------------------------------------------------------

    def effects(self, effects: ConditionalEffects) -> tuple[Callable[[int], tuple[int, int]],
                                                             int | None]:
        """A step's conditional effects on ints, `(delta, triggers)`: `delta(s)` is the
        `(add, delete)` masks of the effects whose conditions hold in `s` (the pre-state,
        `ConditionalEffects.fire`); `triggers` the bits one of which must be present in `s`
        for any effect to fire (None: an effect may fire with none of them). An effect filed
        under a static atom (`triggered`, `absent`) fires always or never, as that atom holds
        or not: it is decided here."""
        general = [(self.cond_test(e.condition), self.mask(e.add), self.mask(e.delete))
                   for e in effects.general]
        triggered: dict[int, tuple[tuple[Callable[[int], bool] | None, int, int], ...]] = {}
        for atom, entries in effects.triggered.items():
            tests = tuple((None if c is None else self.cond_test(c), self.mask(a), self.mask(d))
                          for c, a, d in entries)
            bit = self.bit(atom)
            if bit:
                triggered[bit] = tests
            elif atom in self.facts:
                general += [(test or _always, add, delete) for test, add, delete in tests]
        trigger_keys = 0
        for k in triggered:
            trigger_keys |= k
        absent: dict[int, tuple[int, int]] = {}
        absent_add = absent_delete = 0
        for atom, (add_atoms, delete_atoms) in effects.absent.items():
            bit = self.bit(atom)  # 0: a static atom, whose effects fire always or never
            if not bit and atom in self.facts:
                continue  # present in every state: never fires
            add, delete = self.mask(add_atoms), self.mask(delete_atoms)
            absent_add |= add
            absent_delete |= delete
            if bit:
                absent[bit] = (add, delete)
        absent_keys = 0
        for k in absent:
            absent_keys |= k

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
            if absent_add or absent_delete:
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
        return delta, (trigger_keys if not (general or absent_add or absent_delete) else None)


def _joined(tests: list[Callable[[int], bool]], conjunction: bool) -> Callable[[int], bool]:
    """The conjunction of `tests` as one test, or their disjunction when `conjunction` is
    False: `_never` (`_always`) when one of them is, the test itself when there is one. Two
    tests, the most common case, are joined without a generator per call."""
    decisive, neutral = (_never, _always) if conjunction else (_always, _never)
    if decisive in tests:
        return decisive
    if len(tests) <= 1:
        return tests[0] if tests else neutral
    if len(tests) == 2:
        first, second = tests
        if conjunction:
            return lambda s: first(s) and second(s)
        return lambda s: first(s) or second(s)
    checks = tuple(tests)
    if conjunction:
        return lambda s: all(test(s) for test in checks)
    return lambda s: any(test(s) for test in checks)


def _alternatives(any_of: AnyOf, present: set[GroundAtom], absent: set[GroundAtom],
                  complex_parts: list[Cond]) -> None:
    """The alternatives of `any_of`, a disjunction nested in it as an alternative's only
    content spread out (`(or (or a b) c)` is `(or a b c)`, as an `exists` of disjunctions
    grounds): the atoms of its single-literal alternatives, added to `present` (positive) and
    `absent` (negative), and its other alternatives, added to `complex_parts`."""
    present |= any_of.any_pos
    absent |= any_of.any_neg
    for part in any_of.complex_parts:
        nested = part.subs[0] if len(part.subs) == 1 else None
        if isinstance(nested, AnyOf) and not (part.pos or part.neg or part.unsat):
            _alternatives(nested, present, absent, complex_parts)
        else:
            complex_parts.append(part)


Successor = Callable[[int], int | None]
"""A ground action on bit sets (`bit_step`): the state after it from the state `s`, or None
when it does not apply in `s`."""


def bit_step(bits: BitSets, ground: GroundAction) -> Successor:
    """`ground` on bit sets, as its successor function: it applies in `s` when
    `s & (pos | neg) == pos` (its literal sets as masks) and its guard (its disjunctions and
    implications as one test) holds, and then gives `s & ~delete | add`, an atom both deleted
    and added holding afterwards, with the conditional effects that fire in `s` included
    (`BitSets.effects`; looked at only when one of their triggers is present, or always when
    the triggers are None). A static literal that fails makes the masks require `FALSE` (it
    is explained like any other failed literal). A false equality, or an atom both required
    and forbidden (which the masks' test would pass when the atom holds), makes the guard
    refuse every state."""
    pre = ground.precondition
    conditional = None if ground.conditional is None else bits.effects(ground.conditional)
    pos, neg = bits.literal_masks(pre.pos, pre.neg)
    literals = pos | neg
    add, delete = bits.mask(ground.add), bits.mask(ground.delete)
    keep = ~delete
    guard = bits.guard(pre.subs, bool(pre.unsat) or not pre.pos.isdisjoint(pre.neg))
    if conditional is None:
        if guard is None:
            def successor(s: int) -> int | None:
                return s & keep | add if s & literals == pos else None
        else:
            def successor(s: int) -> int | None:
                return s & keep | add if s & literals == pos and guard(s) else None
        return successor
    effects, triggers = conditional

    def successor_with_effects(s: int) -> int | None:
        if s & literals != pos or (guard is not None and not guard(s)):
            return None
        if triggers is not None and not s & triggers:  # no conditional effect fires in `s`
            return s & keep | add
        more_add, more_delete = effects(s)  # read in the state before the step
        return s & ~(delete | more_delete) | add | more_add
    return successor_with_effects
