"""What the gate says of a plan: plain values.

A `Verdict` says whether every checked step was accepted (`valid`), how many steps were checked,
the state after them (a frozenset of ground atoms, given as the start state and the atoms the
steps changed; a rejected step's effects skipped), whether the goal holds there
(`goal_reached`, None when the problem has no goal), and the `Violation`s, one per failed
literal or disjunction of a rejected step, in step order. `valid` is about executability
only: a plan *solves* the task when it is valid and reaches the goal (`Verdict.solved`). Both
are named tuples: immutable, compared and hashed by value, and cheap to make (every check makes
a verdict, and every rejected step its violations). A `Reading` is a plan word the gate read
through the domain's synonyms; `StepRejected` is the error of a step that cannot become a
ground action.
"""
from __future__ import annotations

from typing import NamedTuple

from ..pddl.errors import SageError
from .ground import Atoms, GroundAtom


class Violation(NamedTuple):
    """Why a step was rejected. `step` is 0-based; `literal` is PDDL text in original spelling.

    `atoms` lists the ground literals behind the violation as (positive, atom) pairs, so the
    feedback can look for actions that would achieve them; it is empty for structural codes.
    """

    step: int
    step_text: str
    action: str
    code: str
    literal: str
    message: str
    atoms: tuple[tuple[bool, GroundAtom], ...] = ()

    def at(self, step: int) -> Violation:
        """This violation reported for step `step`."""
        return self if step == self.step else Violation(step, *self[1:])


class Verdict(NamedTuple):
    """What `Gate.check` says of a plan (see the module docstring).

    The state after the checked steps is given by two fields: `start_state`, the state checking
    started from, and `changed`, the atoms whose truth the accepted steps changed (added or
    deleted); `final_state` is the one with the other's atoms toggled. A household state has
    hundreds of atoms: a copy of it costs more than checking a short plan, and most callers
    read only `valid`, so the final state is computed when read (keep it to read it again).
    """

    valid: bool
    steps_checked: int
    start_state: Atoms
    changed: Atoms
    goal_reached: bool | None
    violations: tuple[Violation, ...] = ()
    first_refusal: Verdict | None = None
    """Of a check in mode "all" that refused a step: the verdict the same check gives in mode
    "first" (stopped at the first refused step, whose violations it holds; the state after the
    accepted prefix), made by the same walk; else None."""

    @property
    def final_state(self) -> Atoms:
        """The state after the checked steps (a rejected step's effects skipped)."""
        return self.start_state ^ self.changed if self.changed else self.start_state

    @property
    def stopped(self) -> Verdict:
        """The verdict in mode "first": `first_refusal` when there is one, else this one (a
        check in mode "first", or one that refused nothing)."""
        return self.first_refusal or self

    @property
    def solved(self) -> bool:
        """Every step applicable and the goal (if any) reached."""
        return self.valid and self.goal_reached is not False


class Reading(NamedTuple):
    """A plan word that names an object through the domain's synonym table (`@sage synonym`):
    step `step` (0-based) says `word`, which the gate read as `name` and took to mean the
    object `taken` (declared spelling; of several instances, the one the step acted on)."""

    step: int
    word: str
    name: str
    taken: str

    def __str__(self) -> str:
        return f"step {self.step + 1}: {self.word!r} read as {self.name}: {self.taken}"


class StepRejected(SageError):
    """A step that cannot become a ground action; `violation` carries the structural code."""

    def __init__(self, violation: Violation):
        self.violation = violation
        super().__init__(f"step {violation.step + 1} ({violation.step_text}): "
                         f"[{violation.code}] {violation.message}")
