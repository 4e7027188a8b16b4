"""An episode's trace: what happened in one benchmark cell, in order, for a person to read.

A results row keeps numbers; a trace keeps the story behind them. The runner records one per
cell (`Recorder`) and writes it beside the results as `RUN/episodes/<name>.json`
(`episode_name`), when the cell's row is appended. It is a JSON object:

* `key`: the row's key (model, planner, task_id, seed, mode); `task`: the instruction, the
  goal (PDDL and plain words) and the goal's note, the task set, difficulty and room;
* `events`, in the order they happened:
  - `call`: one LLM call: its role, the messages sent and the answer (each text cut at
    `MAX_TEXT` characters, saying so), tokens, seconds, the error of a failed call, and for a
    refine call the gate's feedback it carried (`feedback`);
  - `plan`: what `plan` (phase "plan") or `repair` (phase "repair") returned: the steps, and
    per sub-goal block its steps, origin, whether the gate certified it, the attempts the gate
    rejected before (each with its violations) and the violations left;
  - `verdict`: the gate's check of the planned steps from the initial state (plan mode: the
    check every plan metric comes from), with each violation;
  - `step`: one attempted step (exec mode): executed, failed (with the world's answer),
    blocked by the gate, or an injected failure;
* `end`: each top-level goal conjunct with whether it holds at the end (plan mode: after the
  accepted prefix, as `gate_goal_conditions` counts; exec mode: in the world's true state), and the
  two views of success: the gate's (every step accepted and the goal reached) and the world's
  (plan mode: the plan run open-loop with a refused step a no-op, as a simulator runs it; exec
  mode: the environment's goal test).

Traces are bounded: at most `MAX_CALLS` calls are kept whole (later ones keep their role and
numbers), each text at most `MAX_TEXT` characters. They are a view, never an input: no metric
reads them.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sage_pddl.gate import PlanChecker, Verdict, Violation
from sage_pddl.gate.ground import Atoms
from sage_pddl.pddl.files import write_text_atomic
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plain import words
from sage_pddl.pddl.vocabulary import step_text
from sage_pddl.pddl.writer import write_formula
from sage_pddl.planners.base import PlanningTask, PlanResult
from sage_pddl.planners.prompts import sent_feedback
from sage_pddl.runtime import StepRecord
from sage_pddl.tasks import Task, bundled_goals

EPISODES_DIR = "episodes"
TRACE_VERSION = 1
MAX_TEXT = 12_000
"""Characters kept of one message or answer."""
MAX_CALLS = 80
"""Calls kept whole in one trace (SAGE with five sub-goals and three repairs stays well under)."""
MAX_VIOLATIONS = 40
"""Violations kept of one verdict."""


def episode_name(key: Mapping[str, Any]) -> str:
    """The trace file's name for a row key: readable words, then a hash of the whole key, so
    two keys that read alike (`a/b` and `a_b`) never share a file."""
    parts = [str(key.get(k)) for k in ("model", "planner", "task_id", "seed", "mode")]
    readable = re.sub(r"[^A-Za-z0-9.+-]+", "_", "-".join(parts[1:4]))[:60].strip("_")
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:10]
    return f"{readable}-{digest}"


def is_episode_name(text: object) -> bool:
    """Whether `text` can name a trace file: the characters `episode_name` writes, nothing that
    leaves the folder (a row is read from a file and is not trusted)."""
    return isinstance(text, str) and re.fullmatch(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,127}",
                                                  text) is not None


def _cut(text: Any, limit: int = MAX_TEXT) -> str:
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters not kept]"


def _violation(v: Violation) -> dict[str, Any]:
    return {"step": v.step, "step_text": v.step_text, "code": v.code,
            "literal": v.literal, "message": v.message}


def _violations(items: Sequence[Violation]) -> list[dict[str, Any]]:
    return [_violation(v) for v in list(items)[:MAX_VIOLATIONS]]


def _steps(steps: Sequence[PlanStep]) -> list[str]:
    return [step_text(s) for s in steps]


class Recorder:
    """Collects one cell's events as they happen (the runner's watch on the LLM backend calls
    `call`; the planner's results come through `plan`, the gate's score of a plan through
    `scored`, an episode's events through `on_event`), then makes the trace (`trace`)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._calls = 0
        self.final_state: Atoms | None = None
        """The state the goal is read in at the end (plan mode: set by `scored`; exec mode: the
        world's true state, set by the runner; None: not read)."""

    def call(self, role: str | None, messages: Sequence[Mapping[str, Any]], answer: Any = None,
             prompt_tokens: int = 0, output_tokens: int = 0, seconds: float = 0.0,
             error: str = "") -> None:
        self._calls += 1
        event: dict[str, Any] = {"kind": "call", "role": role or "", "n": self._calls,
                                 "prompt_tokens": int(prompt_tokens or 0),
                                 "output_tokens": int(output_tokens or 0),
                                 "seconds": round(float(seconds or 0.0), 4), "error": error}
        if self._calls <= MAX_CALLS:
            event["messages"] = [{"role": str(m.get("role", "")),
                                  "content": _cut(m.get("content", ""))} for m in messages]
            event["answer"] = _cut(answer)
            feedback = sent_feedback(str(messages[-1].get("content", ""))) if messages else None
            if feedback is not None:
                event["feedback"] = _cut(feedback)
        else:
            event["omitted"] = f"texts not kept after the first {MAX_CALLS} calls"
        self.events.append(event)

    def plan(self, result: PlanResult, phase: str) -> None:
        blocks = []
        for block in getattr(result, "blocks", ()) or ():
            blocks.append({
                "subgoal": str(block.subgoal), "origin": block.origin,
                "certified": bool(block.certified), "refines": int(block.refines),
                "steps": _steps(block.steps),
                "rejected": [{"steps": _steps(steps), "violations": _violations(found)}
                             for steps, found in block.rejected],
                "violations": _violations(block.violations)})
        self.events.append({
            "kind": "plan", "phase": phase, "steps": _steps(result.steps),
            "certified": bool(result.certified), "blocks": blocks,
            "notes": [_cut(n, 600) for n in list(result.notes)[:30]],
            "limits_hit": list(result.limits_hit)})

    def scored(self, steps: Sequence[PlanStep], verdict: Verdict, final_state: Atoms
               ) -> None:
        """Plan mode: record the gate's check of the planned steps from the initial state in
        mode "all" (`verdict`, the check the plan metrics read) as a verdict event, and the state
        the goal is read in at the end: `final_state`, after the accepted prefix (as
        `gate_goal_conditions` counts it). The world's view of success is the row's
        (`sim_goal_success`; exec mode: `task_success`)."""
        self.events.append({"kind": "verdict", "valid": bool(verdict.valid),
                            "steps": _steps(steps), "goal_reached": verdict.goal_reached,
                            "violations": _violations(verdict.violations),
                            "more_violations": max(0, len(verdict.violations) - MAX_VIOLATIONS)})
        self.final_state = final_state

    def step(self, record: StepRecord) -> None:
        self.events.append({"kind": "step", "index": record.index, "step": step_text(record.step),
                            "status": record.status, "message": _cut(record.message, 2000),
                            "code": record.code})

    def on_event(self, kind: str, payload: Any) -> None:
        """`run_episode`'s event callback."""
        if kind == "plan":
            self.plan(payload, "plan")
        elif kind == "repair":
            self.plan(payload, "repair")
        elif kind in ("step", "blocked"):
            self.step(payload)

    def trace(self, row: Mapping[str, Any], task: Task, planning: PlanningTask, gate: PlanChecker
              ) -> dict[str, Any]:
        """The whole trace (see the module docstring)."""
        final_state = self.final_state
        # the world's view of success, as the row scored it (plan mode: the simulator's view)
        world_success = row.get("task_success" if row.get("mode") == "exec"
                                else "sim_goal_success")
        problem = planning.problem
        goal = getattr(problem, "goal", None)
        spec = bundled_goals(str(getattr(task, "source", "") or "")).get(
            str(task.task_id).lower())
        end: dict[str, Any] = {"goal": [], "gate_success": row.get("gate_goal_success"),
                               "world_success": world_success}
        if final_state is not None and goal is not None:
            end["goal"] = [{"text": words(formula), "pddl": write_formula(formula),
                            "met": bool(holds)}
                           for formula, holds in gate.goal_report(final_state)]
        return {
            "version": TRACE_VERSION,
            "key": {k: row.get(k) for k in ("model", "planner", "task_id", "seed", "mode")},
            "task": {"instruction": str(task.instruction),
                     "goal": write_formula(goal) if goal is not None else "",
                     "goal_words": words(goal) if goal is not None else "",
                     "goal_note": spec.note if spec is not None else "",
                     "taskset": row.get("taskset", ""), "domain": row.get("domain", ""),
                     "difficulty": row.get("difficulty", ""), "room": row.get("room", ""),
                     "scene": str(getattr(task, "scene", "") or "")},
            "events": self.events,
            "end": end,
        }


def write_episode(run_dir: Path, name: str, trace: Mapping[str, Any]) -> Path:
    """Write one trace to `run_dir/episodes/<name>.json` (atomically: a reader never sees half)."""
    folder = run_dir / EPISODES_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.json"
    write_text_atomic(path, json.dumps(trace, ensure_ascii=False, default=str) + "\n")
    return path


def read_episode(run_dir: Path, name: str) -> dict[str, Any] | None:
    """A trace written by `write_episode`, or None when it is missing or unreadable."""
    if not is_episode_name(name):
        return None
    path = run_dir / EPISODES_DIR / f"{name}.json"
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None
