"""The episode state every LLM planner keeps between `plan` and `repair`.

`LLMPlanner` holds the backend and options; `start(task)` takes the task's gate, or compiles
one (once per task), and remembers the task for a later `repair`; `begin_plan(task)`
also opens the call log. Every `repair` starts the same way, with `begin_repair`: the episode
must exist, a fresh call log, the executed and failed steps in the domain's spelling and the
state at the failure (a `RepairPoint`); `replan` is the one repair call of the planners that
simply ask for the remaining steps (Direct, CoT, Few-Shot CoT, Self-Refine, LLM+P's fallback).
Helpers turn a gate state into prompt text, parse and canonicalise steps, and finish a
`PlanResult`: `certified` is set only by planners that gate their output (`gated = True`) and
only when the gate accepts every returned step from the state they start in; `goal_reached` is
the gate's goal test after the returned steps (reported for every planner; it is never shown to
the LLM).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.llm import LLMBackend
from sage_pddl.llm.output import Schema
from sage_pddl.pddl.model import PlanStep

from .base import CallLog, PlannerError, PlanningTask, PlanResult, SubgoalBlock
from .gating import describe_state, replay
from .memory import HybridMemory
from .parsing import Canonicalizer, parse_steps
from .prompts import DIRECT_ROLE, direct_messages, replan_messages, replan_text
from .schema import steps_schema


@dataclass(frozen=True)
class RepairPoint:
    """Where a repair starts: its call log, the executed steps and the failed one (canonical;
    None when no step is given), the failure's reason and the state at the failure."""

    log: CallLog
    done: list[PlanStep]
    failed: PlanStep | None
    reason: str
    state: frozenset


