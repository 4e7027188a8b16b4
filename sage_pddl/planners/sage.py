"""SAGE: retrieve, decompose, expand against the symbolic state, gate, refine, flatten; repair.

`plan(task)`:
1. Retrieve up to `top_k` solved examples from memory (the task itself left out).
2. Decompose (1 call) into sub-goals. The answer is clamped to `max_subgoals` (extra sub-goals
   are merged into the last one, nothing is lost) and noted; an unusable answer falls back to
   the instruction as the only sub-goal (noted).
3. For each sub-goal: Expand (1 call) from the rolled-forward gate state, then gate the block.
   While the gate rejects it and `max_refines` is not spent, Refine (1 call) with the typed
   feedback of all violations (`render_feedback`) and gate the refined block again. A block that
   never passes is marked uncertified; the state rolls forward only through its accepted prefix.
4. Flatten: the plan is the blocks' steps in order. Each block was gated from the state the
   previous blocks leave, so the concatenation is state-continuous and no step is dropped; the
   only edit is removing an exact repeat of the step just before it when the gate shows the
   repeat changes nothing (a no-op), before the block is gated.
Calls: 1 + K + R (K sub-goals, R refines, R <= K * max_refines).

`repair(state, done, failed_step, reason)` continues the episode of the last `plan`:
the state at the failure is the given one or `done` replayed from the initial state; the failed
sub-goal is the block holding plan position len(done) in the block bookkeeping, which is
updated after every repair so later failures are located in the repaired plan; one Repair call
regenerates the rest of that sub-goal, which is gated and refined (up to `max_refines`) like a
block; the later blocks are kept step for step and re-gated from the repaired state (certified
again or flagged). Calls: 1 + refines. `done` lists every step executed successfully in the
episode so far, in order (the executor's log).

Switches: `verifier=False` (SAGE-NoVerifier: no gating or refining; blocks are uncertified),
`local_repair=False` (SAGE-NoRepair: repair re-plans globally from the state at the failure,
1 + K + R calls), `use_memory=False` (SAGE-NoMemory). `uncertified_steps="prefix"` returns only the
accepted prefix of a rejected block instead of all its steps.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sage_pddl.gate.feedback import render_feedback
from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.model import PlanStep

from .base import (
    MAX_SUBGOALS,
    CallLog,
    PlannerError,
    PlanningTask,
    PlanResult,
    SubgoalBlock,
    same_step,
)
from .gating import accepted_prefix, check_block, drop_noop_repeats
from .parsing import is_json, parse_json_value, parse_subgoals, steps_in
from .prompts import (
    decompose_messages,
    examples_block,
    expand_messages,
    refine_messages,
    repair_messages,
    step_format,
)
from .schema import subgoals_schema
from .session import LLMPlanner, RepairPoint


class SagePlanner(LLMPlanner):
    name = "SAGE"
    gated = True

    def __init__(self, llm: LLMBackend, *, max_refines: int = 2, verifier: bool = True,
                 local_repair: bool = True, use_memory: bool = True, min_subgoals: int = 2,
                 max_subgoals: int = 5, uncertified_steps: str = "keep", **options: Any):
        super().__init__(llm, **options)
        if max_refines < 0:
            raise PlannerError(f"max_refines must be >= 0, got {max_refines}")
        if not 1 <= min_subgoals <= max_subgoals:
            raise PlannerError(f"need 1 <= min_subgoals <= max_subgoals, got {min_subgoals}, "
                               f"{max_subgoals}")
        if uncertified_steps not in ("keep", "prefix"):
            raise PlannerError("uncertified_steps must be 'keep' or 'prefix', got "
                               f"{uncertified_steps!r}")
        self.max_refines = max_refines
        self.verifier = verifier
        self.gated = verifier
        self.local_repair = local_repair
        if not use_memory:
            self.memory = None
        self.min_subgoals = min_subgoals
        self.max_subgoals = max_subgoals
        self.uncertified_steps = uncertified_steps
        self.blocks: list[SubgoalBlock] = []  # the episode's plan, executed part included

    # ------------------------------------------------------------------------------------ plan
    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        blocks, _ = self._plan_blocks(log, start)
        self.blocks = list(blocks)
        return self._finish(log, blocks, start)

    def _plan_blocks(self, log: CallLog, state: frozenset, context: str = "",
                     previous: PlanStep | None = None) -> tuple[list[SubgoalBlock], frozenset]:
        task = self.task
        examples = examples_block(self.examples(task.instruction))
        subgoals = self._decompose(log, examples, context)
        blocks: list[SubgoalBlock] = []
        for index, subgoal in enumerate(subgoals):
            text = self.ask(log, expand_messages(task, subgoal, self.state_text(state), examples,
                                                 later=subgoals[index + 1:]),
                            role="expand", schema=self.steps_schema(), temperature=0.2)
            steps, readable = self._read_steps(text)
            if not readable:
                log.note(f"expand of sub-goal {index + 1} gave no readable steps")
            block, state = self._gate_block(log, subgoal, steps, state, origin="expand",
                                            previous=previous, readable=readable)
            blocks.append(block)
            if block.steps:
                previous = block.steps[-1]
        return blocks, state

    def _decompose(self, log: CallLog, examples: str, context: str) -> list[str]:
        task = self.task
        text = self.ask(log, decompose_messages(task, examples, self.min_subgoals,
                                                self.max_subgoals, context),
                        role="decompose", schema=subgoals_schema(self.min_subgoals,
                                                                 self.max_subgoals),
                        temperature=0.3)

        subgoals = parse_subgoals(text)
        if not subgoals:
            log.note("decompose gave no sub-goals; the instruction is the only sub-goal")
            return [task.instruction]
        if len(subgoals) > MAX_SUBGOALS:
            log.hit("max_subgoals", f"sub-goal cap reached: the decomposition had "
                                    f"{len(subgoals)} sub-goals, the first {MAX_SUBGOALS} "
                                    "(MAX_SUBGOALS) were kept")
            subgoals = subgoals[:MAX_SUBGOALS]
        if len(subgoals) > self.max_subgoals:
            keep = self.max_subgoals - 1
            merged = "; then ".join(subgoals[keep:])
            log.note(f"decompose gave {len(subgoals)} sub-goals; clamped to "
                     f"{self.max_subgoals} (the last {len(subgoals) - keep} merged)")
            subgoals = subgoals[:keep] + [merged]
        elif len(subgoals) < self.min_subgoals:
            log.note(f"decompose gave {len(subgoals)} sub-goal(s), fewer than "
                     f"{self.min_subgoals}; kept as given")
        return subgoals

    def _read_steps(self, text: str | None) -> tuple[list[PlanStep], bool]:
        """(steps, readable): an explicit empty list is readable; unreadable text is not."""
        if text is None:
            return [], False
        value = parse_json_value(text)  # once: the steps and the empty list are read from it
        steps = self.canonical(steps_in(text, value))
        if steps:
            return steps, True
        explicit_empty = is_json(value) and (value == [] or (
            isinstance(value, Mapping) and value.get("steps") == []))
        return [], explicit_empty

    # ------------------------------------------------------------------------------- gating
    def _drop_noop_repeats(self, log: CallLog, steps: list[PlanStep], state: frozenset,
                           previous: PlanStep | None) -> list[PlanStep]:
        """Remove a step that exactly repeats the step before it and changes nothing."""
        kept, dropped = drop_noop_repeats(self.gate, steps, state, previous)
        for step in dropped:
            log.note(f"dropped a repeated no-op step: {step.action} "
                     f"{step.field('object')}".rstrip())
        return kept

    def _gate_block(self, log: CallLog, subgoal: str, steps: list[PlanStep], state: frozenset, *,
                    origin: str, previous: PlanStep | None = None, readable: bool = True
                    ) -> tuple[SubgoalBlock, frozenset]:
        """Gate a block from `state`, refining while rejected; (block, state after it)."""
        if not self.verifier:
            verdict = check_block(self.gate, steps, state)
            return (SubgoalBlock(subgoal, tuple(steps), certified=False, origin=origin),
                    verdict.final_state)
        steps = self._drop_noop_repeats(log, steps, state, previous)
        verdict = check_block(self.gate, steps, state)
        # An expanded sub-goal with no steps certifies nothing (the gate accepts the empty plan
        # vacuously); a repair may legitimately leave nothing to do.
        empty = not steps and origin == "expand"
        passed = verdict.valid and readable and not empty
        refines = 0
        rejected: list[tuple] = []
        while not passed and refines < self.max_refines:
            if readable and empty:
                feedback = ("The previous answer gave no steps for this sub-goal. Write the steps "
                            "that achieve it from the current state.")
            elif readable:
                rejected.append((tuple(steps), tuple(verdict.violations)))
                feedback = render_feedback(self.gate, verdict, list(steps), state)
            else:
                feedback = ("No steps could be read from the previous answer. Answer with JSON "
                            '{"steps": [...]}. ' + step_format(self.task.domain))
            text = self.ask(log, refine_messages(self.task, subgoal, self.state_text(state),
                                                 steps, feedback),
                            role="refine", schema=self.steps_schema(), temperature=0.1)
            refines += 1
            new_steps, new_readable = self._read_steps(text)
            if not new_readable:
                log.note(f"refine {refines} of sub-goal {subgoal!r} gave no readable steps; "
                         "the previous attempt stands")
                continue
            steps, readable = self._drop_noop_repeats(log, new_steps, state, previous), True
            verdict = check_block(self.gate, steps, state)  # every refined block is re-gated
            empty = not steps and origin == "expand"
            passed = verdict.valid and not empty
        if passed:
            return (SubgoalBlock(subgoal, tuple(steps), True, refines, verdict, origin,
                                 rejected=tuple(rejected)), verdict.final_state)
        accepted, after = accepted_prefix(self.gate, steps, state)
        log.note(f"sub-goal {subgoal!r} is uncertified after {refines} refine(s): "
                 + ("; ".join(f"step {v.step + 1} [{v.code}]" for v in verdict.violations)
                    or ("no steps" if readable else "no readable steps")))
        if self.uncertified_steps == "prefix":
            steps = steps[:accepted]
        return (SubgoalBlock(subgoal, tuple(steps), False, refines, verdict, origin,
                             rejected=tuple(rejected)), after)

    def _regate(self, block: SubgoalBlock, state: frozenset) -> tuple[SubgoalBlock, frozenset]:
        """Re-check a kept block from a new state (no LLM call)."""
        verdict = check_block(self.gate, block.steps, state)
        if not self.verifier:
            return replace(block, origin="kept", done=0), verdict.final_state
        if verdict.valid and block.steps:  # an empty block certifies nothing
            return (replace(block, certified=True, verdict=verdict, origin="kept", done=0,
                            refines=0, rejected=()), verdict.final_state)
        _, after = accepted_prefix(self.gate, block.steps, state)
        return (replace(block, certified=False, verdict=verdict, origin="kept", done=0,
                        refines=0, rejected=()), after)

    def _finish(self, log: CallLog, blocks: Sequence[SubgoalBlock], start: frozenset
                ) -> PlanResult:
        steps = [s for b in blocks for s in b.steps]
        certified = self.verifier and all(b.certified for b in blocks)
        return self.finish(log, steps, start, blocks=blocks, certified=certified)

    # ---------------------------------------------------------------------------------- repair
    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        task, log, here = self.task, point.log, point.state
        done_steps, failed = point.done, point.failed
        if not self.local_repair or not self.blocks:
            return self._global_replan(point)

        index, offset = self._locate(len(done_steps))
        self._check_alignment(log, done_steps)
        current = self.blocks[index]
        later = self.blocks[index + 1:]
        examples = examples_block(self.examples(current.subgoal))
        text = self.ask(log, repair_messages(task, current.subgoal, done_steps, failed, reason,
                                             self.state_text(here),
                                             later=[b.subgoal for b in later],
                                             examples_text=examples),
                        role="repair", schema=self.steps_schema(), temperature=0.1)
        suffix, readable = self._read_steps(text)
        if not readable:
            log.note("repair gave no readable steps")
        previous = done_steps[-1] if done_steps else None
        repaired, after = self._gate_block(log, current.subgoal, suffix, here, origin="repair",
                                           previous=previous, readable=readable)
        kept: list[SubgoalBlock] = []
        for block in later:  # untouched future blocks: kept step for step, re-gated
            regated, after = self._regate(block, after)
            if not regated.certified and self.verifier:
                log.note(f"kept sub-goal {block.subgoal!r} no longer passes the gate after the "
                         "repair: " + "; ".join(f"step {v.step + 1} [{v.code}]"
                                                for v in regated.violations))
            kept.append(regated)
        executed = current.steps[:offset]
        self.blocks = (self.blocks[:index]
                       + [replace(repaired, steps=tuple(executed) + repaired.steps,
                                  done=len(executed))]
                       + kept)
        log.note(f"local repair of sub-goal {index + 1} ({current.subgoal!r}) at step "
                 f"{len(done_steps) + 1}")
        return self._finish(log, [repaired] + kept, here)

    def _locate(self, position: int) -> tuple[int, int]:
        """(block index, offset in it) of plan position `position` in the bookkeeping."""
        start = 0
        for index, block in enumerate(self.blocks):
            if position < start + len(block.steps):
                return index, position - start
            start += len(block.steps)
        last = len(self.blocks) - 1
        return last, len(self.blocks[last].steps)

    def _check_alignment(self, log: CallLog, done: Sequence[PlanStep]) -> None:
        planned = [s for b in self.blocks for s in b.steps]
        for position, step in enumerate(done):
            if position >= len(planned) or not same_step(step, planned[position]):
                log.note(f"executed step {position + 1} differs from the plan; the failed "
                         "sub-goal is located by position")
                return

    def _global_replan(self, point: RepairPoint) -> PlanResult:
        """SAGE-NoRepair (and repair without bookkeeping): decompose/expand/refine again."""
        log, state, done = point.log, point.state, point.done
        context = self.replan_context(point)
        previous = done[-1] if done else None
        blocks, _ = self._plan_blocks(log, state, context=context, previous=previous)
        log.note("global replan from the state at the failure")
        executed = SubgoalBlock("(executed steps)", tuple(done), certified=True,
                                origin="executed", done=len(done)) if done else None
        self.blocks = ([executed] if executed else []) + [replace(b, origin="replan")
                                                         for b in blocks]
        blocks = [replace(b, origin="replan") for b in blocks]
        return self._finish(log, blocks, state)


def sage(llm: LLMBackend, **options: Any) -> SagePlanner:
    return SagePlanner(llm, **options)


def sage_no_verifier(llm: LLMBackend, **options: Any) -> SagePlanner:
    """SAGE without the gate: sub-goal blocks are kept unchecked and never refined (ablation)."""
    options.setdefault("name", "SAGE-NoVerifier")
    return SagePlanner(llm, verifier=False, **options)


def sage_no_repair(llm: LLMBackend, **options: Any) -> SagePlanner:
    """SAGE whose repair replans the whole remainder instead of the failed sub-goal (ablation)."""
    options.setdefault("name", "SAGE-NoRepair")
    return SagePlanner(llm, local_repair=False, **options)


def sage_no_memory(llm: LLMBackend, **options: Any) -> SagePlanner:
    """SAGE without retrieved examples in its prompts (ablation)."""
    options.setdefault("name", "SAGE-NoMemory")
    return SagePlanner(llm, use_memory=False, **options)
