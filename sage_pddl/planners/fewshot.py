"""Few-Shot CoT: chain-of-thought with worked examples retrieved from memory.

The reference embeds a fixed pool of hand-written examples that memory leave-one-out never
touches; here the examples are the `top_k` (default 3) most similar solved tasks of the planner's
`memory`, with the test task and its components left out exactly as for SAGE. Without a memory
the prompt has no examples (noted). Calls: 1. Repair: one call like CoT's, with the examples.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import PlanningTask, PlanResult
from .cot import CoTPlanner
from .prompts import COT_ROLE, examples_block, fewshot_messages, replan_messages
from .schema import reasoned_steps_schema


class FewShotCoTPlanner(CoTPlanner):
    name = "Few-Shot CoT"

    def plan(self, task: PlanningTask) -> PlanResult:
        self.start(task)
        log = self.log()
        start = self.gate.initial_state
        shots = self.examples(task.instruction)
        if not shots:
            log.note("no examples available (no memory, or nothing left after leave-one-out)")
        text = self.ask(log, fewshot_messages(task, self.state_text(start), shots),
                        role="fewshot", schema=reasoned_steps_schema(task.domain, task.problem))
        return self.finish(log, self._read(log, text), start)

    def repair(self, state: frozenset | None, done: Sequence[Mapping[str, Any]],
               failed_step: Mapping[str, Any] | None, reason: str) -> PlanResult:
        task = self.require_task()
        log = self.log()
        done_steps = self.canonical(done)
        here = self.state_at(state, done_steps, log)
        failed = self.canonical([failed_step])[0] if failed_step else None
        messages = replan_messages(task, done_steps, failed, reason, self.state_text(here),
                                   role_text=COT_ROLE + " First think about why the step failed.")
        shots = examples_block(self.examples(task.instruction))
        if shots:
            messages[1]["content"] = f"Solved examples:\n\n{shots}\n\n{messages[1]['content']}"
        text = self.ask(log, messages, role="repair",
                        schema=reasoned_steps_schema(task.domain, task.problem))
        return self.finish(log, self._read(log, text), here)
