"""Bit-set states: atoms as the bits of an int, the state form the engine runs on.

A state is a Python int with one bit per *fluent* atom the check meets, given the first time a
mask names it (the initial state's atoms first, then those of the ground actions as steps use
them). Static atoms, those of predicates no action changes, get no bit when the states checked
all have the problem's static facts (the gate makes sure of it, `Gate.for_state`): a static
literal is true or false once and for all, so it is decided when its mask is made. One that
holds needs nothing; one that fails requires `FALSE`, a bit no state holds.

Here are the atoms' bits and the masks of atom sets (`BitSets`); what a ground action does
on them is compiled in `engine.py`, the one engine.
"""
from __future__ import annotations

from collections.abc import Iterable
from itertools import compress, repeat
from operator import itemgetter, lshift

from .ground import AnyOf, Atoms, Cond, GroundAtom, State

FALSE = 1
"""Bit 0, which no state holds: what a static literal that fails requires."""


class _Bits(dict[GroundAtom, int]):
    """Atom -> its bit; an atom met for the first time is given one as it is looked up
    (`bits[atom]`, `__missing__`): the next free one, or 0 for a static atom. A mask can so be
    made in C (`engine.compile_plain`). `atoms` lists the atoms given bits, by position."""

    __slots__ = ("atoms", "dynamic")

    def __init__(self, dynamic: frozenset[str] | None) -> None:
        super().__init__()
        self.atoms: list[GroundAtom] = [()]  # position 0 is FALSE, which names no atom
        self.dynamic = dynamic

    def __missing__(self, atom: GroundAtom) -> int:
        dynamic = self.dynamic
        if dynamic is not None and atom[0] not in dynamic:
            found = self[atom] = 0
        else:
            atoms = self.atoms
            found = self[atom] = 1 << len(atoms)
            atoms.append(atom)
        return found


class BitSets:
    """Atoms as bits of Python ints: `bit_of` maps an atom to its bit (a power of two; 0 for a
    static atom), giving a new atom one as it is looked up, `atoms` a bit's position back to
    its atom.

    `dynamic` names the predicates some action changes; an atom of another predicate is
    static, and holds when it is in `facts` (the initial state: static atoms hold in every
    state checked exactly as there). With `dynamic` None every atom is fluent (for states
    whose static facts may differ from the problem's)."""

    __slots__ = ("bit_of", "atoms", "dynamic", "facts", "_static_facts")

    def __init__(self, dynamic: frozenset[str] | None = None,
                 facts: Atoms = frozenset()) -> None:
        self.bit_of: dict[GroundAtom, int] = _Bits(dynamic)
        self.atoms: list[GroundAtom] = self.bit_of.atoms
        self.dynamic = dynamic
        self.facts = facts
        self._static_facts: Atoms | None = None  # those of `facts`, made when `state` needs them

    def is_static(self, atom: GroundAtom) -> bool:
        return self.dynamic is not None and atom[0] not in self.dynamic

    def bit(self, atom: GroundAtom) -> int:
        """The atom's bit, given the next free one if it has none yet; 0 for a static atom."""
        return self.bit_of[atom]

    def mask(self, atoms: Iterable[GroundAtom]) -> int:
        """The bit set of the fluent atoms of `atoms`, each new one given the next bit."""
        bit_of = self.bit_of
        total = 0
        for atom in atoms:  # most sets here hold zero to two atoms: a plain loop is cheapest
            total |= bit_of[atom]
        return total

    def first_mask(self, atoms: Atoms) -> int:
        """`mask(atoms)` for the first atoms given bits (the initial state's): its fluent atoms
        get bits 1 to n (static atoms get their 0 as masks meet them)."""
        if self.bit_of:
            return self.mask(atoms)
        dynamic = self.dynamic
        # (in C, as `map` runs them: a problem may have thousands of facts)
        fluent = list(atoms) if dynamic is None else list(
            compress(atoms, map(dynamic.__contains__, map(itemgetter(0), atoms))))
        self.bit_of.update(zip(fluent, map(lshift, repeat(2), range(len(fluent)))))
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
            required |= bit_of[atom] or (0 if atom in facts else FALSE)
        for atom in neg:
            bit = bit_of[atom]
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

    def reads(self, cond: Cond) -> int:
        """The bits of the fluent atoms whose truth `cond`'s value depends on: those of its
        literals, disjunctions and implications."""
        mask = self.mask(cond.pos) | self.mask(cond.neg)
        for sub in cond.subs:
            for part in (sub.parts if isinstance(sub, AnyOf) else (sub.condition, sub.then)):
                mask |= self.reads(part)
        return mask
