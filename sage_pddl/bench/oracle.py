"""A scripted stand-in for an LLM that answers every planner role from a known plan of the task.

`reference_responder(tasks, domain_for)` returns a `responder(messages, role)` for the `scripted`
backend (`sage_pddl.llm.scripted`). It is NOT a model: it exists so the benchmark harness, its
resumption and its report can be exercised offline and deterministically (`sage-pddl bench --llm
scripted`, the tests). Its numbers measure the task set's reference plans through each planner's
control flow, nothing more.

How it answers: the task is the one whose instruction follows the last `Task:` line of the
request (retrieved examples come earlier, so the last line is the task being planned). Its plan
is the task's reference plan (rewritten to the domain's canonical action names), cut into at
most two parts. A task without a reference plan (a PDDL problem file, say) gets a classical
plan instead: Fast Downward (or pyperplan) through unified-planning, computed the first time
the task is asked about, or all at once by `prepare()` (so a planner's timing never includes
the classical planner's), and kept; its parts end where a conjunct of the goal first holds, and
each part's sub-goal names those conjuncts. When no classical plan can be had (the problem is
unsolvable or too hard in `classical_timeout` seconds) every call about the task fails with the
reason, which the planner records as a failed call; `prepare()` raises at once when the
`planners` extra those tasks need is missing.

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

import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sage_pddl.export.classical import require_unified_planning, solve
from sage_pddl.gate import Gate, compile_gate
from sage_pddl.llm.scripted import ScriptExhausted
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.vocabulary import bare_step, step_text, vocabulary
from sage_pddl.pddl.writer import write_formula
from sage_pddl.tasks import Task, normalize_steps, task_problem

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
        self._plans: dict[str, tuple[Task, list[dict]]] = {}
        self._fixed: dict[str, list[dict]] = {}
        self._unplanned: dict[str, Task] = {}
        self._no_plan: dict[str, str] = {}
        self._goal_parts: dict[str, list[tuple[str, list[dict]]]] = {}
        self._lock = threading.Lock()
        broken = {t.lower() for t in broken_tasks}
        for task in tasks:
            key = " ".join(str(task.instruction).split())
            if not task.reference_steps:
                self._unplanned.setdefault(key, task)
                continue
            steps = [bare_step(s) for s in normalize_steps(task.reference_steps, domain_for(task))]
            self._fixed.setdefault(key, steps)
            if task.task_id.lower() in broken:
                steps = [s for s in steps if s["action"].lower() not in NAVIGATION]
            self._plans.setdefault(key, (task, steps))

    def __call__(self, messages: Sequence[Mapping[str, str]], role: str | None) -> Any:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        task, steps = self._task_for(prompt)
        if role in ("refine", "repair"):
            return {"steps": self._corrected(prompt, task, steps, role)}
        blocks = self._blocks(task, steps)
        if role == "decompose":
            return {"subgoals": [name for name, _ in blocks]}
        if role == "expand":
            return {"steps": self._part_named(prompt, blocks, steps)}
        if role == "act":
            done = len(_HISTORY_LINE.findall(prompt.split("Steps so far:", 1)[-1]
                                             .split("Latest observation:", 1)[0]))
            if done >= len(steps):
                return {"thought": "the task is finished", "done": True}
            return {"thought": "next reference step", "done": False, "step": steps[done]}
        if role == "score":
            return self._scores(prompt, steps)
        if role == "goal":
            return {"goal": self._goal(task)}
        if role == "critique":
            return "No problems found."
        return {"reasoning": "follow the reference plan", "steps": steps}

    # ----------------------------------------------------------------------------- helpers
    def _task_for(self, prompt: str) -> tuple[Task, list[dict]]:
        found = _TASK_LINE.findall(prompt)
        for line in reversed(found):
            key = " ".join(line.split())
            hit = self._plans.get(key)
            if hit is None and key in self._unplanned:
                hit = self._classical(key)
            if hit is not None:
                return hit

        raise ScriptExhausted("the reference responder knows no task in this request "
                              f"(Task lines: {found[-3:]})")

    def prepare(self) -> None:
        """Plan every task without a reference now (a failure is kept and given to every call
        about the task), so no planner's timing pays for the classical planner. Raises
        `ClassicalPlannerError` naming the `planners` extra when such tasks exist without it."""
        if not self._unplanned:
            return
        require_unified_planning()
        for key in list(self._unplanned):
            try:
                self._classical(key)
            except ScriptExhausted:
                pass  # kept in _no_plan

    def _classical(self, key: str) -> tuple[Task, list[dict]]:
        """The classical plan of a task without a reference, once; parts by goal conjunct."""
        with self._lock:
            if key in self._plans:
                return self._plans[key]
            if key in self._no_plan:
                raise ScriptExhausted(self._no_plan[key])

            task = self._unplanned[key]
            domain = self._domain_for(task)
            try:
                problem = task_problem(task, domain)
                plan = solve(domain, problem, timeout=self._timeout)
            except SageError as error:
                self._no_plan[key] = (f"the reference responder has no plan for task "
                                      f"{task.task_id}: {error}")
                raise ScriptExhausted(self._no_plan[key]) from None
            steps = vocabulary(domain).written_plan(plan)
            self._goal_parts[key] = _goal_parts(task.task_id, compile_gate(domain, problem), steps)
            self._fixed[key] = steps
            self._plans[key] = (task, steps)
            return self._plans[key]

    def _blocks(self, task: Task, steps: list[dict]) -> list[tuple[str, list[dict]]]:
        """The plan's parts with their sub-goal names (see the module docstring)."""
        found = self._goal_parts.get(" ".join(str(task.instruction).split()))
        if found is not None:
            return found
        return [(self._subgoal(task, i, part), part) for i, part in enumerate(_split(steps))]

    def _goal(self, task: Task) -> str:
        goal = task_problem(task, self._domain_for(task)).goal
        return write_formula(goal) if goal is not None else "(and)"

    @staticmethod
    def _subgoal(task: Task, index: int, part: Sequence[dict]) -> str:
        words = ", ".join(step_text(s) for s in part) or "nothing left to do"
        return f"[{task.task_id} part {index + 1}] {words}"

    @staticmethod
    def _part_named(prompt: str, blocks: list[tuple[str, list[dict]]],
                    steps: list[dict]) -> list[dict]:
        named = _SUBGOAL_LINE.findall(prompt)
        for name, part in blocks:
            if named and _same(named[-1], name):
                return part
        return steps  # a sub-goal it did not write (e.g. the instruction as fallback)

    def _corrected(self, prompt: str, task: Task, steps: list[dict], role: str) -> list[dict]:
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
    def _scores(prompt: str, steps: list[dict]) -> dict:
        history = prompt.split("Steps so far:", 1)[-1].split("State:", 1)[0]
        done = len([line for line in history.splitlines() if re.match(r"^\s+\d+\. ", line)])
        candidates = _CANDIDATE_LINE.findall(prompt.split("Candidates:", 1)[-1])
        if done >= len(steps):
            return {"scores": {}, "done": True}
        wanted = step_text(steps[done])
        return {"scores": {index: (1.0 if _same(text, wanted) else 0.0)
                           for index, text in candidates}, "done": False}


def _correct_part(part: list[dict], fixed: list[dict], index: int,
                  parts: list[list[dict]]) -> list[dict]:
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


def _goal_parts(task_id: str, gate: Gate, steps: list[dict]) -> list[tuple[str, list[dict]]]:
    """`steps` cut after each step that makes more goal conjuncts hold than any step before
    it (at most `MAX_PARTS` parts: later ones join the last); each part is named after the
    conjuncts it achieved."""
    state = gate.initial_state
    unmet = set(gate.goal_unmet(state))
    fewest = len(unmet)
    cuts: list[tuple[list[str], list[dict]]] = []
    part: list[dict] = []
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


def _split(steps: list[dict]) -> list[list[dict]]:
    """At most two parts (SAGE asks for at least two sub-goals); one when the plan has one step."""
    if len(steps) < 2:
        return [list(steps)]
    middle = (len(steps) + 1) // 2
    return [list(steps[:middle]), list(steps[middle:])]


def reference_responder(tasks: Iterable[Task], domain_for: Callable[[Task], Domain],
                        broken_tasks: Collection[str] = ()) -> ReferenceResponder:
    """The responder described in the module docstring."""
    return ReferenceResponder(tasks, domain_for, broken_tasks)
