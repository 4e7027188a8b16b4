"""Direct: one call writes the whole plan; repair is one call with the executed steps.

Plan: the system prompt lists the domain's actions (rendered from the PDDL) and the step format;
the user prompt gives the task, the scene's objects and the initial state. Calls: 1 (a failed
call is counted and yields an empty plan). Repair: one call given the executed steps, the failed
step, its reason and the state now (replayed by the gate); it returns only the remaining steps.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import PlanningTask, PlanResult
from .prompts import direct_messages, replan_messages
from .schema import steps_schema
from .session import LLMPlanner


class DirectPlanner(LLMPlanner):
    name = "Direct"

    def plan(self, task: PlanningTask) -> PlanResult:
        self.start(task)
        log = self.log()
        start = self.gate.initial_state
        text = self.ask(log, direct_messages(task, self.state_text(start)), role="direct",
                        schema=steps_schema(task.domain, task.problem))
        return self.finish(log, self.parse(text), start)

    def repair(self, state: frozenset | None, done: Sequence[Mapping[str, Any]],
               failed_step: Mapping[str, Any] | None, reason: str) -> PlanResult:
        task = self.require_task()
        log = self.log()
        done_steps = self.canonical(done)
        here = self.state_at(state, done_steps, log)
        failed = self.canonical([failed_step])[0] if failed_step else None
        text = self.ask(log, replan_messages(task, done_steps, failed, reason,
                                             self.state_text(here)),
                        role="repair", schema=steps_schema(task.domain, task.problem))
        return self.finish(log, self.parse(text), here)
