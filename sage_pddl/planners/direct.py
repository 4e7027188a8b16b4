"""Direct: one call writes the whole plan; repair is one call with the executed steps.

Plan: the system prompt lists the domain's actions (rendered from the PDDL) and the step format;
the user prompt gives the task, the scene's objects and the initial state. Calls: 1 (a failed
call is counted and yields an empty plan). Repair: one call given the executed steps, the failed
step, its reason and the state now (replayed by the gate); it returns only the remaining steps.
"""
from __future__ import annotations

from collections.abc import Sequence

from sage_pddl.pddl.model import PlanStep

from .base import PlanningTask, PlanResult
from .session import LLMPlanner


class DirectPlanner(LLMPlanner):
    name = "Direct"

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        return self.finish(log, self.direct_plan(log, start), start)

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        return self.finish(point.log, self.parse(self.replan(point)), point.state)
