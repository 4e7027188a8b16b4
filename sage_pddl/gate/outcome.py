"""What a plan achieves, in two views: the gate's strict view and the simulator's view.

Both read the goal of the gate's problem in a state the plan leads to from a start state (by
default the problem's initial state), and both come from one `PlanChecker.check` in mode "all",
whose verdict holds the one of mode "first" (`Verdict.first_refusal`):

* **The gate's view** (`Outcomes.strict`, check mode "first"): the plan reaches its goal only when
  every step is accepted and the goal holds after the last one; its goal conditions are read
  where checking stopped, after the accepted prefix. This is what certifies a plan: nothing in
  it fails.
* **The simulator's view** (`Outcomes.simulated`, check mode "all"): the plan run open-loop, as
  AI2-THOR (and the symbolic world, which executes the same steps the same way) runs it: a step
  the world refuses (its precondition fails; an unknown action or object, a wrong arity, an
  unparsable step) changes nothing, the later steps still run, and the goal and its conditions
  are read at the end. This is what people watching the robot, and the SAGE paper's evaluation
  in the simulator, judge.

`plan_outcomes` gives both. A plan the gate accepts whole has the same outcome in both views.
Goal conditions are the goal's top-level conjuncts (`PlanChecker.goal_conditions`; goal-condition
success, as ALFRED and the Embodied Agent Interface score it, is `goal_conditions_met /
goal_conditions_total`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from .interface import PlanChecker
from .verdict import Verdict


class Outcome(NamedTuple):
    """A plan's outcome in one view. `goal_reached` is None when the problem has no goal (then
    both condition counts are 0); `steps_refused` counts the steps that changed nothing (in the
    gate's view at most one: checking stops there)."""

    goal_reached: bool | None
    goal_conditions_met: int
    goal_conditions_total: int
    steps_refused: int

    @property
    def goal_conditions(self) -> float | None:
        """Goal-condition success, met / total (None without a goal)."""
        if not self.goal_conditions_total:
            return None
        return self.goal_conditions_met / self.goal_conditions_total


class Outcomes(NamedTuple):
    """A plan's outcome in both views."""

    strict: Outcome
    """The gate's view: every step accepted, read after the accepted prefix."""
    simulated: Outcome
    """The simulator's view: refused steps are no-ops, read at the end."""


def _outcome(gate: PlanChecker, verdict: Verdict, reached: bool | None) -> Outcome:
    met, total = gate.goal_conditions(verdict.final_state)
    return Outcome(reached, met, total, len({v.step for v in verdict.violations}))


def plan_outcomes(gate: PlanChecker, plan: Any, state: Iterable[tuple[Any, ...]] | None = None, *,
                  run: Verdict | None = None) -> Outcomes:
    """`plan`'s outcome from `state` in both views (module docstring). `run` is the plan's
    check in mode "all" from the same state when the caller has it (else it is made here);
    the gate's view is read from the same check (`Verdict.first_refusal`)."""
    if run is None:
        run = gate.check(plan, state=state, mode="all")
    reached = run.goal_reached
    simulated = _outcome(gate, run, reached)
    if run.first_refusal is None:  # nothing refused: both views are the same run
        return Outcomes(simulated, simulated)
    prefix = run.first_refusal
    return Outcomes(_outcome(gate, prefix, None if reached is None else False), simulated)
