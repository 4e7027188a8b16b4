"""The episode state every LLM planner keeps between `plan` and `repair`.

`LLMPlanner` holds the backend and options; `start(task)` compiles the gate for the task's
domain and problem (once per task) and remembers the task for a later `repair`. Helpers turn a
gate state into prompt text, parse and canonicalise steps, and finish a `PlanResult`:
`certified` is set only by planners that gate their output (`gated = True`) and only when the
gate accepts every returned step from the state they start in; `goal_reached` is the gate's goal
test after the returned steps (reported for every planner; it is never shown to the LLM).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import CallLog, PlannerError, PlanningTask, PlanResult, Step, SubgoalBlock
from .gating import compile_for, describe_state, replay
from .parsing import Canonicalizer, parse_steps


class LLMPlanner:
    """Base of the LLM planners: backend, options, the current episode."""

    name = "LLMPlanner"
    gated = False  # whether returned plans are gate-checked (and may be certified)

    def __init__(self, llm: Any, *, seed: int | None = None, temperature: float | None = None,
                 memory: Any = None, top_k: int = 3, name: str | None = None, **options: Any):
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
        self.task: PlanningTask | None = None
        self.gate: Any = None
        self.canon: Canonicalizer | None = None
        self._gate_key: tuple | None = None

    # --------------------------------------------------------------------------------- episode
    def start(self, task: PlanningTask) -> None:
        if not isinstance(task, PlanningTask):
            raise PlannerError(f"{self.name}.plan() takes a PlanningTask, not "
                               f"{type(task).__name__}; build one with PlanningTask.from_task")
        self.task = task
        gate_key = (id(task.domain), id(task.problem))
        if self._gate_key != gate_key:
            self.gate = compile_for(task.domain, task.problem)
            self.canon = Canonicalizer(task.domain, task.problem)
            self._gate_key = gate_key

    def require_task(self) -> PlanningTask:
        if self.task is None:
            raise PlannerError(f"{self.name}.repair() was called before plan(): there is no "
                               "episode to repair")
        return self.task

    def log(self) -> CallLog:
        return CallLog(self.llm)

    def temperature(self, default: float) -> float:
        return default if self.temperature_override is None else self.temperature_override

    def ask(self, log: CallLog, messages, *, role: str, schema: Any = None,
            temperature: float = 0.2) -> str | None:
        return log.complete(messages, role=role, schema=schema,
                            temperature=self.temperature(temperature), seed=self.seed)

    # ------------------------------------------------------------------------------- helpers
    def state_text(self, state: frozenset) -> str:
        return describe_state(self.gate, self.task.domain, state)

    def parse(self, text: str | None) -> list[Step]:
        return self.canon.steps(parse_steps(text)) if text else []

    def canonical(self, steps: Sequence[Mapping[str, Any]] | None) -> list[Step]:
        return self.canon.steps(steps or [])

    def state_at(self, state: frozenset | None, done: Sequence[Step], log: CallLog) -> frozenset:
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
        return self.memory.retrieve(query, self.top_k if k is None else k, exclude=self.task)

    def finish(self, log: CallLog, steps: Sequence[Step], start: frozenset, *,
               blocks: Sequence[SubgoalBlock] = (), certified: bool | None = None
               ) -> PlanResult:
        verdict = self.gate.check([dict(s) for s in steps], state=start, mode="all")
        goal = self.gate.goal_holds(verdict.final_state)
        if certified is None:
            certified = self.gated
        certified = bool(certified and verdict.valid)
        return log.result(steps, planner=self.name, blocks=blocks, certified=certified,
                          goal_reached=goal)

    def record_episode(self, steps: Sequence[Mapping[str, Any]], success: bool = True) -> Any:
        """Add the current task's successful plan to the live memory (if there is one)."""
        if self.memory is None or self.task is None:
            return None
        return self.memory.add_episode(self.task, steps, success)
