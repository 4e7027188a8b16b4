"""A scripted stand-in for an LLM that answers every planner role from a known plan of the task.

`reference_responder(tasks, domain_for)` returns a `responder(messages, role)` for the `scripted`
backend (`sage_pddl.llm.scripted`). It is NOT a model: it exists so the benchmark harness, its
resumption and its report can be exercised offline and deterministically (`sage-pddl bench --llm
scripted`, the tests). Its numbers measure the task set's reference plans through each planner's
control flow, nothing more.

How it answers: the task is the one whose instruction follows the last `Task:` line of the
request (retrieved examples come earlier, so the last line is the task being planned). Its plan
is a plan that reaches the task's goal where one exists: the task's reference plan (rewritten to
the domain's canonical action names, cut into at most two parts) when the gate accepts it and
the goal holds after it; otherwise a classical plan: Fast Downward (or pyperplan) through
unified-planning, whose parts end where a conjunct of the goal first holds, each part's
sub-goal naming those conjuncts. A task without a reference plan (a PDDL problem file, say) gets
the classical plan too. Which plan answers a task is decided the first time the task is asked
about, or for all at once by `prepare()` (so a planner's timing never includes the classical
planner's), and kept; `source(task_id)` says which it is and why, `summary()` says it for every
task. A task its scene cannot do (marked infeasible, docs/goals.md) gets no classical planner:
it keeps its reference plan, or, without one, every call about it fails saying so. When no
classical plan can be had (the problem is unsolvable or too hard in
`classical_timeout` seconds, or the `planners` extra is missing) a task with a reference plan
keeps it (and `source` says its goal is not reached), and every call about a task without one
fails with the reason, which the planner records as a failed call; `prepare()` raises at once
when the `planners` extra the tasks without a reference need is missing.

* `decompose` -> the parts as sub-goals, each naming its steps; `expand`/`refine` -> the steps of
  the sub-goal named in the request ("Current sub-goal:" / "Sub-goal:").
* `repair` -> the failed step retried, then the rest of its sub-goal (or of the plan).
* `act` (ReAct) -> the next reference step after the steps so far, `done` at the end.
* `score` (SayCan) -> probability 1 for the candidate equal to the next reference step.
* `goal` (LLM+P) -> the problem's PDDL goal; `critique` -> "No problems found.".
* every other role -> `{"reasoning": ..., "steps": [...]}` with the whole reference plan.

`broken_tasks` lists task ids whose first answers leave out every `MoveTo`/`Find` step, the
mistake a small model makes, so gate-scored metrics have something to catch; answers to `refine`
and `repair` (which carry the checker's or the executor's feedback) are correct, like a model
that fixes its plan once told what is wrong.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sage_pddl.export.classical import require_unified_planning, solve
from sage_pddl.export.ipc import export_domain_text
from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.llm.scripted import ScriptExhausted
from sage_pddl.pddl import cache
from sage_pddl.pddl.errors import PlanSyntaxError, SageError
from sage_pddl.pddl.model import Domain, PlanStep, Problem
from sage_pddl.pddl.plans import step_from_json, written_json
from sage_pddl.pddl.vocabulary import step_text, vocabulary
from sage_pddl.pddl.writer import write_formula, write_problem
from sage_pddl.tasks import Task, reference_plan, task_infeasible, task_problem

NOT_A_MODEL = ("--llm scripted without --llm-script answers with the reference responder: a "
               "plan that reaches the task's goal (its reference plan, else a classical "
               "planner's), split into sub-goals. It exercises the planner, gate and executor, "
               "not a model.")
"""What the command line says each time the reference responder answers."""

NAVIGATION = frozenset({"moveto", "find"})
_TASK_LINE = re.compile(r"^Task: (.+)$", re.MULTILINE)
_SUBGOAL_LINE = re.compile(r"^(?:Current sub-goal|Sub-goal): (.+)$", re.MULTILINE)
_FAILED_LINE = re.compile(r"^Failed step: (.+)$|^The step '(.+)' failed", re.MULTILINE)
_HISTORY_LINE = re.compile(r"^\s+\d+\. .+$", re.MULTILINE)
_CANDIDATE_LINE = re.compile(r"^\s+(\d+): (.+)$", re.MULTILINE)


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


class ReferenceResponder:
    """`responder(messages, role)` answering from reference plans (see the module docstring)."""

    def __init__(self, tasks: Iterable[Task], domain_for: Callable[[Task], Domain],
                 broken_tasks: Collection[str] = (), classical_timeout: float = 60.0):
        self._domain_for = domain_for
        self._timeout = classical_timeout
        # each by task key: at most one entry per task given
        self._plans: dict[str, tuple[Task, list[PlanStep]]] = {}
        self._fixed: dict[str, list[PlanStep]] = {}
        self._unplanned: dict[str, Task] = {}
        self._no_plan: dict[str, str] = {}
        self._goal_parts: dict[str, list[tuple[str, list[PlanStep]]]] = {}
        self._unchecked: dict[str, tuple[Task, list[PlanStep]]] = {}
        self._sources: dict[str, str] = {}
        self._lock = threading.Lock()
        self._broken = {t.lower() for t in broken_tasks}
        for task in tasks:
            key = " ".join(str(task.instruction).split())
            if key in self._unchecked or key in self._unplanned:
                continue
            if not task.reference_steps:
                self._unplanned[key] = task
                continue
            try:
                steps = reference_plan(task.reference_steps, domain_for(task))
            except PlanSyntaxError:  # a reference that is no plan: planned as if it had none
                self._unplanned[key] = task
                continue
            self._unchecked[key] = (task, steps)

    def __call__(self, messages: Sequence[Mapping[str, str]], role: str | None) -> Any:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        task, steps = self._task_for(prompt)
        if role in ("refine", "repair"):
            return {"steps": _written(self._corrected(prompt, task, steps, role))}
        blocks = self._blocks(task, steps)
        if role == "decompose":
            return {"subgoals": [name for name, _ in blocks]}
        if role == "expand":
            return {"steps": _written(self._part_named(prompt, blocks, steps))}
        if role == "act":
            done = len(_HISTORY_LINE.findall(prompt.split("Steps so far:", 1)[-1]
                                             .split("Latest observation:", 1)[0]))
            if done >= len(steps):
                return {"thought": "the task is finished", "done": True}
            return {"thought": "next reference step", "done": False,
                    "step": written_json(steps[done])}
        if role == "score":
            return self._scores(prompt, steps)
        if role == "goal":
            return {"goal": self._goal(task)}
        if role == "critique":
            return "No problems found."
        return {"reasoning": "follow the reference plan", "steps": _written(steps)}

    # ----------------------------------------------------------------------------- helpers
    def _task_for(self, prompt: str) -> tuple[Task, list[PlanStep]]:
        found = _TASK_LINE.findall(prompt)
        for line in reversed(found):
            key = " ".join(line.split())
            hit = self._plans.get(key)
            if hit is None and (key in self._unplanned or key in self._unchecked):
                hit = self._chosen(key)
            if hit is not None:
                return hit

        raise ScriptExhausted("the reference responder knows no task in this request "
                              f"(Task lines: {found[-3:]})")

    def prepare(self, say: Callable[[str], None] | None = None) -> None:
        """Choose every task's plan now (a failure is kept and given to every call about the
        task), so no planner's timing pays for the classical planner. `say` is told before each
        classical plan is made (they take seconds). Raises `ClassicalPlannerError` naming the
        `planners` extra when tasks without a reference exist without it."""
        if self._unplanned:
            require_unified_planning()
        pending = list(self._unchecked) + list(self._unplanned)
        for key in pending:
            try:
                self._chosen(key, say)
            except ScriptExhausted:
                pass  # kept in _no_plan

    def source(self, task_id: str) -> str | None:
        """Which plan answers the task `task_id` and why (None until it was chosen)."""
        for key, (task, _) in self._plans.items():
            if task.task_id == task_id:
                return self._sources.get(key)
        return None

    def summary(self) -> list[str]:
        """One line per kind of answer: the tasks answered with their reference plan, with a
        classical plan and why, and those with none."""
        by_source: dict[str, list[str]] = {}
        for key, (task, _) in self._plans.items():
            by_source.setdefault(self._sources[key], []).append(task.task_id)
        lines = [f"{_some(ids)} answered with {why}" for why, ids in by_source.items()]
        lines += [reason for reason in self._no_plan.values()]
        return lines

    def _chosen(self, key: str, say: Callable[[str], None] | None = None
                ) -> tuple[Task, list[PlanStep]]:
        """The task's plan, chosen once (see the module docstring)."""
        with self._lock:
            if key in self._plans:
                return self._plans[key]
            if key in self._no_plan:
                raise ScriptExhausted(self._no_plan[key])
            if key in self._unchecked:
                task, steps = self._unchecked[key]
                unmet = self._misses_goal(task, steps)
                if unmet is None:
                    return self._keep(key, task, steps, "the reference plan")
                infeasible = task_infeasible(task, self._domain_for(task))
                if infeasible:  # no plan reaches its goal: no classical planner to wait for
                    return self._keep(key, task, steps, "the reference plan (the task is "
                                      "infeasible in its scene, so no plan reaches its goal)")
                why = f"a classical plan (the reference plan {unmet})"
                try:
                    return self._classical(key, task, why, say)
                except ScriptExhausted as error:
                    self._no_plan.pop(key, None)
                    return self._keep(key, task, steps, f"the reference plan, which {unmet} "
                                      f"(no classical plan: {error})")
            task = self._unplanned[key]
            infeasible = task_infeasible(task, self._domain_for(task))
            if infeasible:
                self._no_plan[key] = (f"the reference responder has no plan for task "
                                      f"{task.task_id}: it is infeasible in its scene "
                                      f"({infeasible})")
                raise ScriptExhausted(self._no_plan[key])
            return self._classical(key, task, "a classical plan (no reference plan)", say)

    def _misses_goal(self, task: Task, steps: list[PlanStep]) -> str | None:
        """None when the gate accepts `steps` and the task's goal holds after them; else what
        goes wrong, in words. A task whose problem cannot be made keeps its reference plan."""
        domain = self._domain_for(task)
        try:
            gate = compile_gate(domain, task_problem(task, domain))
        except SageError:
            return None
        verdict = gate.check(steps)
        if not verdict.valid:
            return "is refused by the gate"
        if verdict.goal_reached is False:
            return "does not reach the goal"
        return None

    def _keep(self, key: str, task: Task, steps: list[PlanStep], source: str
              ) -> tuple[Task, list[PlanStep]]:
        """Keep `steps` as the task's plan (navigation left out for a broken task)."""
        self._fixed[key] = steps
        self._sources[key] = source
        if task.task_id.lower() in self._broken:
            steps = _without_navigation(steps)
        self._plans[key] = (task, steps)
        return self._plans[key]

    def _classical(self, key: str, task: Task, source: str,
                   say: Callable[[str], None] | None) -> tuple[Task, list[PlanStep]]:
        """The task's classical plan (called under the lock); parts by goal conjunct. `say`
        hears when the classical planner runs (it takes seconds)."""
        domain = self._domain_for(task)

        def planning() -> None:
            if say is not None:
                say(f"reference responder: planning {task.task_id} with a classical planner: "
                    f"{source.removeprefix('a classical plan ').strip('()')}")

        try:
            problem = task_problem(task, domain)
            steps = _classical_steps(domain, problem, self._timeout, planning)
        except SageError as error:
            self._no_plan[key] = (f"the reference responder has no plan for task "
                                  f"{task.task_id}: {error}")
            raise ScriptExhausted(self._no_plan[key]) from None
        parts = _goal_parts(task.task_id, compile_gate(domain, problem), steps)
        if task.task_id.lower() in self._broken:
            parts = [(name, _without_navigation(part)) for name, part in parts]
        self._goal_parts[key] = parts
        return self._keep(key, task, steps, source)

    def _blocks(self, task: Task, steps: list[PlanStep]) -> list[tuple[str, list[PlanStep]]]:
        """The plan's parts with their sub-goal names (see the module docstring)."""
        found = self._goal_parts.get(" ".join(str(task.instruction).split()))
        if found is not None:
            return found
        return [(self._subgoal(task, i, part), part) for i, part in enumerate(_split(steps))]

    def _goal(self, task: Task) -> str:
        goal = task_problem(task, self._domain_for(task)).goal
        return write_formula(goal) if goal is not None else "(and)"

    @staticmethod
    def _subgoal(task: Task, index: int, part: Sequence[PlanStep]) -> str:
        words = ", ".join(step_text(s) for s in part) or "nothing left to do"
        return f"[{task.task_id} part {index + 1}] {words}"

    @staticmethod
    def _part_named(prompt: str, blocks: list[tuple[str, list[PlanStep]]],
                    steps: list[PlanStep]) -> list[PlanStep]:
        named = _SUBGOAL_LINE.findall(prompt)
        for name, part in blocks:
            if named and _same(named[-1], name):
                return part
        return steps  # a sub-goal it did not write (e.g. the instruction as fallback)

    def _corrected(self, prompt: str, task: Task, steps: list[PlanStep], role: str) -> list[PlanStep]:
        """The correct steps of the named sub-goal (refine), or from the failed step on
        (repair). Sub-goals were named after the plan as first answered, so the correct steps
        of a sub-goal are looked up through the first answer's parts."""
        fixed = self._fixed[" ".join(str(task.instruction).split())]
        named = _SUBGOAL_LINE.findall(prompt)
        scope = fixed
        blocks = self._blocks(task, steps)
        parts = [part for _, part in blocks]
        for index, (name, part) in enumerate(blocks):
            if named and _same(named[-1], name):
                scope = _correct_part(part, fixed, index, parts)
        if role == "refine":
            return scope
        failed = ["".join(groups) for groups in _FAILED_LINE.findall(prompt)]
        if failed:
            for index, step in enumerate(scope):
                if _same(step_text(step), failed[-1]):
                    return scope[index:]
        return scope

    @staticmethod
    def _scores(prompt: str, steps: list[PlanStep]) -> dict:
        history = prompt.split("Steps so far:", 1)[-1].split("State:", 1)[0]
        done = len([line for line in history.splitlines() if re.match(r"^\s+\d+\. ", line)])
        candidates = _CANDIDATE_LINE.findall(prompt.split("Candidates:", 1)[-1])
        if done >= len(steps):
            return {"scores": {}, "done": True}
        wanted = step_text(steps[done])
        return {"scores": {index: (1.0 if _same(text, wanted) else 0.0)
                           for index, text in candidates}, "done": False}


