"""The gate's interface: what the environments, the runtime, the planners, the benchmark and
induction use of a compiled domain and problem (`PlanChecker`; `Gate` is the one
implementation).

A `PlanChecker` answers, for states given as frozensets of ground atoms:

* **what it checks**: `domain`, `problem`, the start state (`initial_state`) and the problem's
  objects (`objects`: object key -> spelling as declared; `objects_of(types)`: the keys of
  those that fit a parameter of those types); `format_atom(atom)` writes a ground atom as the
  domain and problem spell it (`(inReceptacle Apple Fridge)`: the planners' state in a prompt);
* **a step**: `ground(step, index, state)` reads a `PlanStep` into the ground action it names
  (or raises `StepRejected` with a structural violation); `applies(state, ground)` whether it
  can run there, `applicable` its first violation (None when it applies), `explain` every one;
  `effects(state, ground)` what it adds and deletes there, `apply(state, ground)` the state
  after it (a world that has acted: the precondition is not checked);
  `precondition_holds(action, args, state)` whether the domain's `action` on the object keys
  `args`, already of its parameters' types, applies (its precondition alone is ground: what
  SayCan asks of every typed candidate step, several times cheaper than `ground` and
  `applies`, which ground the effects too);
* **a plan**: `check(plan, state, mode)`, a `Verdict`;
* **the goal**: `goal_holds(state)` and `goal_conditions(state)` (met, total);
  `goal_report(state)` the same conjunct by conjunct (each top-level conjunct as written, with
  whether it holds: a trace's goal); `goal_failures(state)` the goal's ground literals and
  disjunctions that fail (what a planner's feedback suggests achieving) and `goal_unmet(state)`
  the same as PDDL text (feedback, the reference responder's sub-goals);
* `for_state(state)`: the checker to use from a state whose static facts differ from the
  problem's (the same checker when they do not).

Everything else a `Gate` holds (its table, binder, bit sets and caches, the synonyms a plan was
read through) is the gate's own: what only the command line shows (`readings`) or the gate's
tests compare (`compiled`) is read there of a `Gate`, which the code that compiles one holds.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from ..pddl.model import Action, Domain, PlanStep, Problem
from .ground import AnyOf, Atoms, GroundAction, GroundAtom, GroundLiteral, State
from .verdict import Verdict, Violation


@runtime_checkable
class PlanChecker(Protocol):
    """A domain and problem compiled for checking plans (see the module docstring)."""

    @property
    def domain(self) -> Domain: ...

    @property
    def problem(self) -> Problem: ...

    @property
    def initial_state(self) -> Atoms: ...

    @property
    def objects(self) -> dict[str, str]: ...

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]: ...

    def format_atom(self, atom: GroundAtom) -> str: ...

    def for_state(self, state: Iterable[tuple[Any, ...]]) -> PlanChecker: ...

    def ground(self, step: PlanStep, index: int = 0,
               state: Atoms | None = None) -> GroundAction: ...

    def applies(self, state: Atoms, ground: GroundAction) -> bool: ...

    def applicable(self, state: Atoms, ground: GroundAction, index: int = 0,
                   step_text: str = "") -> Violation | None: ...

    def precondition_holds(self, action: Action, args: tuple[str, ...], state: Atoms) -> bool: ...

    def explain(self, state: Atoms, ground: GroundAction, index: int = 0,
                step_text: str = "") -> list[Violation]: ...

    def effects(self, state: Atoms, ground: GroundAction) -> tuple[Atoms, Atoms]: ...

    def apply(self, state: Atoms, ground: GroundAction) -> Atoms: ...

    def check(self, plan: Any, state: Iterable[tuple[Any, ...]] | None = None,
              mode: str = "first") -> Verdict: ...

    def goal_holds(self, state: State) -> bool: ...

    def goal_conditions(self, state: State) -> tuple[int, int]: ...

    def goal_report(self, state: State) -> list[tuple[Any, bool]]: ...

    def goal_failures(self, state: State) -> list[GroundLiteral | AnyOf]: ...

    def goal_unmet(self, state: State) -> list[str]: ...
