"""ReAct: think, act one step, observe the result, repeat.

Each turn is one call that returns a thought and either the next step or `done`. The step is then
executed and its result becomes the next observation, so the model always sees fresh
observations (the reference kept showing the initial one):
- with an `env` (any object with `step(step) -> StepResult(success, message, observation)`,
  already reset to the task's problem), the step runs in the environment and the observation is
  the environment's text and message;
- without one, the step runs against the gate's symbolic state: an applicable step is applied, a
  rejected one is reported with the gate's typed reason and changes nothing.
The loop stops when the model says done, when an answer holds no step (noted), or after
`max_steps` turns (default 15). Calls: one per turn. Returned steps are the ones that succeeded;
rejected attempts are listed in the notes. With an env the steps have already been executed
(noted as "executed in env").

Repair: the loop continues from the executed steps, the failed step and its reason, and returns
only the new steps.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sage_pddl.gate import Violation
from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.plans import step_from_json
from sage_pddl.pddl.vocabulary import step_text

from .base import CallLog, PlannerError, PlanningTask, PlanResult, Step
from .gating import feasible
from .parsing import parse_json_value, parse_steps, steps_in, words_step
from .prompts import react_messages
from .schema import react_schema
from .session import LLMPlanner

_DONE = re.compile(r"\bdone\b", re.IGNORECASE)
_ACTION = re.compile(r"Action:\s*([A-Za-z][\w\-]*)((?:\s*\|\s*[\w\-]*)*)")


def read_turn(text: str | None) -> tuple[bool, Step | None]:
    """(done, step) from one ReAct answer."""
    if not text:
        return False, None
    value = parse_json_value(text)
    if isinstance(value, Mapping):
        step = value.get("step")
        steps = parse_steps(json.dumps(step)) if isinstance(step, Mapping) else []
        if not steps and "action" in value:
            steps = steps_in(text, value)
        if steps and steps[0]["action"]:
            return False, steps[0]
        return bool(value.get("done")), None
    match = _ACTION.search(text)
    if match:
        words = [w.strip() for w in match.group(2).split("|")[1:] if w.strip()]
        return False, words_step(match.group(1), words)
    return bool(_DONE.search(text)), None


class ReActPlanner(LLMPlanner):
    name = "ReAct"

    def __init__(self, llm: LLMBackend, *, env: Any = None, max_steps: int = 15, **options: Any):
        super().__init__(llm, **options)
        if max_steps < 1:
            raise PlannerError(f"max_steps must be >= 1, got {max_steps}")
        if env is not None and not callable(getattr(env, "step", None)):
            raise PlannerError("env must have a step(step) -> StepResult method")
        self.env = env
        self.max_steps = max_steps

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        first = self.state_text(start)
        if task.observation:
            first = f"{task.observation}\n{first}"
        steps = self._loop(log, start, [], first, self.max_steps)
        return self.finish(log, steps, start)

    def _execute(self, state: frozenset, step: Step) -> tuple[bool, str, frozenset, str]:
        """(success, message, new symbolic state, observation text)."""
        if self.env is not None:
            result = self.env.step(step_from_json(step))
            observation = getattr(result.observation, "text", str(result.observation))
            judged = feasible(self.gate, state, step)
            if result.success and judged.ground is not None and judged.applicable:
                # keep the symbolic view in step for the final report
                state = self.gate.apply(state, judged.ground)
            return bool(result.success), str(result.message), state, observation
        ground, violation = feasible(self.gate, state, step)
        if violation is None and ground is not None:
            state = self.gate.apply(state, ground)
            return True, "ok", state, self.state_text(state)
        message = violation.message if isinstance(violation, Violation) else str(violation)
        code = violation.code if isinstance(violation, Violation) else ""
        return False, f"failed [{code}] {message}" if code else f"failed: {message}", state, \
            self.state_text(state)

    def _loop(self, log: CallLog, state: frozenset, history: list[tuple[Step, str]],
              observation: str, budget: int) -> list[Step]:
        new_steps: list[Step] = []
        for _ in range(budget):
            text = self.ask(log, react_messages(self.task, history, observation), role="act",
                            schema=react_schema(self.task.domain, self.task.problem))
            done, step = read_turn(text)
            if done:
                log.note("the model declared the task done")
                break
            if step is None:
                log.note("an answer held no step; stopping")
                break
            step = self.canonical([step])[0]
            success, message, state, observation = self._execute(state, step)
            history.append((step, message if not success else "ok"))
            if success:
                new_steps.append(step)
            else:
                log.note(f"attempt {step_text(step)!r} failed: {message}")
        else:
            log.note(f"stopped after {budget} turns")
        if self.env is not None:
            log.note("executed in env")
        return new_steps

    def repair(self, state: frozenset | None, done: Sequence[Mapping[str, Any]],
               failed_step: Mapping[str, Any] | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        history = [(s, "ok") for s in point.done]
        if point.failed is not None:
            history.append((point.failed, f"failed: {reason}"))
        observation = f"The last step failed: {reason}\n{self.state_text(point.state)}"
        budget = max(1, self.max_steps - len(point.done))
        steps = self._loop(point.log, point.state, history, observation, budget)
        return self.finish(point.log, steps, point.state)