class LLMPlanner:
    """Base of the LLM planners: backend, options, the current episode."""

    name = "LLMPlanner"
    gated = False  # whether returned plans are gate-checked (and may be certified)

    def __init__(self, llm: LLMBackend, *, seed: int | None = None,
                 temperature: float | None = None, memory: HybridMemory | None = None,
                 top_k: int = 3, name: str | None = None, **options: Any):
        if options:
            raise PlannerError(f"{self.name}: unknown option(s) "
                               f"{', '.join(sorted(options))}")
        self.llm = llm
        self.seed = seed
        self.temperature_override = temperature
        self.memory = memory
        self.top_k = top_k
        if name:
            self.name = name
        self.current: PlanningTask | None = None
        self._gate: PlanChecker | None = None
        self._canon: Canonicalizer | None = None
        self._gate_key: tuple | None = None

    # --------------------------------------------------------------------------------- episode
    def start(self, task: PlanningTask) -> None:
        if not isinstance(task, PlanningTask):
            raise PlannerError(f"{self.name}.plan() takes a PlanningTask, not "
                               f"{type(task).__name__}; build one with PlanningTask.from_task")
        self.current = task
        gate_key = (id(task.domain), id(task.problem))
        if self._gate_key != gate_key:
            self._gate = (task.gate if task.gate is not None
                          else compile_gate(task.domain, task.problem))
            self._canon = Canonicalizer(task.domain, task.problem)
            self._gate_key = gate_key

    def begin_plan(self, task: PlanningTask) -> tuple[CallLog, frozenset]:
        """Start the episode of `task`: (a fresh call log, the gate's initial state)."""
        self.start(task)
        return self.log(), self.gate.initial_state

    def begin_repair(self, state: frozenset | None, done: Sequence[PlanStep],
                     failed_step: PlanStep | None, reason: str) -> RepairPoint:
        """The start every `repair` shares (see `RepairPoint`); the state is the given one or
        `done` replayed from the initial state."""
        self.require_task()
        log = self.log()
        done_steps = self.canonical(done)
        here = self.state_at(state, done_steps, log)
        failed = self.canonical([failed_step])[0] if failed_step else None
        return RepairPoint(log, done_steps, failed, reason, here)

    def require_task(self) -> PlanningTask:
        return self.task

    @property
    def task(self) -> PlanningTask:
        """The task of the current episode; PlannerError before `plan` started one."""
        if self.current is None:
            raise PlannerError(f"{self.name}.repair() was called before plan(): there is no "
                               "episode to repair")
        return self.current

    @property
    def gate(self) -> PlanChecker:
        """The current episode's gate; PlannerError before `plan` started one."""
        self.require_task()
        assert self._gate is not None  # set with the task
        return self._gate

    @property
    def canon(self) -> Canonicalizer:
        self.require_task()
        assert self._canon is not None  # set with the task
        return self._canon

    def log(self) -> CallLog:
        return CallLog(self.llm)

    def temperature(self, default: float) -> float:
        return default if self.temperature_override is None else self.temperature_override

    def ask(self, log: CallLog, messages, *, role: str, schema: Schema = None,
            temperature: float = 0.2) -> str | None:
        return log.complete(messages, role=role, schema=schema,
                            temperature=self.temperature(temperature), seed=self.seed)

    def direct_plan(self, log: CallLog, start: frozenset) -> list[PlanStep]:
        """One Direct call: the whole plan from `start`, parsed (Direct, Self-Refine and LLM+P's
        fallback)."""
        text = self.ask(log, direct_messages(self.task, self.state_text(start)), role="direct",
                        schema=self.steps_schema())
        return self.parse(text)

    def replan(self, point: RepairPoint, *, role: str = "repair", role_text: str = DIRECT_ROLE,
               schema: Schema = None, temperature: float = 0.2, examples_text: str = ""
               ) -> str | None:
        """One call asking for the steps that remain after the failure at `point`; the answer
        text. `schema` defaults to the steps schema of the task."""
        messages = replan_messages(self.task, point.done, point.failed, point.reason,
                                   self.state_text(point.state), role_text=role_text,
                                   examples_text=examples_text)
        return self.ask(point.log, messages, role=role,
                        schema=self.steps_schema() if schema is None else schema,
                        temperature=temperature)

    # ------------------------------------------------------------------------------- helpers
    def steps_schema(self) -> dict:
        """The JSON schema of a step list over the current task's domain and objects."""
        return steps_schema(self.task.domain, self.task.problem)

    def replan_context(self, point: RepairPoint) -> str:
        """The failure at `point` as prompt text: executed steps, failed step, the state now."""
        return replan_text(point.done, point.failed, point.reason, self.state_text(point.state))

    def state_text(self, state: frozenset) -> str:
        return describe_state(self.gate, self.task.domain, state)

    def parse(self, text: str | None) -> list[PlanStep]:
        return self.canon.steps(parse_steps(text)) if text else []

    def canonical(self, steps: Sequence[PlanStep] | None) -> list[PlanStep]:
        return self.canon.steps(steps or [])

    def state_at(self, state: frozenset | None, done: Sequence[PlanStep], log: CallLog) -> frozenset:
        """The state at a failure: the given one, or `done` replayed from the initial state."""
        if state is not None:
            return frozenset(state)
        current, notes = replay(self.gate, done)
        for note in notes:
            log.note(note)
        return current

    def examples(self, query: str, k: int | None = None) -> list[Any]:
        """Memory items similar to `query`, with the current task left out."""
        if self.memory is None:
            return []
        return self.memory.retrieve(query, self.top_k if k is None else k, exclude=self.current)

    def finish(self, log: CallLog, steps: Sequence[PlanStep], start: frozenset, *,
               blocks: Sequence[SubgoalBlock] = (), certified: bool | None = None
               ) -> PlanResult:
        verdict = self.gate.check(list(steps), state=start, mode="all")
        goal = self.gate.goal_holds(verdict.final_state)
        if certified is None:
            certified = self.gated
        certified = bool(certified and verdict.valid)
        return log.result(steps, planner=self.name, blocks=blocks, certified=certified,
                          goal_reached=goal)

