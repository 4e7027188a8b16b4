"""Set-ups: the steps a domain's own semantics say lead, from a state, to one where a step is
applicable (`means_ends`, `set_up_step`) or refused (`refusal_set_up`), searched over the
domain's compiled gate. Induction's probes send them to an environment, which alone decides
whether each succeeds (`probe.py`, `collect.py`); the domain only proposes.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sage_pddl.gate import GroundAction, PlanChecker, StepRejected
from sage_pddl.gate.ground import Cond, GroundLiteral, conjoin
from sage_pddl.pddl.model import PlanStep

ACHIEVERS_TRIED = 24
"""Steps setting an atom a refused step needs that `means_ends` weighs, at most, per step."""

Grounded = list[tuple[PlanStep, GroundAction]]
"""Steps with the ground action each names."""


def grounded(gate: PlanChecker, steps: Sequence[PlanStep]) -> Grounded:
    """The steps the gate can ground (a structurally refused one is never applicable)."""
    out = []
    for step in steps:
        try:
            out.append((step, gate.ground(step)))
        except StepRejected:
            continue
    return out


def _listed(condition: Cond) -> Cond:
    """`condition` with each of its literals listed (a ground effect condition keeps them only
    as sets), so that a precondition it is part of explains its failures."""
    listed = [GroundLiteral(atom, positive, "", "")
              for positive, atoms in ((True, condition.pos), (False, condition.neg))
              for atom in sorted(atoms)]
    return condition._replace(literals=tuple(listed))


Literal = tuple[bool, tuple[str, ...]]
"""A ground literal to make hold: `(True, atom)` added, `(False, atom)` deleted."""


class Setters:
    """Which steps of `through` can make a literal hold (`Literal`), by an effect or a
    conditional effect, so `means_ends` weighs only those; and the regression of a literal
    through conditional effects: each step whose conditional effect makes it hold, as a goal
    that requires the effect's condition beside the step's precondition. `Close C` shuts the
    apple in only when the apple is inside C, so to shut it in is to set up `Close C` with
    `(inside apple C)`. A goal has no effects of its own and a name no action has (the gate
    keeps one compiled form per action name and arguments); `real` is the step it stands
    for."""

    def __init__(self, through: Grounded):
        self.through = through
        self.possible: dict[Literal, set[int]] = {}
        self.later: dict[Literal, list[tuple[int, int]]] = {}  # (step, conditional effect)
        self.goals: dict[tuple[int, int], GroundAction] = {}
        self.stands_for: dict[int, GroundAction] = {}
        for index, (_, ground) in enumerate(through):
            for atom in ground.add:
                self.possible.setdefault((True, atom), set()).add(index)
            for atom in ground.delete:
                self.possible.setdefault((False, atom), set()).add(index)
            for number, effect in enumerate(ground.conditional):
                if effect.condition.is_false:
                    continue
                for positive, atoms in ((True, effect.add), (False, effect.delete)):
                    for atom in atoms:
                        self.possible.setdefault((positive, atom), set()).add(index)
                        self.later.setdefault((positive, atom), []).append((index, number))

    def _goal(self, index: int, number: int) -> GroundAction:
        """The goal of step `index`'s conditional effect `number`, made once."""
        goal = self.goals.get((index, number))
        if goal is None:
            ground = self.through[index][1]
            effect = ground.conditional[number]
            schema = dataclasses.replace(ground.schema,
                                         name=f"{ground.schema.name} when {number}")
            goal = self.goals[index, number] = ground._replace(
                schema=schema, add=frozenset(), delete=frozenset(), conditional=(),
                precondition=conjoin([ground.precondition, _listed(effect.condition)]))
            self.stands_for[id(goal)] = ground
        return goal

    def real(self, ground: GroundAction) -> GroundAction:
        """The ground action a goal stands for (itself when it is no goal)."""
        return self.stands_for.get(id(ground), ground)

    def candidates(self, wanted: Iterable[Literal]) -> Grounded:
        """The steps of `through` that can make a literal of `wanted` hold, in their order."""
        found: set[int] = set()
        for literal in wanted:
            found |= self.possible.get(literal, set())
        return [self.through[i] for i in sorted(found)]

    def of(self, wanted: Iterable[Literal], rng: random.Random, count: int) -> Grounded:
        """At most `count` goals, drawn at random, that, met, make a literal of `wanted` hold
        by a conditional effect."""
        pairs = list(dict.fromkeys(pair for literal in sorted(wanted)
                                   for pair in self.later.get(literal, ())))
        return [(self.through[index][0], self._goal(index, number))
                for index, number in rng.sample(pairs, min(len(pairs), count))]


