"""Few-Shot CoT: chain-of-thought with worked examples retrieved from memory.

The reference embeds a fixed pool of hand-written examples that memory leave-one-out never
touches; here the examples are the `top_k` (default 3) most similar solved tasks of the planner's
`memory`, with the test task and its components left out exactly as for SAGE. Without a memory
the prompt has no examples (noted). Calls: 1. Repair: one call like CoT's, with the examples.
"""
from __future__ import annotations

from collections.abc import Sequence

from sage_pddl.pddl.model import PlanStep

from .base import PlanningTask, PlanResult
from .cot import CoTPlanner
from .prompts import COT_REPAIR_ROLE, examples_block, fewshot_messages
from .schema import reasoned_steps_schema


class FewShotCoTPlanner(CoTPlanner):
    name = "Few-Shot CoT"

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        shots = self.examples(task.instruction)
        if not shots:
            log.note("no examples available (no memory, or nothing left after leave-one-out)")
        text = self.ask(log, fewshot_messages(task, self.state_text(start), shots),
                        role="fewshot", schema=reasoned_steps_schema(task.domain, task.problem))
        return self.finish(log, self._read(log, text), start)

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        task = self.task
        text = self.replan(point, role_text=COT_REPAIR_ROLE,
                           examples_text=examples_block(self.examples(task.instruction)),
                           schema=reasoned_steps_schema(task.domain, task.problem))
        return self.finish(point.log, self._read(point.log, text), point.state)
