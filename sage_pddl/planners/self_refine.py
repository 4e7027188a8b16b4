"""Self-Refine: plan, then alternate critique and refinement by the same model.

Plan: one call writes a plan; then up to `max_iterations` (default 2) rounds of a critique call
(answer exactly NO_ISSUES, or 2-5 problems) and, unless the critique found no issues, a refine
call. The loop stops early when the refined plan equals the previous one. An empty or unreadable
refinement never overwrites the plan (noted). Calls: 1 + 2N at most (N rounds), fewer when the
critique says NO_ISSUES. Repair: the same loop, starting from one call that is given the executed
steps, the failure and the state now (the reference forgot the executed steps); it returns only
the remaining steps.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.model import PlanStep

from .base import CallLog, PlannerError, PlanningTask, PlanResult, same_step
from .prompts import critique_messages, self_refine_messages
from .session import LLMPlanner


class SelfRefinePlanner(LLMPlanner):
    name = "Self-Refine"

    def __init__(self, llm: LLMBackend, *, max_iterations: int = 2, **options: Any):
        super().__init__(llm, **options)
        if max_iterations < 0:
            raise PlannerError(f"max_iterations must be >= 0, got {max_iterations}")
        self.max_iterations = max_iterations

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        return self.finish(log, self._refine_loop(log, self.direct_plan(log, start), start), start)

    def _refine_loop(self, log: CallLog, steps: list[PlanStep], start: frozenset) -> list[PlanStep]:
        task = self.task
        state_text = self.state_text(start)
        for round_ in range(1, self.max_iterations + 1):
            critique = self.ask(log, critique_messages(task, steps, state_text),
                                role="critique", temperature=0.1)
            if critique is None:
                break
            if "NO_ISSUES" in critique.upper():
                log.note(f"critique {round_}: no issues")
                break
            text = self.ask(log, self_refine_messages(task, steps, critique, state_text),
                            role="self-refine", schema=self.steps_schema())
            refined = self.parse(text)
            if not refined:
                log.note(f"refinement {round_} gave no steps; the previous plan stands")
                break
            unchanged = len(refined) == len(steps) and all(map(same_step, refined, steps))
            steps = refined
            if unchanged:
                log.note(f"refinement {round_} left the plan unchanged")
                break
        return steps

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        steps = self._refine_loop(point.log, self.parse(self.replan(point)), point.state)
        return self.finish(point.log, steps, point.state)
