"""One cell of the grid: (model, planner, task, seed) -> one results row.

`run_cell` turns the task into its planning task and takes the compiled gate of its problem from
the run's context (`context.py`, one per task, shared with the task's other cells), the gate the
cell's planner, runtime and world then share.
Mode `plan` runs `planner.plan(task)` and scores the steps with that gate (`metrics.py`: one
check, read by the plan metrics and the episode trace); mode `exec` runs
`sage_pddl.runtime.run_episode` in an environment (optionally gating every step before dispatch
and/or injecting a failure) and adds the execution metrics. VirtualHome plans also get EAI's own
verdict (`eai.py`), BEHAVIOR plans and episodes BDDL's goal test (`behavior_goal.py`).

A cell never raises for an error of the LLM, the planner or the environment: an LLM
infrastructure failure (server unreachable, timeout, missing model, 5xx, exhausted script; not a
model's unusable answer, which is a planning failure scored as such), a planner or environment
error, or an unexpected exception becomes a row with `error` and `error_kind` set (`stage`: where
it happened). `LLMWatch` tells the two kinds of LLM failure apart and records every call for the
cell's episode trace (`trace.py`), which the row carries to the writer in `TRACE_FIELD`.
"""
from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sage_pddl.env import EnvError, get_env
from sage_pddl.env.base import numbered
from sage_pddl.env.episode import GatedEnv
from sage_pddl.gate import PlanChecker
from sage_pddl.gate.ground import Atoms
from sage_pddl.llm import Completion, InvalidOutput, LLMBackend, LLMError, Messages, PromptTooLong
from sage_pddl.llm.output import Schema
from sage_pddl.llm.scripted import ScriptExhausted
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import written_json
from sage_pddl.pddl.vocabulary import step_text
from sage_pddl.planners import get_planner, uses_memory
from sage_pddl.planners.base import Planner, PlanningTask, PlanResult
from sage_pddl.runtime import run_episode
from sage_pddl.tasks import Task
from sage_pddl.tasks.placement import task_placement

from . import metrics
from .behavior_goal import bddl_available, bddl_goal
from .context import RunContext
from .eai import score_plan
from .executors import Row
from .trace import Recorder

TRACE_FIELD = "_trace"
"""The field a row carries its episode's trace in from the cell to the writer (never written)."""


class LLMWatch:
    """Wraps an LLM backend for ONE cell and remembers the infrastructure errors raised through
    it and the hosts that answered.

    Planners swallow failed calls (they count them and treat them as unusable answers), so the
    runner watches the backend itself to tell "the model answered badly" (a planning failure,
    scored; so is a prompt too long for the context window, a limit of the planner with this
    model) from "the LLM could not be asked" (an error row, excluded). A watch per cell keeps
    cells that run at once from seeing each other's errors."""

    def __init__(self, inner: LLMBackend):
        self.inner = inner
        self.errors: list[BaseException] = []
        self.hosts: set[str] = set()
        self.recorder = Recorder()

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "?")

    @property
    def model(self) -> str:
        return getattr(self.inner, "model", "")

    def complete(self, messages: Messages, schema: Schema = None, temperature: float = 0.2,
                 seed: int | None = None, role: str | None = None) -> Completion:
        began = time.perf_counter()
        try:
            completion = self.inner.complete(messages, schema=schema, temperature=temperature,
                                             seed=seed, role=role)
        except LLMError as error:
            if not isinstance(error, (InvalidOutput, PromptTooLong)):
                self.errors.append(error)
            self.recorder.call(role, messages, seconds=time.perf_counter() - began,
                               error=f"{type(error).__name__}: {error}")
            raise
        self.recorder.call(role, messages, completion.text, completion.prompt_tokens,
                           completion.output_tokens, completion.seconds)
        host = getattr(completion, "host", "") or getattr(self.inner, "host", "")
        if host:
            self.hosts.add(str(host))
        return completion


