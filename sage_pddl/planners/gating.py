"""How planners use the gate: check a block from a state, find its accepted prefix, replay.

The gate (`sage_pddl.gate`) is the domain compiled against the problem; planners hold it as a
`PlanChecker` (`gate/interface.py`) and use nothing of it beyond that interface. Planners never
evaluate preconditions themselves; they ask the gate and keep its verdicts. Semantics used here:

- `check_block(gate, steps, state)` gates a block from `state` in mode "all", so the verdict
  lists every violation (the feedback for a Refine call shows all of them).
- `accepted_prefix(gate, steps, state)` is the longest prefix the gate accepts and the state
  after it: the only part of a rejected block through which the planner's state rolls forward.
- `replay(gate, steps, state)` applies executed steps (which the executor reported as done) to
  reach the state at a failure; steps the gate rejects are skipped and named in the notes.
- `feasible(gate, state, step)` judges one step in `state` (`Feasibility`).
- `is_noop(gate, state, step)` is True when the step is applicable and changes nothing.
- `drop_noop_repeats(gate, steps, state, previous)` removes each step that exactly repeats the
  step before it and is a no-op where it stands (the state rolls forward through the applicable
  kept steps); it returns the kept and the dropped steps.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sage_pddl.gate import GroundAction, PlanChecker, StepRejected, Verdict, Violation
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, PlanStep
from sage_pddl.pddl.vocabulary import vocabulary

from .base import same_step


def check_block(gate: PlanChecker, steps: Sequence[PlanStep], state: frozenset) -> Verdict:
    """The gate's verdict on `steps` executed from `state`, listing every violation."""
    return gate.check(list(steps), state=state, mode="all")


def accepted_prefix(gate: PlanChecker, steps: Sequence[PlanStep], state: frozenset) -> tuple[int, frozenset]:
    """(n, state after steps[:n]) for the longest prefix the gate accepts from `state`."""
    if not steps:
        return 0, state
    verdict = gate.check(list(steps), state=state, mode="first")
    if verdict.valid:
        return len(steps), verdict.final_state
    # checking stopped at the first refused step, which changed nothing
    return verdict.steps_checked - 1, verdict.final_state


def replay(gate: PlanChecker, steps: Sequence[PlanStep], state: frozenset | None = None
           ) -> tuple[frozenset, list[str]]:
    """The state after executed `steps`, and a note for each step the gate would reject."""
    start = gate.initial_state if state is None else state
    if not steps:
        return start, []
    verdict = gate.check(list(steps), state=start, mode="all")
    notes = [f"executed step {v.step} ({v.step_text}) is rejected by the gate: {v.code}"
             for v in verdict.violations]
    return verdict.final_state, notes


class Feasibility(NamedTuple):
    """One step judged in one state: the ground action it names (None when it names none) and
    why it is refused there (None when it is applicable): the step's structural violation,
    its first failed precondition, or the text of another error of the gate's."""

    ground: GroundAction | None
    violation: Violation | str | None

    @property
    def applicable(self) -> bool:
        return self.violation is None


def feasible(gate: PlanChecker, state: frozenset, step: PlanStep) -> Feasibility:
    """Whether `step` applies in `state` (`Feasibility`); a step the gate cannot read is
    refused, never raised."""
    try:
        ground = gate.ground(step)
    except StepRejected as rejected:
        return Feasibility(None, rejected.violation)
    except SageError as error:  # a quantifier too large to ground, say
        return Feasibility(None, str(error))
    return Feasibility(ground, gate.applicable(state, ground))


def is_noop(gate: PlanChecker, state: frozenset, step: PlanStep) -> bool:
    judged = feasible(gate, state, step)
    return (judged.applicable and judged.ground is not None
            and gate.apply(state, judged.ground) == state)


def drop_noop_repeats(gate: PlanChecker, steps: Sequence[PlanStep], state: frozenset,
                      previous: PlanStep | None = None) -> tuple[list[PlanStep], list[PlanStep]]:
    """(kept, dropped): `steps` without the exact repeats of the step before them (`previous`
    before the first) that change nothing in the state reached from `state`."""
    kept: list[PlanStep] = []
    dropped: list[PlanStep] = []
    current = state
    for step in steps:
        before = kept[-1] if kept else previous
        if before is not None and same_step(step, before) and is_noop(gate, current, step):
            dropped.append(step)
            continue
        judged = feasible(gate, current, step)
        if judged.applicable and judged.ground is not None:
            current = gate.apply(current, judged.ground)
        kept.append(step)
    return kept, dropped


def describe_state(gate: PlanChecker, domain: Domain, state: frozenset, *, static: bool = False,
                   limit: int = 120) -> str:
    """The state as PDDL facts, one per line: changing facts, then (optionally) static ones."""
    fluents = vocabulary(domain).effect_predicates
    changing = sorted(a for a in state if a and a[0] in fluents)
    lines = [gate.format_atom(a) for a in changing] or ["(no changing facts hold)"]
    if static:
        fixed = sorted(a for a in state if a and a[0] not in fluents)
        lines += ["static properties:"] + [gate.format_atom(a) for a in fixed]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more facts)"]
    return "\n".join("  " + line for line in lines)


