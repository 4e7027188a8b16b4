"""LLM+P: the LLM writes only the PDDL goal; a classical planner finds the actions.

Plan: one call translates the instruction into a goal formula over the loaded domain's
predicates and the problem's objects (`{"goal": "<PDDL>"}`). The goal is parsed with our PDDL
parser and checked against the domain and problem (unknown predicates or objects, wrong arity);
on an error the model is asked once more with the error (`goal_retries`, default 1). The problem
with that goal (and, for a repair, the current state as :init) is solved by a classical planner
through `sage_pddl.export.classical` (unified-planning; `engine` "fast-downward", "pyperplan", or
by default the first usable one that supports the problem). The solver's plan is mapped back to
steps in the form the domain's prompts show (its vocabulary) and gated; a gate-valid plan is
certified.

Fallback (noted with its reason): when no usable goal is written, unified-planning is missing, or
the solver finds no plan, one Direct-style call writes the plan instead.
Calls: 1 (+1 retry) (+1 fallback). Repair: the same translation with the executed steps and the
failure as context, solved from the state at the failure.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sage_pddl.export.classical import solve
from sage_pddl.llm import LLMBackend
from sage_pddl.pddl import check_problem, parse_problem, write_problem
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import And, Atom, Constant, Formula, PlanStep, Problem
from sage_pddl.pddl.plans import step_from_json
from sage_pddl.pddl.vocabulary import vocabulary

from .base import CallLog, PlannerError, PlanningTask, PlanResult
from .parsing import parse_json_value
from .prompts import llmp_messages
from .schema import goal_schema
from .session import LLMPlanner


class GoalError(SageError):
    """The goal the LLM wrote cannot be used with the domain and problem."""


def read_goal_text(text: str | None) -> str:
    value = parse_json_value(text)
    if isinstance(value, Mapping) and isinstance(value.get("goal"), str):
        return value["goal"].strip()
    raw = re.sub(r"```[A-Za-z]*", "", text or "")
    match = re.search(r"\(:goal\s", raw, re.IGNORECASE)
    start = match.end() if match else raw.find("(")
    if start < 0:
        return ""
    depth, begin = 0, None
    for index in range(start, len(raw)):
        char = raw[index]
        if char == "(":
            depth += 1
            begin = index if begin is None else begin
        elif char == ")":
            depth -= 1
            if depth == 0 and begin is not None:
                return raw[begin:index + 1]
    return ""


def parse_goal(goal_text: str, task: PlanningTask) -> Formula:
    """The goal formula; `GoalError` naming the problem when it does not fit the domain."""
    if not goal_text:
        raise GoalError("no goal formula found in the answer")
    wrapper = (f"(define (problem llmp-goal) (:domain {task.domain.name}) "
               f"(:init) (:goal {goal_text}))")
    try:
        parsed = parse_problem(wrapper)
    except SageError as error:
        raise GoalError(f"the goal is not PDDL: {error}") from None
    candidate = dataclasses.replace(task.problem, goal=parsed.goal)
    errors = [d for d in check_problem(candidate, task.domain) if d.severity == "error"]
    if errors:
        raise GoalError("; ".join(d.message for d in errors[:5]))
    return parsed.goal


class LLMPPlanner(LLMPlanner):
    name = "LLM+P"
    gated = True

    def __init__(self, llm: LLMBackend, *, engine: str | None = None, goal_retries: int = 1,
                 solve_timeout: float = 20.0, **options: Any):
        super().__init__(llm, **options)
        if goal_retries < 0:
            raise PlannerError(f"goal_retries must be >= 0, got {goal_retries}")
        self.engine = engine
        self.goal_retries = goal_retries
        self.solve_timeout = solve_timeout

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        steps = self._translate_and_solve(log, start, "")
        if steps is None:
            steps = self.direct_plan(log, start)
        return self.finish(log, steps, start)

    def _translate_and_solve(self, log: CallLog, state: frozenset, context: str
                             ) -> list[PlanStep] | None:
        task = self.task
        problem = self._problem_at(state)
        problem_text = write_problem(dataclasses.replace(problem, goal=_empty_goal()))
        previous = error = ""
        goal = None
        for _ in range(1 + self.goal_retries):
            text = self.ask(log, llmp_messages(task, problem_text, context, previous, error),
                            role="goal", schema=goal_schema(), temperature=0.0)
            previous = read_goal_text(text)
            try:
                goal = parse_goal(previous, task)
                break
            except GoalError as failure:
                error = str(failure)
                log.note(f"goal rejected: {error}")
        if goal is None:
            log.note("fallback: no usable goal; a direct call writes the plan")
            return None
        log.note(f"goal: {previous}")
        try:
            steps = self.solve(dataclasses.replace(problem, goal=goal))
        except SageError as failure:
            log.note(f"fallback: {failure}")
            return None
        return steps

    def _problem_at(self, state: frozenset) -> Problem:
        """The task's problem with `state` as its :init (numeric values kept)."""
        names = self.gate.objects
        atoms = tuple(Atom(fact[0], tuple(Constant(names.get(a, a)) for a in fact[1:]))
                      for fact in sorted(state))
        others = tuple(i for i in self.task.problem.init if not isinstance(i, Atom)
                       and type(i).__name__ != "Not")
        return dataclasses.replace(self.task.problem, init=atoms + others)

    def solve(self, problem: Problem) -> list[PlanStep]:
        """A plan for `problem` from a classical planner (`export.classical`, the same
        unified-planning setup as `sage-pddl solve`), as steps; SageError otherwise."""
        plan = solve(self.task.domain, problem, planner=self.engine or "auto",
                     timeout=self.solve_timeout)
        return [step_from_json(step) for step in vocabulary(self.task.domain).written_plan(plan)]

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        point = self.begin_repair(state, done, failed_step, reason)
        steps = self._translate_and_solve(point.log, point.state, self.replan_context(point))
        if steps is None:
            steps = self.parse(self.replan(point, role="direct"))
        return self.finish(point.log, steps, point.state)


def _empty_goal() -> Formula:
    return And(())
