"""The runtime loop: plan a task, execute it step by step in an environment, repair on failure.

`run_episode(task, planner, env, ...)` is the one place where a planner's plan meets an executor.
Its accounting is honest by construction:

- **Success is the PDDL goal** checked against the environment's *true* state at the end
  (`env.goal_reached()`), never "some step succeeded".
- **Blocked steps stay in the denominator.** With `gate_before_execute`, every step is gated
  against the state the planner believes in (the gate's replay of the executed steps) before it is
  dispatched; a step the gate rejects is *blocked*: it is not sent, it is counted, and the
  planner's `repair` is asked for a new continuation. `step_success` divides the executed steps by
  every step the loop attempted (dispatched + blocked + injected); `dispatch_success` is the
  executor's view (executed / dispatched). Reports show both.
- **Recovery counts only when the goal holds.** With `inject_failure`, the step at that 0-based
  index (0: the first step) is not sent: it fails with a synthetic reason, exactly as a simulator
  failure would, and the planner repairs. An environment with a transition log (the symbolic
  world, AI2-THOR's backend) logs the attempt with code `injected-failure`. `recovered` is True
  only if the goal holds at the end.

Repairs are bounded by `max_replan`; when they are spent, the episode stops at the next failure.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .env.base import Environment, numbered
from .env.episode import GatedEnv
from .gate import PlanChecker, Verdict, compile_gate
from .gate.ground import Atoms
from .pddl.errors import SageError
from .pddl.model import PlanStep

INJECTED_REASON = "injected failure: the step could not be executed"


@dataclass(frozen=True)
class StepRecord:
    """One attempted step: `status` is executed | failed | blocked | injected."""

    index: int
    step: PlanStep
    status: str
    message: str = ""
    code: str | None = None


@dataclass(frozen=True)
class EpisodeReport:
    task_id: str | None
    planner: str
    env: str
    success: bool | None
    """The PDDL goal against the environment's true state at the end (None: no goal)."""
    records: tuple[StepRecord, ...]
    repairs: int
    planning_calls: int
    repair_calls: int
    prompt_tokens: int
    output_tokens: int
    planning_seconds: float
    repair_seconds: float
    seconds: float
    injected_at: int | None = None
    recovered: bool | None = None
    certified: bool = False
    notes: tuple[str, ...] = field(default=())

    def count(self, status: str) -> int:
        return sum(1 for r in self.records if r.status == status)

    @property
    def executed(self) -> int:
        return self.count("executed")

    @property
    def executed_steps(self) -> list[PlanStep]:
        """The executed steps (what a live memory keeps)."""
        return [r.step for r in self.records if r.status == "executed"]

    @property
    def blocked(self) -> int:
        return self.count("blocked")

    @property
    def attempted(self) -> int:
        return len(self.records)

    @property
    def dispatched(self) -> int:
        return self.count("executed") + self.count("failed")

    @property
    def step_success(self) -> float:
        """Executed / attempted, where attempted includes blocked and injected steps."""
        return self.executed / self.attempted if self.attempted else 0.0

    @property
    def dispatch_success(self) -> float:
        """Executed / dispatched: the executor's view, which leaves blocked steps out."""
        return self.executed / self.dispatched if self.dispatched else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(executed=self.executed, blocked=self.blocked, attempted=self.attempted,
                    dispatched=self.dispatched, step_success=round(self.step_success, 6),
                    dispatch_success=round(self.dispatch_success, 6))
        return data


