"""The one engine: a ground action compiled to bit sets, the only thing that executes a step.

`compile_step(bits, ground)` turns a ground action (`ground.py`: its precondition, effect and
conditional effects as data, with each literal's source) into a `CompiledStep`, once per gate
and ground action; every check, successor and explanation in the program runs on it. A step
of a plain action (`lifted.PlainTemplate`: literals of atoms, an unconditional effect) is the
same `CompiledStep` made straight from its action's template (`compile_plain`), its ground
action made only when asked for (`CompiledStep.source`: to explain a refusal, or to read the
step as sets).

Semantics, on a bit-set state `s` (`bits.py`: an int, one bit per fluent atom):

* **Conditions** (`compile_cond`). A conjunction holds when `s & (pos | neg) == pos` (its
  literals as masks; a static literal is decided here: one that fails requires `FALSE`, a bit
  no state holds) and each of its disjunctions and implications holds. A disjunction (`AnyOf`)
  holds when one alternative does; an implication (`Implies`) when its condition fails or its
  consequent holds. A false equality (`Cond.unsat`) makes the conjunction false everywhere.
* **Steps** (`compile_step`). A step applies in `s` when its precondition holds there (its
  disjunctions and implications as one guard, indexed by an atom without which each holds);
  the state after it is `s & ~delete | add`, where `add` and `delete` include the conditional
  effects whose conditions hold in `s`, the state *before* the step (delete, then add: an atom
  both deleted and added holds afterwards). `CompiledStep.apply` makes that change whether or
  not the precondition holds (a world that has already acted); `successor` only where it does.
* **Explanations** (`CompiledCond.failures`). A compiled condition keeps its ground source
  (each literal a `GroundLiteral`, whose atom has its bit in the bit sets from the moment the
  condition is compiled: it is read only when a step is refused, not built for every step),
  each disjunction its `AnyOf`, each implication its compiled consequent: a refused step is
  explained by the sources of the bits and guards that fail in `s`, in source order, each
  literal once (false equalities first; an implication whose
  condition holds reports the failed literals of its consequent; a disjunction is reported
  whole). `explain.py` words them; nothing evaluates a condition a second way.

The conditional effects are indexed here, once: an effect whose condition has a positive
literal is filed under it and looked at (and compiled, the first time) only when that atom is
present; effects whose condition is one negative literal, each effect atom owned by one of
them, fire together less those whose atom is present; the rest are tested one by one.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial, reduce
from itertools import repeat
from operator import call, or_
from typing import NamedTuple

from .bits import FALSE, BitSets
from .ground import (
    EQUALS,
    AnyOf,
    Atoms,
    Cond,
    ConditionalEffect,
    GroundAction,
    GroundAtom,
    GroundLiteral,
    Implies,
)
from .lifted import PlainTemplate, Values

Test = Callable[[int], bool]
Successor = Callable[[int], int | None]
"""A ground action on bit sets: the state after it from the state `s`, or None when it does
not apply in `s`."""


def _never(state: object) -> bool:
    return False


def _always(state: object) -> bool:
    return True


class CompiledCond(NamedTuple):
    """A ground condition on bit sets: `test(s)` whether it holds, with the source of each
    part that can fail (see the module docstring)."""

    test: Test
    source: Cond
    """The ground condition: its literals, each failing where its atom's bit in `bits` says
    so (a static literal, of bit 0, is decided by the static facts), read only to explain."""
    bits: BitSets
    subs: tuple[tuple[Test, AnyOf | CompiledCond], ...]
    """Per disjunction or implication: its test, and what its failure reports (the `AnyOf`;
    an implication's compiled consequent)."""

    def failures(self, s: int) -> list[GroundLiteral | AnyOf]:
        """The sources of the literals and disjunctions that fail in `s`, in source order, each
        literal once (false equalities first)."""
        unsat = self.source.unsat
        out: list[GroundLiteral | AnyOf] = list(unsat)
        seen = {(lit.positive, lit.atom) for lit in unsat}
        bit_of, facts = self.bits.bit_of, self.bits.facts
        for lit in self.source.literals:
            bit = bit_of.get(lit.atom)  # a fluent atom's, given when the condition was compiled
            if bit:
                holds = bool(s & bit)
            elif lit.atom[0] == EQUALS:  # none holds in `literals`, each false one in `unsat`
                continue
            else:  # a static atom (bit 0, or none yet: a plain step decides it by the facts)
                holds = lit.atom in facts
            if holds != lit.positive and (lit.positive, lit.atom) not in seen:
                seen.add((lit.positive, lit.atom))
                out.append(lit)
        for test, source in self.subs:
            if test(s):
                continue
            if isinstance(source, AnyOf):
                out.append(source)
                continue
            for failure in source.failures(s):
                if isinstance(failure, GroundLiteral):
                    if (failure.positive, failure.atom) in seen:
                        continue
                    seen.add((failure.positive, failure.atom))
                out.append(failure)
        return out


class CompiledStep(NamedTuple):
    """A ground action on bit sets (see the module docstring)."""

    successor: Successor
    """The state after the step from `s`; None where its precondition fails."""
    apply: Callable[[int], int]
    """The state after the step's effects from `s`, whether or not its precondition holds."""
    effects: Callable[[int], tuple[int, int]]
    """`(add, delete)`: the masks of what the step adds and deletes from `s`, its conditional
    effects whose conditions hold in `s` included (what `apply` does: delete, then add)."""
    holds: Test
    """Whether its precondition holds in `s`."""
    subs: tuple[tuple[Test, AnyOf | CompiledCond], ...]
    """The precondition's disjunctions and implications that can fail (`CompiledCond.subs`)."""
    source: Callable[[], GroundAction]
    """The ground action the step executes, made when first asked for: a plain step
    (`compile_plain`) is compiled from its action's template, and ground only to be explained
    or read as sets."""
    bits: BitSets

    @property
    def ground(self) -> GroundAction:
        return self.source()

    @property
    def precondition(self) -> CompiledCond:
        """The precondition compiled, with its ground source (for explanations)."""
        return CompiledCond(self.holds, self.source().precondition, self.bits, self.subs)


def compile_cond(bits: BitSets, cond: Cond) -> CompiledCond:
    """`cond` on bit sets; its test is `_never` or `_always` when static literals decide it."""
    pos, neg = bits.literal_masks(cond.pos, cond.neg)
    if not (cond.subs or cond.unsat):  # literals only (a goal's usual form)
        test = _never if pos & FALSE else partial(_masks_hold, pos | neg, pos) if pos | neg \
            else _always
        return CompiledCond(test, cond, bits, ())
    subs = _subs(bits, cond.subs)
    sources = tuple((test, source) for test, source, _ in subs)
    if cond.unsat or pos & FALSE:
        return CompiledCond(_never, cond, bits, sources)
    tests = [test for test, _ in sources]
    if neg:
        tests.insert(0, lambda s: s & pos == pos and not s & neg)
    elif pos:
        tests.insert(0, lambda s: s & pos == pos)
    return CompiledCond(_joined(tests, conjunction=True), cond, bits, sources)


SubPart = tuple[Test, "AnyOf | CompiledCond", "AnyOf | Implies"]
"""A disjunction or implication compiled: its test, what its failure reports (the `AnyOf`; an
implication's compiled consequent) and the part itself."""


def _subs(bits: BitSets, subs: tuple[AnyOf | Implies, ...]) -> tuple[SubPart, ...]:
    """The disjunctions and implications of a conjunction that can fail, compiled."""
    out: list[SubPart] = []
    for sub in subs:
        if isinstance(sub, AnyOf):
            test = _any_of_test(bits, sub)
            if test is not _always:
                out.append((test, sub, sub))
            continue
        condition = compile_cond(bits, sub.condition).test
        if condition is _never:
            continue
        then = compile_cond(bits, sub.then)
        consequent = then.test
        if consequent is _always:
            continue
        out.append((_implication(condition, consequent), then, sub))
    return tuple(out)


def _implication(condition: Test, consequent: Test) -> Test:
    """An implication's test: its condition fails or its consequent holds."""
    return lambda s: not condition(s) or consequent(s)


def _any_of_test(bits: BitSets, any_of: AnyOf) -> Test:
    present: set[GroundAtom] = set()  # alternatives that hold when their atom is present
    absent: set[GroundAtom] = set()  # ... when it is absent
    complex_parts: list[Cond] = []
    _alternatives(any_of, present, absent, complex_parts)
    # it fails where the conjunction of its alternatives' negations holds
    every, some = bits.literal_masks(absent, present)
    if every & FALSE:  # a static alternative holds
        return _always
    tests = [test for test in (compile_cond(bits, part).test for part in complex_parts)
             if test is not _never]
    if every:
        tests.insert(0, lambda s: bool(s & some) or s & every != every)
    elif some:
        tests.insert(0, lambda s: bool(s & some))
    return _joined(tests, conjunction=False)


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


def _trigger(bits: BitSets, sub: AnyOf | Implies) -> GroundAtom | None:
    """A fluent atom without which `sub` holds, or None: a clause fails only when all its
    negative atoms are present, an implication only when its condition holds."""
    if isinstance(sub, AnyOf):
        needed = sub.any_neg if sub.is_clause else frozenset()
    else:
        needed = sub.condition.pos
    return min((atom for atom in needed if bits.bit(atom)), default=None)


def _indexed_test(triggered: list[tuple[int, Test]]) -> Test:
    """Tests each filed under the bit of an atom without which it holds (`_trigger`), as one
    test: only those filed under a present atom are looked at."""
    index: dict[int, list[Test]] = {}
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


def _guard(bits: BitSets, subs: tuple[SubPart, ...]) -> Test | None:
    """A precondition's disjunctions and implications as one test (None: nothing beyond the
    literal masks)."""
    triggered: list[tuple[int, Test]] = []
    tests: list[Test] = []
    for test, _, sub in subs:
        trigger = _trigger(bits, sub)
        if trigger is None:
            tests.append(test)
        else:
            triggered.append((bits.bit(trigger), test))
    if len(triggered) > 1:
        tests.insert(0, _indexed_test(triggered))
    elif triggered:
        tests.insert(0, triggered[0][1])
    return _joined(tests, conjunction=True) if tests else None


def _joined(tests: list[Test], conjunction: bool) -> Test:
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


# --- effects -------------------------------------------------------------------------------

EffectEntry = tuple[Cond | None, Atoms, Atoms]
"""A conditional effect filed under an atom: (the rest of its condition, None when the atom
alone decides it; what it adds; what it deletes)."""


def _effect_index(effects: tuple[ConditionalEffect, ...]
                  ) -> tuple[dict[GroundAtom, list[EffectEntry]],
                             dict[GroundAtom, tuple[Atoms, Atoms]], list[ConditionalEffect]]:
    """(triggered, absent, general): the conditional effects filed as the module docstring
    says, on atoms."""
    triggered: dict[GroundAtom, list[EffectEntry]] = {}
    absent: dict[GroundAtom, tuple[Atoms, Atoms]] = {}
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
    owned_add = [a for a, _ in absent.values()]
    owned_delete = [d for _, d in absent.values()]
    if (sum(map(len, owned_add)) != len(frozenset().union(*owned_add))
            or sum(map(len, owned_delete)) != len(frozenset().union(*owned_delete))):
        # the subtraction needs each effect atom owned by one condition
        general += [ConditionalEffect(Cond(frozenset(), frozenset((atom,))), a, d)
                    for atom, (a, d) in absent.items()]
        absent = {}
    return triggered, absent, general


def _conditional(bits: BitSets, effects: tuple[ConditionalEffect, ...],
                 lock: AbstractContextManager[object]
                 ) -> tuple[Callable[[int], tuple[int, int]], int | None]:
    """A step's conditional effects on ints, `(delta, triggers)`: `delta(s)` is the
    `(add, delete)` masks of the effects whose conditions hold in `s` (the pre-state);
    `triggers` the bits one of which must be present in `s` for any effect to fire (None: an
    effect may fire with none of them). An effect filed under a static atom fires always or
    never, as that atom holds or not: it is decided here. The effects filed under a fluent
    atom are compiled the first time a state holds it, under `lock` (the one held while `bits`
    gives new bits): a step may have thousands of them, and a state few of their atoms."""
    by_atom, by_absent, by_rest = _effect_index(effects)
    general = [(compile_cond(bits, e.condition).test, bits.mask(e.add), bits.mask(e.delete))
               for e in by_rest]

    def compiled(entries: list[EffectEntry]) -> tuple[tuple[Test | None, int, int], ...]:
        return tuple((None if c is None else compile_cond(bits, c).test, bits.mask(a),
                      bits.mask(d)) for c, a, d in entries)
    waiting: dict[int, list[EffectEntry]] = {}
    for atom, entries in by_atom.items():
        bit = bits.bit(atom)
        if bit:
            waiting[bit] = entries
        elif atom in bits.facts:
            general += [(test or _always, add, delete) for test, add, delete in compiled(entries)]
    triggered: dict[int, tuple[tuple[Test | None, int, int], ...]] = {}

    def triggered_by(bit: int) -> tuple[tuple[Test | None, int, int], ...]:
        """The effects filed under `bit`, compiled on first use."""
        with lock:
            found = triggered.get(bit)
            if found is None:
                found = triggered[bit] = compiled(waiting[bit])
        return found
    trigger_keys = 0
    for k in waiting:
        trigger_keys |= k
    absent: dict[int, tuple[int, int]] = {}
    absent_add = absent_delete = 0
    for atom, (add_atoms, delete_atoms) in by_absent.items():
        bit = bits.bit(atom)  # 0: a static atom, whose effects fire always or never
        if not bit and atom in bits.facts:
            continue  # present in every state: never fires
        add, delete = bits.mask(add_atoms), bits.mask(delete_atoms)
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
            for test, effect_add, effect_delete in triggered.get(low) or triggered_by(low):
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


# --- steps ---------------------------------------------------------------------------------

def compile_step(bits: BitSets, ground: GroundAction, lock: AbstractContextManager[object]
                 ) -> CompiledStep:
    """`ground` on bit sets (see the module docstring). A static literal that fails makes the
    masks require `FALSE` (it is explained like any other failed literal). A false equality,
    or an atom both required and forbidden (which the masks' test would pass when the atom
    holds), makes the guard refuse every state. `lock` is the one held while `bits` gives
    new bits (`_conditional` compiles on first use)."""
    pre = ground.precondition
    pos, neg = bits.literal_masks(pre.pos, pre.neg)
    add, delete = bits.mask(ground.add), bits.mask(ground.delete)
    guard: Test | None = None
    sources: tuple[tuple[Test, AnyOf | CompiledCond], ...] = ()
    if pre.subs or pre.unsat or (pre.neg and not pre.pos.isdisjoint(pre.neg)):
        subs = _subs(bits, pre.subs)
        never = bool(pre.unsat) or not pre.pos.isdisjoint(pre.neg)
        guard = _never if never else _guard(bits, subs)
        sources = tuple((test, source) for test, source, _ in subs)

    def source() -> GroundAction:
        return ground
    if not ground.conditional:
        return _unconditional(bits, pos, neg, add, delete, guard, sources, source)
    literals = pos | neg
    if guard is None:
        def holds(s: int) -> bool:
            return s & literals == pos
    else:
        def holds(s: int) -> bool:
            return s & literals == pos and guard(s)
    effects, triggers = _conditional(bits, ground.conditional, lock)

    def all_effects(s: int) -> tuple[int, int]:
        if triggers is not None and not s & triggers:  # no conditional effect fires in `s`
            return add, delete
        more_add, more_delete = effects(s)
        return add | more_add, delete | more_delete

    def apply_with_effects(s: int) -> int:
        added, deleted = all_effects(s)  # read in the state before the step
        return s & ~deleted | added

    def successor_with_effects(s: int) -> int | None:
        if s & literals != pos or (guard is not None and not guard(s)):
            return None
        return apply_with_effects(s)
    return CompiledStep(successor_with_effects, apply_with_effects, all_effects, holds, sources,
                        source, bits)


def compile_plain(bits: BitSets, plain: PlainTemplate, values: Values,
                  source: Callable[[], GroundAction]) -> CompiledStep:
    """A step of a plain action (`lifted.PlainTemplate`: literals and an unconditional
    effect) compiled straight from the action's template applied to `values` (its words and
    the step's objects): the masks of its atoms, with no ground action made (`source` makes
    it when asked for, to explain a refusal or to read the step as sets). The same step as
    `compile_step` makes of its ground action: a static literal decided by the facts, `FALSE`
    required when one fails or when an atom is both required and forbidden."""
    # each group's mask made in C: an atom met for the first time is given a bit as it is
    # looked up (`BitSets.bit_of`), and nothing else runs in Python
    bit, given, dynamic = bits.bit_of.__getitem__, repeat(values), bits.dynamic
    pos = reduce(or_, map(bit, map(call, plain.required, given)), 0)
    neg = reduce(or_, map(bit, map(call, plain.forbidden, given)), 0)
    if dynamic is None:  # every atom has a bit (a state's static facts may differ)
        pos |= reduce(or_, map(bit, map(call, plain.static_required, given)), 0)
        neg |= reduce(or_, map(bit, map(call, plain.static_forbidden, given)), 0)
    elif dynamic is not plain.dynamic:
        raise ValueError("a plain template sorted by other predicates than the bit sets'")
    elif plain.static_required or plain.static_forbidden:
        facts = bits.facts
        if not (facts.issuperset(map(call, plain.static_required, given))
                and facts.isdisjoint(map(call, plain.static_forbidden, given))):
            pos |= FALSE
    if pos & neg:
        pos |= FALSE
    return _unconditional(bits, pos, neg, reduce(or_, map(bit, map(call, plain.add, given)), 0),
                          reduce(or_, map(bit, map(call, plain.delete, given)), 0), None, (),
                          source)


def _unconditional(bits: BitSets, pos: int, neg: int, add: int, delete: int,
                   guard: Test | None, subs: tuple[tuple[Test, AnyOf | CompiledCond], ...],
                   source: Callable[[], GroundAction]) -> CompiledStep:
    """The step of these masks, guard and sources, without conditional effects."""
    literals, keep = pos | neg, ~delete
    holds: Test
    if guard is None:
        def successor(s: int) -> int | None:
            return s & keep | add if s & literals == pos else None
        holds = partial(_masks_hold, literals, pos)
    else:
        def successor(s: int) -> int | None:
            return s & keep | add if s & literals == pos and guard(s) else None

        def holds_with_guard(s: int) -> bool:
            return s & literals == pos and guard(s)
        holds = holds_with_guard
    return CompiledStep(successor, partial(_applied, keep, add), partial(_fixed, add, delete),
                        holds, subs, source, bits)


def _masks_hold(literals: int, pos: int, s: int) -> bool:
    return s & literals == pos


def _applied(keep: int, add: int, s: int) -> int:
    return s & keep | add


def _fixed(add: int, delete: int, s: int) -> tuple[int, int]:
    return add, delete
