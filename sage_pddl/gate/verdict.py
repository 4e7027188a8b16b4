"""What the gate says of a plan: plain values.

A `Verdict` says whether every checked step was accepted (`valid`), how many steps were checked,
the state after them (a frozenset of ground atoms; a rejected step's effects skipped), whether
the goal holds there (`goal_reached`, None when the problem has no goal), and the `Violation`s,
one per failed literal or disjunction of a rejected step, in step order. `valid` is about
executability only: a plan *solves* the task when it is valid and reaches the goal
(`Verdict.solved`). A `Reading` is a plan word the gate read through the domain's synonyms;
`StepRejected` is the error of a step that cannot become a ground action.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ..pddl.errors import SageError
from .ground import Atoms, GroundAtom


@dataclass(frozen=True, slots=True)
class Violation:
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
    atoms: tuple[tuple[bool, GroundAtom], ...] = field(default=(), repr=False)

    def at(self, step: int) -> Violation:
        """This violation reported for step `step`."""
        return self if step == self.step else replace(self, step=step)


_set = object.__setattr__
_new = object.__new__


class Verdict:
    """What `Gate.check` says of a plan (see the module docstring): an immutable value of five
    fields, `valid`, `steps_checked`, `final_state`, `goal_reached` and `violations`.

    `Verdict.of_changes` makes one whose final state is given as a start state and the atoms
    whose truth the plan toggled, and computes the frozenset when `final_state` is first read:
    a copy of a household state costs more than checking a short plan, and most callers read
    only `valid`. Equality, hashing, `repr`, `to_dict` and pickling all see the five fields.
    """

    __slots__ = ("valid", "steps_checked", "goal_reached", "violations", "_start", "_toggled",
                 "_final")

    valid: bool
    steps_checked: int
    goal_reached: bool | None
    violations: tuple[Violation, ...]
    _final: Atoms | None
    _toggled: tuple[Atoms, list[GroundAtom]]

    def __init__(self, valid: bool, steps_checked: int, final_state: Atoms,
                 goal_reached: bool | None, violations: tuple[Violation, ...] = ()) -> None:
        _set(self, "valid", valid)
        _set(self, "steps_checked", steps_checked)
        _set(self, "goal_reached", goal_reached)
        _set(self, "violations", tuple(violations))
        _set(self, "_final", final_state)

    @classmethod
    def of_changes(cls, valid: bool, steps_checked: int, start: Atoms, toggled: list[GroundAtom],
                   goal_reached: bool | None, violations: tuple[Violation, ...]) -> Verdict:
        """The verdict whose final state is `start` with the truth of each of `toggled`
        flipped (each atom listed once)."""
        verdict = _new(cls)
        _set(verdict, "valid", valid)
        _set(verdict, "steps_checked", steps_checked)
        _set(verdict, "goal_reached", goal_reached)
        _set(verdict, "violations", violations)
        _set(verdict, "_final", None if toggled else start)
        _set(verdict, "_toggled", (start, toggled))
        return verdict

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Verdict is immutable: cannot set {name}")

    @property
    def final_state(self) -> Atoms:
        """The state after the checked steps (a rejected step's effects skipped)."""
        final: Atoms | None = self._final
        if final is None:
            start, toggled = self._toggled
            final = frozenset(toggled).symmetric_difference(start)
            _set(self, "_final", final)
        return final

    def _fields(self) -> tuple[Any, ...]:
        return (self.valid, self.steps_checked, self.final_state, self.goal_reached,
                self.violations)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        names = ("valid", "steps_checked", "final_state", "goal_reached", "violations")
        return "Verdict(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields())) + ")"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Verdict, self._fields())

    @property
    def solved(self) -> bool:
        """Every step applicable and the goal (if any) reached."""
        return self.valid and self.goal_reached is not False

    def to_dict(self) -> dict[str, Any]:
        """The five fields by name."""
        return {"valid": self.valid, "steps_checked": self.steps_checked,
                "final_state": self.final_state, "goal_reached": self.goal_reached,
                "violations": self.violations}


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