def means_ends(gate: PlanChecker, state: frozenset, goal: GroundAction, through: Grounded,
               depth: int, rng: random.Random, conditional: Setters | None = None
               ) -> tuple[list[Any], frozenset] | None:
    """Steps of `through` after which the ground action `goal` is applicable from `state`, by
    the domain's own semantics, and the state they end in (None when none is found): while it
    is refused, an *achiever* (a step whose effect sets an atom of one of its violations,
    `PlanChecker.explain`, and leaves it refused for fewer reasons) is taken when applicable; else, up
    to `depth` levels down, the same is done for the achiever refused for the fewest reasons,
    then it is taken. With `conditional` (the setters of `through`), a step whose conditional
    effect would set such an atom is an achiever too, its condition then set up with its
    precondition."""
    here, path = state, list[Any]()

    def violations(where: frozenset) -> list:
        return [] if gate.applies(where, goal) else gate.explain(where, goal)

    def refusals(where: frozenset) -> int:
        return len(violations(where))

    for _ in range(3 * depth + 3):
        refused = violations(here)  # explained once: counted, then read for its atoms
        now = len(refused)
        if now == 0:
            return path, here
        wanted = {atom for violation in refused for atom in violation.atoms}
        setters = []
        for step, ground in through if conditional is None else conditional.candidates(wanted):
            add, delete = gate.effects(here, ground)
            if any((atom in add) if positive else (atom in delete) for positive, atom in wanted):
                setters.append((step, ground))
        # an achiever is one whose effects leave the goal refused for fewer reasons (of a
        # disjunction's atoms, only those that complete an alternative)
        achievers = [a for a in rng.sample(setters, min(len(setters), ACHIEVERS_TRIED))
                     if refusals(gate.apply(here, a[1])) < now]
        if conditional is not None:  # their effect happens only once their condition holds
            achievers += conditional.of(wanted, rng, ACHIEVERS_TRIED)
        if not achievers:
            return None
        ready = [a for a in achievers if gate.applies(here, a[1])]
        if ready:
            step, ground = rng.choice(ready)
        elif depth <= 0:
            return None
        else:
            sample = rng.sample(achievers, min(len(achievers), 12))
            step, ground = min(sample, key=lambda a: len(gate.explain(here, a[1])))
            sub = means_ends(gate, here, ground, through, depth - 1, rng, conditional)
            if sub is None:
                return None
            path, here = path + sub[0], sub[1]
        path.append(step)
        here = gate.apply(here, ground if conditional is None else conditional.real(ground))
    return None


SET_UP_TARGETS = 4
"""Steps of an action a set-up (`set_up_step`) is searched toward, at most."""


def set_up_step(gate: PlanChecker, state: frozenset, steps: Grounded, through: Grounded, depth: int,
                rng: random.Random) -> list[Any] | None:
    """A set-up from `state` (`means_ends` through `through`) after which one of `steps`, a
    few of them drawn in turn, is applicable, followed by that step; None when none is
    found."""
    for step, ground in rng.sample(steps, min(len(steps), SET_UP_TARGETS)):
        found = means_ends(gate, state, ground, through, depth, rng)
        if found is not None:
            return found[0] + [step]
    return None


REFUSAL_ACHIEVERS = 6
"""Steps that would make a precondition literal of a step false that `refusal_set_up` sets
up, at most, per step."""


def refusal_set_up(gate: PlanChecker, state: frozenset, steps: Grounded, through: Setters,
                   depth: int, rng: random.Random, known: Collection[tuple[bool, str]] = ()
                   ) -> list[Any] | None:
    """A set-up from `state` after which one of `steps` (a few drawn in turn) is refused by the
    domain's own semantics, followed by that step; None when none is found. Backward from the
    refusal: a literal of the step's precondition that holds in `state` is to be made false
    (an atom it needs deleted, an atom it forbids added), by a step of `through` whose effect
    or conditional effect does it (`Setters`); `means_ends` sets that step up. A literal of a
    reason in `known` (its sign in the precondition and its predicate: `(True, "hand-empty")`)
    is not made false: the step is already seen refused so."""
    for step, ground in rng.sample(steps, min(len(steps), SET_UP_TARGETS)):
        needs = ground.precondition
        against = {(False, atom) for atom in needs.pos
                   if atom in state and (True, atom[0]) not in known} | {
            (True, atom) for atom in needs.neg
            if atom not in state and (False, atom[0]) not in known}
        falsifiers = [(s, g) for s, g in through.candidates(against) if any(
            (atom in g.add) if positive else (atom in g.delete) for positive, atom in against)]
        falsifiers += through.of(against, rng, REFUSAL_ACHIEVERS)
        for setter, goal in rng.sample(falsifiers, min(len(falsifiers), REFUSAL_ACHIEVERS)):
            found = means_ends(gate, state, goal, through.through, depth, rng, through)
            if found is None:
                continue
            path, here = found
            if not gate.applies(gate.apply(here, through.real(goal)), ground):
                return path + [setter, step]
    return None


__all__ = ["ACHIEVERS_TRIED", "Grounded", "Literal", "SET_UP_TARGETS", "Setters", "grounded",
           "means_ends", "refusal_set_up", "set_up_step"]