def run_cell(context: RunContext, llm: LLMWatch, model: str, planner_name: str, task: Task,
             seed: int) -> Row:
    """One results row: plan (and execute) `task` once; never raises for an error of the LLM,
    the planner or the environment (those become error rows; for a task its scene cannot do, a
    scripted backend with no answer is the planner's answer, and the row is a normal one,
    marked infeasible like every row of the task). `placement` is the setting of the task's problem
    (tasks/placement.py), None for a task that is a PDDL problem of its own."""
    config = context.config
    row: Row = {
        "run_id": config.run_id, "model": model, "planner": planner_name,
        "task_id": task.task_id, "seed": seed, "mode": config.mode,
        "taskset": task.source, "domain": config.domain or task.domain,
        "difficulty": task.difficulty, "room": task.room, "llm": config.llm,
        "error": None, "error_kind": None, "infeasible": None,
        "placement": task_placement(task) if task.problem is None else None,
    }
    began = time.perf_counter()
    stage = "setup"
    recorder = llm.recorder
    planning: PlanningTask | None = None
    gate: PlanChecker | None = None
    try:
        row["infeasible"] = context.infeasible(task) or None
        gate = context.gate(task)
        planning = replace(context.planning_task(task), gate=gate)
        planner = _build_planner(context, llm, planner_name, task, seed)
        stage = "planner"
        if config.mode == "plan":
            result = planner.plan(planning)
            recorder.plan(result, "plan")
            checked = metrics.check_plan(gate, result.steps)
            row.update(_plan_part(result, gate, task, checked))
            recorder.scored(result.steps, checked.run, _prefix_state(checked))
            solved_steps = list(result.steps)
            if task.source == "virtualhome":
                stage = "eai-scorer"
                row.update(_eai_part(task.task_id, solved_steps))
            elif task.source == "behavior":
                stage = "bddl-goal"
                row.update(_bddl_part(task, gate, solved_steps))
        else:
            stage = "exec"
            part, solved_steps = _exec_part(context, planner, planning, gate, task, recorder)
            row.update(part)
            if task.source == "behavior":
                stage = "bddl-goal"
                row.update(_bddl_part(task, gate, solved_steps))
        if config.memory == "live" and uses_memory(planner_name):
            # a plan joins the memory when the gate certifies it (every step accepted, goal
            # reached), an episode when its goal holds in the world
            reached = row.get("gate_goal_success" if config.mode == "plan"
                              else "task_success")
            if reached == 1.0:
                context.memory(task).add_episode(planning, solved_steps)
    except KeyboardInterrupt:
        raise
    except SageError as error:
        kind = ("llm" if isinstance(error, LLMError) else "env"
                if isinstance(error, EnvError) else stage)
        row.update(error=f"{type(error).__name__}: {error}", error_kind=kind)
    except (Exception, SystemExit) as error:  # a bug below (a library calling sys.exit
        # included): keep the run going, keep the evidence
        row.update(error=f"{type(error).__name__}: {error}", error_kind="internal",
                   traceback=traceback.format_exc(limit=6))
    # a scripted backend with no answer for a task its scene cannot do has answered "no
    # plan": the planner's (empty) plan is scored, its notes say why, the row is no error
    answered = bool(row["infeasible"]) and "steps" in row and all(
        isinstance(e, ScriptExhausted) for e in llm.errors)
    if llm.errors and not row["error"] and not answered:
        first = llm.errors[0]
        row.update(error=f"{type(first).__name__}: {first}", error_kind="llm")
    row["llm_hosts"] = sorted(llm.hosts)
    if planning is not None and gate is not None:
        row[TRACE_FIELD] = recorder.trace(row, task, planning, gate)
    row["row_seconds"] = round(time.perf_counter() - began, 6)
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return row


def _prefix_state(checked: metrics.PlanCheck) -> Atoms:
    """The state after the plan's accepted prefix: the end of the check when nothing was
    refused, else where a check in mode "first" stops (read from the same check)."""
    return checked.run.stopped.final_state