def injection_index(option: int | str | None, plan_length: int,
                    fail_injection: Mapping[str, Any] | None = None) -> int | None:
    """Where to inject a failure: an explicit step index, or `auto` = the task's own
    `fail_injection.at_step` when it has one, else the middle of the plan (at least 1)."""
    if option is None:
        return None
    if option == "auto":
        at = (fail_injection or {}).get("at_step")
        return int(at) if at is not None else max(1, plan_length // 2)
    try:
        index = int(option)
    except (TypeError, ValueError):
        raise SageError(f"--inject-failure: expected a step index or 'auto', got {option!r}") from None
    if index < 0:
        raise SageError(f"--inject-failure: the step index must be >= 0, got {index}")
    return index


def run_episode(task: Any, planner: Any, env: Environment, *, max_replan: int = 3,
                gate_before_execute: bool = False, inject_failure: int | str | None = None,
                fail_injection: Mapping[str, Any] | None = None, max_steps: int = 200,
                reset_options: Mapping[str, Any] | None = None,
                on_event: Callable[[str, Any], None] | None = None) -> EpisodeReport:
    """Plan `task` (a `PlanningTask`) with `planner`, execute it in `env`, repair on failures.

    `reset_options` go to `env.reset` (e.g. the symbolic world's `faults` or `hidden` facts),
    with the task's `scene` unless they name one (AI2-THOR loads it; other worlds ignore it).
    The task's gate (`PlanningTask.gate`, else one compiled here) is the one the episode checks
    steps with, and a `GatedEnv`'s too.

    `on_event(kind, payload)` is called for "plan", "step", "blocked", "repair" events, so a CLI
    can show progress; it must not change anything.
    """
    emit = on_event or (lambda kind, payload: None)
    began = time.perf_counter()
    gate: PlanChecker | None = getattr(task, "gate", None)
    if gate is None:
        gate = compile_gate(task.domain, task.problem)
    options = dict(reset_options or {})
    if getattr(task, "scene", ""):
        options.setdefault("scene", task.scene)
    if isinstance(env, GatedEnv):  # a world that reads steps through the gate shares it
        options.setdefault("gate", gate)
    env.reset(task.problem, domain=task.domain, **options)

    result = planner.plan(task)
    emit("plan", result)
    planning = result
    repair_results: list[Any] = []
    remaining: list[PlanStep] = list(result.steps)
    injected_at = injection_index(inject_failure, len(remaining), fail_injection)
    injected = False

    believed = gate.initial_state
    done: list[PlanStep] = []
    records: list[StepRecord] = []
    notes: list[str] = list(getattr(result, "notes", ()))

    def repair(step: PlanStep, reason: str) -> bool:
        """Ask the planner for a new continuation; False when no repair is left."""
        nonlocal remaining
        if len(repair_results) >= max_replan:
            notes.append(f"repair budget ({max_replan}) spent; stopping at: {reason}")
            return False
        fixed = planner.repair(believed, list(done), step, reason)
        repair_results.append(fixed)
        emit("repair", fixed)
        remaining = list(fixed.steps)
        return True

    while remaining and len(records) < max_steps:
        index = len(records)
        step = numbered(remaining.pop(0), index)
        if injected_at is not None and not injected and len(done) >= injected_at:
            injected = True
            records.append(StepRecord(index, step, "injected", INJECTED_REASON, "injected-failure"))
            if isinstance(env, GatedEnv):  # its transition log shows the attempt too
                env.refuse(step, INJECTED_REASON, "injected-failure")
            emit("step", records[-1])
            if not repair(step, INJECTED_REASON):
                break
            continue
        gated = None
        if gate_before_execute:
            gated = _gate_step(gate, believed, step)
            if gated.violations:
                violation = gated.violations[0]
                records.append(StepRecord(index, step, "blocked", violation.message, violation.code))
                emit("blocked", records[-1])
                if not repair(step, f"[gate] {violation.message}"):
                    break
                continue
        outcome = env.step(step)
        if outcome.success:
            records.append(StepRecord(index, step, "executed", outcome.message))
            done.append(step)
            believed = _advance(gate, believed, step, gated)
            emit("step", records[-1])
            continue
        records.append(StepRecord(index, step, "failed", outcome.message, outcome.code))
        emit("step", records[-1])
        if not repair(step, outcome.message):
            break
    if remaining and len(records) >= max_steps:
        notes.append(f"stopped after max_steps={max_steps} attempted steps")

    success = env.goal_reached()
    repair_calls = sum(r.calls for r in repair_results)
    return EpisodeReport(
        task_id=getattr(task, "task_id", None), planner=getattr(planner, "name", "?"),
        env=getattr(env, "name", "?"), success=success, records=tuple(records),
        repairs=len(repair_results), planning_calls=planning.calls, repair_calls=repair_calls,
        prompt_tokens=planning.prompt_tokens + sum(r.prompt_tokens for r in repair_results),
        output_tokens=planning.output_tokens + sum(r.output_tokens for r in repair_results),
        planning_seconds=planning.seconds, repair_seconds=sum(r.seconds for r in repair_results),
        seconds=time.perf_counter() - began,
        injected_at=injected_at if injected else None,
        recovered=(bool(success) if injected else None),
        certified=bool(getattr(planning, "certified", False)), notes=tuple(notes))


def _gate_step(gate: PlanChecker, state: Atoms, step: PlanStep) -> Verdict:
    """The gate's verdict on `step` alone in the believed `state`."""
    return gate.check([step], state=state)


def _advance(gate: PlanChecker, state: Atoms, step: PlanStep, gated: Verdict | None) -> Atoms:
    """The believed state after an executed step: the gate's effects when the gate accepts the
    step from the believed state; otherwise the belief is stale and stays (the environment
    succeeded for reasons the planner cannot see; later gating re-checks from there).
    `gated`: the step's verdict in `state` when it was gated before it was dispatched (the
    step is then not checked again)."""
    verdict = gated if gated is not None else _gate_step(gate, state, step)
    return state if verdict.violations else verdict.final_state
