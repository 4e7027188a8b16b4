"""Hierarchical and Hierarchical Few-Shot: decompose, expand every sub-goal, concatenate.

Plan: one Decompose call (2-5 sub-goals), one Expand call per sub-goal. Unlike SAGE there is no
symbolic state roll-forward (every expansion sees the initial state), no gate and no refinement.
The concatenation drops a step that exactly repeats the one before it when the gate shows it is a
no-op (the reference dropped repeated MoveTo steps; this is the domain-independent version).
Calls: 1 + K. Repair: a global re-plan (decompose + expand) given the executed steps, the failure
and the state now; the stored task is not rewritten, so later repairs see the original task.

Hierarchical Few-Shot adds the `top_k` (default 3) most similar solved tasks from `memory` to the
Decompose and Expand prompts, with the test task and its components left out (the reference
used a separate hand-written pool that leave-one-out never touched).
"""
from __future__ import annotations

from collections.abc import Sequence

from sage_pddl.pddl.model import PlanStep

from .base import MAX_SUBGOALS, CallLog, PlanningTask, PlanResult, SubgoalBlock
from .gating import drop_noop_repeats
from .parsing import parse_subgoals
from .prompts import decompose_messages, examples_block, expand_messages
from .schema import subgoals_schema
from .session import LLMPlanner


class HierarchicalPlanner(LLMPlanner):
    name = "Hierarchical"
    use_examples = False

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        return self._plan_from(log, start, "")

    def _plan_from(self, log: CallLog, start: frozenset, context: str) -> PlanResult:
        task = self.task
        examples = ""
        if self.use_examples:
            examples = examples_block(self.examples(task.instruction))
            if not examples:
                log.note("no examples available (no memory, or nothing left after "
                         "leave-one-out)")
        text = self.ask(log, decompose_messages(task, examples, context=context),
                        role="decompose", schema=subgoals_schema(), temperature=0.3)
        subgoals = parse_subgoals(text)
        if not subgoals:
            log.note("decompose gave no sub-goals; the instruction is the only sub-goal")
            subgoals = [task.instruction]
        if len(subgoals) > MAX_SUBGOALS:
            log.hit("max_subgoals", f"sub-goal cap reached: the decomposition had "
                                    f"{len(subgoals)} sub-goals, the first {MAX_SUBGOALS} "
                                    "(MAX_SUBGOALS) were expanded")
            subgoals = subgoals[:MAX_SUBGOALS]
        state_text = self.state_text(start)
        blocks = []
        for index, subgoal in enumerate(subgoals):
            answer = self.ask(log, expand_messages(task, subgoal, state_text, examples,
                                                   later=subgoals[index + 1:]),
                              role="expand", schema=self.steps_schema())
            blocks.append(SubgoalBlock(subgoal, tuple(self.parse(answer)), certified=False))
        steps = self._concatenate(log, [s for b in blocks for s in b.steps], start)
        return self.finish(log, steps, start, blocks=blocks)

    def _concatenate(self, log: CallLog, steps: list[PlanStep], start: frozenset) -> list[PlanStep]:
        kept, dropped = drop_noop_repeats(self.gate, steps, start)
        for step in dropped:
            log.note(f"dropped a repeated no-op step: {step.action} {step.field('object')}")
        return kept

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        return self._plan_from(point.log, point.state, self.replan_context(point))


class HierarchicalFewShotPlanner(HierarchicalPlanner):
    name = "Hierarchical Few-Shot"
    use_examples = True