def _eai_part(task_id: str, steps: list[PlanStep]) -> dict[str, Any]:
    """EAI's own verdict on a VirtualHome plan, beside our PDDL goal test: `eai_counted` is
    False when EAI skips the task (its gold program fails its own goals)."""
    verdict = score_plan(task_id, [numbered(step, index) for index, step in enumerate(steps)])
    return {"eai_counted": verdict.counted, "eai_executable": verdict.executable,
            "eai_success": verdict.success if verdict.counted else None,
            "eai_error": verdict.error_type}


def _bddl_part(task: Task, gate: PlanChecker, steps: list[PlanStep]) -> dict[str, Any]:
    """BEHAVIOR's own goal test (BDDL, the one iGibson's `check_success` runs) on the state the
    domain gives `steps` (a plan's executable prefix, or the steps an episode executed), beside
    our PDDL goal test (`behavior_goal`); empty (None) where bddl or future is not installed."""
    if not bddl_available():
        return {"bddl_success": None, "bddl_goal_conditions": None, "bddl_unstated": None}
    state = gate.check(steps).final_state
    objects = task.problem.objects if task.problem is not None else ()
    verdict = bddl_goal(task.task_id, state, [o.name for o in objects])
    return {"bddl_success": verdict.success, "bddl_goal_conditions": verdict.conditions,
            "bddl_unstated": verdict.unstated}


def _build_planner(context: RunContext, llm: LLMWatch, name: str, task: Task, seed: int
                   ) -> Planner:
    options: dict[str, Any] = {"seed": seed}
    if context.config.memory in ("loo", "live") and uses_memory(name):
        options["memory"] = context.memory(task)
    return get_planner(name, llm=llm, **options)


def _plan_part(result: PlanResult, gate: PlanChecker, task: Task,
               checked: metrics.PlanCheck | None = None) -> dict[str, Any]:
    steps = list(result.steps)
    part = {"steps": [written_json(step) for step in steps], "certified": bool(result.certified),
            "failed_calls": sum(1 for c in result.call_log if not c.ok),
            "notes": _notes(result.notes), "limits_hit": list(result.limits_hit)}
    part.update(metrics.plan_metrics(gate, steps, expected_objects=task.expected_objects,
                                     reference_length=len(task.reference_steps),
                                     checked=checked))
    part.update(metrics.cost_metrics(result.calls, result.prompt_tokens, result.output_tokens,
                                     result.seconds))
    return part


def _exec_part(context: RunContext, planner: Planner, planning: PlanningTask, gate: PlanChecker,
               task: Task, recorder: Recorder) -> tuple[dict[str, Any], list[PlanStep]]:
    """The exec-mode part of a row, and the steps the episode executed."""
    config = context.config
    first_plan: list[PlanResult] = []

    def on_event(kind: str, payload: Any) -> None:
        recorder.on_event(kind, payload)
        if kind == "plan" and not first_plan:
            first_plan.append(payload)

    env = get_env(config.env, **dict(config.env_options))
    conditions: float | None = None
    try:
        report = run_episode(planning, planner, env, max_replan=config.max_replan,
                             gate_before_execute=config.gate_before_execute,
                             inject_failure=config.inject_failure,
                             fail_injection=task.fail_injection, on_event=on_event)
        if isinstance(env, GatedEnv):  # its goal test is the PDDL goal on the true state
            met, total = env.goal_conditions()
            conditions = met / total if total else None
            recorder.final_state = env.true_state()
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()
    part: dict[str, Any] = {}
    if first_plan:
        part.update(_plan_part(first_plan[0], gate, task))
    part.update(metrics.exec_metrics(report))
    part["task_goal_conditions"] = conditions
    part.update(metrics.cost_metrics(report.planning_calls + report.repair_calls,
                                     report.prompt_tokens, report.output_tokens, report.seconds))
    part["trace"] = [{"status": r.status, "step": step_text(r.step), "code": r.code}
                     for r in report.records]
    part["notes"] = _notes(report.notes)  # the episode's notes include the first plan's
    return part, report.executed_steps


def _notes(notes: Iterable[str], limit: int = 20, width: int = 300) -> list[str]:
    out = [str(n)[:width] for n in notes]
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])
