"""Chain-of-thought: one call that reasons, then plans.

The model answers `{"reasoning": ..., "steps": [...]}` (structured output keeps the reasoning
before the plan); `<reasoning>...</reasoning><plan>...</plan>` tags are read too, for backends
that ignore the schema. The reasoning text is kept in the notes. Calls: 1. Repair: one call with
the executed steps, the failure and the state now, asking to think about the failure first.
"""
from __future__ import annotations

from collections.abc import Sequence

from sage_pddl.pddl.model import PlanStep

from .base import CallLog, PlanningTask, PlanResult
from .parsing import extract_tag, parse_json_value, parse_steps, steps_in
from .prompts import COT_REPAIR_ROLE, cot_messages
from .schema import reasoned_steps_schema
from .session import LLMPlanner


def read_reasoned(text: str | None) -> tuple[str, list[PlanStep]]:
    """(reasoning, raw steps) from a JSON answer or from <reasoning>/<plan> tags."""
    if not text:
        return "", []
    plan_part = extract_tag(text, "plan")
    if plan_part is not None:
        return extract_tag(text, "reasoning") or "", parse_steps(plan_part)
    value = parse_json_value(text)
    reasoning = value.get("reasoning", "") if isinstance(value, dict) else ""
    return str(reasoning or ""), steps_in(text, value)


class CoTPlanner(LLMPlanner):
    name = "CoT"

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        text = self.ask(log, cot_messages(task, self.state_text(start)), role="cot",
                        schema=reasoned_steps_schema(task.domain, task.problem), temperature=0.3)
        return self.finish(log, self._read(log, text), start)

    def _read(self, log: CallLog, text: str | None) -> list[PlanStep]:
        reasoning, steps = read_reasoned(text)
        if reasoning:
            log.note("reasoning: " + " ".join(reasoning.split())[:500])
        return self.canonical(steps)

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        text = self.replan(point, role_text=COT_REPAIR_ROLE, temperature=0.3,
                           schema=reasoned_steps_schema(self.task.domain, self.task.problem))
        return self.finish(point.log, self._read(point.log, text), point.state)