def _correct_part(part: list[PlanStep], fixed: list[PlanStep], index: int,
                  parts: list[list[PlanStep]]) -> list[PlanStep]:
    """The correct steps covering `part`: from just after the previous part's last step up to
    and including this part's last step, located in the correct plan (navigation included)."""
    if not part:
        return []
    texts = [step_text(s) for s in fixed]
    end = _find(texts, step_text(part[-1]), 0)
    begin = 0
    if index > 0 and parts[index - 1]:
        begin = _find(texts, step_text(parts[index - 1][-1]), 0) + 1
    if end < begin:
        return list(part)
    return list(fixed[begin:end + 1])


def _find(texts: list[str], wanted: str, start: int) -> int:
    for position in range(start, len(texts)):
        if _same(texts[position], wanted):
            return position
    return -1


MAX_PARTS = 5
"""The most sub-goals the responder gives: the decompose prompt's default upper bound."""


def _goal_parts(task_id: str, gate: PlanChecker, steps: list[PlanStep]) -> list[tuple[str, list[PlanStep]]]:
    """`steps` cut after each step that makes more goal conjuncts hold than any step before
    it (at most `MAX_PARTS` parts: later ones join the last); each part is named after the
    conjuncts it achieved."""
    state = gate.initial_state
    unmet = set(gate.goal_unmet(state))
    fewest = len(unmet)
    cuts: list[tuple[list[str], list[PlanStep]]] = []
    part: list[PlanStep] = []
    for step in steps:
        part.append(step)
        verdict = gate.check([step], state=state)
        if not verdict.valid:
            break
        state = verdict.final_state
        now = set(gate.goal_unmet(state))
        if len(now) < fewest:
            cuts.append((sorted(unmet - now) or sorted(now), part))
            part, fewest, unmet = [], len(now), now
    if part or not cuts:
        cuts.append((sorted(unmet), part))
    if len(cuts) > MAX_PARTS:
        tail = cuts[MAX_PARTS - 1:]
        cuts = cuts[:MAX_PARTS - 1] + [([c for names, _ in tail for c in names],
                                        [s for _, steps_ in tail for s in steps_])]
    return [(f"[{task_id} part {index}] make true: {'; '.join(names) or 'nothing left to do'}",
             steps_) for index, (names, steps_) in enumerate(cuts, 1)]


def _classical_steps(domain: Domain, problem: Problem, timeout: float,
                     planning: Callable[[], None]) -> list[PlanStep]:
    """A classical plan's steps for `problem`, kept across processes in sage-pddl's private
    cache (`pddl/cache.py`) under the hash of the exported domain and problem texts, so a
    second run of the same tasks does not wait for the classical planner again. What is kept
    is JSON (never loaded as code); a kept file that is not a list of steps is planned again."""
    texts = export_domain_text(domain, True) + "\0" + write_problem(problem)
    name = "classical-plan-" + hashlib.sha256(texts.encode("utf-8")).hexdigest()[:40] + ".json"
    kept = cache.read(name)
    if kept is not None:
        try:
            read = json.loads(kept.decode("utf-8"))
            return [step_from_json(step, index) for index, step in enumerate(read)]
        except (UnicodeDecodeError, ValueError, RecursionError, TypeError, AttributeError,
                PlanSyntaxError):
            pass
    planning()
    written = vocabulary(domain).written_plan(solve(domain, problem, timeout=timeout))
    cache.write(name, json.dumps(written).encode("utf-8"))
    return [step_from_json(step, index) for index, step in enumerate(written)]


def _written(steps: Sequence[PlanStep]) -> list[dict[str, Any]]:
    """Steps as the reference responder answers them: as a model writes JSON steps."""
    return [written_json(step) for step in steps]


def _without_navigation(steps: list[PlanStep]) -> list[PlanStep]:
    """`steps` without their MoveTo/Find steps: the broken tasks' first answers."""
    return [s for s in steps if s.action.lower() not in NAVIGATION]


def _some(ids: list[str], shown: int = 8) -> str:
    """The first `shown` of `ids`, and how many more."""
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _split(steps: list[PlanStep]) -> list[list[PlanStep]]:
    """At most two parts (SAGE asks for at least two sub-goals); one when the plan has one step."""
    if len(steps) < 2:
        return [list(steps)]
    middle = (len(steps) + 1) // 2
    return [list(steps[:middle]), list(steps[middle:])]


def reference_responder(tasks: Iterable[Task], domain_for: Callable[[Task], Domain],
                        broken_tasks: Collection[str] = ()) -> ReferenceResponder:
    """The responder described in the module docstring."""
    return ReferenceResponder(tasks, domain_for, broken_tasks)
